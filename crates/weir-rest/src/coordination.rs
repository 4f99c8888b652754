//! `POST /jobs/:jid/coordinators/:operatorid` (also under `/v1`): a client's request
//! to an operator's coordinator on the JobMaster (Flink's
//! `ClientCoordinationHandler`). Weir's only coordinator is the collect sink's, which
//! holds a SELECT's results: the request names the result `version` (empty on the
//! first request) and the `offset` of the first row the client has not received yet;
//! every row before `offset` is acknowledged (the coordinator drops it), so a request
//! sent again after a lost response neither loses nor repeats a row.
//!
//! Errors: a malformed job or operator id is Flink's 400 (`… path parameter
//! (operatorid) …`), a body that is not a [`CoordinationRequest`] 400, an unknown job
//! or an operator without a coordinator 404, an offset or version the coordinator
//! cannot serve 400 (see [`RestBackend::coordination_request`]).
//!
//! [`RestBackend::coordination_request`]: crate::RestBackend::coordination_request

use crate::error::RestError;
use crate::path_params::bad_parameter;
use crate::path_params::{is_hex_id, PathParams, RawPath};
use crate::router::{call, json_body, reply, Backend};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::response::Response;
use axum::routing::post;
use axum::Router;
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

/// Adds the route under `prefix`.
pub(crate) fn add(r: Router<Backend>, prefix: &str) -> Router<Backend> {
    r.route(
        &format!("{prefix}/jobs/{{jid}}/coordinators/{{operatorid}}"),
        post(coordination_request),
    )
}

async fn coordination_request(
    State(b): State<Backend>,
    path: RawPath,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = PathParams::of(path).and_then(|p| {
        let jid = p.job()?;
        let raw = p.text("operatorid")?;
        if !is_hex_id(raw) {
            return Err(bad_parameter("path", "operatorid", raw));
        }
        let operator = raw.to_ascii_lowercase();
        let request: CoordinationRequest = json_body(body, "ClientCoordinationRequestBody")?;
        call(|| b.coordination_request(jid, &operator, request))
    });
    reply::<CoordinationResponse>(result)
}

/// The 404 of an operator without a coordinator (Flink's text).
pub fn no_coordinator(operator: &str) -> RestError {
    RestError::NotFound(format!(
        "Coordinator of operator {operator} does not exist or the job vertex this operator belongs to is not initialized."
    ))
}
