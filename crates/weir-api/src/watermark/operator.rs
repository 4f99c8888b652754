//! Where watermark strategies run.
//!
//! - [`WatermarkedSource`]: wraps a source function (`from_source`): every record the
//!   source emits gets its timestamp from the strategy, then the generator sees it; a
//!   watermark the generator emits on that event follows the record. Flink runs the
//!   strategy inside its source operator the same way.
//! - [`TimestampsAndWatermarksOperator`]: the same mid-pipeline
//!   (`assign_timestamps_and_watermarks`). Upstream watermarks are dropped except the
//!   MAX watermark that ends bounded input; upstream idleness is dropped too (this
//!   operator's own generator decides).
//!
//! Both register a processing-time wake-up every auto-watermark interval (if it is
//! above 0) and call the generator's `on_periodic_emit` when it is due.

use super::emitter::WatermarkEmitter;
use super::generator::{WatermarkGenerator, WatermarkOutput};
use super::strategy::WatermarkStrategy;
use weir_core::element::WatermarkStatus;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::operator::{Output, ProcessingTimeService, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

/// The strategy of one subtask: its generator, emitter and periodic schedule.
struct WatermarkCore<T> {
    strategy: WatermarkStrategy<T>,
    generator: Box<dyn WatermarkGenerator<T>>,
    emitter: WatermarkEmitter,
    interval: i64,
    next_emit: Option<i64>,
    processing_time: ProcessingTimeService,
}

impl<T: 'static> WatermarkCore<T> {
    fn new(strategy: WatermarkStrategy<T>, interval_ms: i64, processing_time: ProcessingTimeService) -> Self {
        let generator = strategy.create_generator();
        let mut core = Self {
            strategy,
            generator,
            emitter: WatermarkEmitter::new(),
            interval: interval_ms,
            next_emit: None,
            processing_time,
        };
        if interval_ms > 0 {
            let now = core.processing_time.current_processing_time();
            core.schedule(now);
        }
        core
    }

    fn schedule(&mut self, now: i64) {
        let at = now.saturating_add(self.interval);
        self.next_emit = Some(at);
        self.processing_time.register_wakeup(at);
    }

    #[inline]
    fn on_record(&mut self, mut record: StreamRecord<T>, out: &mut dyn Output<T>) -> Result<(), TaskError> {
        let ts = self
            .strategy
            .extract_timestamp(&record.value, record.timestamp.unwrap_or(i64::MIN));
        record.timestamp = Some(ts);
        // The generator only queues its decisions: the record goes out first.
        self.generator.on_event(&record.value, ts, &mut self.emitter);
        out.collect(record)?;
        self.emitter.drain_into(out)
    }

    fn on_processing_time(&mut self, now: i64, out: &mut dyn Output<T>) -> Result<(), TaskError> {
        match self.next_emit {
            Some(at) if now >= at => {
                self.generator.on_periodic_emit(&mut self.emitter);
                self.emitter.drain_into(out)?;
                self.schedule(now);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn on_upstream_watermark(&mut self, watermark: Watermark, out: &mut dyn Output<T>) -> Result<(), TaskError> {
        if watermark == Watermark::MAX {
            self.emitter.emit_watermark(Watermark::MAX);
            self.emitter.drain_into(out)?;
        }
        Ok(())
    }
}

/// Assigns timestamps and generates watermarks mid-pipeline (Flink's
/// `TimestampsAndWatermarksOperator`).
pub struct TimestampsAndWatermarksOperator<T> {
    core: WatermarkCore<T>,
    out: Box<dyn Output<T>>,
}

impl<T: 'static> TimestampsAndWatermarksOperator<T> {
    /// The operator of one subtask, emitting periodically every `interval_ms` (0: never).
    pub fn new(
        strategy: WatermarkStrategy<T>,
        interval_ms: i64,
        processing_time: ProcessingTimeService,
        out: Box<dyn Output<T>>,
    ) -> Self {
        Self {
            core: WatermarkCore::new(strategy, interval_ms, processing_time),
            out,
        }
    }
}

impl<T: 'static> Output<T> for TimestampsAndWatermarksOperator<T> {
    #[inline]
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        self.core.on_record(record, &mut *self.out)
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.core.on_upstream_watermark(watermark, &mut *self.out)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.end_input()
    }
    fn emit_watermark_status(&mut self, _status: WatermarkStatus) -> Result<(), TaskError> {
        Ok(())
    }
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        self.core.on_processing_time(now, &mut *self.out)?;
        self.out.on_processing_time(now)
    }
}

/// A source function with a watermark strategy (what `from_source` builds).
pub struct WatermarkedSource<T> {
    source: Box<dyn SourceFunction<T>>,
    core: WatermarkCore<T>,
}

impl<T: 'static> WatermarkedSource<T> {
    /// Wraps `source` of one subtask.
    pub fn new(
        source: Box<dyn SourceFunction<T>>,
        strategy: WatermarkStrategy<T>,
        interval_ms: i64,
        processing_time: ProcessingTimeService,
    ) -> Self {
        Self {
            source,
            core: WatermarkCore::new(strategy, interval_ms, processing_time),
        }
    }
}

/// The output the wrapped source emits to: stamps records and runs the generator.
struct Stamping<'a, T> {
    core: &'a mut WatermarkCore<T>,
    out: &'a mut dyn Output<T>,
}

impl<T: 'static> Output<T> for Stamping<'_, T> {
    #[inline]
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        self.core.on_record(record, self.out)
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.core.on_upstream_watermark(watermark, self.out)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.end_input()
    }
}

impl<T: 'static> SourceFunction<T> for WatermarkedSource<T> {
    fn poll_next(&mut self, output: &mut dyn Output<T>) -> Result<SourceStatus, TaskError> {
        let mut stamping = Stamping {
            core: &mut self.core,
            out: output,
        };
        self.source.poll_next(&mut stamping)
    }

    fn on_processing_time(&mut self, now: i64, output: &mut dyn Output<T>) -> Result<(), TaskError> {
        {
            let mut stamping = Stamping {
                core: &mut self.core,
                out: &mut *output,
            };
            self.source.on_processing_time(now, &mut stamping)?;
        }
        self.core.on_processing_time(now, output)
    }

    fn snapshot_position(&mut self) -> Result<Vec<Vec<u8>>, TaskError> {
        self.source.snapshot_position()
    }

    fn restore_position(&mut self, positions: Vec<Vec<u8>>) -> Result<(), TaskError> {
        self.source.restore_position(positions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watermark::generator::BoundedOutOfOrderness;
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;

    #[derive(Clone, Default)]
    struct Log(Rc<RefCell<Vec<String>>>);

    impl Output<i64> for Log {
        fn collect(&mut self, r: StreamRecord<i64>) -> Result<(), TaskError> {
            self.0.borrow_mut().push(format!("r{}@{:?}", r.value, r.timestamp));
            Ok(())
        }
        fn emit_watermark(&mut self, w: Watermark) -> Result<(), TaskError> {
            self.0.borrow_mut().push(format!("w{}", w.0));
            Ok(())
        }
        fn end_input(&mut self) -> Result<(), TaskError> {
            Ok(())
        }
        fn emit_watermark_status(&mut self, s: WatermarkStatus) -> Result<(), TaskError> {
            self.0.borrow_mut().push(format!("{s:?}"));
            Ok(())
        }
    }

    /// Emits a watermark on every event: `max - bound - 1`.
    struct PerRecord(BoundedOutOfOrderness);

    impl WatermarkGenerator<i64> for PerRecord {
        fn on_event(&mut self, e: &i64, ts: i64, out: &mut dyn WatermarkOutput) {
            WatermarkGenerator::<i64>::on_event(&mut self.0, e, ts, out);
            WatermarkGenerator::<i64>::on_periodic_emit(&mut self.0, out);
        }
        fn on_periodic_emit(&mut self, _out: &mut dyn WatermarkOutput) {}
    }

    #[test]
    fn per_record_watermarks_follow_the_record_that_raised_them() {
        let log = Log::default();
        let (pts, _clock) = ProcessingTimeService::manual(0);
        let strategy =
            WatermarkStrategy::for_generator(|| PerRecord(BoundedOutOfOrderness::new(Duration::from_millis(2))))
                .with_timestamp_assigner(|v: &i64, _| *v * 10);
        let mut op = TimestampsAndWatermarksOperator::new(strategy, 0, pts.clone(), Box::new(log.clone()));
        for v in [1, 3, 2, 5] {
            op.collect(StreamRecord::new(v)).unwrap();
        }
        assert_eq!(pts.next_wakeup(), None, "interval 0 disables periodic emission");
        assert_eq!(
            *log.0.borrow(),
            vec![
                "r1@Some(10)",
                "w7",
                "r3@Some(30)",
                "w27",
                "r2@Some(20)",
                "r5@Some(50)",
                "w47"
            ]
        );
    }

    #[test]
    fn periodic_watermarks_go_out_when_the_interval_is_due_and_upstream_ones_are_dropped_except_max() {
        let log = Log::default();
        let (pts, clock) = ProcessingTimeService::manual(1000);
        let strategy = WatermarkStrategy::for_bounded_out_of_orderness(Duration::from_millis(3000))
            .with_timestamp_assigner(|v: &i64, _| *v);
        let mut op = TimestampsAndWatermarksOperator::new(strategy, 200, pts.clone(), Box::new(log.clone()));
        assert_eq!(pts.next_wakeup(), Some(1200));
        op.collect(StreamRecord::new(10_000)).unwrap();
        op.emit_watermark(Watermark(50_000)).unwrap();
        op.on_processing_time(1100).unwrap();
        clock.set(1200);
        op.on_processing_time(1200).unwrap();
        assert_eq!(
            pts.next_wakeup(),
            Some(1200),
            "the due wake-up is taken by the task, not here"
        );
        assert!(pts.take_due(1200));
        assert_eq!(pts.next_wakeup(), Some(1400));
        op.emit_watermark(Watermark::MAX).unwrap();
        assert_eq!(
            *log.0.borrow(),
            vec!["r10000@Some(10000)", "w6999", &format!("w{}", i64::MAX)]
        );
    }

    #[test]
    fn records_keep_their_timestamp_without_an_assigner() {
        let log = Log::default();
        let (pts, _clock) = ProcessingTimeService::manual(0);
        let mut op = TimestampsAndWatermarksOperator::new(
            WatermarkStrategy::<i64>::no_watermarks(),
            0,
            pts,
            Box::new(log.clone()),
        );
        op.collect(StreamRecord::with_timestamp(1, 77)).unwrap();
        op.collect(StreamRecord::new(2)).unwrap();
        assert_eq!(
            *log.0.borrow(),
            vec!["r1@Some(77)".to_string(), format!("r2@Some({})", i64::MIN)]
        );
    }
}
