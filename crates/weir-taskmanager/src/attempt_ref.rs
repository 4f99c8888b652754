//! What every report of an execution attempt to its JobMaster names: the job, the
//! attempt, and the fencing token of the JobMaster that deployed it (Flink's
//! `JobMasterId`). The JobMaster refuses a state report, checkpoint acknowledgement or
//! decline, or collect batch of its job without that token, so a peer that only knows
//! the ids (the REST API lists them) cannot fail a task or acknowledge its checkpoint.

use weir_rpc::TaskDeploymentDescriptor;

/// The attempt a report speaks for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AttemptRef {
    /// The job's id (32 hex).
    pub job_id: String,
    /// The execution attempt's id.
    pub attempt_id: String,
    /// The deploying JobMaster's fencing token.
    pub job_master_id: String,
}

impl AttemptRef {
    /// The attempt `tdd` deploys.
    pub fn of(tdd: &TaskDeploymentDescriptor) -> Self {
        AttemptRef {
            job_id: tdd.job_id.clone(),
            attempt_id: tdd.attempt_id.clone(),
            job_master_id: tdd.job_master_id.clone(),
        }
    }
}
