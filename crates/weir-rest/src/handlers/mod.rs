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
//! | `POST /jobs` (body: [`JobSubmitRequest`](crate::JobSubmitRequest)) | [`RestBackend::submit_job`] | 202 `{"jobid"}` |
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
//! plus the routes of the sibling modules below, and the web dashboard's files
//! of `web_assets` (`/`, `/index.html`, `/web/*`). Fixed words (`overview`, `metrics`,
//! `status`, …) are routes of their own and win over an id in the same place, so
//! `/jobs/metrics` is never read as a job id.
//!
//! One file per resource: [`jobs`] (jobs, savepoints, checkpoints, TaskManagers,
//! configuration), [`vertices`], [`attempts`], [`metrics`], [`process`] (environment
//! and logs), [`coordination`] and `web_assets`; `reply` and `path_params` hold what
//! they share; `metric_freshness` lets the backend refresh task metrics before a
//! read of them. Errors are listed in [`jobs`]. Every write must be JSON (else 415) and
//! responses carry the configured `Access-Control-Allow-Origin` (see
//! [`http_policy`]); sockets, TLS and connection bounds are
//! [`server`](crate::server)'s.

pub mod attempts;
pub mod coordination;
pub mod jobs;
mod metric_freshness;
pub mod metrics;
pub(crate) mod path_params;
pub mod process;
pub(crate) mod reply;
pub mod vertices;
mod web_assets;

use crate::backend::RestBackend;
use crate::http_policy;
use axum::http::HeaderValue;
use axum::response::Response;
use axum::Router;
use reply::{method_not_allowed, not_found, Backend};
use std::sync::Arc;

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
        r = jobs::add(r, prefix);
        r = vertices::add(r, prefix);
        r = attempts::add(r, prefix);
        r = metrics::add(r, prefix);
        r = process::add(r, prefix);
        r = coordination::add(r, prefix);
    }
    r = web_assets::add(r);
    let preflight_origin = allow_origin.clone();
    r.fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            backend.clone(),
            metric_freshness::refresh_before_read,
        ))
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
