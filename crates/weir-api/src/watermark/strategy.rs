//! `WatermarkStrategy`: how a stream gets its event timestamps and watermarks.
//!
//! A strategy bundles a timestamp assigner (default: keep the record's timestamp) and
//! a factory of watermark generators (one per source subtask or operator subtask),
//! optionally wrapped with idleness detection. It is given to
//! `StreamExecutionEnvironment::from_source` or `DataStream::assign_timestamps_and_watermarks`.

use super::generator::{millis, BoundedOutOfOrderness, NoWatermarksGenerator, WatermarkGenerator};
use super::idleness::{monotonic_millis, Clock, WithIdleness};
use std::sync::Arc;
use std::time::Duration;

/// Flink's default `pipeline.auto-watermark-interval`: 200 ms.
pub const DEFAULT_AUTO_WATERMARK_INTERVAL_MS: i64 = 200;

/// Extracts an event timestamp from a record and its previous timestamp
/// (`i64::MIN` when it has none).
pub type TimestampAssigner<T> = Arc<dyn Fn(&T, i64) -> i64 + Send + Sync>;

type GeneratorFactory<T> = Arc<dyn Fn() -> Box<dyn WatermarkGenerator<T>> + Send + Sync>;

/// A timestamp assigner plus a watermark generator factory (Flink's `WatermarkStrategy`).
pub struct WatermarkStrategy<T> {
    generator: GeneratorFactory<T>,
    assigner: Option<TimestampAssigner<T>>,
    idleness: Option<Duration>,
    clock: Clock,
    invalid: Option<String>,
}

impl<T> Clone for WatermarkStrategy<T> {
    fn clone(&self) -> Self {
        Self {
            generator: self.generator.clone(),
            assigner: self.assigner.clone(),
            idleness: self.idleness,
            clock: self.clock.clone(),
            invalid: self.invalid.clone(),
        }
    }
}

impl<T: 'static> WatermarkStrategy<T> {
    /// A strategy with a custom generator, made once per subtask by `f`.
    pub fn for_generator<G: WatermarkGenerator<T> + 'static>(f: impl Fn() -> G + Send + Sync + 'static) -> Self {
        Self {
            generator: Arc::new(move || Box::new(f()) as Box<dyn WatermarkGenerator<T>>),
            assigner: None,
            idleness: None,
            clock: Arc::new(monotonic_millis),
            invalid: None,
        }
    }

    /// Watermarks `max_timestamp - bound - 1`, emitted periodically.
    pub fn for_bounded_out_of_orderness(bound: Duration) -> Self {
        Self::for_generator(move || BoundedOutOfOrderness::new(bound))
    }

    /// Watermarks `max_timestamp - 1`: timestamps never decrease.
    pub fn for_monotonous_timestamps() -> Self {
        Self::for_bounded_out_of_orderness(Duration::ZERO)
    }

    /// No watermarks at all (for processing-time jobs).
    pub fn no_watermarks() -> Self {
        Self::for_generator(|| NoWatermarksGenerator)
    }

    /// Takes each record's timestamp from `f(record, previous_timestamp)`; the previous
    /// timestamp is `i64::MIN` when the record had none.
    pub fn with_timestamp_assigner(mut self, f: impl Fn(&T, i64) -> i64 + Send + Sync + 'static) -> Self {
        self.assigner = Some(Arc::new(f));
        self
    }

    /// Marks the stream idle after `timeout` without records, so that it does not hold
    /// back downstream watermarks. The timeout must be greater than zero.
    pub fn with_idleness(mut self, timeout: Duration) -> Self {
        if timeout.is_zero() {
            self.invalid = Some("idleTimeout must be greater than zero".into());
        }
        self.idleness = Some(timeout);
        self
    }

    /// Idleness measured on `clock` (monotonic milliseconds) instead of the real clock.
    pub fn with_idleness_clock(mut self, clock: Arc<dyn Fn() -> i64 + Send + Sync>) -> Self {
        self.clock = clock;
        self
    }

    /// Why the strategy is invalid, if it is.
    pub fn validate(&self) -> Result<(), String> {
        match &self.invalid {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// The idleness timeout, if set.
    pub fn idleness(&self) -> Option<Duration> {
        self.idleness
    }

    /// A new generator for one subtask (with idleness detection if configured).
    pub fn create_generator(&self) -> Box<dyn WatermarkGenerator<T>> {
        let g = (self.generator)();
        match self.idleness {
            Some(t) if millis(t) > 0 => Box::new(WithIdleness::new(g, t, self.clock.clone())),
            _ => g,
        }
    }

    /// The timestamp of `value`, whose previous timestamp is `previous` (`i64::MIN` if none).
    #[inline]
    pub fn extract_timestamp(&self, value: &T, previous: i64) -> i64 {
        match &self.assigner {
            Some(f) => f(value, previous),
            None => previous,
        }
    }
}
