//! [`PartitionId`]: how a result partition is named cluster-wide (Flink's
//! `ResultPartitionID`), by the JobManager's deployments, the TaskManagers' partition
//! registries, the data protocol's partition requests and the errors naming a partition.
//!
//! Owns the identifier only; it depends on nothing else of the network stack.

use std::fmt;

/// Identifies a result partition cluster-wide.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PartitionId {
    /// The job (its 32-hex id).
    pub job_id: String,
    /// The job edge (intermediate data set) the partition produces.
    pub job_edge: u32,
    /// The producing subtask's index.
    pub producer_subtask: u32,
    /// The producing execution attempt.
    pub attempt: u32,
}

impl fmt::Display for PartitionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/edge-{}/subtask-{}/attempt-{}",
            self.job_id, self.job_edge, self.producer_subtask, self.attempt
        )
    }
}
