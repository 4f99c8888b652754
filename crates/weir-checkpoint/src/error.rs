//! The one error type of the checkpoint crate.
//!
//! Every variant carries what the user (or the operator of the cluster) needs to find
//! the problem: the job, the checkpoint id, the path. Where Flink has a message for the
//! same failure, the `Display` text is Flink's.

use thiserror::Error;
use weir_config::ConfigError;
use weir_core::ids::{JobId, JobVertexId, OperatorId};
use weir_core::CheckpointId;
use weir_filesystem::{FsError, SUPPORTED_SCHEMES};

/// What went wrong while configuring, storing, coordinating or restoring checkpoints.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CheckpointError {
    /// A checkpoint option is invalid (bad value or out of range).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A `_metadata` file is truncated, corrupt, of another format or of an unknown
    /// version.
    #[error("Corrupt checkpoint metadata {path}: {reason}")]
    CorruptMetadata {
        /// The file (or `<memory>` when decoding bytes without a file).
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The checkpoint/savepoint path given for a restore does not exist (Flink's text).
    #[error("Cannot find checkpoint or savepoint file/directory '{path}' on file system '{scheme}'.")]
    MetadataNotFound {
        /// The path as given.
        path: String,
        /// The file system: `file`, `s3`, `gs`, `az`, …
        scheme: String,
    },
    /// The directory given for a restore exists but holds no `_metadata` (Flink's text).
    #[error(
        "Cannot find meta data file '_metadata' in directory '{path}'. Please try to load the \
         checkpoint/savepoint directly from the metadata file instead of the directory."
    )]
    NoMetadataInDirectory {
        /// The directory.
        path: String,
    },
    /// `_metadata` already exists: a checkpoint location is written once.
    #[error("Cannot write checkpoint metadata: {path} already exists")]
    MetadataExists {
        /// The existing file.
        path: String,
    },
    /// A file-system or object store operation failed.
    #[error("I/O error on {path}: {message}")]
    Io {
        /// The file, directory, object or prefix (a local path or a URL).
        path: String,
        /// The operating system's or the object store's message.
        message: String,
    },
    /// A storage URL whose scheme Weir cannot store checkpoints in.
    #[error("Unsupported file system scheme '{scheme}' in '{path}': supported are {SUPPORTED_SCHEMES}")]
    UnsupportedScheme {
        /// The scheme (`hdfs`, …).
        scheme: String,
        /// The path as given.
        path: String,
    },
    /// Another storage failure: an invalid object store URL, an object store that
    /// cannot be set up from the options and the environment, a state file that is
    /// missing, the object store runtime.
    #[error(transparent)]
    Storage(FsError),
    /// A savepoint was requested without a target directory and none is configured.
    #[error(
        "Job {job}: no savepoint directory specified and no default configured \
         (execution.checkpointing.savepoint-dir)"
    )]
    NoSavepointDirectory {
        /// The job.
        job: JobId,
    },
    /// The coordinator refused to trigger a checkpoint or savepoint.
    #[error("Job {job}: cannot trigger checkpoint {checkpoint_id}: {reason}")]
    TriggerFailed {
        /// The job.
        job: JobId,
        /// The id the checkpoint would have had.
        checkpoint_id: CheckpointId,
        /// Why.
        reason: String,
    },
    /// Restore: the new program set a different max parallelism explicitly (Flink's text).
    #[error(
        "Max parallelism mismatch between checkpoint/savepoint state and new program. Cannot map operator \
         {operator} with max parallelism {restored} to new program with max parallelism {new}. This indicates \
         that the program has been changed in a non-compatible way after the checkpoint/savepoint."
    )]
    MaxParallelismMismatch {
        /// The operator whose state cannot be mapped.
        operator: OperatorId,
        /// The max parallelism of the state.
        restored: u32,
        /// The max parallelism of the new program.
        new: u32,
    },
    /// Restore: a subtask restored as finished would read from one that is not (after a
    /// change of the program; Flink's `VertexFinishedStateChecker`).
    #[error(
        "Illegal JobGraph modification. Cannot run a program with finished tasks fed by unfinished ones: \
         {vertex} ({subtask}) had finished in checkpoint/savepoint {path}, but its upstream {upstream} \
         ({upstream_subtask}) had not."
    )]
    FinishedAfterUnfinished {
        /// The checkpoint or savepoint restored from.
        path: String,
        /// The vertex restored as finished.
        vertex: String,
        /// Its subtask.
        subtask: u32,
        /// The upstream vertex that is not finished.
        upstream: String,
        /// Its subtask.
        upstream_subtask: u32,
    },
    /// Restore: the new parallelism exceeds the max parallelism of the state (Flink's text).
    #[error(
        "The state for task {vertex} can not be restored. The maximum parallelism ({max_parallelism}) of the \
         restored state is lower than the configured parallelism ({parallelism}). Please reduce the parallelism \
         of the task to be lower or equal to the maximum parallelism."
    )]
    ParallelismAboveMax {
        /// The new vertex.
        vertex: JobVertexId,
        /// The max parallelism of the state.
        max_parallelism: u32,
        /// The new parallelism.
        parallelism: u32,
    },
    /// Restore: state of an operator that the new program no longer has (Flink's text).
    #[error(
        "Failed to rollback to checkpoint/savepoint {path}. Cannot map checkpoint/savepoint state for operator \
         {operator} to the new program, because the operator is not available in the new program. If you want \
         to allow to skip this, you can set the --allowNonRestoredState option on the CLI."
    )]
    UnmappedState {
        /// The checkpoint or savepoint restored from.
        path: String,
        /// The operator.
        operator: OperatorId,
    },
}

impl From<FsError> for CheckpointError {
    fn from(err: FsError) -> Self {
        match err {
            FsError::UnsupportedScheme { scheme, location, .. } => {
                CheckpointError::UnsupportedScheme { scheme, path: location }
            }
            FsError::Io { location, message } => CheckpointError::Io {
                path: location,
                message,
            },
            other => CheckpointError::Storage(other),
        }
    }
}

impl CheckpointError {
    /// A [`CheckpointError::CorruptMetadata`] for `path`.
    pub(crate) fn corrupt(path: &str, reason: impl Into<String>) -> Self {
        CheckpointError::CorruptMetadata {
            path: path.to_string(),
            reason: reason.into(),
        }
    }
}
