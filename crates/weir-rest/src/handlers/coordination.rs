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

use super::path_params::{bad_parameter, is_hex_id, PathParams, RawPath};
use super::reply::{call, json_body, reply, Backend};
use crate::messages::coordination::{CoordinationRequest, CoordinationResponse};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::response::Response;
use axum::routing::post;
use axum::Router;

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
