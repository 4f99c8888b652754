//! The bodies of `POST /jobs/:jid/coordinators/:operatorid`: a client's request to an
//! operator's coordinator on the JobMaster and its answer (Flink's
//! `CollectCoordinationRequest` and `CollectCoordinationResponse`), and the 404 of an
//! operator without a coordinator.

use crate::error::RestError;
use serde::{Deserialize, Serialize};

/// A client's request to the collect sink's coordinator (Flink's
/// `CollectCoordinationRequest`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoordinationRequest {
    /// The result version the client saw last; empty on the first request.
    #[serde(default)]
    pub version: String,
    /// The index of the first row the client has not received; rows before it are
    /// acknowledged.
    pub offset: u64,
}

/// The coordinator's answer (Flink's `CollectCoordinationResponse`, with the rows as
/// JSON text and the end of the results and a failure made explicit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoordinationResponse {
    /// The result version (constant for one run of the sink).
    pub version: String,
    /// Rows before this offset are final: Weir never hands a row out twice, so it is
    /// the request's offset plus the rows of this response.
    pub last_checkpointed_offset: u64,
    /// The next rows from the request's offset, each a JSON array: the changelog kind,
    /// then every field as a string or `null`.
    pub results: Vec<String>,
    /// Every sink subtask finished and no row follows these.
    pub end_of_results: bool,
    /// Why the results cannot go on (e.g. the sink restarted after handing rows out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// The 404 of an operator without a coordinator (Flink's text).
pub fn no_coordinator(operator: &str) -> RestError {
    RestError::NotFound(format!(
        "Coordinator of operator {operator} does not exist or the job vertex this operator belongs to is not initialized."
    ))
}
