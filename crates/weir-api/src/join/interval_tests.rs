//! The interval join operator driven by direct calls: elements of both inputs and
//! watermarks in, joined pairs out; snapshots restored at the same and at another
//! parallelism.

use super::*;
use crate::join::test_log::Emitted;
use crate::keyed_state::restore_keyed;
use crate::process::tests::context;
use weir_core::ids::OperatorId;
use weir_core::key_group::{assign_to_key_group, operator_index_for_key_group};
use weir_core::key_hash::key_hash;
use weir_core::Watermark;
use weir_runtime::error::UserError;

/// `(key, name)` on both sides.
type Rec = (u32, String);

const OP: OperatorId = OperatorId(31);

/// Describes a pair with the timestamps its context reports.
#[derive(Clone)]
struct Describe;

impl ProcessJoinFunction<Rec, Rec, String> for Describe {
    fn process_element(
        &mut self,
        left: Rec,
        right: Rec,
        ctx: &ProcessJoinContext<'_>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        out.collect(format!(
            "{}+{} l={} r={}",
            left.1,
            right.1,
            ctx.left_timestamp(),
            ctx.right_timestamp()
        ));
        Ok(())
    }
}

type Op = IntervalJoinOperator<u32, Rec, Rec, String, Describe>;

fn operator(bounds: IntervalBounds, index: u32, parallelism: u32, old: &[OperatorSnapshot]) -> (Op, Emitted<String>) {
    let out = Emitted::default();
    let ctx = context(index, parallelism, old, OP);
    let keys: KeySelectors<u32, Rec, Rec> = (Arc::new(|r: &Rec| r.0), Arc::new(|r: &Rec| r.0));
    let op = IntervalJoinOperator::restored(
        "Interval Join".into(),
        Describe,
        bounds,
        keys,
        restore_keyed(&ctx).unwrap(),
        TaskInfo::default(),
        Box::new(out.clone()),
    );
    (op.unwrap(), out)
}

fn bounds(lower: i64, upper: i64) -> IntervalBounds {
    IntervalBounds::new(lower, upper, false, false).unwrap()
}

fn left(op: &mut Op, key: u32, name: &str, ts: i64) {
    let r = StreamRecord::with_timestamp(CoElement::First((key, name.to_string())), ts);
    op.collect(r).unwrap();
}

fn right(op: &mut Op, key: u32, name: &str, ts: i64) {
    let r = StreamRecord::with_timestamp(CoElement::Second((key, name.to_string())), ts);
    op.collect(r).unwrap();
}

fn pairs(out: &Emitted<String>) -> Vec<String> {
    out.take()
        .into_iter()
        .map(|(v, ts)| format!("{v} @{}", ts.unwrap_or(i64::MIN)))
        .collect()
}

#[test]
fn each_element_joins_the_other_sides_elements_of_its_key_within_the_inclusive_bounds() {
    let (mut op, out) = operator(bounds(-2, 3), 0, 1, &[]);
    for ts in [7, 8, 13, 14] {
        right(&mut op, 1, &format!("r{ts}"), ts);
    }
    right(&mut op, 2, "other-key", 10);
    assert!(out.take().is_empty());
    left(&mut op, 1, "a", 10);
    assert_eq!(pairs(&out), vec!["a+r8 l=10 r=8 @10", "a+r13 l=10 r=13 @13"]);
    // Seen from the right: left elements at 12 - 3 ..= 12 + 2.
    right(&mut op, 1, "r12", 12);
    assert_eq!(pairs(&out), vec!["a+r12 l=10 r=12 @12"]);
}

#[test]
fn exclusive_bounds_leave_out_the_elements_exactly_at_them() {
    let b = IntervalBounds::new(-2, 3, true, true).unwrap();
    let (mut op, out) = operator(b, 0, 1, &[]);
    left(&mut op, 1, "a", 10);
    for ts in [8, 9, 12, 13] {
        right(&mut op, 1, &format!("r{ts}"), ts);
    }
    assert_eq!(pairs(&out), vec!["a+r9 l=10 r=9 @10", "a+r12 l=10 r=12 @12"]);
}

#[test]
fn elements_behind_the_watermark_are_dropped_and_counted() {
    let (mut op, out) = operator(bounds(-5, 5), 0, 1, &[]);
    left(&mut op, 1, "a", 22);
    op.emit_watermark(Watermark(20)).unwrap();
    right(&mut op, 1, "late", 19);
    right(&mut op, 1, "on-time", 20);
    assert_eq!(pairs(&out), vec!["a+on-time l=22 r=20 @22"]);
    assert_eq!(op.num_late_records_dropped(), 1);
}

#[test]
fn the_watermark_cleans_each_buffered_element_up_once_the_other_side_can_no_longer_join_it() {
    let (mut op, out) = operator(bounds(0, 5), 0, 1, &[]);
    left(&mut op, 1, "a", 10);
    right(&mut op, 1, "b", 10);
    assert_eq!(pairs(&out), vec!["a+b l=10 r=10 @10"]);
    assert_eq!(op.num_timers(), 2, "left cleanup at 15, right at 10");
    op.emit_watermark(Watermark(14)).unwrap();
    assert_eq!(op.num_timers(), 1);
    right(&mut op, 1, "c", 14);
    assert_eq!(pairs(&out), vec!["a+c l=10 r=14 @14"]);
    op.emit_watermark(Watermark(15)).unwrap();
    // Not late (15 is not behind 15), but `a` is gone: Flink's cleanup at the bound.
    right(&mut op, 1, "d", 15);
    assert!(out.take().is_empty());
    op.emit_watermark(Watermark(i64::MAX)).unwrap();
    assert_eq!(op.num_timers(), 0);
}

#[test]
fn a_record_without_a_timestamp_fails_the_operator_naming_its_input() {
    let (mut op, _) = operator(bounds(0, 1), 0, 1, &[]);
    let err = op
        .collect(StreamRecord::new(CoElement::Second((1, "x".to_string()))))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Interval Join") && err.contains("right input has no timestamp"),
        "{err}"
    );
}

#[test]
fn a_restored_join_meets_the_buffered_elements_and_keeps_their_cleanup_timers() {
    let (mut op, _) = operator(bounds(-1, 1), 0, 1, &[]);
    left(&mut op, 1, "a", 10);
    left(&mut op, 1, "gone", 3);
    let snap = op.snapshot_state(1).unwrap();
    left(&mut op, 1, "after-the-checkpoint", 10);

    let (mut again, out) = operator(bounds(-1, 1), 0, 1, &[snap]);
    again.emit_watermark(Watermark(9)).unwrap();
    right(&mut again, 1, "b", 11);
    right(&mut again, 1, "c", 9);
    assert_eq!(pairs(&out), vec!["a+b l=10 r=11 @11", "a+c l=10 r=9 @10"]);
    assert_eq!(
        again.num_timers(),
        3,
        "a's timer at 11 and those of b and c; gone's fired at 4"
    );
}

#[test]
fn rescaling_one_subtask_to_two_hands_each_key_its_buffers() {
    let (mut op, _) = operator(bounds(0, 0), 0, 1, &[]);
    for key in 0..20 {
        left(&mut op, key, &format!("k{key}"), 5);
    }
    let old = [op.snapshot_state(1).unwrap()];
    let mut joined = Vec::new();
    for index in 0..2 {
        let (mut sub, out) = operator(bounds(0, 0), index, 2, &old);
        for key in 0..20u32 {
            let group = assign_to_key_group(key_hash(&key), 128);
            if operator_index_for_key_group(128, 2, group) == index {
                right(&mut sub, key, "r", 5);
            }
        }
        joined.extend(pairs(&out));
    }
    joined.sort();
    let mut expected: Vec<String> = (0..20).map(|k| format!("k{k}+r l=5 r=5 @5")).collect();
    expected.sort();
    assert_eq!(joined, expected);
}

/// Timestamped `(key, name)` records of a collection source.
fn timed(records: Vec<(Rec, i64)>, env: &crate::StreamExecutionEnvironment) -> crate::KeyedStream<u32, Rec> {
    env.from_collection(records)
        .assign_timestamps_and_watermarks(
            crate::watermark::WatermarkStrategy::for_monotonous_timestamps()
                .with_timestamp_assigner(|r: &(Rec, i64), _| r.1),
        )
        .map(|r: (Rec, i64)| r.0)
        .key_by(|r: &Rec| r.0)
}

#[test]
fn a_job_with_an_empty_interval_does_not_build_and_says_why() {
    let env = crate::StreamExecutionEnvironment::new();
    let records = vec![((1, "x".to_string()), 1)];
    timed(records.clone(), &env)
        .interval_join(&timed(records, &env))
        .between(5, 5)
        .lower_bound_exclusive()
        .process(Describe)
        .discard();
    let err = env.execute("empty interval").unwrap_err().to_string();
    assert!(
        err.contains("lowerBound <= upperBound must be fulfilled, got between(5, 5) ms, lower bound exclusive"),
        "{err}"
    );
}
