//! What a task tells the JobMaster about its checkpoints (Flink's
//! `CheckpointResponder`): acknowledged with the handle of the stored state, or
//! declined with a reason. The TaskManager implements it over RPC; tests collect.

use weir_core::checkpoint::{SharedStateFile, StreamStateHandle};
use weir_core::CheckpointId;

/// Timings of one task's part of a checkpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnapshotMetrics {
    /// Synchronous part (the copy on the task thread), ms.
    pub sync_duration_ms: u64,
    /// Asynchronous part (writing to checkpoint storage), ms.
    pub async_duration_ms: u64,
    /// Alignment: first barrier to last, ms.
    pub alignment_duration_ms: u64,
}

/// A task's finished part of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletedSnapshot {
    /// The checkpoint.
    pub checkpoint_id: CheckpointId,
    /// Where the task's state is; none for a task without state.
    pub handle: Option<StreamStateHandle>,
    /// Bytes of state (the stored snapshot, channel state included).
    pub state_size: u64,
    /// Bytes of in-flight data recorded as channel state (unaligned checkpoints).
    pub persisted_data: u64,
    /// The snapshot holds union list state.
    pub union_state: bool,
    /// The shared files (of incremental checkpoints) the snapshot refers to.
    pub shared_state: Vec<SharedStateFile>,
    /// Bytes this checkpoint stored: the snapshot and the shared files it uploaded
    /// (Flink's checkpointed size; `state_size` counts every file it refers to).
    pub checkpointed_size: u64,
    /// Timings.
    pub metrics: SnapshotMetrics,
}

/// Receives a task's checkpoint acknowledgements and declines.
pub trait CheckpointResponder: Send + Sync {
    /// The task's part of `snapshot.checkpoint_id` is stored.
    fn acknowledge(&self, snapshot: CompletedSnapshot);
    /// The task could not take part in `checkpoint_id`.
    fn decline(&self, checkpoint_id: CheckpointId, reason: String);
}
