//! Job responses: `GET /jobs`, `GET /jobs/overview`, `GET /jobs/:jid` and
//! `GET /jobs/:jid/plan`.
//!
//! Owns [`JobsList`], [`JobsOverview`] (of [`JobOverview`]), [`JobDetail`] (of
//! [`VertexDetail`] with [`VertexMetrics`]) and the plan ([`JobPlanInfo`], [`JobPlan`],
//! [`PlanNode`], [`PlanInput`]).
//!
//! Conventions, as in Flink: times are milliseconds since the epoch, `end-time` is -1
//! while the job or vertex has not ended, `duration` runs until `now` while it has
//! not; ids are 32 lower-case hex characters. Flink's key spellings are inconsistent
//! (`jobType` in the overview, `job-type` in the detail) and kept as they are.

use crate::messages::status::{ExecutionState, ExecutionStateCounts, JobStatus, JobStatusTimestamps, JobTaskCounts};
use crate::serde_util::{display, jackson_double};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use weir_core::ids::JobId;

/// Whether a job is a streaming or a batch job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobType {
    /// An unbounded (or bounded, run in streaming mode) job.
    Streaming,
    /// A job run in batch mode.
    Batch,
}

/// Which scheduler runs a job, as Flink names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SchedulerType {
    /// The default (pipelined region) scheduler.
    Default,
    /// The adaptive (reactive) scheduler.
    Adaptive,
    /// The adaptive batch scheduler.
    AdaptiveBatch,
}

/// The body of `GET /jobs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobsList {
    /// Every job the cluster knows, running or finished.
    pub jobs: Vec<JobIdWithStatus>,
}

/// One job of [`JobsList`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct JobIdWithStatus {
    /// The job id.
    #[serde(serialize_with = "display")]
    pub id: JobId,
    /// The job's current status.
    pub status: JobStatus,
}

/// The body of `GET /jobs/overview`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobsOverview {
    /// One entry per job the cluster knows.
    pub jobs: Vec<JobOverview>,
}

impl JobsOverview {
    /// The `GET /jobs` view of these jobs.
    pub fn to_jobs_list(&self) -> JobsList {
        JobsList {
            jobs: self
                .jobs
                .iter()
                .map(|j| JobIdWithStatus {
                    id: j.jid,
                    status: j.state,
                })
                .collect(),
        }
    }
}

/// One job of [`JobsOverview`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobOverview {
    /// The job id.
    #[serde(serialize_with = "display")]
    pub jid: JobId,
    /// The job's name.
    pub name: String,
    /// Streaming or batch.
    #[serde(rename = "jobType")]
    pub job_type: JobType,
    /// The scheduler running the job.
    #[serde(rename = "schedulerType")]
    pub scheduler_type: SchedulerType,
    /// When the job was submitted (ms since the epoch).
    #[serde(rename = "start-time")]
    pub start_time: i64,
    /// When the job reached a terminal state, -1 before.
    #[serde(rename = "end-time")]
    pub end_time: i64,
    /// Milliseconds from start to end, or to now while running.
    pub duration: i64,
    /// The job's current status.
    pub state: JobStatus,
    /// When the job's status last changed (ms since the epoch).
    #[serde(rename = "last-modification")]
    pub last_modification: i64,
    /// Subtasks per execution state, and their total.
    pub tasks: JobTaskCounts,
    /// Operators not yet part of the running graph (Flink's incremental job graph
    /// generation; Weir: 0).
    #[serde(rename = "pending-operators")]
    pub pending_operators: u32,
}

/// The body of `GET /jobs/:jid`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobDetail {
    /// The job id.
    #[serde(serialize_with = "display")]
    pub jid: JobId,
    /// The application the job belongs to; Flink 2.3 writes the job id for a job
    /// submitted on its own, and so does Weir.
    #[serde(rename = "application-id", serialize_with = "display")]
    pub application_id: JobId,
    /// The job's name.
    pub name: String,
    /// Whether the job can be stopped gracefully (Flink: only with stoppable sources;
    /// Weir: false).
    #[serde(rename = "isStoppable")]
    pub is_stoppable: bool,
    /// The job's current status.
    pub state: JobStatus,
    /// Streaming or batch.
    #[serde(rename = "job-type")]
    pub job_type: JobType,
    /// The scheduler running the job.
    #[serde(rename = "schedulerType")]
    pub scheduler_type: SchedulerType,
    /// When the job was submitted (ms since the epoch).
    #[serde(rename = "start-time")]
    pub start_time: i64,
    /// When the job reached a terminal state, -1 before.
    #[serde(rename = "end-time")]
    pub end_time: i64,
    /// Milliseconds from start to end, or to `now` while running.
    pub duration: i64,
    /// The job-wide max parallelism, -1 when unset (per-vertex values apply).
    #[serde(rename = "maxParallelism")]
    pub max_parallelism: i64,
    /// When this response was made (ms since the epoch).
    pub now: i64,
    /// When the job entered each status.
    pub timestamps: JobStatusTimestamps,
    /// The job's vertices (operator chains), in topological order.
    pub vertices: Vec<VertexDetail>,
    /// Subtasks per execution state over all vertices.
    #[serde(rename = "status-counts")]
    pub status_counts: ExecutionStateCounts,
    /// The job's plan (the same as `GET /jobs/:jid/plan`'s `plan`).
    pub plan: JobPlan,
    /// Operators not yet part of the running graph (Weir: 0).
    #[serde(rename = "pending-operators")]
    pub pending_operators: u32,
}

/// One vertex of [`JobDetail`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VertexDetail {
    /// The JobVertex id (32 hex).
    pub id: String,
    /// The vertex's slot sharing group id (32 hex in Flink).
    #[serde(rename = "slotSharingGroupId")]
    pub slot_sharing_group_id: String,
    /// The chained name, e.g. `Source: Lines -> FlatMap`.
    pub name: String,
    /// The vertex's max parallelism (number of key groups).
    #[serde(rename = "maxParallelism")]
    pub max_parallelism: u32,
    /// Number of subtasks; -1 while the adaptive batch scheduler has not decided it
    /// (as Flink's undecided `ExecutionJobVertex`).
    pub parallelism: i64,
    /// The aggregate state of the vertex's subtasks.
    pub status: ExecutionState,
    /// When the first subtask started running (ms since the epoch), -1 before.
    #[serde(rename = "start-time")]
    pub start_time: i64,
    /// When the last subtask reached a terminal state, -1 before.
    #[serde(rename = "end-time")]
    pub end_time: i64,
    /// Milliseconds from start to end, or to now while running; -1 before the start.
    pub duration: i64,
    /// Subtasks per execution state.
    pub tasks: ExecutionStateCounts,
    /// I/O and time metrics summed over the subtasks.
    pub metrics: VertexMetrics,
}

/// `metrics` of [`VertexDetail`]: totals over the vertex's subtasks. Each `*-complete`
/// flag says whether every subtask reported the value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VertexMetrics {
    /// Bytes read from the network.
    #[serde(rename = "read-bytes")]
    pub read_bytes: i64,
    /// Whether `read-bytes` covers every subtask.
    #[serde(rename = "read-bytes-complete")]
    pub read_bytes_complete: bool,
    /// Bytes written to the network.
    #[serde(rename = "write-bytes")]
    pub write_bytes: i64,
    /// Whether `write-bytes` covers every subtask.
    #[serde(rename = "write-bytes-complete")]
    pub write_bytes_complete: bool,
    /// Records read from the network.
    #[serde(rename = "read-records")]
    pub read_records: i64,
    /// Whether `read-records` covers every subtask.
    #[serde(rename = "read-records-complete")]
    pub read_records_complete: bool,
    /// Records written to the network.
    #[serde(rename = "write-records")]
    pub write_records: i64,
    /// Whether `write-records` covers every subtask.
    #[serde(rename = "write-records-complete")]
    pub write_records_complete: bool,
    /// Milliseconds the subtasks spent backpressured.
    #[serde(rename = "accumulated-backpressured-time")]
    pub accumulated_backpressured_time: i64,
    /// Milliseconds the subtasks spent idle (waiting for input).
    #[serde(rename = "accumulated-idle-time")]
    pub accumulated_idle_time: i64,
    /// Milliseconds the subtasks spent busy; `NaN` (written `"NaN"`) when unknown, as
    /// Flink writes it for sources.
    #[serde(rename = "accumulated-busy-time", serialize_with = "jackson_double")]
    pub accumulated_busy_time: f64,
}

impl Default for VertexMetrics {
    /// Nothing measured yet: zero counts, every flag complete, busy time unknown.
    fn default() -> Self {
        Self {
            read_bytes: 0,
            read_bytes_complete: true,
            write_bytes: 0,
            write_bytes_complete: true,
            read_records: 0,
            read_records_complete: true,
            write_records: 0,
            write_records_complete: true,
            accumulated_backpressured_time: 0,
            accumulated_idle_time: 0,
            accumulated_busy_time: f64::NAN,
        }
    }
}

/// The body of `GET /jobs/:jid/plan`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobPlanInfo {
    /// The plan.
    pub plan: JobPlan,
}

/// A job's plan in Flink's JSON form (the web UI draws it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobPlan {
    /// The job id.
    #[serde(serialize_with = "display")]
    pub jid: JobId,
    /// The job's name.
    pub name: String,
    /// Streaming or batch.
    #[serde(rename = "type")]
    pub job_type: JobType,
    /// One node per JobVertex (Flink lists sinks first; any order is accepted).
    pub nodes: Vec<PlanNode>,
}

/// One node (JobVertex) of [`JobPlan`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanNode {
    /// The JobVertex id (32 hex).
    pub id: String,
    /// Flink writes `""` for streaming jobs.
    pub operator: String,
    /// Number of subtasks; -1 while the adaptive batch scheduler has not decided it.
    pub parallelism: i64,
    /// Flink writes `""` for streaming jobs.
    pub operator_strategy: String,
    /// The chained operators, e.g. `Source: Lines<br/>+- FlatMap<br/>`.
    pub description: String,
    /// Always empty for streaming jobs.
    pub optimizer_properties: BTreeMap<String, String>,
    /// The vertex's inputs; omitted for sources.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<PlanInput>,
}

/// One input of a [`PlanNode`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanInput {
    /// The producing JobVertex's id.
    pub id: String,
    /// The input's index among the node's inputs.
    pub num: u32,
    /// The result partition type in lower case, e.g. `pipelined_bounded`.
    pub exchange: String,
    /// The partitioner, e.g. `HASH`, `FORWARD`, `REBALANCE`.
    pub ship_strategy: String,
}
