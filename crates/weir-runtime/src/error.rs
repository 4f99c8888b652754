//! Errors of tasks and of the runtime that runs them.

use crate::network::NetworkError;
use thiserror::Error;
use weir_core::CoreError;

/// An error inside a user function, as the function reported it.
pub type UserError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a task failed.
#[derive(Debug, Error)]
pub enum TaskError {
    /// A user function returned an error.
    #[error("{operator}: {message}")]
    User {
        /// The operator whose function failed.
        operator: String,
        /// The function's error, rendered.
        message: String,
    },
    /// The task was cancelled.
    #[error("task was cancelled")]
    Cancelled,
    /// The network stack failed.
    #[error("network: {0}")]
    Network(#[from] NetworkError),
    /// Records could not be encoded or decoded.
    #[error("codec: {0}")]
    Codec(#[from] CoreError),
    /// A file or other I/O resource failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, e.g. the file path.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The operator chain could not be built from the program's factories.
    #[error("cannot build operator chain: {0}")]
    Build(String),
    /// A user function panicked.
    #[error("{0}")]
    Panicked(String),
    /// The task's state could not be written to checkpoint storage.
    #[error("checkpoint storage: {0}")]
    Storage(#[from] weir_filesystem::FsError),
    /// The task's state could not be restored from a checkpoint.
    #[error("cannot restore state from checkpoint {checkpoint_id}: {reason}")]
    Restore {
        /// The checkpoint.
        checkpoint_id: u64,
        /// What was wrong (a missing or corrupt file, …).
        reason: String,
    },
}

impl TaskError {
    /// A user-function error attributed to `operator`.
    pub fn user(operator: &str, error: impl std::fmt::Display) -> Self {
        TaskError::User {
            operator: operator.to_string(),
            message: error.to_string(),
        }
    }

    /// An I/O error with context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        TaskError::Io {
            context: context.into(),
            source,
        }
    }
}
