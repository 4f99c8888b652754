//! Who a running subtask is, in the terms of Flink's task metric group: the variables a
//! reporter labels the subtask's metrics with, and what it has published.

use weir_runtime::task::metrics::{OperatorMetricsSnapshot, TaskMetricsSnapshot};

/// A deployed subtask's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskIdentity {
    /// The job's id (32 hex).
    pub job_id: String,
    /// The job's name.
    pub job_name: String,
    /// The job vertex's id (Flink's `task_id`).
    pub vertex_id: String,
    /// The job vertex's name, the chained operator names (Flink's `task_name`).
    pub task_name: String,
    /// The subtask's index, from 0.
    pub subtask_index: u32,
    /// The execution attempt's id.
    pub attempt_id: String,
    /// The execution attempt's number, from 0.
    pub attempt_number: u32,
    /// Whether the task's chain starts with a source (it reports `watermarkLag`).
    pub is_source: bool,
}

/// A running subtask's published metrics, for the metric reporters.
#[derive(Debug, Clone)]
pub struct RunningTaskMetrics {
    /// Who it is.
    pub identity: TaskIdentity,
    /// Its task counters.
    pub task: TaskMetricsSnapshot,
    /// Its operators' counters, head first.
    pub operators: Vec<OperatorMetricsSnapshot>,
}
