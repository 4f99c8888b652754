//! Windows on keyed streams (`KeyedStream::window`) and whole streams
//! (`DataStream::window_all`), as in Flink (reference §7).
//!
//! - [`window`]: `TimeWindow` `[start, end)` and `GlobalWindow`.
//! - [`assigners`]: tumbling, sliding and session windows in event and processing time,
//!   and `GlobalWindows`.
//! - [`triggers`]: event-time, processing-time, count and purging triggers, and the
//!   `Trigger` trait for custom ones.
//! - [`functions`]: `AggregateFunction`, `ProcessWindowFunction` and their context.
//! - [`contents`]: how a window keeps its elements (reduced, aggregated, listed).
//! - [`lateness`]: the cleanup and lateness rules; [`merging`]: session merging.
//! - [`window_operator`]: the operator that applies all of it;
//!   [`window_table_operator`]: the one for windows that fire once, at their end, with
//!   their contents in a [`window_table`]; [`windowed_stream`]: the API that builds them.

pub mod assigners;
pub mod contents;
pub mod error;
pub mod functions;
pub mod lateness;
pub mod merging;
pub mod triggers;
pub mod window;
pub mod window_operator;
pub mod window_table;
pub mod window_table_operator;
pub mod windowed_stream;

#[cfg(test)]
mod test_log;

pub use assigners::{
    AssignerContext, EventTimeSessionWindows, GlobalWindows, ProcessingTimeSessionWindows, SlidingEventTimeWindows,
    SlidingProcessingTimeWindows, TumblingEventTimeWindows, TumblingProcessingTimeWindows, WindowAssigner,
};
pub use error::WindowError;
pub use functions::{AggregateFunction, PassThrough, ProcessWindowFunction, StateAggregateFunction, WindowContext};
pub use triggers::{
    CountTrigger, EventTimeTrigger, NeverTrigger, OnMergeContext, ProcessingTimeTrigger, PurgingTrigger, Trigger,
    TriggerContext, TriggerResult,
};
pub use window::{GlobalWindow, TimeWindow, Window};
pub use windowed_stream::{AllWindowedStream, WindowedStream};
