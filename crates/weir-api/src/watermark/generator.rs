//! Watermark generators: what turns the timestamps a source sees into watermarks.
//!
//! A generator is called with every event (`on_event`) and periodically
//! (`on_periodic_emit`); it emits through a [`WatermarkOutput`], which drops any
//! watermark not above the last one. Generators live on their task's thread.

use std::time::Duration;
use weir_core::Watermark;

/// Where a generator emits watermarks and idleness (Flink's `WatermarkOutput`).
pub trait WatermarkOutput {
    /// Emits a watermark (dropped unless above the last one emitted).
    fn emit_watermark(&mut self, watermark: Watermark);
    /// Marks the output idle: it emits no watermark and leaves downstream minimums.
    fn mark_idle(&mut self);
    /// Marks the output active again.
    fn mark_active(&mut self);
}

/// Generates watermarks from the events of one source split or stream partition
/// (Flink's `WatermarkGenerator`).
pub trait WatermarkGenerator<T> {
    /// Called for every event, after its timestamp was assigned.
    fn on_event(&mut self, event: &T, timestamp: i64, output: &mut dyn WatermarkOutput);
    /// Called every `pipeline.auto-watermark-interval`.
    fn on_periodic_emit(&mut self, output: &mut dyn WatermarkOutput);
}

/// Milliseconds of `d`, saturating at `i64::MAX`.
pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Flink's `BoundedOutOfOrdernessWatermarks`: tracks the maximum timestamp and
/// periodically emits `max - bound - 1`.
///
/// The maximum starts at `i64::MIN + bound + 1`, so the first watermark is the minimum.
/// With bound 3 s and maximum timestamp 10000 the watermark is 6999.
#[derive(Debug, Clone)]
pub struct BoundedOutOfOrderness {
    max_timestamp: i64,
    bound: i64,
}

impl BoundedOutOfOrderness {
    /// A generator allowing events up to `bound` behind the maximum.
    pub fn new(bound: Duration) -> Self {
        let bound = millis(bound);
        Self {
            max_timestamp: i64::MIN.saturating_add(bound).saturating_add(1),
            bound,
        }
    }

    /// The watermark this generator stands at: `max - bound - 1`.
    pub fn current_watermark(&self) -> Watermark {
        Watermark(self.max_timestamp.saturating_sub(self.bound).saturating_sub(1))
    }
}

impl<T> WatermarkGenerator<T> for BoundedOutOfOrderness {
    fn on_event(&mut self, _event: &T, timestamp: i64, _output: &mut dyn WatermarkOutput) {
        self.max_timestamp = self.max_timestamp.max(timestamp);
    }

    fn on_periodic_emit(&mut self, output: &mut dyn WatermarkOutput) {
        output.emit_watermark(self.current_watermark());
    }
}

/// Emits no watermarks at all (Flink's `NoWatermarksGenerator`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoWatermarksGenerator;

impl<T> WatermarkGenerator<T> for NoWatermarksGenerator {
    fn on_event(&mut self, _event: &T, _timestamp: i64, _output: &mut dyn WatermarkOutput) {}
    fn on_periodic_emit(&mut self, _output: &mut dyn WatermarkOutput) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    pub(crate) struct Recorded(pub Vec<Watermark>);

    impl WatermarkOutput for Recorded {
        fn emit_watermark(&mut self, watermark: Watermark) {
            self.0.push(watermark);
        }
        fn mark_idle(&mut self) {}
        fn mark_active(&mut self) {}
    }

    #[test]
    fn bound_of_three_seconds_with_max_timestamp_10000_gives_watermark_6999() {
        let mut g = BoundedOutOfOrderness::new(Duration::from_secs(3));
        let mut out = Recorded::default();
        for ts in [4000, 10000, 7000] {
            WatermarkGenerator::<()>::on_event(&mut g, &(), ts, &mut out);
        }
        WatermarkGenerator::<()>::on_periodic_emit(&mut g, &mut out);
        assert_eq!(out.0, vec![Watermark(6999)]);
    }

    #[test]
    fn before_any_event_the_watermark_is_the_minimum() {
        let mut g = BoundedOutOfOrderness::new(Duration::from_millis(5000));
        let mut out = Recorded::default();
        WatermarkGenerator::<()>::on_periodic_emit(&mut g, &mut out);
        assert_eq!(out.0, vec![Watermark::MIN]);
    }

    #[test]
    fn monotonous_timestamps_are_a_bound_of_zero_giving_max_minus_one() {
        let mut g = BoundedOutOfOrderness::new(Duration::ZERO);
        let mut out = Recorded::default();
        WatermarkGenerator::<()>::on_event(&mut g, &(), 42, &mut out);
        WatermarkGenerator::<()>::on_periodic_emit(&mut g, &mut out);
        assert_eq!(out.0, vec![Watermark(41)]);
    }

    #[test]
    fn no_watermarks_generator_emits_nothing() {
        let mut g = NoWatermarksGenerator;
        let mut out = Recorded::default();
        WatermarkGenerator::<()>::on_event(&mut g, &(), 42, &mut out);
        WatermarkGenerator::<()>::on_periodic_emit(&mut g, &mut out);
        assert!(out.0.is_empty());
    }
}
