//! The routes under `/jobs/:jid/vertices/:vid` (each also under `/v1`):
//!
//! | path | backend call | answer |
//! |---|---|---|
//! | `…/:vid` | [`RestBackend::vertex_detail`] | Flink's `JobVertexDetailsInfo` |
//! | `…/:vid/backpressure` | [`RestBackend::vertex_backpressure`] | `JobVertexBackPressureInfo` |
//! | `…/:vid/subtasks/:subtaskindex` | [`RestBackend::subtask_detail`] | `SubtaskExecutionAttemptDetailsInfo` |
//! | `…/:vid/subtasktimes` | [`RestBackend::vertex_subtask_times`] | `SubtasksTimesInfo` |
//! | `…/:vid/taskmanagers` | [`RestBackend::vertex_taskmanagers`] | `JobVertexTaskManagersInfo` |
//! | `…/:vid/watermarks` | [`RestBackend::vertex_subtask_metrics`] | `[{"id": "<i>.currentInputWatermark", "value"}]` |
//!
//! Errors as Flink's: a malformed job or vertex id or subtask index is 400 (see
//! `handlers::path_params`); an unknown job 404 [`RestError::JobNotFound`], an unknown
//! vertex 404 [`RestError::vertex_not_found`], a subtask index beyond the parallelism
//! 404 [`RestError::subtask_not_found`]. The metric routes of a vertex are in
//! [`crate::handlers::metrics`].
//!
//! [`RestBackend::vertex_detail`]: crate::RestBackend::vertex_detail
//! [`RestBackend::vertex_backpressure`]: crate::RestBackend::vertex_backpressure
//! [`RestBackend::subtask_detail`]: crate::RestBackend::subtask_detail
//! [`RestBackend::vertex_subtask_times`]: crate::RestBackend::vertex_subtask_times
//! [`RestBackend::vertex_taskmanagers`]: crate::RestBackend::vertex_taskmanagers
//! [`RestBackend::vertex_subtask_metrics`]: crate::RestBackend::vertex_subtask_metrics

use crate::error::RestError;
use crate::handlers::path_params::{PathParams, RawPath};
use crate::handlers::reply::{call, reply, Backend};
use crate::messages::metrics::Metric;
use crate::metric_names::CURRENT_INPUT_WATERMARK;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use weir_core::ids::JobId;

/// Adds the routes of the module table under `prefix`.
pub(crate) fn add(r: Router<Backend>, prefix: &str) -> Router<Backend> {
    let v = format!("{prefix}/jobs/{{jid}}/vertices/{{vid}}");
    r.route(&v, get(vertex_detail))
        .route(&format!("{v}/backpressure"), get(vertex_backpressure))
        .route(&format!("{v}/subtasks/{{subtaskindex}}"), get(subtask_detail))
        .route(&format!("{v}/subtasktimes"), get(subtask_times))
        .route(&format!("{v}/taskmanagers"), get(vertex_taskmanagers))
        .route(&format!("{v}/watermarks"), get(vertex_watermarks))
}

/// The job and vertex of the path, or Flink's 400.
pub(crate) fn job_and_vertex(path: RawPath) -> Result<(PathParams, JobId, String), RestError> {
    let p = PathParams::of(path)?;
    let jid = p.job()?;
    let vid = p.vertex()?;
    Ok((p, jid, vid))
}

async fn vertex_detail(State(b): State<Backend>, path: RawPath) -> Response {
    reply(job_and_vertex(path).and_then(|(_, jid, vid)| call(|| b.vertex_detail(jid, &vid))))
}

async fn vertex_backpressure(State(b): State<Backend>, path: RawPath) -> Response {
    reply(job_and_vertex(path).and_then(|(_, jid, vid)| call(|| b.vertex_backpressure(jid, &vid))))
}

async fn subtask_detail(State(b): State<Backend>, path: RawPath) -> Response {
    reply(job_and_vertex(path).and_then(|(p, jid, vid)| {
        let subtask = p.subtask()?;
        call(|| b.subtask_detail(jid, &vid, subtask))
    }))
}

async fn subtask_times(State(b): State<Backend>, path: RawPath) -> Response {
    reply(job_and_vertex(path).and_then(|(_, jid, vid)| call(|| b.vertex_subtask_times(jid, &vid))))
}

async fn vertex_taskmanagers(State(b): State<Backend>, path: RawPath) -> Response {
    reply(job_and_vertex(path).and_then(|(_, jid, vid)| call(|| b.vertex_taskmanagers(jid, &vid))))
}

async fn vertex_watermarks(State(b): State<Backend>, path: RawPath) -> Response {
    reply(job_and_vertex(path).and_then(|(_, jid, vid)| {
        let subtasks = call(|| b.vertex_subtask_metrics(jid, &vid))?;
        let watermarks: Vec<Metric> = subtasks
            .iter()
            .enumerate()
            .filter_map(|(i, m)| {
                m.get(CURRENT_INPUT_WATERMARK).map(|v| Metric {
                    id: format!("{i}.{CURRENT_INPUT_WATERMARK}"),
                    value: Some(v.to_flink_string()),
                })
            })
            .collect();
        Ok(watermarks)
    }))
}
