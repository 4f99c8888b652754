//! The task's access to its job's shared state, implemented by the task's checkpoint
//! storage (`weir-runtime`), used by [`super::upload`].

use crate::error::StateError;
use std::path::Path;
use weir_core::checkpoint::SharedStateFile;

/// The task's access to its job's shared state (implemented by the task's checkpoint
/// storage).
pub trait SharedStateTransfer: Send + Sync + std::fmt::Debug {
    /// Uploads `local` as the shared file `name` (unique within the job).
    fn upload(&self, local: &Path, name: &str) -> Result<SharedStateFile, StateError>;
    /// Downloads `file` to `local`.
    fn download(&self, file: &SharedStateFile, local: &Path) -> Result<(), StateError>;
    /// True when `file` is this job's own shared state, which its checkpoints may refer
    /// to (a checkpoint of another job restored from is not: Flink's NO_CLAIM mode).
    fn owns(&self, file: &SharedStateFile) -> bool;
    /// What names the task's stores across attempts for local recovery:
    /// `<job-id>/<vertex>-<subtask>`.
    fn local_recovery_key(&self) -> String;
}
