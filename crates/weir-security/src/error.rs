//! [`SecurityError`]: why TLS settings could not be loaded.

use std::path::PathBuf;
use thiserror::Error;

/// Why the TLS settings of a process could not be loaded. Each names the configuration
/// key and, for a file, its path.
#[derive(Debug, Error)]
pub enum SecurityError {
    /// A key that TLS needs is not set.
    #[error("{key} must be set when {because}")]
    Missing {
        /// The missing key.
        key: &'static str,
        /// The setting that needs it.
        because: &'static str,
    },
    /// A PEM file could not be read.
    #[error("{key}: cannot read {}: {source}", path.display())]
    Read {
        /// The key naming the file.
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A PEM file holds no usable certificate or key, or one rustls refuses.
    #[error("{key}: {} is not valid: {reason}", path.display())]
    Invalid {
        /// The key naming the file.
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The certificate and key do not make a TLS configuration.
    #[error("cannot build the TLS configuration from {cert_key} and {key_key}: {reason}")]
    Config {
        /// The certificate's key.
        cert_key: &'static str,
        /// The private key's key.
        key_key: &'static str,
        /// rustls' reason.
        reason: String,
    },
    /// A configuration value could not be read.
    #[error(transparent)]
    Configuration(#[from] weir_config::ConfigError),
}
