//! One execution attempt of a subtask and the accumulators Flink reports per vertex,
//! subtask and attempt:
//!
//! | path | answer |
//! |---|---|
//! | `/jobs/:jid/vertices/:vid/subtasks/:idx/attempts/:attempt` | that attempt's [`SubtaskDetail`] (Flink's `SubtaskExecutionAttemptDetailsInfo`) |
//! | `…/attempts/:attempt/accumulators` | [`SubtaskAttemptAccumulators`] |
//! | `/jobs/:jid/vertices/:vid/accumulators` | [`JobVertexAccumulators`] |
//! | `/jobs/:jid/vertices/:vid/subtasks/accumulators` | [`SubtasksAccumulators`] |
//!
//! An attempt is the current one or an earlier one the JobManager still keeps; any
//! other number is Flink's 404 `Invalid attempt num <n>` ([`invalid_attempt`]). Weir has
//! no user accumulators yet, so every `user-accumulators` list is empty; the shapes,
//! ids, attempt numbers and hosts are Flink's.

use crate::error::RestError;
use crate::messages::accumulators::UserAccumulator;
use crate::messages::vertex_detail::{JobVertexDetail, SubtaskDetail};
use crate::messages::vertex_subtasks::UNASSIGNED;
use serde::Serialize;

/// One attempt of a subtask, as the backend answers it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubtaskAttempt {
    /// The attempt's detail (its own state, times, location and counters).
    pub detail: SubtaskDetail,
    /// The attempt's id (Flink's `ExecutionAttemptID`).
    pub attempt_id: String,
}

/// Flink's 404 for an attempt number the subtask never had (negative, or beyond the
/// current attempt).
pub fn invalid_attempt(attempt: i64) -> RestError {
    RestError::NotFound(format!(
        "org.apache.flink.runtime.rest.handler.RestHandlerException: Invalid attempt num {attempt}"
    ))
}

/// Flink's 404 for an earlier attempt that is no longer kept.
pub fn attempt_not_found(attempt: u32, task_name_with_subtask: &str) -> RestError {
    RestError::NotFound(format!(
        "org.apache.flink.runtime.rest.handler.RestHandlerException: Attempt {attempt} not found in subtask {task_name_with_subtask}"
    ))
}

/// `GET …/subtasks/:idx/attempts/:attempt/accumulators`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubtaskAttemptAccumulators {
    /// The subtask index.
    pub subtask: u32,
    /// The attempt number.
    pub attempt: u32,
    /// The attempt's id.
    pub id: String,
    /// Its user accumulators (none in Weir yet).
    #[serde(rename = "user-accumulators")]
    pub user_accumulators: Vec<UserAccumulator>,
}

impl SubtaskAttemptAccumulators {
    /// The accumulators of `attempt`.
    pub fn of(attempt: &SubtaskAttempt) -> Self {
        Self {
            subtask: attempt.detail.subtask,
            attempt: attempt.detail.attempt,
            id: attempt.attempt_id.clone(),
            user_accumulators: Vec::new(),
        }
    }
}

/// `GET /jobs/:jid/vertices/:vid/accumulators`: the vertex's accumulators, aggregated
/// over its subtasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobVertexAccumulators {
    /// The vertex id.
    pub id: String,
    /// Its user accumulators (none in Weir yet).
    #[serde(rename = "user-accumulators")]
    pub user_accumulators: Vec<UserAccumulator>,
}

impl JobVertexAccumulators {
    /// The accumulators of the vertex of `detail`.
    pub fn of(detail: &JobVertexDetail) -> Self {
        Self {
            id: detail.id.clone(),
            user_accumulators: Vec::new(),
        }
    }
}

/// `GET /jobs/:jid/vertices/:vid/subtasks/accumulators`: each subtask's current attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubtasksAccumulators {
    /// The vertex id.
    pub id: String,
    /// The vertex's parallelism.
    pub parallelism: u32,
    /// One entry per subtask, in index order.
    pub subtasks: Vec<SubtaskAccumulators>,
}

/// One subtask in [`SubtasksAccumulators`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubtaskAccumulators {
    /// The subtask index.
    pub subtask: u32,
    /// Its current attempt number.
    pub attempt: u32,
    /// The host of its TaskManager, `(unassigned)` before deployment.
    pub host: String,
    /// Its user accumulators (none in Weir yet).
    #[serde(rename = "user-accumulators")]
    pub user_accumulators: Vec<UserAccumulator>,
}

impl SubtasksAccumulators {
    /// The accumulators of the subtasks of `detail`.
    pub fn of(detail: &JobVertexDetail) -> Self {
        let subtasks = detail
            .subtasks
            .iter()
            .map(|s| SubtaskAccumulators {
                subtask: s.subtask,
                attempt: s.attempt,
                host: host_of(&s.endpoint),
                user_accumulators: Vec::new(),
            })
            .collect();
        Self {
            id: detail.id.clone(),
            parallelism: detail.parallelism,
            subtasks,
        }
    }
}

/// The host part of a `host:port` endpoint (`(unassigned)` for none).
fn host_of(endpoint: &str) -> String {
    if endpoint.is_empty() || endpoint == UNASSIGNED {
        return UNASSIGNED.to_string();
    }
    match endpoint.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host.to_string(),
        _ => endpoint.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_the_endpoint_without_its_port() {
        assert_eq!(host_of("localhost:37831"), "localhost");
        assert_eq!(host_of("[::1]:80"), "[::1]");
        assert_eq!(host_of(""), UNASSIGNED);
        assert_eq!(host_of(UNASSIGNED), UNASSIGNED);
        assert_eq!(host_of("box"), "box");
    }
}
