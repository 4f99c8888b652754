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

/// What a task says when it declines a checkpoint triggered after its input ended: it
/// is closing (Flink's `CHECKPOINT_DECLINED_TASK_CLOSING`, not counted as a failure).
pub const DECLINE_TASK_CLOSING: &str = "the task's input has ended: it is closing";

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

/// How the barriers of an exactly-once checkpoint are handled by a task with several
/// input channels (Flink's `CheckpointOptions.AlignmentType`, without its
/// `AT_LEAST_ONCE`, which is [`CheckpointingMode::AtLeastOnce`] here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AlignmentType {
    /// Channels whose barrier came are held back until every barrier came; with an
    /// aligned-checkpoint timeout the task switches to unaligned when alignment takes
    /// longer.
    Aligned,
    /// The first barrier snapshots at once; in-flight data of the other channels is
    /// recorded as channel state until their barriers come.
    Unaligned,
    /// Aligned whatever the configuration says (savepoints, as in Flink).
    ForcedAligned,
}

impl AlignmentType {
    /// Flink's name: `ALIGNED`, `UNALIGNED` or `FORCED_ALIGNED`.
    pub fn flink_name(self) -> &'static str {
        match self {
            AlignmentType::Aligned => "ALIGNED",
            AlignmentType::Unaligned => "UNALIGNED",
            AlignmentType::ForcedAligned => "FORCED_ALIGNED",
        }
    }

    /// Parses Flink's name, case-insensitively.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_uppercase().replace('-', "_").as_str() {
            "ALIGNED" => Some(AlignmentType::Aligned),
            "UNALIGNED" => Some(AlignmentType::Unaligned),
            "FORCED_ALIGNED" => Some(AlignmentType::ForcedAligned),
            _ => None,
        }
    }
}

/// How a checkpoint is taken; travels with the trigger and the barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CheckpointOptions {
    /// Checkpoint or savepoint.
    pub snapshot_type: SnapshotType,
    /// Aligned (exactly-once) or not (at-least-once).
    pub mode: CheckpointingMode,
    /// Exactly-once only: aligned, unaligned or forced aligned.
    pub alignment: AlignmentType,
    /// Exactly-once aligned checkpoints only: after this many ms of alignment a task
    /// switches to unaligned (`execution.checkpointing.aligned-checkpoint-timeout`);
    /// 0 never switches.
    pub aligned_timeout_ms: u64,
}

impl CheckpointOptions {
    /// A periodic aligned checkpoint in `mode`.
    pub fn checkpoint(mode: CheckpointingMode) -> Self {
        Self {
            snapshot_type: SnapshotType::Checkpoint,
            mode,
            alignment: AlignmentType::Aligned,
            aligned_timeout_ms: 0,
        }
    }

    /// A periodic checkpoint as configured: unaligned when `unaligned` is on in
    /// exactly-once mode, starting aligned and switching after `aligned_timeout` when
    /// that is positive (Flink's `CheckpointOptions.forConfig`).
    pub fn for_config(mode: CheckpointingMode, unaligned: bool, aligned_timeout: std::time::Duration) -> Self {
        let mut options = Self::checkpoint(mode);
        if unaligned && mode == CheckpointingMode::ExactlyOnce {
            if aligned_timeout.is_zero() {
                options.alignment = AlignmentType::Unaligned;
            } else {
                options.aligned_timeout_ms = u64::try_from(aligned_timeout.as_millis()).unwrap_or(u64::MAX);
            }
        }
        options
    }

    /// A savepoint of `snapshot_type`: always aligned (Flink's `FORCED_ALIGNED`).
    pub fn savepoint(snapshot_type: SnapshotType, mode: CheckpointingMode) -> Self {
        Self {
            snapshot_type,
            mode,
            alignment: AlignmentType::ForcedAligned,
            aligned_timeout_ms: 0,
        }
    }

    /// True when the first barrier snapshots at once and in-flight data is recorded
    /// (an exactly-once checkpoint, not a savepoint, marked unaligned).
    pub fn is_unaligned(&self) -> bool {
        self.mode == CheckpointingMode::ExactlyOnce
            && !self.snapshot_type.is_savepoint()
            && self.alignment == AlignmentType::Unaligned
    }

    /// How long alignment may take before the task switches to unaligned, if this
    /// checkpoint may switch at all.
    pub fn aligned_timeout(&self) -> Option<std::time::Duration> {
        (self.mode == CheckpointingMode::ExactlyOnce
            && !self.snapshot_type.is_savepoint()
            && self.alignment == AlignmentType::Aligned
            && self.aligned_timeout_ms > 0)
            .then(|| std::time::Duration::from_millis(self.aligned_timeout_ms))
    }

    /// True when unaligned checkpoints are in play (unaligned, or aligned with a
    /// timeout that may switch): Flink's `unaligned_checkpoint` of the statistics.
    pub fn unaligned_enabled(&self) -> bool {
        self.is_unaligned() || self.aligned_timeout().is_some()
    }

    /// The same options, unaligned (a barrier whose alignment timed out goes on as an
    /// unaligned one, as in Flink's `CheckpointBarrier.asUnaligned`).
    pub fn as_unaligned(self) -> Self {
        Self {
            alignment: AlignmentType::Unaligned,
            aligned_timeout_ms: 0,
            ..self
        }
    }

    /// True when channels must be held back on this barrier: exactly-once aligned
    /// checkpoints and every savepoint (aligned in Flink too), not unaligned ones.
    pub fn needs_alignment(&self) -> bool {
        (self.mode == CheckpointingMode::ExactlyOnce || self.snapshot_type.is_savepoint()) && !self.is_unaligned()
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

/// A file of state shared between checkpoints (an SST file of an incremental RocksDB
/// checkpoint, Flink's shared `StreamStateHandle`s registered in the
/// `SharedStateRegistry`): it lies under `<dir>/<job-id>/shared/` and is deleted only
/// when no retained checkpoint refers to it any more.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SharedStateFile {
    /// Local path or object-store URL.
    pub path: String,
    /// Its length in bytes.
    pub size: u64,
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
    fn options_from_config_are_unaligned_only_in_exactly_once_mode_and_savepoints_never() {
        use std::time::Duration;
        let eo = CheckpointingMode::ExactlyOnce;
        let u = CheckpointOptions::for_config(eo, true, Duration::ZERO);
        assert!(u.is_unaligned() && !u.needs_alignment() && u.unaligned_enabled());
        let t = CheckpointOptions::for_config(eo, true, Duration::from_millis(250));
        assert!(!t.is_unaligned() && t.needs_alignment());
        assert_eq!(t.aligned_timeout(), Some(Duration::from_millis(250)));
        assert!(t.as_unaligned().is_unaligned() && t.as_unaligned().aligned_timeout().is_none());
        let off = CheckpointOptions::for_config(eo, false, Duration::from_secs(1));
        assert!(!off.unaligned_enabled() && off.needs_alignment());
        let alo = CheckpointOptions::for_config(CheckpointingMode::AtLeastOnce, true, Duration::ZERO);
        assert!(!alo.unaligned_enabled() && !alo.needs_alignment());
        let sp = CheckpointOptions::savepoint(SnapshotType::Savepoint, eo);
        assert!(sp.needs_alignment() && !sp.unaligned_enabled());
        for a in [
            AlignmentType::Aligned,
            AlignmentType::Unaligned,
            AlignmentType::ForcedAligned,
        ] {
            assert_eq!(AlignmentType::parse(a.flink_name()), Some(a));
        }
        assert_eq!(AlignmentType::parse("sideways"), None);
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
