//! Where a task puts its part of a checkpoint and reads it back on restore (the task
//! side of Flink's `CheckpointStorage`).
//!
//! State below the inline threshold, and all state when no checkpoint directory is
//! configured (the JobManager keeps checkpoints in memory), travels inline in the
//! acknowledgement. Larger state goes to `<dir>/<job-id>/chk-<id>/<vertex>-<subtask>-<attempt>`
//! through `weir_filesystem`: on a local file system written to a temporary name and
//! renamed, on an object store (`s3://`, `gs://`, `az://`) one whole-object PUT; either
//! way a state file that exists is complete. Its handle holds the local path or the
//! object's URL.

use crate::error::TaskError;
use std::path::Path;
use weir_core::checkpoint::SharedStateFile;
use weir_core::checkpoint::StreamStateHandle;
use weir_core::CheckpointId;
use weir_state::incremental::SharedStateTransfer;
use weir_state::{RestoredState, SnapshotFormat, StateError, TaskSnapshot};

/// Flink's `execution.checkpointing.data-inline-threshold` default: 20 KiB.
pub const DEFAULT_INLINE_THRESHOLD: u64 = 20 * 1024;

/// Where one task stores its snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStateStorage {
    /// The checkpoint directory; none keeps state in the JobManager's memory.
    pub dir: Option<String>,
    /// The job (32 hex).
    pub job_id: String,
    /// `<vertex id>-<subtask>-<attempt>`: unique per attempt, names the files.
    pub task_file_name: String,
    /// State up to this many bytes is inlined.
    pub inline_threshold: u64,
    /// `execution.checkpointing.incremental`: checkpoints of on-disk keyed state
    /// upload only the store's new files (with a checkpoint directory only).
    pub incremental: bool,
}

impl TaskStateStorage {
    /// The job's shared state directory, `<dir>/<job-id>/shared`; none without a
    /// checkpoint directory.
    fn shared_dir(&self) -> Option<weir_filesystem::Location> {
        let dir = self.dir.as_deref()?;
        Some(
            weir_filesystem::Location::parse(dir)
                .ok()?
                .child(&self.job_id)
                .child("shared"),
        )
    }

    /// How checkpoint (not savepoint) `snapshot_type` writes keyed state held in an
    /// on-disk store: incremental when configured and there is a directory for the
    /// shared files.
    pub fn format(&self, snapshot_type: weir_core::SnapshotType) -> SnapshotFormat {
        if self.incremental && snapshot_type == weir_core::SnapshotType::Checkpoint && self.shared_dir().is_some() {
            SnapshotFormat::Incremental
        } else {
            SnapshotFormat::Canonical
        }
    }

    /// Stores the encoded snapshot of checkpoint `id`.
    pub fn store(&self, id: CheckpointId, bytes: Vec<u8>) -> Result<StreamStateHandle, TaskError> {
        let Some(dir) = self
            .dir
            .as_deref()
            .filter(|_| bytes.len() as u64 > self.inline_threshold)
        else {
            return Ok(StreamStateHandle::Inline(bytes));
        };
        let path = weir_filesystem::Location::parse(dir)?
            .child(&self.job_id)
            .child(&format!("chk-{id}"))
            .child(&self.task_file_name)
            .to_string();
        let size = bytes.len() as u64;
        weir_filesystem::put(&path, bytes)?;
        Ok(StreamStateHandle::File { path, size })
    }
}

impl SharedStateTransfer for TaskStateStorage {
    fn upload(&self, local: &Path, name: &str) -> Result<SharedStateFile, StateError> {
        let shared = self
            .shared_dir()
            .ok_or_else(|| StateError::Store("incremental checkpoints need a checkpoint directory".into()))?;
        let path = shared.child(&format!("{}-{name}", self.task_file_name)).to_string();
        let bytes = std::fs::read(local).map_err(|e| StateError::Store(format!("reading {}: {e}", local.display())))?;
        let size = bytes.len() as u64;
        weir_filesystem::put(&path, bytes).map_err(|e| StateError::Store(format!("uploading {path}: {e}")))?;
        Ok(SharedStateFile { path, size })
    }

    fn download(&self, file: &SharedStateFile, local: &Path) -> Result<(), StateError> {
        let bytes = weir_filesystem::get(&file.path)
            .map_err(|e| StateError::Store(format!("downloading shared state file {}: {e}", file.path)))?;
        std::fs::write(local, bytes).map_err(|e| StateError::Store(format!("writing {}: {e}", local.display())))
    }

    fn local_recovery_key(&self) -> String {
        // The file name without its attempt: `<vertex>-<subtask>`.
        let task = self
            .task_file_name
            .rsplit_once('-')
            .map_or(self.task_file_name.as_str(), |(task, _attempt)| task);
        format!("{}/{task}", self.job_id)
    }

    fn owns(&self, file: &SharedStateFile) -> bool {
        self.shared_dir().is_some_and(|dir| {
            file.path
                .starts_with(&format!("{}/", dir.to_string().trim_end_matches('/')))
        })
    }
}

/// What a task restores from: the handles of the old subtasks it was assigned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRestore {
    /// The checkpoint.
    pub checkpoint_id: CheckpointId,
    /// The old subtasks' handles, in old-subtask order.
    pub handles: Vec<StreamStateHandle>,
    /// True when the parallelism changed since the checkpoint.
    pub rescaled: bool,
    /// Per handle: given only for its union list state (missing entries: false).
    pub union_only: Vec<bool>,
    /// The subtask had finished when the checkpoint was taken: it is restored as
    /// finished (runs no operator, restores no state).
    pub finished: bool,
}

impl TaskRestore {
    /// Reads and decodes every handle.
    pub fn load(&self, subtask_index: u32, parallelism: u32) -> Result<RestoredState, TaskError> {
        let fail = |reason: String| TaskError::Restore {
            checkpoint_id: self.checkpoint_id,
            reason,
        };
        let mut snapshots = Vec::with_capacity(self.handles.len());
        for handle in &self.handles {
            let bytes = match handle {
                StreamStateHandle::Inline(bytes) => std::borrow::Cow::Borrowed(bytes.as_slice()),
                StreamStateHandle::File { path, size } => {
                    let bytes = weir_filesystem::get(path).map_err(|e| fail(e.to_string()))?;
                    if bytes.len() as u64 != *size {
                        return Err(fail(format!("{path}: {} bytes, expected {size}", bytes.len())));
                    }
                    std::borrow::Cow::Owned(bytes)
                }
            };
            snapshots.push(TaskSnapshot::decode(&bytes).map_err(|e| fail(format!("{handle:?}: {e}")))?);
        }
        Ok(RestoredState {
            checkpoint_id: self.checkpoint_id,
            snapshots,
            rescaled: self.rescaled,
            union_only: self.union_only.clone(),
            subtask_index,
            parallelism,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage(dir: Option<&std::path::Path>) -> TaskStateStorage {
        TaskStateStorage {
            dir: dir.map(|d| d.display().to_string()),
            job_id: "0".repeat(32),
            task_file_name: "v-0-0".into(),
            inline_threshold: 16,
            incremental: false,
        }
    }

    #[test]
    fn small_state_is_inlined_and_large_state_goes_to_the_checkpoint_directory() {
        let dir = tempfile::tempdir().unwrap();
        let s = storage(Some(dir.path()));
        assert_eq!(s.store(1, vec![1; 16]).unwrap(), StreamStateHandle::Inline(vec![1; 16]));
        let h = s.store(2, vec![2; 17]).unwrap();
        let StreamStateHandle::File { path, size } = &h else {
            panic!("{h:?}")
        };
        assert_eq!(*size, 17);
        assert!(path.ends_with(&format!("{}/chk-2/v-0-0", "0".repeat(32))), "{path}");
        assert_eq!(std::fs::read(path).unwrap(), vec![2; 17]);
        assert!(matches!(
            storage(None).store(3, vec![0; 1000]).unwrap(),
            StreamStateHandle::Inline(_)
        ));
    }

    #[test]
    fn large_state_goes_to_an_object_store_as_one_object_and_restores_from_its_url() {
        let store = std::sync::Arc::new(object_store::memory::InMemory::new());
        weir_filesystem::register_store("s3://task-state", store);
        let s = TaskStateStorage {
            dir: Some("s3://task-state/chk/".to_string()),
            inline_threshold: 0,
            ..storage(None)
        };
        let snapshot = TaskSnapshot::default().encode().unwrap();
        let h = s.store(4, snapshot.clone()).unwrap();
        let url = format!("s3://task-state/chk/{}/chk-4/v-0-0", "0".repeat(32));
        assert_eq!(
            h,
            StreamStateHandle::File {
                path: url.clone(),
                size: snapshot.len() as u64
            }
        );
        assert_eq!(weir_filesystem::get(&url).unwrap(), snapshot);
        let restore = |handle| TaskRestore {
            checkpoint_id: 4,
            handles: vec![handle],
            union_only: Vec::new(),
            rescaled: false,
            finished: false,
        };
        assert_eq!(restore(h).load(0, 1).unwrap().snapshots, vec![TaskSnapshot::default()]);
        let missing = restore(StreamStateHandle::File {
            path: "s3://task-state/chk/gone".into(),
            size: 1,
        })
        .load(0, 1)
        .unwrap_err()
        .to_string();
        assert_eq!(
            missing,
            "cannot restore state from checkpoint 4: s3://task-state/chk/gone does not exist"
        );
    }

    #[test]
    fn a_checkpoint_directory_with_an_unsupported_scheme_fails_the_store_clearly() {
        let s = TaskStateStorage {
            dir: Some("hdfs://nn/chk".to_string()),
            ..storage(None)
        };
        let err = s.store(1, vec![0; 100]).unwrap_err().to_string();
        assert!(err.contains("Unsupported file system scheme 'hdfs'"), "{err}");
    }

    #[test]
    fn restoring_from_a_missing_truncated_or_corrupt_file_names_the_checkpoint_and_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = TaskSnapshot::default().encode().unwrap();
        let path = dir.path().join("state");
        std::fs::write(&path, &good).unwrap();
        let restore = |handle| TaskRestore {
            checkpoint_id: 7,
            handles: vec![handle],
            union_only: Vec::new(),
            rescaled: false,
            finished: false,
        };
        let file = |size| StreamStateHandle::File {
            path: path.display().to_string(),
            size,
        };
        assert!(restore(file(good.len() as u64)).load(0, 1).is_ok());
        let short = restore(file(good.len() as u64 + 1)).load(0, 1).unwrap_err().to_string();
        assert!(short.contains("checkpoint 7") && short.contains("expected"), "{short}");
        let missing = restore(StreamStateHandle::File {
            path: "/nonexistent/x".into(),
            size: 1,
        })
        .load(0, 1)
        .unwrap_err()
        .to_string();
        assert!(missing.contains("/nonexistent/x"), "{missing}");
        let corrupt = restore(StreamStateHandle::Inline(b"garbage".to_vec()))
            .load(0, 1)
            .unwrap_err()
            .to_string();
        assert!(corrupt.contains("corrupt state snapshot"), "{corrupt}");
    }
}
