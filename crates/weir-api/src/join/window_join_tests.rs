//! The window join's co-group function inside a real window operator, driven by
//! direct calls (elements, watermarks, processing-time ticks in; records out). A whole
//! job built through `join`/`co_group` runs on the MiniCluster in
//! `crates/weir/tests/api_jobs.rs`.

use super::*;
use crate::join::test_log::Emitted;
use crate::keyed_state::restore_keyed;
use crate::process::tests::context;
use crate::windowing::contents::ListContents;
use crate::windowing::window_operator::{WindowOperator, WindowSpec};
use crate::windowing::{
    EventTimeTrigger, ProcessingTimeTrigger, SlidingEventTimeWindows, TimeWindow, TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
};
use weir_core::ids::OperatorId;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::checkpoint::CheckpointedOperator;
use weir_runtime::operator::{ManualClock, Output, ProcessingTimeService};
use weir_state::{KeyedStateBackend, OperatorSnapshot, TimerService};

/// A name of key `.0` (first input) and an amount of key `.0` (second input).
type Name = (u32, String);
type Amount = (u32, u64);
type U = TaggedUnion<Name, Amount>;

const OP: OperatorId = OperatorId(21);

fn name(key: u32, n: &str) -> U {
    TaggedUnion::One((key, n.to_string()))
}

fn amount(key: u32, a: u64) -> U {
    TaggedUnion::Two((key, a))
}

fn pair(n: Name, a: Amount) -> String {
    format!("{}+{}", n.1, a.1)
}

fn describe_groups(names: Vec<Name>, amounts: Vec<Amount>, out: &mut Collector<'_, String>) {
    let names: Vec<String> = names.into_iter().map(|n| n.1).collect();
    let amounts: Vec<u64> = amounts.into_iter().map(|a| a.1).collect();
    out.collect(format!("{names:?} {amounts:?}"));
}

type Contents<F> = ListContents<U, CoGroupWindowFunction<F, Name, Amount>>;

fn co_group_contents<F: CoGroupFunction<Name, Amount, String>>(f: F) -> Contents<F> {
    ListContents::new(CoGroupWindowFunction { f, _t: PhantomData })
}

type JoinContents = Contents<CrossProduct<OneResultPerPair<fn(Name, Amount) -> String>>>;

fn join_contents() -> JoinContents {
    co_group_contents(CrossProduct(OneResultPerPair(pair as fn(Name, Amount) -> String)))
}

struct Harness<F: CoGroupFunction<Name, Amount, String>> {
    op: WindowOperator<u32, U, String, TimeWindow, Contents<F>>,
    out: Emitted<String>,
    clock: ManualClock,
}

fn harness<F: CoGroupFunction<Name, Amount, String>>(
    assigner: Arc<dyn WindowAssigner<U, TimeWindow>>,
    trigger: Arc<dyn Trigger<u32, U, TimeWindow>>,
    lateness: i64,
    contents: Contents<F>,
    restored: (KeyedStateBackend<u32>, TimerService<u32, TimeWindow>),
) -> Harness<F> {
    let (pts, clock) = ProcessingTimeService::manual(1_000);
    let out = Emitted::default();
    let spec = WindowSpec {
        name: "Join".into(),
        key_selector: Arc::new(|u: &U| match u {
            TaggedUnion::One(n) => n.0,
            TaggedUnion::Two(a) => a.0,
        }),
        assigner,
        trigger,
        allowed_lateness: lateness,
    };
    let op = WindowOperator::restored(spec, contents, restored, pts, Box::new(out.clone()), None);
    Harness { op, out, clock }
}

fn fresh() -> (KeyedStateBackend<u32>, TimerService<u32, TimeWindow>) {
    restore_keyed(&context(0, 1, &[], OP)).unwrap()
}

fn tumbling<F: CoGroupFunction<Name, Amount, String>>(lateness: i64, contents: Contents<F>) -> Harness<F> {
    harness(
        Arc::new(TumblingEventTimeWindows::of(Duration::from_millis(10))),
        Arc::new(EventTimeTrigger),
        lateness,
        contents,
        fresh(),
    )
}

impl<F: CoGroupFunction<Name, Amount, String>> Harness<F> {
    fn element(&mut self, value: U, ts: i64) {
        self.op.collect(StreamRecord::with_timestamp(value, ts)).unwrap();
    }
    fn watermark(&mut self, w: i64) {
        self.op.emit_watermark(Watermark(w)).unwrap();
    }
    fn sorted_output(&self) -> Vec<(String, Option<i64>)> {
        let mut out = self.out.take();
        out.sort();
        out
    }
}

fn at(ts: i64, values: &[&str]) -> Vec<(String, Option<i64>)> {
    values.iter().map(|v| (v.to_string(), Some(ts))).collect()
}

#[test]
fn a_join_emits_each_windows_cross_product_per_key_at_the_windows_max_timestamp() {
    let mut h = tumbling(0, join_contents());
    h.element(name(1, "a"), 1);
    h.element(amount(1, 10), 3);
    h.element(name(1, "b"), 5);
    h.element(amount(1, 20), 8);
    h.element(name(2, "lonely"), 2);
    h.element(amount(1, 30), 12);
    h.watermark(8);
    assert!(h.out.take().is_empty(), "the window [0,10) is still open");
    h.watermark(9);
    assert_eq!(h.out.take(), at(9, &["a+10", "a+20", "b+10", "b+20"]));
    h.watermark(19);
    assert!(
        h.out.take().is_empty(),
        "key 1's window [10,20) has no first-input record"
    );
}

#[test]
fn a_co_group_gets_both_sides_of_every_window_and_key_even_with_one_side_empty() {
    let mut h = tumbling(0, co_group_contents(describe_groups));
    h.element(name(1, "a"), 1);
    h.element(amount(1, 10), 3);
    h.element(name(1, "b"), 5);
    h.element(name(2, "c"), 2);
    h.element(amount(1, 30), 12);
    h.watermark(19);
    assert_eq!(
        h.sorted_output(),
        vec![
            ("[\"a\", \"b\"] [10]".to_string(), Some(9)),
            ("[\"c\"] []".to_string(), Some(9)),
            ("[] [30]".to_string(), Some(19)),
        ]
    );
}

#[test]
fn sliding_windows_join_a_pair_once_in_every_window_both_are_in() {
    let mut h = harness(
        Arc::new(SlidingEventTimeWindows::of(
            Duration::from_millis(10),
            Duration::from_millis(5),
        )),
        Arc::new(EventTimeTrigger),
        0,
        join_contents(),
        fresh(),
    );
    h.element(name(1, "a"), 7);
    h.element(amount(1, 1), 8);
    h.element(amount(1, 2), 11);
    h.watermark(30);
    assert_eq!(
        h.sorted_output(),
        vec![
            ("a+1".to_string(), Some(9)),
            ("a+1".to_string(), Some(14)),
            ("a+2".to_string(), Some(14)),
        ]
    );
}

#[test]
fn processing_time_windows_join_what_arrived_while_the_window_was_open() {
    let mut h = harness(
        Arc::new(TumblingProcessingTimeWindows::of(Duration::from_millis(100))),
        Arc::new(ProcessingTimeTrigger),
        0,
        join_contents(),
        fresh(),
    );
    h.element(name(1, "a"), 5);
    h.clock.set(1_050);
    h.op.collect(StreamRecord::new(amount(1, 7))).unwrap();
    h.clock.set(1_100);
    h.op.collect(StreamRecord::new(amount(1, 8))).unwrap();
    h.op.on_processing_time(1_099).unwrap();
    assert_eq!(h.out.take(), at(1_099, &["a+7"]));
    h.op.on_processing_time(1_199).unwrap();
    assert!(
        h.out.take().is_empty(),
        "the window [1100,1200) has no first-input record"
    );
}

#[test]
fn a_late_element_within_the_allowed_lateness_refires_the_join_of_the_whole_window() {
    let mut h = tumbling(5, join_contents());
    h.element(name(1, "a"), 1);
    h.element(amount(1, 1), 2);
    h.watermark(9);
    assert_eq!(h.out.take(), at(9, &["a+1"]));
    h.element(amount(1, 2), 3);
    assert_eq!(h.out.take(), at(9, &["a+1", "a+2"]));
    h.watermark(14);
    h.element(amount(1, 3), 4);
    assert!(h.out.take().is_empty());
    assert_eq!(h.op.num_late_records_dropped(), 1);
}

#[test]
fn a_restored_join_still_has_the_window_contents_and_timers_of_the_checkpoint() {
    let mut h = tumbling(0, join_contents());
    h.element(name(1, "a"), 1);
    h.element(name(2, "b"), 2);
    let snapshot: OperatorSnapshot = h.op.snapshot_state(1).unwrap();
    h.element(amount(1, 99), 3);

    let restored = restore_keyed(&context(0, 1, &[snapshot], OP)).unwrap();
    let mut again = harness(
        Arc::new(TumblingEventTimeWindows::of(Duration::from_millis(10))),
        Arc::new(EventTimeTrigger),
        0,
        join_contents(),
        restored,
    );
    again.element(amount(1, 5), 4);
    again.element(amount(2, 6), 5);
    again.watermark(9);
    assert_eq!(again.sorted_output(), at(9, &["a+5", "b+6"]));
}
