//! Event time at the sources: timestamps and watermarks (Flink's `WatermarkStrategy`).
//!
//! - [`generator`]: the [`WatermarkGenerator`] trait and Flink's generators (bounded
//!   out-of-orderness, monotonous timestamps, none).
//! - [`idleness`]: [`WithIdleness`], which marks an input idle after a period without
//!   events.
//! - [`emitter`]: [`WatermarkEmitter`], which only lets increasing watermarks through
//!   and turns idleness into status changes.
//! - [`strategy`]: [`WatermarkStrategy`], the timestamp assigner and generator a source
//!   or `assign_timestamps_and_watermarks` uses.
//! - [`operator`]: where strategies run: the [`TimestampsAndWatermarksOperator`] and
//!   the source wrapper behind `from_source`.
//!
//! Watermarks are emitted after every record for which the generator's `on_event`
//! emits one, and every `pipeline.auto-watermark-interval` (default 200 ms, 0 disables)
//! from `on_periodic_emit`, on the task thread.

pub mod emitter;
pub mod generator;
pub mod idleness;
pub mod operator;
pub mod strategy;

pub use emitter::WatermarkEmitter;
pub use generator::{BoundedOutOfOrderness, NoWatermarksGenerator, WatermarkGenerator, WatermarkOutput};
pub use idleness::{IdlenessTimer, WithIdleness};
pub use operator::{TimestampsAndWatermarksOperator, WatermarkedSource};
pub use strategy::{TimestampAssigner, WatermarkStrategy, DEFAULT_AUTO_WATERMARK_INTERVAL_MS};
