//! Helpers every handler shares: the backend as axum state, running a backend call
//! with a panic turned into a 500, JSON replies, path, query and body extraction, and
//! the answers to unknown paths and methods. Invariant: nothing here panics on input.

use super::path_params::{bad_parameter, is_hex_id};
use crate::backend::RestBackend;
use crate::error::{json_response, ErrorResponse, RestError};
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use weir_core::ids::JobId;

/// The backend, as the handlers' axum state.
pub(crate) type Backend = Arc<dyn RestBackend>;

/// Query parameters as sent, in order; a key may repeat.
pub(crate) type QueryPairs = Vec<(String, String)>;

/// Runs a backend call, turning a panic into a 500 so that one bad call does not take
/// the connection down.
pub(crate) fn call<T>(f: impl FnOnce() -> Result<T, RestError>) -> Result<T, RestError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(RestError::Internal(format!("The JobManager failed: {what}")))
        }
    }
}

/// A 200 JSON answer or the error's.
pub(crate) fn reply<T: Serialize>(result: Result<T, RestError>) -> Response {
    reply_with(StatusCode::OK, result)
}

/// A `status` JSON answer or the error's.
pub(crate) fn reply_with<T: Serialize>(status: StatusCode, result: Result<T, RestError>) -> Response {
    match result {
        Ok(body) => json_response(status, &body),
        Err(e) => e.into_response(),
    }
}

/// The job id of the path, or Flink's 400.
pub(crate) fn job_id(path: Result<Path<String>, PathRejection>) -> Result<JobId, RestError> {
    let Path(raw) = path.map_err(|e| RestError::BadRequest(format!("Bad request, could not parse parameters: {e}")))?;
    is_hex_id(&raw)
        .then(|| JobId::parse(&raw))
        .flatten()
        .ok_or_else(|| bad_parameter("path", "jobid", &raw))
}

/// The values of `key`, joined by commas as Flink does; `None` when absent.
pub(crate) fn query_value(pairs: &QueryPairs, key: &str) -> Option<String> {
    let values: Vec<&str> = pairs
        .iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .collect();
    (!values.is_empty()).then(|| values.join(","))
}

/// The query pairs, or a 400 for a query string that cannot be decoded.
pub(crate) fn query_pairs(query: Result<Query<QueryPairs>, QueryRejection>) -> Result<QueryPairs, RestError> {
    query
        .map(|Query(pairs)| pairs)
        .map_err(|e| RestError::BadRequest(format!("Bad request, could not parse parameters: {e}")))
}

/// A JSON body of type `T`; an empty body reads as `{}` (as in Flink).
pub(crate) fn json_body<T: serde::de::DeserializeOwned>(
    body: Result<Bytes, BytesRejection>,
    what: &str,
) -> Result<T, RestError> {
    let body = body.map_err(|e| RestError::BadRequest(e.body_text()))?;
    let text: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        &body
    };
    serde_json::from_slice(text)
        .map_err(|e| RestError::BadRequest(format!("Request did not match expected format {what}: {e}")))
}

/// An unknown path: Flink's static-file handler answers GETs, its router the rest.
pub(crate) async fn not_found(method: Method, uri: Uri) -> Response {
    let message = if method == Method::GET || method == Method::HEAD {
        let mut path = uri.path().to_string();
        if path.ends_with('/') {
            path.push_str("index.html");
        }
        format!("Unable to load requested file {path}.")
    } else {
        format!("Not found: {uri}")
    };
    RestError::NotFound(message).into_response()
}

/// A known path with a method it does not serve.
pub(crate) async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    json_response(
        StatusCode::METHOD_NOT_ALLOWED,
        &ErrorResponse::single(format!("Request method {method} is not supported for {}.", uri.path())),
    )
}
