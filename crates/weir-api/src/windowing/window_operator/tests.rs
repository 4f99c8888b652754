//! Scenarios of reference §7, driven by direct calls (no threads): elements,
//! watermarks and processing-time ticks in, emitted records out.

use super::*;
use crate::windowing::assigners::{
    EventTimeSessionWindows, GlobalWindows, SlidingEventTimeWindows, TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
};
use crate::windowing::contents::{AggregateContents, ListContents, ReduceContents};
use crate::windowing::functions::{AggregateFunction, PassThrough, ProcessWindowFunction, WindowContext};
use crate::windowing::triggers::{CountTrigger, EventTimeTrigger, PurgingTrigger, TriggerContext, TriggerResult};
use crate::windowing::window::{GlobalWindow, TimeWindow};
use std::fmt::Debug;
use std::time::Duration;
use weir_core::KeyGroupRange;
use weir_core::Watermark;
use weir_runtime::operator::ManualClock;

use crate::windowing::test_log::Log;

type Rec = (u32, i64);

/// Emits `key [start,end) elements`.
#[derive(Clone)]
struct Describe;

impl<V: Debug + 'static> ProcessWindowFunction<u32, V, String, TimeWindow> for Describe {
    fn process(
        &mut self,
        key: &u32,
        ctx: &mut WindowContext<'_, u32, TimeWindow>,
        elements: Vec<V>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let w = ctx.window();
        out.collect(format!("{key} [{},{}) {elements:?}", w.start(), w.end()));
        Ok(())
    }
}

#[derive(Clone)]
struct Sum;

impl AggregateFunction<Rec, i64, i64> for Sum {
    fn create_accumulator(&self) -> i64 {
        0
    }
    fn add(&self, value: Rec, acc: &mut i64) {
        *acc += value.1;
    }
    fn get_result(&self, acc: &i64) -> i64 {
        *acc
    }
    fn merge(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

struct Harness<O, W: Window, C> {
    op: WindowOperator<u32, Rec, O, W, C>,
    out: Log,
    late: Log,
    clock: ManualClock,
}

fn harness<O: Debug + 'static, W: Window, C: WindowContents<u32, Rec, O, W>>(
    assigner: Arc<dyn WindowAssigner<Rec, W>>,
    trigger: Arc<dyn Trigger<u32, Rec, W>>,
    lateness: i64,
    contents: C,
    with_late_output: bool,
) -> Harness<O, W, C> {
    let (pts, clock) = ProcessingTimeService::manual(1_000);
    let out = Log::default();
    let late = Log::default();
    let spec = WindowSpec {
        name: "Window".into(),
        key_selector: Arc::new(|r: &Rec| r.0),
        assigner,
        trigger,
        allowed_lateness: lateness,
    };
    let op = WindowOperator::new(
        spec,
        contents,
        KeyedStateBackend::new(KeyGroupRange::new(0, 127), 128),
        pts,
        Box::new(out.clone()),
        with_late_output.then(|| SideOutput::new(Box::new(late.clone()) as Box<dyn Output<Rec>>)),
    );
    Harness { op, out, late, clock }
}

fn tumbling_list(size: u64, lateness: i64) -> Harness<String, TimeWindow, ListContents<Rec, Describe>> {
    harness(
        Arc::new(TumblingEventTimeWindows::of(Duration::from_millis(size))),
        Arc::new(EventTimeTrigger),
        lateness,
        ListContents::new(Describe),
        true,
    )
}

fn sliding_sum() -> Harness<String, TimeWindow, AggregateContents<i64, i64, Sum, Describe>> {
    harness(
        Arc::new(SlidingEventTimeWindows::of(
            Duration::from_millis(10),
            Duration::from_millis(5),
        )),
        Arc::new(EventTimeTrigger),
        0,
        AggregateContents::new(Sum, Describe),
        true,
    )
}

impl<O, W: Window, C: WindowContents<u32, Rec, O, W>> Harness<O, W, C> {
    fn element(&mut self, key: u32, value: i64, ts: i64) {
        self.op.collect(StreamRecord::with_timestamp((key, value), ts)).unwrap();
    }
    fn watermark(&mut self, w: i64) {
        self.op.emit_watermark(Watermark(w)).unwrap();
    }
}

#[test]
fn tumbling_window_fires_once_the_watermark_reaches_its_max_timestamp_with_that_timestamp() {
    let mut h = harness(
        Arc::new(TumblingEventTimeWindows::of(Duration::from_millis(10))),
        Arc::new(EventTimeTrigger),
        0,
        AggregateContents::new(Sum, Describe),
        true,
    );
    h.element(1, 1, 1);
    h.element(1, 5, 5);
    h.element(2, 7, 7);
    h.element(1, 12, 12);
    h.watermark(8);
    assert_eq!(h.out.take(), vec!["W8"]);
    h.watermark(9);
    assert_eq!(
        h.out.take(),
        vec!["\"1 [0,10) [6]\"@Some(9)", "\"2 [0,10) [7]\"@Some(9)", "W9"]
    );
    h.watermark(100);
    assert_eq!(h.out.take(), vec!["\"1 [10,20) [12]\"@Some(19)", "W100"]);
}

#[test]
fn records_prefetched_out_of_turn_land_in_the_state_of_their_own_key() {
    let mut h = sliding_sum();
    // The input reads one record ahead; here the prefetched record is not always the
    // next one collected, so a key group remembered from a prefetch must not be reused
    // for another key.
    let records = [(1, 1, 6), (2, 10, 7), (1, 100, 8), (3, 1000, 12)];
    let prefetched = [(2, 0, 7), (1, 0, 6), (3, 0, 12), (1, 0, 8)];
    for (&(key, value, ts), &(pk, pv, pts)) in records.iter().zip(&prefetched) {
        h.op.prefetch(&StreamRecord::with_timestamp((pk, pv), pts));
        h.element(key, value, ts);
    }
    h.watermark(14);
    assert_eq!(
        h.out.take(),
        vec![
            "\"1 [0,10) [101]\"@Some(9)",
            "\"2 [0,10) [10]\"@Some(9)",
            "\"1 [5,15) [101]\"@Some(14)",
            "\"2 [5,15) [10]\"@Some(14)",
            "\"3 [5,15) [1000]\"@Some(14)",
            "W14"
        ]
    );
    h.watermark(100);
    assert_eq!(h.out.take(), vec!["\"3 [10,20) [1000]\"@Some(19)", "W100"]);
    assert_eq!(h.op.num_timers(), 0);
}

#[test]
fn element_within_allowed_lateness_refires_the_window_with_its_whole_contents() {
    let mut h = tumbling_list(10, 5);
    h.element(1, 10, 1);
    h.element(1, 30, 3);
    h.watermark(9);
    assert_eq!(h.out.take(), vec!["\"1 [0,10) [(1, 10), (1, 30)]\"@Some(9)", "W9"]);
    // Behind the watermark but within the lateness (cleanup at 14): a late firing.
    h.element(1, 20, 2);
    assert_eq!(h.out.take(), vec!["\"1 [0,10) [(1, 10), (1, 30), (1, 20)]\"@Some(9)"]);
    assert!(h.late.take().is_empty());
}

#[test]
fn element_beyond_allowed_lateness_goes_to_the_late_data_side_output() {
    let mut h = tumbling_list(10, 5);
    h.element(1, 10, 1);
    h.watermark(14);
    assert_eq!(h.out.take(), vec!["\"1 [0,10) [(1, 10)]\"@Some(9)", "W14"]);
    h.element(1, 40, 4);
    assert!(h.out.take().is_empty());
    assert_eq!(h.late.take(), vec!["(1, 40)@Some(4)"]);
    assert_eq!(h.op.num_late_records_dropped(), 0);
}

#[test]
fn without_a_late_data_output_late_elements_are_counted_as_dropped() {
    let mut h = harness(
        Arc::new(TumblingEventTimeWindows::of(Duration::from_millis(10))),
        Arc::new(EventTimeTrigger),
        0,
        ListContents::new(Describe),
        false,
    );
    h.watermark(20);
    h.element(1, 1, 5);
    h.element(1, 1, 19);
    h.element(1, 1, 25);
    h.watermark(29);
    assert_eq!(h.op.num_late_records_dropped(), 2);
    assert_eq!(h.out.take(), vec!["W20", "\"1 [20,30) [(1, 1)]\"@Some(29)", "W29"]);
}

#[test]
fn an_element_behind_the_watermark_within_lateness_fires_the_window_it_passed_at_once() {
    let mut h = harness(
        Arc::new(SlidingEventTimeWindows::of(
            Duration::from_millis(10),
            Duration::from_millis(5),
        )),
        Arc::new(EventTimeTrigger),
        5,
        ListContents::new(Describe),
        true,
    );
    h.watermark(14);
    h.element(1, 1, 12);
    // [5,15) and [10,20) take it; fires [5,15) at once since 14 >= 14.
    assert_eq!(h.out.take(), vec!["W14", "\"1 [5,15) [(1, 1)]\"@Some(14)"]);
    assert!(h.late.take().is_empty());
}

#[test]
fn sliding_windows_count_an_element_in_every_window_it_falls_in() {
    let mut h = sliding_sum();
    h.element(1, 3, 12);
    h.watermark(i64::MAX);
    assert_eq!(
        h.out.take(),
        vec![
            "\"1 [5,15) [3]\"@Some(14)",
            "\"1 [10,20) [3]\"@Some(19)",
            &format!("W{}", i64::MAX)
        ]
    );
}

#[test]
fn session_windows_merge_when_they_touch_and_fire_with_all_contents() {
    let mut h = harness(
        Arc::new(EventTimeSessionWindows::with_gap(Duration::from_millis(10))),
        Arc::new(EventTimeTrigger),
        0,
        ListContents::new(Describe),
        true,
    );
    h.element(1, 1, 0); // [0,10)
    h.element(1, 2, 10); // [10,20): touches, merged into [0,20)
    h.element(1, 3, 25); // [25,35): separate
    h.element(2, 4, 5); // another key
                        // Only the merged window's timer remains for key 1's first session.
    assert_eq!(h.op.num_timers(), 3);
    h.watermark(18);
    assert_eq!(h.out.take(), vec!["\"2 [5,15) [(2, 4)]\"@Some(14)", "W18"]);
    h.watermark(19);
    assert_eq!(h.out.take(), vec!["\"1 [0,20) [(1, 1), (1, 2)]\"@Some(19)", "W19"]);
    h.element(1, 5, 20); // [20,30) overlaps [25,35) → [20,35)
    h.watermark(i64::MAX);
    assert_eq!(
        h.out.take(),
        vec!["\"1 [20,35) [(1, 3), (1, 5)]\"@Some(34)", &format!("W{}", i64::MAX)]
    );
    assert_eq!(h.op.num_timers(), 0);
}

#[test]
fn a_bridging_element_merges_two_sessions_with_aggregated_state() {
    let mut h = harness(
        Arc::new(EventTimeSessionWindows::with_gap(Duration::from_millis(10))),
        Arc::new(EventTimeTrigger),
        0,
        AggregateContents::new(Sum, Describe),
        true,
    );
    h.element(1, 1, 0); // [0,10)
    h.element(1, 2, 15); // [15,25)
    h.element(1, 4, 8); // [8,18): bridges both → [0,25)
    h.watermark(i64::MAX);
    assert_eq!(
        h.out.take(),
        vec!["\"1 [0,25) [7]\"@Some(24)", &format!("W{}", i64::MAX)]
    );
}

#[test]
fn processing_time_windows_fire_when_the_clock_passes_their_end() {
    let mut h = harness(
        Arc::new(TumblingProcessingTimeWindows::of(Duration::from_millis(100))),
        Arc::new(crate::windowing::triggers::ProcessingTimeTrigger),
        0,
        AggregateContents::new(Sum, Describe),
        true,
    );
    // The record's own timestamp is ignored: the clock (1000) decides the window.
    h.element(1, 2, 5);
    h.clock.set(1_050);
    h.element(1, 3, 99_999);
    h.watermark(i64::MAX);
    assert_eq!(
        h.out.take(),
        vec![format!("W{}", i64::MAX)],
        "watermarks do not fire it"
    );
    h.op.on_processing_time(1_098).unwrap();
    assert!(h.out.take().is_empty());
    h.clock.set(1_099);
    h.op.on_processing_time(1_099).unwrap();
    assert_eq!(h.out.take(), vec!["\"1 [1000,1100) [5]\"@Some(1099)"]);
    assert_eq!(h.op.num_timers(), 0);
    assert!(h
        .op
        .backend()
        .entries::<TimeWindow, i64>(&ValueStateDescriptor::new("window-contents"))
        .unwrap()
        .is_empty());
}

#[test]
fn state_and_timers_are_cleaned_at_max_timestamp_plus_allowed_lateness() {
    let mut h = harness(
        Arc::new(TumblingEventTimeWindows::of(Duration::from_millis(10))),
        Arc::new(EventTimeTrigger),
        5,
        AggregateContents::new(Sum, Describe),
        true,
    );
    let contents = ValueStateDescriptor::<i64>::new("window-contents");
    h.element(1, 1, 1);
    h.watermark(9);
    assert_eq!(h.out.take().len(), 2, "fired");
    assert_eq!(
        h.op.backend().entries::<TimeWindow, i64>(&contents).unwrap().len(),
        1,
        "kept for lateness"
    );
    assert_eq!(h.op.num_timers(), 1, "the cleanup timer at 14");
    h.watermark(13);
    assert_eq!(h.op.backend().entries::<TimeWindow, i64>(&contents).unwrap().len(), 1);
    h.watermark(14);
    assert!(h.op.backend().entries::<TimeWindow, i64>(&contents).unwrap().is_empty());
    assert_eq!(h.op.num_timers(), 0);
    assert_eq!(h.out.take(), vec!["W13", "W14"], "cleanup does not fire again");
}

#[test]
fn count_window_fires_every_n_elements_and_purges() {
    let mut h = harness(
        Arc::new(GlobalWindows::create()),
        Arc::new(PurgingTrigger::<u32, Rec, GlobalWindow>::of(CountTrigger::of(2))),
        0,
        ReduceContents::new(|a: Rec, b: Rec| (a.0, a.1 + b.1), PassThrough),
        true,
    );
    for v in 1..=5 {
        h.element(7, v, v);
    }
    h.watermark(i64::MAX);
    assert_eq!(
        h.out.take(),
        vec![
            format!("(7, 3)@Some({})", i64::MAX),
            format!("(7, 7)@Some({})", i64::MAX),
            format!("W{}", i64::MAX)
        ]
    );
}

#[test]
fn a_record_without_timestamp_in_an_event_time_window_fails_with_flinks_message() {
    let mut h = tumbling_list(10, 0);
    let err = h.op.collect(StreamRecord::new((1, 1))).unwrap_err().to_string();
    assert!(
        err.contains("Record has Long.MIN_VALUE timestamp (= no timestamp marker)"),
        "{err}"
    );
}

#[test]
fn per_window_state_is_refused_with_merging_windows() {
    #[derive(Clone)]
    struct UsesWindowState;
    impl ProcessWindowFunction<u32, Rec, String, TimeWindow> for UsesWindowState {
        fn process(
            &mut self,
            _key: &u32,
            ctx: &mut WindowContext<'_, u32, TimeWindow>,
            _elements: Vec<Rec>,
            _out: &mut Collector<'_, String>,
        ) -> Result<(), UserError> {
            ctx.window_state(&ValueStateDescriptor::<u8>::new("x"))?;
            Ok(())
        }
    }
    let mut h = harness(
        Arc::new(EventTimeSessionWindows::with_gap(Duration::from_millis(10))),
        Arc::new(EventTimeTrigger),
        0,
        ListContents::new(UsesWindowState),
        true,
    );
    h.element(1, 1, 0);
    let err = h.op.emit_watermark(Watermark(i64::MAX)).unwrap_err().to_string();
    assert!(
        err.contains("Per-window state is not allowed when using merging windows."),
        "{err}"
    );
}

/// Fires and purges a window as soon as it holds a value of 100 or more.
struct FireOnLargeValues;

impl Trigger<u32, Rec, TimeWindow> for FireOnLargeValues {
    fn on_element(
        &self,
        element: &Rec,
        _timestamp: i64,
        _window: &TimeWindow,
        _ctx: &mut TriggerContext<'_, u32, TimeWindow>,
    ) -> Result<TriggerResult, UserError> {
        Ok(if element.1 >= 100 {
            TriggerResult::FireAndPurge
        } else {
            TriggerResult::Continue
        })
    }
    fn on_event_time(
        &self,
        _time: i64,
        _window: &TimeWindow,
        _ctx: &mut TriggerContext<'_, u32, TimeWindow>,
    ) -> Result<TriggerResult, UserError> {
        Ok(TriggerResult::Continue)
    }
    fn on_processing_time(
        &self,
        _time: i64,
        _window: &TimeWindow,
        _ctx: &mut TriggerContext<'_, u32, TimeWindow>,
    ) -> Result<TriggerResult, UserError> {
        Ok(TriggerResult::Continue)
    }
    fn clear(&self, _window: &TimeWindow, _ctx: &mut TriggerContext<'_, u32, TimeWindow>) -> Result<(), UserError> {
        Ok(())
    }
    fn describe(&self) -> String {
        "FireOnLargeValues".into()
    }
}

#[test]
fn a_custom_trigger_decides_when_a_window_fires_and_purges() {
    let mut h = harness(
        Arc::new(TumblingEventTimeWindows::of(Duration::from_millis(1_000))),
        Arc::new(FireOnLargeValues),
        0,
        ListContents::new(Describe),
        true,
    );
    for (v, ts) in [(1, 1), (100, 2), (2, 3), (200, 4), (3, 5)] {
        h.element(1, v, ts);
    }
    h.watermark(i64::MAX);
    assert_eq!(
        h.out.take(),
        vec![
            "\"1 [0,1000) [(1, 1), (1, 100)]\"@Some(999)".to_string(),
            "\"1 [0,1000) [(1, 2), (1, 200)]\"@Some(999)".to_string(),
            format!("W{}", i64::MAX)
        ]
    );
}
