//! The jobs, job, checkpoint, savepoint, TaskManager and configuration routes (the
//! rest are in the sibling modules), each a thin call of the `RestBackend`.
//!
//! The paths and the backend call each makes are tabled in [`handlers`](super).
//!
//! Errors, all `{"errors": [...]}` (see [`RestError`] for the backend's):
//! - a job id that is not 32 hex characters: 400 `Bad request, could not parse
//!   parameters: Cannot resolve path parameter (jobid) from value "…".`; likewise a
//!   bad `maxExceptions`, `failureLabelFilter` or `mode` query parameter, or a
//!   checkpoint id that is not a decimal `long` (`… path parameter (checkpointid) …`);
//!   a negative checkpoint id is 404 `Could not find checkpointing statistics for
//!   checkpoint <id>.` as in Flink;
//! - `PATCH /jobs/:jid` without `mode` cancels (Flink's default); `mode=stop` is 400
//!   with Flink's "has been removed" text; cancelling an unknown job is 404 `Job could
//!   not be found.`;
//! - a `POST /jobs` body that is not a [`JobSubmitRequest`]: 400 `Request did not
//!   match expected format JobSubmitRequest.` followed by the parser's message;
//! - an unknown path: 404 — for GET, Flink's static-file text `Unable to load requested
//!   file <path>.`, otherwise Flink's router text `Not found: <uri>`;
//! - a known path with another method: 405 with an `Allow` header;
//! - a backend that panics: 500, and the server keeps serving.
//!
//! Invariant: no input makes a handler panic.

use super::path_params::bad_parameter;
use super::reply::{call, job_id, json_body, query_pairs, query_value, reply, reply_with, Backend, QueryPairs};
use crate::error::{json_response, ErrorResponse, RestError};
use crate::messages::exceptions::JobExceptions;
use crate::messages::jobs::JobPlanInfo;
use crate::messages::savepoints::{SavepointTriggerRequest, StopWithSavepointRequest};
use crate::messages::status::JobStatusInfo;
use crate::messages::submit::JobSubmitRequest;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde::Serialize;

/// The number of exceptions `GET /jobs/:jid/exceptions` returns without
/// `maxExceptions` (Flink's default).
pub const DEFAULT_MAX_EXCEPTIONS: usize = 20;

/// Adds the routes of this module under `prefix`.
pub(crate) fn add(r: Router<Backend>, prefix: &str) -> Router<Backend> {
    r.route(&format!("{prefix}/overview"), get(overview))
        .route(&format!("{prefix}/config"), get(dashboard_config))
        .route(&format!("{prefix}/jobs"), get(jobs).post(submit_job))
        .route(&format!("{prefix}/jobs/overview"), get(jobs_overview))
        .route(&format!("{prefix}/jobs/{{jid}}"), get(job_detail).patch(cancel_job))
        .route(&format!("{prefix}/jobs/{{jid}}/plan"), get(job_plan))
        .route(&format!("{prefix}/jobs/{{jid}}/exceptions"), get(job_exceptions))
        .route(&format!("{prefix}/jobs/{{jid}}/config"), get(job_config))
        .route(&format!("{prefix}/jobs/{{jid}}/checkpoints"), get(job_checkpoints))
        .route(
            &format!("{prefix}/jobs/{{jid}}/checkpoints/config"),
            get(job_checkpoints_config),
        )
        .route(
            &format!("{prefix}/jobs/{{jid}}/checkpoints/details/{{checkpointid}}"),
            get(job_checkpoint_details),
        )
        .route(&format!("{prefix}/jobs/{{jid}}/savepoints"), post(trigger_savepoint))
        .route(
            &format!("{prefix}/jobs/{{jid}}/savepoints/{{triggerid}}"),
            get(savepoint_status),
        )
        .route(&format!("{prefix}/jobs/{{jid}}/stop"), post(stop_with_savepoint))
        .route(&format!("{prefix}/jobs/{{jid}}/status"), get(job_status))
        .route(&format!("{prefix}/jobs/{{jid}}/accumulators"), get(job_accumulators))
        .route(&format!("{prefix}/taskmanagers"), get(taskmanagers))
        .route(&format!("{prefix}/taskmanagers/{{tmid}}"), get(taskmanager_detail))
        .route(&format!("{prefix}/jobmanager/config"), get(jobmanager_config))
}

async fn overview(State(b): State<Backend>) -> Response {
    reply(call(|| Ok(b.overview())))
}

async fn dashboard_config(State(b): State<Backend>) -> Response {
    reply(call(|| Ok(b.dashboard_config())))
}

async fn jobs(State(b): State<Backend>) -> Response {
    reply(call(|| Ok(b.jobs())))
}

async fn jobs_overview(State(b): State<Backend>) -> Response {
    reply(call(|| Ok(b.jobs_overview())))
}

async fn job_detail(State(b): State<Backend>, path: Result<Path<String>, PathRejection>) -> Response {
    reply(job_id(path).and_then(|jid| call(|| b.job_detail(jid))))
}

async fn job_plan(State(b): State<Backend>, path: Result<Path<String>, PathRejection>) -> Response {
    reply(
        job_id(path)
            .and_then(|jid| call(|| b.job_plan(jid)))
            .map(|plan| JobPlanInfo { plan }),
    )
}

async fn trigger_savepoint(
    State(b): State<Backend>,
    path: Result<Path<String>, PathRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = job_id(path).and_then(|jid| {
        let request: SavepointTriggerRequest = json_body(body, "SavepointTriggerRequestBody")?;
        if request.cancel_job {
            return Err(RestError::BadRequest(
                "Cancel with savepoint is not supported; stop the job with a savepoint instead \
                 (POST /jobs/:jobid/stop, `weir stop`)."
                    .to_string(),
            ));
        }
        call(|| b.trigger_savepoint(jid, request.target_directory, None))
    });
    reply_with(StatusCode::ACCEPTED, result)
}

async fn stop_with_savepoint(
    State(b): State<Backend>,
    path: Result<Path<String>, PathRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = job_id(path).and_then(|jid| {
        let request: StopWithSavepointRequest = json_body(body, "StopWithSavepointRequestBody")?;
        call(|| b.trigger_savepoint(jid, request.target_directory, Some(request.drain)))
    });
    reply_with(StatusCode::ACCEPTED, result)
}

async fn savepoint_status(State(b): State<Backend>, path: Result<Path<(String, String)>, PathRejection>) -> Response {
    let parsed = path
        .map_err(|e| RestError::BadRequest(format!("Bad request, could not parse parameters: {e}")))
        .and_then(|Path((jid, trigger))| Ok((job_id(Ok(Path(jid)))?, trigger)));
    reply(parsed.and_then(|(jid, trigger)| call(|| b.savepoint_status(jid, &trigger))))
}

async fn job_status(State(b): State<Backend>, path: Result<Path<String>, PathRejection>) -> Response {
    reply(
        job_id(path)
            .and_then(|jid| call(|| b.job_status(jid)))
            .map(|status| JobStatusInfo { status }),
    )
}

async fn job_accumulators(State(b): State<Backend>, path: Result<Path<String>, PathRejection>) -> Response {
    reply(job_id(path).and_then(|jid| call(|| b.job_accumulators(jid))))
}

async fn job_config(State(b): State<Backend>, path: Result<Path<String>, PathRejection>) -> Response {
    reply(job_id(path).and_then(|jid| call(|| b.job_config(jid))))
}

async fn job_checkpoints(State(b): State<Backend>, path: Result<Path<String>, PathRejection>) -> Response {
    reply(job_id(path).and_then(|jid| call(|| b.job_checkpoints(jid))))
}

async fn job_checkpoints_config(State(b): State<Backend>, path: Result<Path<String>, PathRejection>) -> Response {
    reply(job_id(path).and_then(|jid| call(|| b.job_checkpoints_config(jid))))
}

async fn job_checkpoint_details(
    State(b): State<Backend>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Response {
    let parsed = path
        .map_err(|e| RestError::BadRequest(format!("Bad request, could not parse parameters: {e}")))
        .and_then(|Path((jid, raw))| {
            let jid = job_id(Ok(Path(jid)))?;
            // Flink reads the id with `Long.parseLong`: an optional sign, then digits.
            let id: i64 = raw.parse().map_err(|_| bad_parameter("path", "checkpointid", &raw))?;
            let id = u64::try_from(id).map_err(|_| {
                RestError::NotFound(format!("Could not find checkpointing statistics for checkpoint {id}."))
            })?;
            Ok((jid, id))
        });
    reply(parsed.and_then(|(jid, id)| call(|| b.job_checkpoint_details(jid, id))))
}

async fn job_exceptions(
    State(b): State<Backend>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<QueryPairs>, QueryRejection>,
) -> Response {
    reply(exceptions_of(&b, path, query))
}

fn exceptions_of(
    b: &Backend,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<QueryPairs>, QueryRejection>,
) -> Result<JobExceptions, RestError> {
    let jid = job_id(path)?;
    let pairs = query_pairs(query)?;
    let max = match query_value(&pairs, "maxExceptions") {
        Some(v) => Some(
            v.trim()
                .parse::<usize>()
                .map_err(|_| bad_parameter("query", "maxExceptions", &v))?,
        ),
        None => None,
    };
    let mut filter = Vec::new();
    if let Some(v) = query_value(&pairs, "failureLabelFilter") {
        for item in v.split(',') {
            match item.split_once(':') {
                Some((k, val)) if !k.trim().is_empty() => filter.push((k.trim().to_string(), val.trim().to_string())),
                _ => return Err(bad_parameter("query", "failureLabelFilter", &v)),
            }
        }
    }
    // With a filter the backend must not cut the history short before filtering.
    let hint = if filter.is_empty() { max } else { None };
    let mut exceptions = call(|| b.job_exceptions(jid, hint))?;
    exceptions.filter_and_limit(&filter, max.unwrap_or(DEFAULT_MAX_EXCEPTIONS));
    Ok(exceptions)
}

async fn cancel_job(
    State(b): State<Backend>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<QueryPairs>, QueryRejection>,
) -> Response {
    reply_with(StatusCode::ACCEPTED, cancel(&b, path, query))
}

/// The empty JSON object Flink answers a cancellation with.
#[derive(Serialize)]
struct Empty {}

fn cancel(
    b: &Backend,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<QueryPairs>, QueryRejection>,
) -> Result<Empty, RestError> {
    let jid = job_id(path)?;
    let pairs = query_pairs(query)?;
    // Flink picks the first mode given and cancels when none is.
    let mode = pairs.iter().find(|(k, _)| k == "mode").map(|(_, v)| v.clone());
    match mode.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("cancel") => {}
        Some("stop") => {
            return Err(RestError::BadRequest(
                "The termination mode \"stop\" has been removed. For an ungraceful shutdown, \
                 please use \"cancel\" instead. For a graceful shutdown, please use \
                 \"jobs/:jobId/stop\" instead."
                    .to_string(),
            ))
        }
        Some(_) => return Err(bad_parameter("query", "mode", mode.as_deref().unwrap_or_default())),
    }
    match call(|| b.cancel_job(jid)) {
        Ok(()) => Ok(Empty {}),
        Err(RestError::JobNotFound(_)) => Err(RestError::NotFound("Job could not be found.".to_string())),
        Err(e) => Err(e),
    }
}

async fn submit_job(State(b): State<Backend>, body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(e) => {
            return json_response(e.status(), &ErrorResponse::single(e.body_text()));
        }
    };
    // Flink reads an empty body as `{}`.
    let text: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        &body
    };
    let request: JobSubmitRequest = match serde_json::from_slice(text) {
        Ok(r) => r,
        Err(e) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                &ErrorResponse {
                    errors: vec![
                        "Request did not match expected format JobSubmitRequest.".to_string(),
                        e.to_string(),
                    ],
                },
            );
        }
    };
    reply_with(
        StatusCode::ACCEPTED,
        request.validate().and_then(|()| call(|| b.submit_job(request))),
    )
}

async fn taskmanagers(State(b): State<Backend>) -> Response {
    reply(call(|| Ok(b.taskmanagers())))
}

async fn taskmanager_detail(State(b): State<Backend>, path: Result<Path<String>, PathRejection>) -> Response {
    let result = path
        .map_err(|e| RestError::BadRequest(format!("Bad request, could not parse parameters: {e}")))
        .and_then(|Path(id)| call(|| b.taskmanager_detail(&id)));
    reply(result)
}

async fn jobmanager_config(State(b): State<Backend>) -> Response {
    reply(call(|| Ok(b.jobmanager_config())))
}
