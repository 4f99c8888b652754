//! The routes of [`crate::messages::attempts`] and [`crate::messages::execution_result`] (each also under
//! `/v1`):
//!
//! | path | backend call |
//! |---|---|
//! | `/jobs/:jid/execution-result` | [`RestBackend::job_execution_result`] |
//! | `/jobs/:jid/vertices/:vid/accumulators` | [`RestBackend::vertex_detail`] |
//! | `/jobs/:jid/vertices/:vid/subtasks/accumulators` | [`RestBackend::vertex_detail`] |
//! | `/jobs/:jid/vertices/:vid/subtasks/:idx/attempts/:attempt` | [`RestBackend::subtask_attempt`] |
//! | `…/attempts/:attempt/accumulators` | [`RestBackend::subtask_attempt`] |
//!
//! The attempt number is Flink's `attempt` path parameter: an `int`, else Flink's 400;
//! a negative one or one beyond the current attempt is Flink's 404
//! ([`crate::messages::attempts::invalid_attempt`]). `subtasks/accumulators` is a route of its own
//! and wins over a subtask index, as Flink's fixed words do.
//!
//! [`RestBackend::job_execution_result`]: crate::RestBackend::job_execution_result
//! [`RestBackend::vertex_detail`]: crate::RestBackend::vertex_detail
//! [`RestBackend::subtask_attempt`]: crate::RestBackend::subtask_attempt

use crate::error::RestError;
use crate::handlers::path_params::bad_parameter;
use crate::handlers::path_params::{PathParams, RawPath};
use crate::handlers::reply::{call, reply, Backend};
use crate::handlers::vertices::job_and_vertex;
use crate::messages::attempts::{
    invalid_attempt, JobVertexAccumulators, SubtaskAttemptAccumulators, SubtasksAccumulators,
};
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::Router;

/// Adds the routes of the module table under `prefix`.
pub(crate) fn add(r: Router<Backend>, prefix: &str) -> Router<Backend> {
    let v = format!("{prefix}/jobs/{{jid}}/vertices/{{vid}}");
    let attempt = format!("{v}/subtasks/{{subtaskindex}}/attempts/{{attempt}}");
    r.route(
        &format!("{prefix}/jobs/{{jid}}/execution-result"),
        get(execution_result),
    )
    .route(&format!("{v}/accumulators"), get(vertex_accumulators))
    .route(&format!("{v}/subtasks/accumulators"), get(subtasks_accumulators))
    .route(&attempt, get(subtask_attempt))
    .route(&format!("{attempt}/accumulators"), get(subtask_attempt_accumulators))
}

/// The attempt number of the path (`attempt`): not an `int` is Flink's 400, a negative
/// one Flink's 404.
pub(crate) fn attempt_number(p: &PathParams) -> Result<u32, RestError> {
    let raw = p.text("attempt")?;
    let n: i32 = raw.parse().map_err(|_| bad_parameter("path", "attempt", raw))?;
    u32::try_from(n).map_err(|_| invalid_attempt(i64::from(n)))
}

async fn execution_result(State(b): State<Backend>, path: RawPath) -> Response {
    reply(
        PathParams::of(path)
            .and_then(|p| p.job())
            .and_then(|jid| call(|| b.job_execution_result(jid))),
    )
}

async fn vertex_accumulators(State(b): State<Backend>, path: RawPath) -> Response {
    reply(
        job_and_vertex(path)
            .and_then(|(_, jid, vid)| call(|| b.vertex_detail(jid, &vid)).map(|d| JobVertexAccumulators::of(&d))),
    )
}

async fn subtasks_accumulators(State(b): State<Backend>, path: RawPath) -> Response {
    reply(
        job_and_vertex(path)
            .and_then(|(_, jid, vid)| call(|| b.vertex_detail(jid, &vid)).map(|d| SubtasksAccumulators::of(&d))),
    )
}

async fn subtask_attempt(State(b): State<Backend>, path: RawPath) -> Response {
    reply(job_and_vertex(path).and_then(|(p, jid, vid)| {
        let subtask = p.subtask()?;
        let attempt = attempt_number(&p)?;
        call(|| b.subtask_attempt(jid, &vid, subtask, attempt)).map(|a| a.detail)
    }))
}

async fn subtask_attempt_accumulators(State(b): State<Backend>, path: RawPath) -> Response {
    reply(job_and_vertex(path).and_then(|(p, jid, vid)| {
        let subtask = p.subtask()?;
        let attempt = attempt_number(&p)?;
        call(|| b.subtask_attempt(jid, &vid, subtask, attempt)).map(|a| SubtaskAttemptAccumulators::of(&a))
    }))
}
