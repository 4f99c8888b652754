//! How an operator talks to its coordinator on the JobMaster (Flink's
//! `OperatorEventGateway`): the task hands its chain a gateway when it runs on a
//! TaskManager (none in the in-process executor, which has no JobMaster). The only
//! event so far is a collect sink's batch of result rows; a send blocks until the
//! JobMaster answered.

use weir_core::ids::OperatorId;

/// A batch of a collect sink subtask's result rows for its coordinator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectBatchEvent {
    /// The sink operator.
    pub operator_id: OperatorId,
    /// The sink subtask.
    pub subtask_index: u32,
    /// The sink's parallelism.
    pub parallelism: u32,
    /// The subtask's attempt number.
    pub attempt_number: u32,
    /// Rows this attempt sent before this batch.
    pub offset: u64,
    /// The rows, each one JSON array.
    pub rows: Vec<String>,
    /// The subtask's input ended: no rows follow.
    pub end_of_results: bool,
    /// The coordinator's buffer the sink asks for, in bytes.
    pub buffer_bytes: u64,
}

/// Sends operator events from a task to the JobMaster.
pub trait OperatorEventGateway: Send + Sync {
    /// Offers `batch` to its coordinator: `Ok(true)` when taken, `Ok(false)` when the
    /// coordinator's buffer is full (offer it again later), `Err` with the reason when
    /// the JobMaster refused it or could not be reached.
    fn send_collect_batch(&self, batch: &CollectBatchEvent) -> Result<bool, String>;
}
