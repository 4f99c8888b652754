//! The one error type of checkpoint storage: every variant names the location (a local
//! path or an object store URL) it is about.

use thiserror::Error;

/// The forms of location Weir stores checkpoints in, for messages.
pub const SUPPORTED_SCHEMES: &str = "local paths, file://, s3:// (or s3a://), gs:// and az:// (or abfs://, abfss://)";

/// What went wrong with a storage location.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FsError {
    /// The location is a URL whose scheme Weir cannot store to.
    #[error("Unsupported file system scheme '{scheme}' in '{location}': supported are {supported}")]
    UnsupportedScheme {
        /// The scheme (`hdfs`, …).
        scheme: String,
        /// The location as given.
        location: String,
        /// The supported forms, for the message.
        supported: &'static str,
    },
    /// The location is an object store URL that cannot be used (no bucket, bad
    /// characters, …).
    #[error("Invalid storage location '{location}': {reason}")]
    InvalidLocation {
        /// The location as given.
        location: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Nothing exists at the location.
    #[error("{location} does not exist")]
    NotFound {
        /// The file or object.
        location: String,
    },
    /// The location was to be created but already exists.
    #[error("{location} already exists")]
    AlreadyExists {
        /// The file or object.
        location: String,
    },
    /// A file-system or object store operation failed.
    #[error("I/O error on {location}: {message}")]
    Io {
        /// The file, directory, object or prefix.
        location: String,
        /// The operating system's or the object store's message.
        message: String,
    },
    /// The object store of a bucket could not be set up from the options and the
    /// environment (bad credentials file, missing account name, …).
    #[error("Cannot set up the object store for {store}: {message}")]
    Store {
        /// `scheme://bucket`.
        store: String,
        /// The object store library's message.
        message: String,
    },
    /// The runtime that drives object store requests failed (it could not start, the
    /// operation panicked, or a store operation was called from inside it).
    #[error("Object store runtime: {0}")]
    Runtime(String),
}

impl FsError {
    /// An [`FsError::Io`] (or [`FsError::NotFound`]/[`FsError::AlreadyExists`] for those
    /// kinds) for a local `location`.
    pub(crate) fn local(location: &str, err: &std::io::Error) -> Self {
        match err.kind() {
            std::io::ErrorKind::NotFound => FsError::NotFound {
                location: location.to_string(),
            },
            std::io::ErrorKind::AlreadyExists => FsError::AlreadyExists {
                location: location.to_string(),
            },
            _ => FsError::Io {
                location: location.to_string(),
                message: err.to_string(),
            },
        }
    }

    /// The [`FsError`] of an object store failure on `location` (a URL).
    pub(crate) fn object(location: &str, err: object_store::Error) -> Self {
        match err {
            object_store::Error::NotFound { .. } => FsError::NotFound {
                location: location.to_string(),
            },
            object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. } => {
                FsError::AlreadyExists {
                    location: location.to_string(),
                }
            }
            other => FsError::Io {
                location: location.to_string(),
                message: other.to_string(),
            },
        }
    }

    /// [`FsError::UnsupportedScheme`] for `scheme` in `location`.
    pub(crate) fn unsupported(scheme: &str, location: &str) -> Self {
        FsError::UnsupportedScheme {
            scheme: scheme.to_string(),
            location: location.to_string(),
            supported: SUPPORTED_SCHEMES,
        }
    }
}
