//! Conversions between the wire messages and Weir's domain types, so that neither
//! side of the RPC repeats them.

use crate::v1::{state_handle, CheckpointingSettings, FileStateHandle, StateHandle};
use weir_core::checkpoint::StreamStateHandle;
use weir_core::{CheckpointBarrier, CheckpointOptions, CheckpointingMode, SnapshotType};

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

/// The barrier of a trigger request; an unknown type or mode is an error naming it.
pub fn barrier_from_wire(
    checkpoint_id: u64,
    timestamp: i64,
    snapshot_type: &str,
    mode: &str,
) -> Result<CheckpointBarrier, String> {
    let snapshot_type = match snapshot_type {
        "CHECKPOINT" => SnapshotType::Checkpoint,
        "SAVEPOINT" => SnapshotType::Savepoint,
        "SYNC_SAVEPOINT" => SnapshotType::SyncSavepoint,
        other => return Err(format!("unknown snapshot type '{other}'")),
    };
    let mode = CheckpointingMode::parse(mode).ok_or_else(|| format!("unknown checkpointing mode '{mode}'"))?;
    Ok(CheckpointBarrier {
        id: checkpoint_id,
        timestamp,
        options: CheckpointOptions { snapshot_type, mode },
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
        let b = barrier_from_wire(3, 10, "SAVEPOINT", "AT_LEAST_ONCE").unwrap();
        assert_eq!(b.options.snapshot_type, SnapshotType::Savepoint);
        assert!(barrier_from_wire(3, 10, "BACKUP", "EXACTLY_ONCE")
            .unwrap_err()
            .contains("BACKUP"));
        assert!(barrier_from_wire(3, 10, "CHECKPOINT", "twice")
            .unwrap_err()
            .contains("twice"));
    }
}
