//! The window-table operator against the keyed-state window operator: on random
//! out-of-order input with random watermarks, both emit the same records with the same
//! timestamps in the same order, drop or side-output the same late elements, and each
//! restores the other's snapshot and goes on identically.

use super::*;
use crate::keyed_state::keyed_from_snapshot;
use crate::windowing::assigners::{SlidingEventTimeWindows, TumblingEventTimeWindows, WindowAssigner};
use crate::windowing::contents::{AggregateContents, ReduceContents, WindowContents};
use crate::windowing::functions::{AggregateFunction, PassThrough, ProcessWindowFunction, WindowContext};
use crate::windowing::triggers::{EventTimeTrigger, Trigger};
use crate::windowing::window::TimeWindow;
use crate::windowing::window_operator::WindowOperator;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;
use weir_core::KeyGroupRange;
use weir_runtime::checkpoint::CheckpointedOperator;
use weir_runtime::error::UserError;
use weir_state::{OperatorSnapshot, ValueStateDescriptor};

use crate::windowing::test_log::Log;

type Rec = (u32, i64);

/// Emits `key [start,end) result #n`, `n` counting the key's firings in its global
/// state: the function sees the firing key's state, in both operators.
#[derive(Clone)]
struct DescribeAndCount;

impl<V: Debug + 'static> ProcessWindowFunction<u32, V, String, TimeWindow> for DescribeAndCount {
    fn process(
        &mut self,
        key: &u32,
        ctx: &mut WindowContext<'_, u32, TimeWindow>,
        elements: Vec<V>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let w = *ctx.window();
        let mut firings = ctx.global_state(&ValueStateDescriptor::<u64>::new("firings"))?;
        let n = firings.value().unwrap_or(0) + 1;
        firings.update(n);
        out.collect(format!("{key} [{},{}) {elements:?} #{n}", w.start(), w.end()));
        Ok(())
    }
}

#[derive(Clone)]
struct SumAndCount;

impl AggregateFunction<Rec, (i64, u32), (i64, u32)> for SumAndCount {
    fn create_accumulator(&self) -> (i64, u32) {
        (0, 0)
    }
    fn add(&self, value: Rec, acc: &mut (i64, u32)) {
        acc.0 += value.1;
        acc.1 += 1;
    }
    fn get_result(&self, acc: &(i64, u32)) -> (i64, u32) {
        *acc
    }
    fn merge(&self, a: (i64, u32), b: (i64, u32)) -> (i64, u32) {
        (a.0 + b.0, a.1 + b.1)
    }
}

/// One step of a run.
#[derive(Debug, Clone, Copy)]
enum Step {
    Element { key: u32, ts: i64 },
    Watermark(i64),
    Snapshot,
}

fn random_steps(seed: u64, n: usize) -> Vec<Step> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let mut now = 1_000i64;
    let mut watermark = i64::MIN;
    let mut steps = Vec::with_capacity(n + 1);
    for _ in 0..n {
        match next(20) {
            0..=14 => {
                now += next(4) as i64;
                // Mostly within 30 ms of the clock, sometimes far behind it.
                let behind = if next(10) == 0 { 40 + next(60) } else { next(30) } as i64;
                steps.push(Step::Element {
                    key: next(7) as u32,
                    ts: now - behind,
                });
            }
            15..=18 => {
                let candidate = now - next(40) as i64;
                if candidate > watermark {
                    watermark = candidate;
                    steps.push(Step::Watermark(watermark));
                }
            }
            _ => steps.push(Step::Snapshot),
        }
    }
    steps.push(Step::Watermark(i64::MAX));
    steps
}

/// An operator of either kind, driven through its `Output` and snapshot interfaces.
trait Driven: Output<Rec> + CheckpointedOperator {}
impl<T: Output<Rec> + CheckpointedOperator> Driven for T {}

/// Builds a fresh operator (restored from `snapshot` if given) writing to `out` and
/// `late`.
type Make = dyn Fn(Option<&OperatorSnapshot>, Log, Log) -> Box<dyn Driven>;

fn spec(assigner: Arc<dyn WindowAssigner<Rec, TimeWindow>>) -> WindowSpec<u32, Rec, TimeWindow> {
    WindowSpec {
        name: "Window".into(),
        key_selector: Arc::new(|r: &Rec| r.0),
        assigner,
        trigger: Arc::new(EventTimeTrigger) as Arc<dyn Trigger<u32, Rec, TimeWindow>>,
        allowed_lateness: 0,
    }
}

fn restored_state(snapshot: Option<&OperatorSnapshot>) -> (KeyedStateBackend<u32>, TimerService<u32, TimeWindow>) {
    let groups = snapshot.map(|s| s.keyed.as_slice()).unwrap_or(&[]);
    keyed_from_snapshot(KeyGroupRange::new(0, 127), 128, groups).unwrap()
}

fn side(late: Log) -> Option<SideOutput<Rec>> {
    Some(SideOutput::new(Box::new(late) as Box<dyn Output<Rec>>))
}

fn make_keyed<C>(assigner: Arc<dyn WindowAssigner<Rec, TimeWindow>>, contents: impl Fn() -> C + 'static) -> Box<Make>
where
    C: WindowContents<u32, Rec, String, TimeWindow>,
{
    Box::new(move |snapshot, out, late| {
        let (pts, _clock) = ProcessingTimeService::manual(0);
        Box::new(WindowOperator::restored(
            spec(assigner.clone()),
            contents(),
            restored_state(snapshot),
            pts,
            Box::new(out),
            side(late),
        ))
    })
}

fn make_table<C>(assigner: Arc<dyn WindowAssigner<Rec, TimeWindow>>, contents: impl Fn() -> C + 'static) -> Box<Make>
where
    C: AccumulatingContents<u32, Rec, String, TimeWindow>,
{
    Box::new(move |snapshot, out, late| {
        let (pts, _clock) = ProcessingTimeService::manual(0);
        Box::new(
            WindowTableOperator::restored(
                spec(assigner.clone()),
                contents(),
                restored_state(snapshot),
                pts,
                Box::new(out),
                side(late),
            )
            .unwrap(),
        )
    })
}

/// Runs `steps` through an operator made by `make`; at every snapshot step, the
/// operator is replaced by one `restore_with` makes from its snapshot. Returns every
/// output and late record, and each watermark, in order.
fn run(steps: &[Step], make: &Make, restore_with: &Make) -> Vec<String> {
    let (out, late) = (Log::default(), Log::default());
    let mut op = make(None, out.clone(), late.clone());
    let mut log = Vec::new();
    for step in steps {
        match *step {
            Step::Element { key, ts } => op
                .collect(StreamRecord {
                    value: (key, ts % 97),
                    timestamp: Some(ts),
                })
                .unwrap(),
            Step::Watermark(w) => op.emit_watermark(Watermark(w)).unwrap(),
            Step::Snapshot => {
                let snapshot = op.snapshot_state(1).unwrap();
                op = restore_with(Some(&snapshot), out.clone(), late.clone());
            }
        }
        log.extend(out.take());
        log.extend(late.take().into_iter().map(|l| format!("late {l}")));
    }
    log
}

fn assert_equivalent(keyed: &Make, table: &Make) {
    for seed in 1..=60 {
        let steps = random_steps(seed, 600);
        let expected = run(&steps, keyed, keyed);
        assert!(
            expected.iter().any(|l| l.starts_with("late")),
            "seed {seed}: no late data"
        );
        assert!(
            expected.iter().filter(|l| l.contains('#')).count() > 20,
            "seed {seed}: few firings"
        );
        assert_eq!(run(&steps, table, table), expected, "seed {seed}: table operator");
        assert_eq!(
            run(&steps, keyed, table),
            expected,
            "seed {seed}: keyed snapshots restored by table"
        );
        assert_eq!(
            run(&steps, table, keyed),
            expected,
            "seed {seed}: table snapshots restored by keyed"
        );
    }
}

fn tumbling() -> Arc<dyn WindowAssigner<Rec, TimeWindow>> {
    Arc::new(TumblingEventTimeWindows::of(Duration::from_millis(10)))
}

fn sliding() -> Arc<dyn WindowAssigner<Rec, TimeWindow>> {
    Arc::new(SlidingEventTimeWindows::of(
        Duration::from_millis(15),
        Duration::from_millis(5),
    ))
}

#[test]
fn tumbling_aggregates_fire_as_the_keyed_state_operator_does_across_restores_either_way() {
    let contents = || AggregateContents::new(SumAndCount, DescribeAndCount);
    assert_equivalent(&make_keyed(tumbling(), contents), &make_table(tumbling(), contents));
}

#[test]
fn sliding_reductions_fire_as_the_keyed_state_operator_does_across_restores_either_way() {
    let reduce = |a: Rec, b: Rec| (a.0, a.1 * 3 + b.1);
    let contents = move || ReduceContents::new(reduce, DescribeAndCount);
    assert_equivalent(&make_keyed(sliding(), contents), &make_table(sliding(), contents));
}

#[test]
fn late_elements_without_a_side_output_are_counted_and_the_table_empties_when_windows_fire() {
    let (pts, _clock) = ProcessingTimeService::manual(0);
    let out = Log::default();
    let mut op = WindowTableOperator::restored(
        spec(tumbling()),
        AggregateContents::new(SumAndCount, PassThrough),
        restored_state(None),
        pts,
        Box::new(out.clone()),
        None,
    )
    .unwrap();
    for (key, ts) in [(1, 3), (2, 4), (1, 12), (1, 5)] {
        op.collect(StreamRecord {
            value: (key, ts),
            timestamp: Some(ts),
        })
        .unwrap();
    }
    assert_eq!(op.num_entries(), 3);
    op.emit_watermark(Watermark(9)).unwrap();
    assert_eq!(out.take(), vec!["(8, 2)@Some(9)", "(4, 1)@Some(9)", "W9"]);
    op.collect(StreamRecord {
        value: (3, 9),
        timestamp: Some(9),
    })
    .unwrap();
    assert_eq!(op.num_late_records_dropped(), 1);
    assert_eq!(op.num_entries(), 1);
    op.emit_watermark(Watermark(i64::MAX)).unwrap();
    assert_eq!(
        out.take(),
        vec!["(12, 1)@Some(19)".to_string(), format!("W{}", i64::MAX)]
    );
    assert_eq!(op.num_entries(), 0);
}

#[test]
fn only_event_time_windows_of_one_size_with_the_default_trigger_and_no_lateness_fit_a_table() {
    assert!(fits_window_table(&spec(tumbling())));
    assert!(fits_window_table(&spec(sliding())));
    let mut late = spec(tumbling());
    late.allowed_lateness = 1;
    assert!(!fits_window_table(&late));
    let mut counting = spec(tumbling());
    counting.trigger = Arc::new(crate::windowing::triggers::CountTrigger::of(2));
    assert!(!fits_window_table(&counting));
    let sessions: Arc<dyn WindowAssigner<Rec, TimeWindow>> = Arc::new(
        crate::windowing::assigners::EventTimeSessionWindows::with_gap(Duration::from_millis(5)),
    );
    assert!(!fits_window_table(&spec(sessions)));
    let processing: Arc<dyn WindowAssigner<Rec, TimeWindow>> = Arc::new(
        crate::windowing::assigners::TumblingProcessingTimeWindows::of(Duration::from_millis(5)),
    );
    assert!(!fits_window_table(&spec(processing)));
}
