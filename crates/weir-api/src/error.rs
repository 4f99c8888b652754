//! Errors of building and running a job through the API.

use thiserror::Error;

/// Why a job could not be built or did not succeed.
#[derive(Debug, Error)]
pub enum ApiError {
    /// The pipeline is invalid (e.g. forward across different parallelisms).
    #[error("{0}")]
    InvalidPipeline(String),
    /// The graphs could not be compiled.
    #[error(transparent)]
    Graph(#[from] weir_graph::GraphError),
    /// The job did not run, or failed while running.
    #[error(transparent)]
    Execution(#[from] crate::executor::ExecutionError),
}
