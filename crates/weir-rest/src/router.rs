//! The HTTP side: an axum [`Router`] serving Flink's REST paths from a
//! [`RestBackend`], plus helpers to run it.
//!
//! Owns the mapping from HTTP to backend calls:
//!
//! | method and path (each also under `/v1`) | backend call | success |
//! |---|---|---|
//! | `GET /overview` | [`RestBackend::overview`] | 200 |
//! | `GET /config` | [`RestBackend::dashboard_config`] | 200 |
//! | `GET /jobs` | [`RestBackend::jobs`] | 200 |
//! | `POST /jobs` (body: [`JobSubmitRequest`]) | [`RestBackend::submit_job`] | 202 `{"jobid"}` |
//! | `GET /jobs/overview` | [`RestBackend::jobs_overview`] | 200 |
//! | `GET /jobs/:jid` | [`RestBackend::job_detail`] | 200 |
//! | `PATCH /jobs/:jid?mode=cancel` | [`RestBackend::cancel_job`] | 202 `{}` |
//! | `GET /jobs/:jid/plan` | [`RestBackend::job_plan`] | 200 `{"plan"}` |
//! | `GET /jobs/:jid/exceptions?maxExceptions=&failureLabelFilter=` | [`RestBackend::job_exceptions`] | 200 |
//! | `GET /jobs/:jid/config` | [`RestBackend::job_config`] | 200 |
//! | `GET /jobs/:jid/checkpoints` | [`RestBackend::job_checkpoints`] | 200 |
//! | `GET /jobs/:jid/checkpoints/config` | [`RestBackend::job_checkpoints_config`] | 200 |
//! | `GET /jobs/:jid/checkpoints/details/:checkpointid` | [`RestBackend::job_checkpoint_details`] | 200 |
//! | `GET /jobs/:jid/status` | [`RestBackend::job_status`] | 200 `{"status"}` |
//! | `GET /jobs/:jid/accumulators` | [`RestBackend::job_accumulators`] | 200 |
//! | `POST /jobs/:jid/savepoints`, `POST /jobs/:jid/stop` | [`RestBackend::trigger_savepoint`] | 202 `{"request-id"}` |
//! | `GET /jobs/:jid/savepoints/:triggerid` | [`RestBackend::savepoint_status`] | 200 |
//! | `GET /taskmanagers` | [`RestBackend::taskmanagers`] | 200 |
//! | `GET /taskmanagers/:tmid` | [`RestBackend::taskmanager_detail`] | 200 |
//! | `GET /jobmanager/config` | [`RestBackend::jobmanager_config`] | 200 |
//! | `POST /jobs/:jid/coordinators/:operatorid` (body: [`CoordinationRequest`](crate::CoordinationRequest)) | [`RestBackend::coordination_request`] | 200 |
//!
//! plus the vertex routes of [`vertex_routes`](crate::vertex_routes), the attempt,
//! accumulator and execution-result routes of [`attempt_routes`](crate::attempt_routes), the metric routes
//! of [`metric_routes`](crate::metric_routes) and the process routes (environment,
//! logs) of [`process_routes`](crate::process_routes), and the web dashboard's files
//! of `web_assets` (`/`, `/index.html`, `/web/*`). Fixed words (`overview`, `metrics`,
//! `status`, …) are routes of their own and win over an id in the same place, so
//! `/jobs/metrics` is never read as a job id.
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
//! Every write must be JSON (else 415) and responses carry the configured
//! `Access-Control-Allow-Origin` (see [`http_policy`](crate::http_policy)); sockets,
//! TLS and connection bounds are [`server`](crate::server)'s.
//! Invariant: no input makes a handler panic.

use crate::backend::RestBackend;
use crate::error::{json_response, ErrorResponse, RestError};
use crate::exceptions::JobExceptions;
use crate::jobs::JobPlanInfo;
use crate::path_params::{bad_parameter, is_hex_id};
use crate::savepoints::{SavepointTriggerRequest, StopWithSavepointRequest};
use crate::server::{serve_app, RestServerOptions};
use crate::status::JobStatusInfo;
use crate::submit::JobSubmitRequest;
use crate::{attempt_routes, coordination, http_policy, metric_routes, process_routes, vertex_routes, web_assets};
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::Serialize;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use weir_core::ids::JobId;

/// The number of exceptions `GET /jobs/:jid/exceptions` returns without
/// `maxExceptions` (Flink's default).
pub const DEFAULT_MAX_EXCEPTIONS: usize = 20;

pub(crate) type Backend = Arc<dyn RestBackend>;

/// Query parameters as sent, in order; a key may repeat.
pub(crate) type QueryPairs = Vec<(String, String)>;

/// The router serving every path of the module table, with and without `/v1`, with no
/// `Access-Control-Allow-Origin` header.
pub fn router(backend: Arc<dyn RestBackend>) -> Router {
    router_with_origin(backend, None)
}

/// [`router()`] whose responses carry `Access-Control-Allow-Origin: allow_origin`
/// when given, and which then answers CORS preflights (`OPTIONS`).
pub fn router_with_origin(backend: Arc<dyn RestBackend>, allow_origin: Option<HeaderValue>) -> Router {
    let mut r: Router<Backend> = Router::new();
    for prefix in ["", "/v1"] {
        r = r
            .route(&format!("{prefix}/overview"), get(overview))
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
            .route(&format!("{prefix}/jobmanager/config"), get(jobmanager_config));
        r = vertex_routes::add(r, prefix);
        r = attempt_routes::add(r, prefix);
        r = metric_routes::add(r, prefix);
        r = process_routes::add(r, prefix);
        r = coordination::add(r, prefix);
    }
    r = web_assets::add(r);
    let preflight_origin = allow_origin.clone();
    r.fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(http_policy::require_json))
        .layer(axum::middleware::from_fn(move |request, next| {
            http_policy::answer_preflight(preflight_origin.clone(), request, next)
        }))
        .layer(axum::middleware::map_response(move |response: Response| {
            let origin = allow_origin.clone();
            async move { http_policy::allow_origin(origin.as_ref(), response) }
        }))
        .with_state(backend)
}

/// Serves [`router()`] on `listener` until the listener fails.
pub async fn serve(listener: TcpListener, backend: Arc<dyn RestBackend>) -> io::Result<()> {
    serve_app(
        listener,
        router(backend),
        RestServerOptions::default(),
        std::future::pending(),
    )
    .await
}

/// Serves [`router()`] on `listener` until `signal` completes, then stops accepting
/// connections and returns once the open ones are done.
pub async fn serve_with_shutdown<F>(listener: TcpListener, backend: Arc<dyn RestBackend>, signal: F) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    serve_app(listener, router(backend), RestServerOptions::default(), signal).await
}

/// A REST server running on the current tokio runtime; dropping the handle asks the
/// server to stop (without waiting), [`RestServerHandle::shutdown`] stops it and waits.
#[derive(Debug)]
pub struct RestServerHandle {
    local_addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl RestServerHandle {
    /// Binds `addr` (e.g. `127.0.0.1:0` for an ephemeral port) and serves `backend`
    /// on a task of the current tokio runtime. Must be called within a runtime.
    pub async fn start(addr: impl ToSocketAddrs, backend: Arc<dyn RestBackend>) -> io::Result<Self> {
        Self::start_with(addr, backend, RestServerOptions::default()).await
    }

    /// [`start`](Self::start) with TLS, CORS and connection bounds of `options`.
    pub async fn start_with(
        addr: impl ToSocketAddrs,
        backend: Arc<dyn RestBackend>,
        options: RestServerOptions,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let (tx, rx) = oneshot::channel::<()>();
        let signal = async move {
            // Either an explicit shutdown or a dropped handle stops the server.
            let _ = rx.await;
        };
        let app = router_with_origin(backend, options.allow_origin.clone());
        let task = tokio::spawn(serve_app(listener, app, options, signal));
        Ok(Self {
            local_addr,
            shutdown: Some(tx),
            task: Some(task),
        })
    }

    /// The bound address (with the actual port when started on port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting connections, waits for the open ones to finish and returns the
    /// server's result.
    pub async fn shutdown(mut self) -> io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.task.take() {
            Some(task) => task.await.map_err(io::Error::other)?,
            None => Ok(()),
        }
    }
}

impl Drop for RestServerHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

// ---------------------------------------------------------------------------------
// Handlers

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
fn reply_with<T: Serialize>(status: StatusCode, result: Result<T, RestError>) -> Response {
    match result {
        Ok(body) => json_response(status, &body),
        Err(e) => e.into_response(),
    }
}

/// The job id of the path, or Flink's 400.
fn job_id(path: Result<Path<String>, PathRejection>) -> Result<JobId, RestError> {
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

/// An unknown path: Flink's static-file handler answers GETs, its router the rest.
async fn not_found(method: Method, uri: Uri) -> Response {
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
async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    json_response(
        StatusCode::METHOD_NOT_ALLOWED,
        &ErrorResponse::single(format!("Request method {method} is not supported for {}.", uri.path())),
    )
}
