//! The vocabulary of checkpoints shared by the JobManager and the tasks: checkpoint ids,
//! what kind of snapshot is taken, the barrier that travels in band, and the handle
//! of a piece of snapshotted state (inline bytes or a file).
//!
//! Checkpoint ids start at 1 and only grow within a job (savepoints take ids from the
//! same counter, as in Flink).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A checkpoint's (or savepoint's) id: 1, 2, 3, … per job.
pub type CheckpointId = u64;

/// `execution.checkpointing.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CheckpointingMode {
    /// Barriers are aligned: a task snapshots after every input's barrier, holding back
    /// the channels whose barrier came first (Flink's default).
    ExactlyOnce,
    /// No alignment: a task snapshots when the last input's barrier arrives, records
    /// after an early barrier are processed at once (they may be replayed on restore).
    AtLeastOnce,
}

impl CheckpointingMode {
    /// Flink's name: `EXACTLY_ONCE` or `AT_LEAST_ONCE`.
    pub fn flink_name(self) -> &'static str {
        match self {
            CheckpointingMode::ExactlyOnce => "EXACTLY_ONCE",
            CheckpointingMode::AtLeastOnce => "AT_LEAST_ONCE",
        }
    }

    /// Parses Flink's name, case-insensitively.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_uppercase().replace('-', "_").as_str() {
            "EXACTLY_ONCE" => Some(CheckpointingMode::ExactlyOnce),
            "AT_LEAST_ONCE" => Some(CheckpointingMode::AtLeastOnce),
            _ => None,
        }
    }
}

impl fmt::Display for CheckpointingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.flink_name())
    }
}

/// What a snapshot is for (Flink's `SnapshotType`/`CheckpointType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SnapshotType {
    /// A periodic checkpoint, owned by Weir.
    Checkpoint,
    /// A savepoint the user asked for; the job goes on.
    Savepoint,
    /// The savepoint of stop-with-savepoint: the job finishes after it.
    SyncSavepoint,
}

impl SnapshotType {
    /// Flink's REST `checkpoint_type`: `CHECKPOINT`, `SAVEPOINT`, `SYNC_SAVEPOINT`.
    pub fn flink_name(self) -> &'static str {
        match self {
            SnapshotType::Checkpoint => "CHECKPOINT",
            SnapshotType::Savepoint => "SAVEPOINT",
            SnapshotType::SyncSavepoint => "SYNC_SAVEPOINT",
        }
    }

    /// True for the two savepoint kinds.
    pub fn is_savepoint(self) -> bool {
        !matches!(self, SnapshotType::Checkpoint)
    }
}

/// How a checkpoint is taken; travels with the trigger and the barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CheckpointOptions {
    /// Checkpoint or savepoint.
    pub snapshot_type: SnapshotType,
    /// Aligned (exactly-once) or not (at-least-once).
    pub mode: CheckpointingMode,
}

impl CheckpointOptions {
    /// A periodic checkpoint in `mode`.
    pub fn checkpoint(mode: CheckpointingMode) -> Self {
        Self {
            snapshot_type: SnapshotType::Checkpoint,
            mode,
        }
    }

    /// True when channels must be aligned on this barrier (exactly-once, and always for
    /// savepoints, which are aligned in Flink too).
    pub fn needs_alignment(&self) -> bool {
        self.mode == CheckpointingMode::ExactlyOnce || self.snapshot_type.is_savepoint()
    }
}

/// The in-band marker of checkpoint `id` (Flink's `CheckpointBarrier`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CheckpointBarrier {
    /// The checkpoint.
    pub id: CheckpointId,
    /// When the coordinator triggered it, ms since the epoch.
    pub timestamp: i64,
    /// How it is taken.
    pub options: CheckpointOptions,
}

/// Where a piece of snapshotted state lives (Flink's `StreamStateHandle`).
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StreamStateHandle {
    /// Small state, carried in the acknowledgement and stored inside `_metadata`
    /// (below `execution.checkpointing.data-inline-threshold`, or always when the
    /// checkpoints live in the JobManager's memory).
    Inline(Vec<u8>),
    /// A file (local path or object-store URL) of `size` bytes.
    File {
        /// `file:///…`-free local path or an `s3://`, `gs://`, `az://` URL.
        path: String,
        /// Its length in bytes.
        size: u64,
    },
}

impl StreamStateHandle {
    /// Bytes of state it refers to.
    pub fn state_size(&self) -> u64 {
        match self {
            StreamStateHandle::Inline(bytes) => bytes.len() as u64,
            StreamStateHandle::File { size, .. } => *size,
        }
    }
}

impl fmt::Debug for StreamStateHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamStateHandle::Inline(bytes) => write!(f, "Inline({} bytes)", bytes.len()),
            StreamStateHandle::File { path, size } => write!(f, "File({path}, {size} bytes)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_flink_names_and_print_them_back() {
        for mode in [CheckpointingMode::ExactlyOnce, CheckpointingMode::AtLeastOnce] {
            assert_eq!(CheckpointingMode::parse(mode.flink_name()), Some(mode));
        }
        assert_eq!(
            CheckpointingMode::parse("at-least-once"),
            Some(CheckpointingMode::AtLeastOnce)
        );
        assert_eq!(CheckpointingMode::parse("twice"), None);
    }

    #[test]
    fn savepoints_are_aligned_even_in_at_least_once_mode() {
        let mut o = CheckpointOptions::checkpoint(CheckpointingMode::AtLeastOnce);
        assert!(!o.needs_alignment());
        o.snapshot_type = SnapshotType::Savepoint;
        assert!(o.needs_alignment());
        assert!(CheckpointOptions::checkpoint(CheckpointingMode::ExactlyOnce).needs_alignment());
    }
}
