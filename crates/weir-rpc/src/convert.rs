//! Conversions between the wire messages and Weir's domain types, so that neither
//! side of the RPC repeats them.

use crate::v1::{state_handle, CheckpointingSettings, FileStateHandle, StateHandle};
use weir_core::checkpoint::StreamStateHandle;
use weir_core::excerpt::excerpt;
use weir_core::{AlignmentType, CheckpointBarrier, CheckpointOptions, CheckpointingMode, SnapshotType};

impl From<&StreamStateHandle> for StateHandle {
    fn from(h: &StreamStateHandle) -> Self {
        StateHandle {
            kind: Some(match h {
                StreamStateHandle::Inline(bytes) => state_handle::Kind::Inline(bytes.clone()),
                StreamStateHandle::File { path, size } => state_handle::Kind::File(FileStateHandle {
                    path: path.clone(),
                    size: *size,
                }),
            }),
        }
    }
}

impl StateHandle {
    /// The domain handle; `None` for a message without one (a peer sending garbage).
    pub fn to_domain(&self) -> Option<StreamStateHandle> {
        match self.kind.as_ref()? {
            state_handle::Kind::Inline(bytes) => Some(StreamStateHandle::Inline(bytes.clone())),
            state_handle::Kind::File(f) => Some(StreamStateHandle::File {
                path: f.path.clone(),
                size: f.size,
            }),
        }
    }
}

/// How a trigger request says to take the checkpoint: its wire fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireOptions<'a> {
    /// `CHECKPOINT`, `SAVEPOINT` or `SYNC_SAVEPOINT`.
    pub snapshot_type: &'a str,
    /// `EXACTLY_ONCE` or `AT_LEAST_ONCE`.
    pub mode: &'a str,
    /// `ALIGNED`, `UNALIGNED`, `FORCED_ALIGNED`; empty means `ALIGNED`.
    pub alignment: &'a str,
    /// Aligned-checkpoint timeout, ms (0: none).
    pub aligned_timeout_ms: u64,
}

/// The barrier of a trigger request; an unknown type, mode or alignment is an error
/// naming it.
pub fn barrier_from_wire(
    checkpoint_id: u64,
    timestamp: i64,
    wire: WireOptions<'_>,
) -> Result<CheckpointBarrier, String> {
    let WireOptions {
        snapshot_type,
        mode,
        alignment,
        aligned_timeout_ms,
    } = wire;
    let snapshot_type = match snapshot_type {
        "CHECKPOINT" => SnapshotType::Checkpoint,
        "SAVEPOINT" => SnapshotType::Savepoint,
        "SYNC_SAVEPOINT" => SnapshotType::SyncSavepoint,
        other => return Err(format!("unknown snapshot type '{}'", excerpt(other))),
    };
    let mode =
        CheckpointingMode::parse(mode).ok_or_else(|| format!("unknown checkpointing mode '{}'", excerpt(mode)))?;
    let alignment = if alignment.is_empty() {
        AlignmentType::Aligned
    } else {
        AlignmentType::parse(alignment)
            .ok_or_else(|| format!("unknown checkpoint alignment '{}'", excerpt(alignment)))?
    };
    Ok(CheckpointBarrier {
        id: checkpoint_id,
        timestamp,
        options: CheckpointOptions {
            snapshot_type,
            mode,
            alignment,
            aligned_timeout_ms,
        },
    })
}

impl CheckpointingSettings {
    /// The checkpoint directory, if one is set.
    pub fn directory(&self) -> Option<&str> {
        (!self.directory.is_empty()).then_some(self.directory.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_an_empty_one_is_refused() {
        for h in [
            StreamStateHandle::Inline(vec![1, 2]),
            StreamStateHandle::File {
                path: "/tmp/x".into(),
                size: 9,
            },
        ] {
            assert_eq!(StateHandle::from(&h).to_domain(), Some(h));
        }
        assert_eq!(StateHandle { kind: None }.to_domain(), None);
    }

    #[test]
    fn barriers_parse_flink_names_and_reject_others() {
        let wire = |snapshot_type, mode, alignment| WireOptions {
            snapshot_type,
            mode,
            alignment,
            aligned_timeout_ms: 0,
        };
        let b = barrier_from_wire(3, 10, wire("SAVEPOINT", "AT_LEAST_ONCE", "")).unwrap();
        assert_eq!(b.options.snapshot_type, SnapshotType::Savepoint);
        assert_eq!(b.options.alignment, AlignmentType::Aligned);
        assert!(barrier_from_wire(3, 10, wire("BACKUP", "EXACTLY_ONCE", ""))
            .unwrap_err()
            .contains("BACKUP"));
        assert!(barrier_from_wire(3, 10, wire("CHECKPOINT", "twice", ""))
            .unwrap_err()
            .contains("twice"));
        assert!(barrier_from_wire(3, 10, wire("CHECKPOINT", "EXACTLY_ONCE", "sideways"))
            .unwrap_err()
            .contains("sideways"));
    }

    #[test]
    fn unaligned_and_timeout_options_survive_the_wire() {
        let options = CheckpointOptions::for_config(
            CheckpointingMode::ExactlyOnce,
            true,
            std::time::Duration::from_millis(40),
        );
        let b = barrier_from_wire(
            1,
            2,
            WireOptions {
                snapshot_type: options.snapshot_type.flink_name(),
                mode: options.mode.flink_name(),
                alignment: options.alignment.flink_name(),
                aligned_timeout_ms: options.aligned_timeout_ms,
            },
        )
        .unwrap();
        assert_eq!(b.options, options);
    }
}
