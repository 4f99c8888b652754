//! Errors of window assignment and window state, with Flink's messages.

use thiserror::Error;

/// Why a window operation failed.
#[derive(Debug, Error)]
pub enum WindowError {
    /// An event-time assigner got a record without a timestamp.
    #[error("Record has Long.MIN_VALUE timestamp (= no timestamp marker). Is the time characteristic set to 'ProcessingTime', or did you forget to call 'DataStream.assignTimestampsAndWatermarks(...)'?")]
    NoTimestamp,
    /// A merge would end an event-time window before the current watermark.
    #[error("The end timestamp of an event-time window cannot become earlier than the current watermark by merging. Current watermark: {watermark} window: {window}")]
    MergeBehindWatermark {
        /// The operator's watermark.
        watermark: i64,
        /// The merged window.
        window: String,
    },
    /// A merge would end a processing-time window before the current processing time.
    #[error("The end timestamp of a processing-time window cannot become earlier than the current processing time by merging. Current processing time: {time} window: {window}")]
    MergeBehindProcessingTime {
        /// The current processing time.
        time: i64,
        /// The merged window.
        window: String,
    },
    /// Per-window state was requested with a merging assigner.
    #[error("Per-window state is not allowed when using merging windows.")]
    PerWindowStateOnMergingWindows,
    /// A window of the merging set is missing.
    #[error("Window {0} is not in in-flight window set.")]
    NotInFlight(String),
    /// A trigger was asked to merge but cannot.
    #[error("This trigger does not support merging.")]
    TriggerCannotMerge,
}
