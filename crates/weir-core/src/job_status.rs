//! A job's state (Flink's `JobStatus`), as the JobMaster keeps it and the REST API and
//! the clients show it: one type below both, written in JSON as Flink writes it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The state of a job (Flink's `JobStatus`), written in upper case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobStatus {
    /// The job was submitted and is being set up (JobMaster not yet running it).
    Initializing,
    /// The job's ExecutionGraph exists; no task has been scheduled yet.
    Created,
    /// Some tasks are scheduled or running.
    Running,
    /// The job failed and waits for its tasks to stop.
    Failing,
    /// The job failed for good (terminal).
    Failed,
    /// The job is being cancelled and waits for its tasks to stop.
    Cancelling,
    /// The job was cancelled (terminal).
    Canceled,
    /// Every task finished (terminal).
    Finished,
    /// The job is being restarted after a failure.
    Restarting,
    /// The job was suspended, e.g. by a lost leadership; another JobManager may resume it.
    Suspended,
    /// The JobManager is re-learning the job's state after its own failover.
    Reconciling,
}

impl JobStatus {
    /// Every status, in declaration order.
    pub const ALL: [JobStatus; 11] = [
        JobStatus::Initializing,
        JobStatus::Created,
        JobStatus::Running,
        JobStatus::Failing,
        JobStatus::Failed,
        JobStatus::Cancelling,
        JobStatus::Canceled,
        JobStatus::Finished,
        JobStatus::Restarting,
        JobStatus::Suspended,
        JobStatus::Reconciling,
    ];

    /// Flink's name, e.g. `"RUNNING"`.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Initializing => "INITIALIZING",
            JobStatus::Created => "CREATED",
            JobStatus::Running => "RUNNING",
            JobStatus::Failing => "FAILING",
            JobStatus::Failed => "FAILED",
            JobStatus::Cancelling => "CANCELLING",
            JobStatus::Canceled => "CANCELED",
            JobStatus::Finished => "FINISHED",
            JobStatus::Restarting => "RESTARTING",
            JobStatus::Suspended => "SUSPENDED",
            JobStatus::Reconciling => "RECONCILING",
        }
    }

    /// FINISHED, CANCELED and FAILED: the job is over for the whole cluster and its
    /// resources (and HA data) can be released.
    pub fn is_globally_terminal(self) -> bool {
        matches!(self, JobStatus::Finished | JobStatus::Canceled | JobStatus::Failed)
    }

    /// The globally terminal states plus SUSPENDED: this JobManager is done with the
    /// job (another one may resume a suspended job).
    pub fn is_terminal(self) -> bool {
        self.is_globally_terminal() || self == JobStatus::Suspended
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
