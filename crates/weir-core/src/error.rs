//! Errors of the core crate.

use thiserror::Error;

/// Errors raised by core helpers: bounds checks and the codec.
#[derive(Debug, Error)]
pub enum CoreError {
    /// A parallelism outside `1..=32768` (Flink's wording).
    #[error("Operator parallelism not within bounds: {0}")]
    ParallelismOutOfBounds(i64),
    /// A max parallelism outside `1..=32768`.
    #[error("Maximum operator parallelism not within bounds: {0}")]
    MaxParallelismOutOfBounds(i64),
    /// A parallelism larger than the operator's max parallelism.
    #[error("parallelism {parallelism} is higher than the max parallelism {max_parallelism}")]
    ParallelismAboveMax {
        /// The requested parallelism.
        parallelism: u32,
        /// The max parallelism it exceeds.
        max_parallelism: u32,
    },
    /// A value could not be encoded.
    #[error("could not encode a value: {0}")]
    Encode(String),
    /// Bytes could not be decoded into the expected type.
    #[error("could not decode a value: {0}")]
    Decode(String),
    /// A byte stream ended inside a frame or carried an unknown frame tag.
    #[error("corrupt record stream: {0}")]
    CorruptStream(String),
}
