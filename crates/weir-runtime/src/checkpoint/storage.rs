//! Where a task puts its part of a checkpoint and reads it back on restore (the task
//! side of Flink's `CheckpointStorage`).
//!
//! State below the inline threshold, and all state when no checkpoint directory is
//! configured (the JobManager keeps checkpoints in memory), travels inline in the
//! acknowledgement. Larger state goes to `<dir>/<job-id>/chk-<id>/<vertex>-<subtask>-<attempt>`,
//! written to a temporary name and renamed, so a file that exists is complete.

use crate::error::TaskError;
use std::path::{Path, PathBuf};
use weir_core::checkpoint::StreamStateHandle;
use weir_core::CheckpointId;
use weir_state::{RestoredState, TaskSnapshot};

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
}

impl TaskStateStorage {
    /// Stores the encoded snapshot of checkpoint `id`.
    pub fn store(&self, id: CheckpointId, bytes: Vec<u8>) -> Result<StreamStateHandle, TaskError> {
        let Some(dir) = self
            .dir
            .as_deref()
            .filter(|_| bytes.len() as u64 > self.inline_threshold)
        else {
            return Ok(StreamStateHandle::Inline(bytes));
        };
        let chk = Path::new(dir.strip_prefix("file://").unwrap_or(dir))
            .join(&self.job_id)
            .join(format!("chk-{id}"));
        std::fs::create_dir_all(&chk).map_err(|e| TaskError::io(chk.display().to_string(), e))?;
        let path = chk.join(&self.task_file_name);
        let tmp: PathBuf = chk.join(format!(".{}.inprogress", self.task_file_name));
        std::fs::write(&tmp, &bytes).map_err(|e| TaskError::io(tmp.display().to_string(), e))?;
        std::fs::rename(&tmp, &path).map_err(|e| TaskError::io(path.display().to_string(), e))?;
        Ok(StreamStateHandle::File {
            path: path.display().to_string(),
            size: bytes.len() as u64,
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
                    let bytes = std::fs::read(path).map_err(|e| fail(format!("{path}: {e}")))?;
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

    fn storage(dir: Option<&Path>) -> TaskStateStorage {
        TaskStateStorage {
            dir: dir.map(|d| d.display().to_string()),
            job_id: "0".repeat(32),
            task_file_name: "v-0-0".into(),
            inline_threshold: 16,
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
