//! Window assigners: which windows an element belongs to (Flink's `WindowAssigner`s).
//!
//! - Tumbling (`[start, start + size)`), sliding (every `slide`, `size` long) and
//!   session (`[ts, ts + gap)`, merged when they touch) windows, in event time (from
//!   the record's timestamp) and processing time (from the task's clock, ignoring the
//!   record's timestamp), with offsets for tumbling and sliding windows.
//! - [`GlobalWindows`]: one window for everything, for count windows.
//!
//! Parameter checks (Flink's messages) are reported when the pipeline is built, not by
//! a panic: `validate` returns the message.

use super::error::WindowError;
use super::triggers::{EventTimeTrigger, NeverTrigger, ProcessingTimeTrigger, Trigger};
use super::window::{GlobalWindow, TimeWindow, Window};
use crate::functions::KeyType;
use crate::watermark::generator::millis;
use std::sync::Arc;
use std::time::Duration;
use weir_runtime::operator::ProcessingTimeService;

/// What an assigner may know besides the element (Flink's `WindowAssignerContext`).
#[derive(Debug, Clone, Copy)]
pub struct AssignerContext<'a> {
    processing_time: &'a ProcessingTimeService,
}

impl<'a> AssignerContext<'a> {
    /// A context reading the clock of `processing_time`.
    pub fn new(processing_time: &'a ProcessingTimeService) -> Self {
        Self { processing_time }
    }

    /// The task's current processing time (read only when asked: event-time assigners
    /// never pay for the clock).
    pub fn current_processing_time(&self) -> i64 {
        self.processing_time.current_processing_time()
    }
}

/// Assigns elements to windows.
pub trait WindowAssigner<T, W: Window>: Send + Sync + 'static {
    /// Appends the windows of `element` (with event timestamp `timestamp`, `i64::MIN`
    /// when it has none) to `out`.
    fn assign_windows(
        &self,
        element: &T,
        timestamp: i64,
        ctx: &AssignerContext<'_>,
        out: &mut Vec<W>,
    ) -> Result<(), WindowError>;

    /// The trigger used when the program sets none.
    fn default_trigger<K: KeyType>(&self) -> Arc<dyn Trigger<K, T, W>>
    where
        Self: Sized;

    /// True if windows follow event time (watermarks), false for processing time.
    fn is_event_time(&self) -> bool;

    /// True if windows are merged (sessions).
    fn is_merging(&self) -> bool {
        false
    }

    /// True if all windows have one size, so that no two windows share an end
    /// (tumbling and sliding windows): the window operator may then keep its contents
    /// window by window.
    fn one_window_per_end(&self) -> bool {
        false
    }

    /// For merging assigners: every `(result, windows merged into it)` among `windows`.
    fn merge_windows(&self, windows: &[W]) -> Vec<(W, Vec<W>)> {
        let _ = windows;
        Vec::new()
    }

    /// Why the parameters are invalid, if they are.
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }

    /// How many windows one record belongs to at most (sliding windows: size / slide).
    fn windows_per_record(&self) -> u64 {
        1
    }

    /// The assigner's name in operator names, e.g. `TumblingEventTimeWindows(60000)`.
    fn describe(&self) -> String;
}

fn tumbling_start(timestamp: i64, offset: i64, size: i64) -> i64 {
    TimeWindow::window_start_with_offset(timestamp, offset, size)
}

fn sliding_windows(timestamp: i64, size: i64, slide: i64, offset: i64, out: &mut Vec<TimeWindow>) {
    let last_start = TimeWindow::window_start_with_offset(timestamp, offset, slide);
    let mut start = last_start;
    while start > timestamp.wrapping_sub(size) {
        out.push(TimeWindow::new(start, start.wrapping_add(size)));
        start = start.wrapping_sub(slide);
    }
}

fn check_tumbling(name: &str, size: i64, offset: i64) -> Result<(), String> {
    if size <= 0 || offset.unsigned_abs() >= size.unsigned_abs() {
        return Err(format!("{name} parameters must satisfy abs(offset) < size"));
    }
    Ok(())
}

fn check_sliding(name: &str, size: i64, slide: i64, offset: i64) -> Result<(), String> {
    if slide <= 0 || offset.unsigned_abs() >= slide.unsigned_abs() || size <= 0 {
        return Err(format!(
            "{name} parameters must satisfy abs(offset) < slide and size > 0"
        ));
    }
    if size / slide > 10_000_000 {
        return Err(format!(
            "{name} parameters must satisfy size / slide <= 10000000 (an element would belong to {} windows)",
            size / slide
        ));
    }
    Ok(())
}

/// Event-time windows of a fixed size that do not overlap (Flink's `TumblingEventTimeWindows`).
#[derive(Debug, Clone, Copy)]
pub struct TumblingEventTimeWindows {
    size: i64,
    offset: i64,
}

impl TumblingEventTimeWindows {
    /// Windows of `size`, aligned to the epoch.
    pub fn of(size: Duration) -> Self {
        Self {
            size: millis(size),
            offset: 0,
        }
    }

    /// Windows of `size` shifted by `offset_ms` (which may be negative, e.g. a time
    /// zone); requires `|offset| < size`.
    pub fn of_with_offset(size: Duration, offset_ms: i64) -> Self {
        Self {
            size: millis(size),
            offset: offset_ms,
        }
    }
}

impl<T: 'static> WindowAssigner<T, TimeWindow> for TumblingEventTimeWindows {
    fn assign_windows(
        &self,
        _element: &T,
        timestamp: i64,
        _ctx: &AssignerContext<'_>,
        out: &mut Vec<TimeWindow>,
    ) -> Result<(), WindowError> {
        if timestamp == i64::MIN {
            return Err(WindowError::NoTimestamp);
        }
        let start = tumbling_start(timestamp, self.offset, self.size);
        out.push(TimeWindow::new(start, start.wrapping_add(self.size)));
        Ok(())
    }
    fn default_trigger<K: KeyType>(&self) -> Arc<dyn Trigger<K, T, TimeWindow>> {
        Arc::new(EventTimeTrigger)
    }
    fn one_window_per_end(&self) -> bool {
        true
    }

    fn is_event_time(&self) -> bool {
        true
    }
    fn validate(&self) -> Result<(), String> {
        check_tumbling("TumblingEventTimeWindows", self.size, self.offset)
    }
    fn describe(&self) -> String {
        format!("TumblingEventTimeWindows({})", self.size)
    }
}

/// Processing-time windows of a fixed size that do not overlap.
#[derive(Debug, Clone, Copy)]
pub struct TumblingProcessingTimeWindows {
    size: i64,
    offset: i64,
}

impl TumblingProcessingTimeWindows {
    /// Windows of `size`, aligned to the epoch.
    pub fn of(size: Duration) -> Self {
        Self {
            size: millis(size),
            offset: 0,
        }
    }

    /// Windows of `size` shifted by `offset_ms`; requires `|offset| < size`.
    pub fn of_with_offset(size: Duration, offset_ms: i64) -> Self {
        Self {
            size: millis(size),
            offset: offset_ms,
        }
    }
}

impl<T: 'static> WindowAssigner<T, TimeWindow> for TumblingProcessingTimeWindows {
    fn assign_windows(
        &self,
        _element: &T,
        _timestamp: i64,
        ctx: &AssignerContext<'_>,
        out: &mut Vec<TimeWindow>,
    ) -> Result<(), WindowError> {
        let start = tumbling_start(ctx.current_processing_time(), self.offset, self.size);
        out.push(TimeWindow::new(start, start.wrapping_add(self.size)));
        Ok(())
    }
    fn default_trigger<K: KeyType>(&self) -> Arc<dyn Trigger<K, T, TimeWindow>> {
        Arc::new(ProcessingTimeTrigger)
    }
    fn is_event_time(&self) -> bool {
        false
    }
    fn validate(&self) -> Result<(), String> {
        check_tumbling("TumblingProcessingTimeWindows", self.size, self.offset)
    }
    fn describe(&self) -> String {
        format!("TumblingProcessingTimeWindows({})", self.size)
    }
}

/// Event-time windows of `size` starting every `slide` (Flink's `SlidingEventTimeWindows`).
#[derive(Debug, Clone, Copy)]
pub struct SlidingEventTimeWindows {
    size: i64,
    slide: i64,
    offset: i64,
}

impl SlidingEventTimeWindows {
    /// Windows of `size` every `slide`.
    pub fn of(size: Duration, slide: Duration) -> Self {
        Self {
            size: millis(size),
            slide: millis(slide),
            offset: 0,
        }
    }

    /// Windows of `size` every `slide`, shifted by `offset_ms`; requires `|offset| < slide`.
    pub fn of_with_offset(size: Duration, slide: Duration, offset_ms: i64) -> Self {
        Self {
            size: millis(size),
            slide: millis(slide),
            offset: offset_ms,
        }
    }
}

impl<T: 'static> WindowAssigner<T, TimeWindow> for SlidingEventTimeWindows {
    fn assign_windows(
        &self,
        _element: &T,
        timestamp: i64,
        _ctx: &AssignerContext<'_>,
        out: &mut Vec<TimeWindow>,
    ) -> Result<(), WindowError> {
        if timestamp == i64::MIN {
            return Err(WindowError::NoTimestamp);
        }
        sliding_windows(timestamp, self.size, self.slide, self.offset, out);
        Ok(())
    }
    fn default_trigger<K: KeyType>(&self) -> Arc<dyn Trigger<K, T, TimeWindow>> {
        Arc::new(EventTimeTrigger)
    }
    fn one_window_per_end(&self) -> bool {
        true
    }

    fn is_event_time(&self) -> bool {
        true
    }
    fn windows_per_record(&self) -> u64 {
        (self.size / self.slide.max(1)).max(1) as u64
    }
    fn validate(&self) -> Result<(), String> {
        check_sliding("SlidingEventTimeWindows", self.size, self.slide, self.offset)
    }
    fn describe(&self) -> String {
        format!("SlidingEventTimeWindows({}, {})", self.size, self.slide)
    }
}

/// Processing-time windows of `size` starting every `slide`.
#[derive(Debug, Clone, Copy)]
pub struct SlidingProcessingTimeWindows {
    size: i64,
    slide: i64,
    offset: i64,
}

impl SlidingProcessingTimeWindows {
    /// Windows of `size` every `slide`.
    pub fn of(size: Duration, slide: Duration) -> Self {
        Self {
            size: millis(size),
            slide: millis(slide),
            offset: 0,
        }
    }

    /// Windows of `size` every `slide`, shifted by `offset_ms`; requires `|offset| < slide`.
    pub fn of_with_offset(size: Duration, slide: Duration, offset_ms: i64) -> Self {
        Self {
            size: millis(size),
            slide: millis(slide),
            offset: offset_ms,
        }
    }
}

impl<T: 'static> WindowAssigner<T, TimeWindow> for SlidingProcessingTimeWindows {
    fn assign_windows(
        &self,
        _element: &T,
        _timestamp: i64,
        ctx: &AssignerContext<'_>,
        out: &mut Vec<TimeWindow>,
    ) -> Result<(), WindowError> {
        sliding_windows(ctx.current_processing_time(), self.size, self.slide, self.offset, out);
        Ok(())
    }
    fn default_trigger<K: KeyType>(&self) -> Arc<dyn Trigger<K, T, TimeWindow>> {
        Arc::new(ProcessingTimeTrigger)
    }
    fn is_event_time(&self) -> bool {
        false
    }
    fn windows_per_record(&self) -> u64 {
        (self.size / self.slide.max(1)).max(1) as u64
    }
    fn validate(&self) -> Result<(), String> {
        check_sliding("SlidingProcessingTimeWindows", self.size, self.slide, self.offset)
    }
    fn describe(&self) -> String {
        format!("SlidingProcessingTimeWindows({}, {})", self.size, self.slide)
    }
}

/// Event-time sessions: each element opens `[ts, ts + gap)`; touching or overlapping
/// sessions of a key merge (Flink's `EventTimeSessionWindows`).
#[derive(Debug, Clone, Copy)]
pub struct EventTimeSessionWindows {
    gap: i64,
}

impl EventTimeSessionWindows {
    /// Sessions closed by `gap` without elements.
    pub fn with_gap(gap: Duration) -> Self {
        Self { gap: millis(gap) }
    }
}

impl<T: 'static> WindowAssigner<T, TimeWindow> for EventTimeSessionWindows {
    fn assign_windows(
        &self,
        _element: &T,
        timestamp: i64,
        _ctx: &AssignerContext<'_>,
        out: &mut Vec<TimeWindow>,
    ) -> Result<(), WindowError> {
        out.push(TimeWindow::new(timestamp, timestamp.wrapping_add(self.gap)));
        Ok(())
    }
    fn default_trigger<K: KeyType>(&self) -> Arc<dyn Trigger<K, T, TimeWindow>> {
        Arc::new(EventTimeTrigger)
    }
    fn is_event_time(&self) -> bool {
        true
    }
    fn is_merging(&self) -> bool {
        true
    }
    fn merge_windows(&self, windows: &[TimeWindow]) -> Vec<(TimeWindow, Vec<TimeWindow>)> {
        TimeWindow::merge_windows(windows)
    }
    fn validate(&self) -> Result<(), String> {
        if self.gap <= 0 {
            return Err("EventTimeSessionWindows parameters must satisfy 0 < size".into());
        }
        Ok(())
    }
    fn describe(&self) -> String {
        format!("EventTimeSessionWindows({})", self.gap)
    }
}

/// Processing-time sessions: each element opens `[now, now + gap)`.
#[derive(Debug, Clone, Copy)]
pub struct ProcessingTimeSessionWindows {
    gap: i64,
}

impl ProcessingTimeSessionWindows {
    /// Sessions closed by `gap` without elements.
    pub fn with_gap(gap: Duration) -> Self {
        Self { gap: millis(gap) }
    }
}

impl<T: 'static> WindowAssigner<T, TimeWindow> for ProcessingTimeSessionWindows {
    fn assign_windows(
        &self,
        _element: &T,
        _timestamp: i64,
        ctx: &AssignerContext<'_>,
        out: &mut Vec<TimeWindow>,
    ) -> Result<(), WindowError> {
        let now = ctx.current_processing_time();
        out.push(TimeWindow::new(now, now.wrapping_add(self.gap)));
        Ok(())
    }
    fn default_trigger<K: KeyType>(&self) -> Arc<dyn Trigger<K, T, TimeWindow>> {
        Arc::new(ProcessingTimeTrigger)
    }
    fn is_event_time(&self) -> bool {
        false
    }
    fn is_merging(&self) -> bool {
        true
    }
    fn merge_windows(&self, windows: &[TimeWindow]) -> Vec<(TimeWindow, Vec<TimeWindow>)> {
        TimeWindow::merge_windows(windows)
    }
    fn validate(&self) -> Result<(), String> {
        if self.gap <= 0 {
            return Err("ProcessingTimeSessionWindows parameters must satisfy 0 < size".into());
        }
        Ok(())
    }
    fn describe(&self) -> String {
        format!("ProcessingTimeSessionWindows({})", self.gap)
    }
}

/// One window for all elements of a key; never fires unless given a trigger
/// (Flink's `GlobalWindows`).
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobalWindows;

impl GlobalWindows {
    /// The assigner.
    pub fn create() -> Self {
        GlobalWindows
    }
}

impl<T: 'static> WindowAssigner<T, GlobalWindow> for GlobalWindows {
    fn assign_windows(
        &self,
        _element: &T,
        _timestamp: i64,
        _ctx: &AssignerContext<'_>,
        out: &mut Vec<GlobalWindow>,
    ) -> Result<(), WindowError> {
        out.push(GlobalWindow);
        Ok(())
    }
    fn default_trigger<K: KeyType>(&self) -> Arc<dyn Trigger<K, T, GlobalWindow>> {
        Arc::new(NeverTrigger)
    }
    fn is_event_time(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        "GlobalWindows".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assign<A: WindowAssigner<(), TimeWindow>>(a: &A, ts: i64, now: i64) -> Vec<TimeWindow> {
        let (pts, _clock) = ProcessingTimeService::manual(now);
        let mut out = Vec::new();
        a.assign_windows(&(), ts, &AssignerContext::new(&pts), &mut out)
            .unwrap();
        out
    }

    #[test]
    fn tumbling_window_of_13000_with_size_10000_is_10000_to_20000() {
        let a = TumblingEventTimeWindows::of(Duration::from_millis(10_000));
        assert_eq!(assign(&a, 13_000, 0), vec![TimeWindow::new(10_000, 20_000)]);
        let shifted = TumblingEventTimeWindows::of_with_offset(Duration::from_millis(10_000), 2_000);
        assert_eq!(assign(&shifted, 13_000, 0), vec![TimeWindow::new(12_000, 22_000)]);
    }

    #[test]
    fn sliding_size_10_slide_5_puts_timestamp_12_into_10_to_20_and_5_to_15() {
        let a = SlidingEventTimeWindows::of(Duration::from_millis(10), Duration::from_millis(5));
        assert_eq!(assign(&a, 12, 0), vec![TimeWindow::new(10, 20), TimeWindow::new(5, 15)]);
    }

    #[test]
    fn event_time_assigners_reject_a_record_without_timestamp_with_flinks_message() {
        let a = TumblingEventTimeWindows::of(Duration::from_secs(1));
        let (pts, _clock) = ProcessingTimeService::manual(0);
        let err = WindowAssigner::<(), TimeWindow>::assign_windows(
            &a,
            &(),
            i64::MIN,
            &AssignerContext::new(&pts),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("Record has Long.MIN_VALUE timestamp (= no timestamp marker)."));
    }

    #[test]
    fn processing_time_assigners_use_the_clock_not_the_timestamp() {
        let a = TumblingProcessingTimeWindows::of(Duration::from_millis(100));
        assert_eq!(assign(&a, 5, 1_234), vec![TimeWindow::new(1_200, 1_300)]);
        let s = ProcessingTimeSessionWindows::with_gap(Duration::from_millis(10));
        assert_eq!(assign(&s, 5, 1_234), vec![TimeWindow::new(1_234, 1_244)]);
    }

    #[test]
    fn session_windows_open_a_gap_long_window_per_element() {
        let a = EventTimeSessionWindows::with_gap(Duration::from_millis(10));
        assert_eq!(assign(&a, 3, 0), vec![TimeWindow::new(3, 13)]);
        assert!(WindowAssigner::<(), TimeWindow>::is_merging(&a));
    }

    #[test]
    fn invalid_parameters_are_reported_with_flinks_messages() {
        let t = TumblingEventTimeWindows::of_with_offset(Duration::from_millis(10), 10);
        assert_eq!(
            WindowAssigner::<(), TimeWindow>::validate(&t).unwrap_err(),
            "TumblingEventTimeWindows parameters must satisfy abs(offset) < size"
        );
        let s = SlidingEventTimeWindows::of(Duration::from_millis(10), Duration::ZERO);
        assert_eq!(
            WindowAssigner::<(), TimeWindow>::validate(&s).unwrap_err(),
            "SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0"
        );
        let many = SlidingEventTimeWindows::of(Duration::from_secs(100_000), Duration::from_millis(1));
        assert!(WindowAssigner::<(), TimeWindow>::validate(&many).is_err());
        let g = EventTimeSessionWindows::with_gap(Duration::ZERO);
        assert_eq!(
            WindowAssigner::<(), TimeWindow>::validate(&g).unwrap_err(),
            "EventTimeSessionWindows parameters must satisfy 0 < size"
        );
    }
}
