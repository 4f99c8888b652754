//! Errors of joins, with Flink's messages where Flink has one.

use thiserror::Error;

/// Why a join cannot be built or run.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum JoinError {
    /// The interval of an interval join is empty.
    #[error("interval join: lowerBound <= upperBound must be fulfilled, got between({lower}, {upper}) ms{exclusive} (effective inclusive bounds {effective_lower}..={effective_upper})")]
    EmptyInterval {
        /// The lower bound given to `between`.
        lower: i64,
        /// The upper bound given to `between`.
        upper: i64,
        /// Which bounds were made exclusive, as text (empty if none).
        exclusive: String,
        /// The lower bound after exclusion.
        effective_lower: i64,
        /// The upper bound after exclusion.
        effective_upper: i64,
    },
    /// An interval join got a record without a timestamp.
    #[error("interval join: a record of the {side} input has no timestamp (Long.MIN_VALUE); elements used in interval stream joins need meaningful timestamps: assign them with a WatermarkStrategy")]
    MissingTimestamp {
        /// `left` or `right`.
        side: &'static str,
    },
}
