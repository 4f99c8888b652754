//! Fresh metrics before a metric read: which requests serve task metrics, and the
//! middleware that lets the backend refresh them first (Flink's handlers call
//! `MetricFetcher.update()` before they read the metric store).
//!
//! Invariant: only `GET` requests for a job's detail, its metrics, its vertices (and
//! their subtasks and attempts) or `/jobs/metrics` wait for a refresh; every other
//! request goes straight to its handler. The path is read as it arrives, so a
//! malformed job id is left to the handler's 400.

use crate::backend::MetricsScope;
use crate::handlers::reply::Backend;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use weir_core::ids::JobId;

/// The task metrics a request to `path` with `method` serves, if any.
pub(crate) fn metrics_scope(method: &Method, path: &str) -> Option<MetricsScope> {
    if method != Method::GET {
        return None;
    }
    let path = path.strip_prefix("/v1").unwrap_or(path);
    let rest = path.strip_prefix("/jobs/")?;
    let mut parts = rest.split('/');
    let first = parts.next()?;
    if first == "metrics" {
        return parts.next().is_none().then_some(MetricsScope::AllJobs);
    }
    let job = JobId::parse(first)?;
    match parts.next() {
        None | Some("") | Some("metrics") | Some("vertices") => Some(MetricsScope::Job(job)),
        Some(_) => None,
    }
}

/// Waits for the backend's refresh of the metrics the request serves, then handles it.
pub(crate) async fn refresh_before_read(State(backend): State<Backend>, request: Request, next: Next) -> Response {
    if let Some(scope) = metrics_scope(request.method(), request.uri().path()) {
        backend.update_metrics(scope).await;
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOB: &str = "0123456789abcdef0123456789abcdef";

    fn scope(method: Method, path: &str) -> Option<MetricsScope> {
        metrics_scope(&method, path)
    }

    #[test]
    fn reads_of_a_jobs_detail_metrics_and_vertices_refresh_that_job() {
        let job = MetricsScope::Job(JobId::parse(JOB).unwrap());
        for path in [
            format!("/jobs/{JOB}"),
            format!("/jobs/{JOB}/"),
            format!("/v1/jobs/{JOB}"),
            format!("/jobs/{JOB}/metrics"),
            format!("/jobs/{JOB}/vertices/abc"),
            format!("/jobs/{JOB}/vertices/abc/watermarks"),
            format!("/jobs/{JOB}/vertices/abc/subtasks/0/attempts/1"),
            format!("/v1/jobs/{JOB}/vertices/abc/subtasks/metrics"),
        ] {
            assert_eq!(scope(Method::GET, &path), Some(job), "{path}");
        }
    }

    #[test]
    fn the_metrics_of_all_jobs_refresh_every_job() {
        assert_eq!(scope(Method::GET, "/jobs/metrics"), Some(MetricsScope::AllJobs));
        assert_eq!(scope(Method::GET, "/v1/jobs/metrics"), Some(MetricsScope::AllJobs));
        assert_eq!(scope(Method::GET, "/jobs/metrics/x"), None);
    }

    #[test]
    fn other_reads_writes_and_malformed_ids_go_straight_to_their_handler() {
        for path in [
            "/jobs".to_string(),
            "/jobs/overview".to_string(),
            "/overview".to_string(),
            "/taskmanagers".to_string(),
            format!("/jobs/{JOB}/plan"),
            format!("/jobs/{JOB}/checkpoints"),
            format!("/jobs/{JOB}/exceptions"),
            "/jobs/not-a-job-id/vertices/abc".to_string(),
            "/jobs/".to_string(),
        ] {
            assert_eq!(scope(Method::GET, &path), None, "{path}");
        }
        assert_eq!(scope(Method::PATCH, &format!("/jobs/{JOB}")), None);
        assert_eq!(scope(Method::POST, &format!("/jobs/{JOB}/vertices/abc")), None);
    }
}
