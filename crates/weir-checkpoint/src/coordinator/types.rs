//! The vocabulary of the checkpoint coordinator: the job's vertices and subtasks, the
//! events fed in (acknowledgements, decline reasons, how the job ended), the actions
//! handed out, and completed checkpoints. Plain data; the rules live in the parent
//! module.

use weir_core::checkpoint::{SharedStateFile, StreamStateHandle};
use weir_core::ids::{JobVertexId, OperatorId};
use weir_core::{CheckpointId, CheckpointOptions, SnapshotType};

use crate::metadata::CheckpointMetadata;

/// Flink's prefix of the job failure when too many checkpoints failed in a row.
pub const EXCEEDED_CHECKPOINT_TOLERABLE_FAILURE_MESSAGE: &str = "Exceeded checkpoint tolerable failure threshold.";
/// Abort reason of a pending checkpoint subsumed by a newer completed one.
pub const SUBSUMED_MESSAGE: &str = "Checkpoint has been subsumed.";
/// Abort reason of the pending checkpoints at shutdown.
pub const SHUTDOWN_MESSAGE: &str = "CheckpointCoordinator shutdown.";

/// A vertex of the job, as the coordinator needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VertexInfo {
    /// The vertex.
    pub vertex_id: JobVertexId,
    /// Its name.
    pub name: String,
    /// Its parallelism.
    pub parallelism: u32,
    /// Its max parallelism (number of key groups).
    pub max_parallelism: u32,
    /// The operators of its chain, head first.
    pub operator_ids: Vec<OperatorId>,
    /// Whether it starts with a source: its subtasks receive the trigger.
    pub is_source: bool,
    /// Per subtask, the subtasks of other vertices it reads from (empty for a source),
    /// as ranges: an all-to-all input is one range of the whole producer vertex, so
    /// the size is linear in the parallelism (Flink's `ConsumedPartitionGroup`), never
    /// one entry per producer-consumer pair. A subtask whose upstream subtasks have all
    /// finished is triggered like a source.
    pub upstream: Vec<Vec<UpstreamRange>>,
}

/// Consecutive subtasks of one upstream vertex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamRange {
    /// Index of the upstream vertex in the job's vertex list.
    pub vertex: usize,
    /// Its subtasks read, `start..end`.
    pub subtasks: std::ops::Range<u32>,
}

impl UpstreamRange {
    /// Every subtask of the range.
    pub fn keys(&self) -> impl Iterator<Item = TaskKey> + '_ {
        self.subtasks.clone().map(|subtask| TaskKey {
            vertex: self.vertex,
            subtask,
        })
    }

    /// Ranges covering `keys` (sorted or not): consecutive subtasks of one vertex
    /// become one range.
    pub fn covering(keys: impl IntoIterator<Item = TaskKey>) -> Vec<UpstreamRange> {
        let mut keys: Vec<TaskKey> = keys.into_iter().collect();
        keys.sort();
        keys.dedup();
        let mut out: Vec<UpstreamRange> = Vec::new();
        for k in keys {
            match out.last_mut() {
                Some(r) if r.vertex == k.vertex && r.subtasks.end == k.subtask => r.subtasks.end += 1,
                _ => out.push(UpstreamRange {
                    vertex: k.vertex,
                    subtasks: k.subtask..k.subtask + 1,
                }),
            }
        }
        out
    }
}

/// A subtask: the `vertex`-th vertex of the job, subtask `subtask`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskKey {
    /// Index of the vertex in the job's vertex list.
    pub vertex: usize,
    /// The subtask index.
    pub subtask: u32,
}

/// A subtask's acknowledgement of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubtaskAcknowledgement {
    /// The subtask.
    pub task: TaskKey,
    /// What it reported.
    pub report: SnapshotReport,
}

/// What a task reports with its acknowledgement (as it arrives, before the JobMaster
/// knows which subtask sent it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotReport {
    /// The checkpoint.
    pub checkpoint_id: CheckpointId,
    /// Its snapshot; `None` when it has no state.
    pub handle: Option<StreamStateHandle>,
    /// Bytes of state.
    pub state_size: u64,
    /// Synchronous part of the snapshot.
    pub sync_duration_ms: u64,
    /// Asynchronous part of the snapshot.
    pub async_duration_ms: u64,
    /// Time spent aligning barriers.
    pub alignment_duration_ms: u64,
    /// Bytes of in-flight data persisted as channel state (unaligned checkpoints).
    pub persisted_data: u64,
    /// Its snapshot holds union list state.
    pub union_state: bool,
    /// The shared files (of incremental checkpoints) its snapshot refers to.
    pub shared_state: Vec<SharedStateFile>,
    /// Bytes the checkpoint stored for it (the snapshot and the shared files it
    /// uploaded; `state_size` counts every file it refers to).
    pub checkpointed_size: u64,
}

/// Why a checkpoint was declined or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeclineReason {
    /// The task was not ready (still initializing); not counted.
    TaskNotReady,
    /// The task is not running; not counted.
    TaskNotRunning,
    /// The task finished or is closing; not counted.
    TaskFinished,
    /// The snapshot failed in the task; counted.
    SnapshotFailed,
    /// Barrier alignment failed; counted.
    AlignmentFailed,
    /// The checkpoint timed out; counted.
    Expired,
    /// Writing `_metadata` failed; counted.
    MetadataWriteFailed,
}

impl DeclineReason {
    /// Whether this failure counts toward `tolerable-failed-checkpoints` (Flink ignores
    /// declines because a task is not ready or closing).
    pub fn counts_as_failure(self) -> bool {
        !matches!(
            self,
            DeclineReason::TaskNotReady | DeclineReason::TaskNotRunning | DeclineReason::TaskFinished
        )
    }

    /// Flink's `CheckpointFailureReason` message.
    pub fn message(self) -> &'static str {
        match self {
            DeclineReason::TaskNotReady => "Checkpoint was declined (tasks not ready)",
            DeclineReason::TaskNotRunning => "Not all required tasks are currently running.",
            DeclineReason::TaskFinished => "Checkpoint was declined (task is closing)",
            DeclineReason::SnapshotFailed => "Checkpoint was declined.",
            DeclineReason::AlignmentFailed => "Checkpoint was declined (alignment failed).",
            DeclineReason::Expired => "Checkpoint expired before completing.",
            DeclineReason::MetadataWriteFailed => "Failure to finalize checkpoint.",
        }
    }
}

/// What [`CheckpointCoordinator::acknowledge`](super::CheckpointCoordinator::acknowledge) did with an acknowledgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckOutcome {
    /// Recorded; more acknowledgements are outstanding.
    Acknowledged,
    /// Recorded and it was the last one: the metadata is to be written.
    AllAcknowledged,
    /// The subtask had acknowledged this checkpoint already: ignored.
    Duplicate,
    /// No such pending checkpoint (late, aborted, completed or never triggered): ignored.
    UnknownCheckpoint,
    /// No such subtask in the job: ignored.
    UnknownTask,
    /// Its state handle names a file outside the checkpoint's storage locations: the
    /// checkpoint is declined with that reason (and nothing is done with the file).
    Refused,
}

/// A completed checkpoint or savepoint.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletedCheckpoint {
    /// Its id.
    pub id: CheckpointId,
    /// When it was triggered.
    pub timestamp: i64,
    /// When its metadata was written.
    pub completed_at: i64,
    /// Checkpoint or savepoint.
    pub snapshot_type: SnapshotType,
    /// What a restore reads.
    pub metadata: CheckpointMetadata,
    /// Its directory; `None` with JobManager storage.
    pub external_path: Option<String>,
}

/// How the job ended, for [`CheckpointCoordinator::shutdown`](super::CheckpointCoordinator::shutdown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobTermination {
    /// FINISHED: checkpoints are always discarded.
    Finished,
    /// CANCELED.
    Cancelled,
    /// FAILED.
    Failed,
    /// SUSPENDED (the JobManager loses leadership): nothing is discarded.
    Suspended,
}

/// Something the caller must carry out.
#[derive(Debug, Clone, PartialEq)]
pub enum CoordinatorAction {
    /// Send `triggerCheckpoint` to the root subtasks (unfinished sources, and unfinished
    /// subtasks whose upstream subtasks all finished).
    TriggerCheckpoint {
        /// The checkpoint.
        checkpoint_id: CheckpointId,
        /// Its trigger time.
        timestamp: i64,
        /// How to take it.
        options: CheckpointOptions,
        /// The root subtasks.
        tasks: Vec<TaskKey>,
        /// The directory the tasks may write state files to (the checkpoint or savepoint
        /// directory); `None` with JobManager storage (state is sent inline).
        location: Option<String>,
    },
    /// Write `_metadata` into `target` (`None`: keep it in memory) and report with
    /// [`CheckpointCoordinator::metadata_written`](super::CheckpointCoordinator::metadata_written).
    WriteMetadata {
        /// The checkpoint.
        checkpoint_id: CheckpointId,
        /// What to write.
        metadata: CheckpointMetadata,
        /// Checkpoint or savepoint.
        snapshot_type: SnapshotType,
        /// The checkpoint or savepoint directory; `None` for JobManager storage.
        target: Option<String>,
    },
    /// Send `notifyCheckpointComplete` to every unfinished task (sinks commit).
    NotifyComplete {
        /// The checkpoint.
        checkpoint_id: CheckpointId,
        /// Every unfinished subtask of the job.
        tasks: Vec<TaskKey>,
    },
    /// Send `notifyCheckpointAborted` to every unfinished task.
    NotifyAborted {
        /// The checkpoint.
        checkpoint_id: CheckpointId,
        /// Every unfinished subtask of the job.
        tasks: Vec<TaskKey>,
        /// Why.
        reason: String,
    },
    /// Delete a checkpoint directory or a state file (`metadata::discard`).
    Discard {
        /// The directory or file.
        location: String,
    },
    /// Fail the job (a global failover) with this reason.
    FailJob {
        /// Flink's message.
        reason: String,
    },
}

/// Flink's job failure when too many checkpoints failed in a row.
pub fn tolerable_failure_message(latest: DeclineReason) -> String {
    format!(
        "{EXCEEDED_CHECKPOINT_TOLERABLE_FAILURE_MESSAGE} The latest checkpoint failed due to {}, view the \
         Checkpoint History tab or the Job Manager log to find out why continuous checkpoints failed.",
        latest.message()
    )
}
