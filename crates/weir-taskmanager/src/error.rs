//! Errors of the TaskManager process.

use thiserror::Error;

/// Why the TaskManager could not start or had to stop.
#[derive(Debug, Error)]
pub enum TaskManagerError {
    /// A server could not bind.
    #[error("cannot bind {what} on {address}: {source}")]
    Bind {
        /// Which server.
        what: &'static str,
        /// The address.
        address: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The network stack failed to start.
    #[error("network: {0}")]
    Network(#[from] weir_runtime::network::NetworkError),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The process cannot watch for the signals that stop it.
    #[error("cannot watch for SIGTERM and SIGINT: {0}")]
    Signal(std::io::Error),
    /// The RPC server failed.
    #[error("rpc server: {0}")]
    Rpc(String),
}
