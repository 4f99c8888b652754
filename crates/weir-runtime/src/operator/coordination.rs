//! How an operator talks to its coordinator on the JobMaster (Flink's
//! `OperatorEventGateway`): the task hands its chain a gateway when it runs on a
//! TaskManager (none where a chain runs without one, as in operator tests). The only
//! event so far is a collect sink's batch of result rows; a send blocks until the
//! JobMaster answered.

use weir_core::collect_batch::CollectBatch;
use weir_core::ids::OperatorId;

/// A collect sink's batch of result rows for its coordinator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectBatchEvent {
    /// The sink operator.
    pub operator_id: OperatorId,
    /// The rows and where they come from.
    pub batch: CollectBatch,
}

/// Sends operator events from a task to the JobMaster.
pub trait OperatorEventGateway: Send + Sync {
    /// Offers `batch` to its coordinator: `Ok(true)` when taken, `Ok(false)` when the
    /// coordinator's buffer is full (offer it again later), `Err` with the reason when
    /// the JobMaster refused it or could not be reached.
    fn send_collect_batch(&self, batch: &CollectBatchEvent) -> Result<bool, String>;
}
