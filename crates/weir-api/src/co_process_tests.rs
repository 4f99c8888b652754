//! A [`CoProcessOperator`] driven by direct calls: records of both inputs in, output
//! and snapshots out, then restored into new subtasks at the same and at another
//! parallelism.

use super::*;
use crate::process::tests::{context, Log};
use crate::test_fixtures::CountBoth;
use weir_core::ids::OperatorId;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::checkpoint::CheckpointedOperator;
use weir_runtime::operator::Output;
use weir_state::OperatorSnapshot;

const OP: OperatorId = OperatorId(11);

type Op = CoProcessOperator<String, u64, String, CountBoth>;

fn build(index: u32, parallelism: u32, old: &[OperatorSnapshot]) -> (Op, Log<String>) {
    let log = Log::default();
    let ctx = context(index, parallelism, old, OP);
    let op = CoProcessOperator::restored(
        "CountBoth".into(),
        CoProcessFunctionAdapter::new(CountBoth::default()),
        &ctx,
        Box::new(log.clone()),
    );
    (op.unwrap(), log)
}

fn first(value: &str, ts: i64) -> StreamRecord<CoElement<String, u64>> {
    StreamRecord::with_timestamp(CoElement::First(value.to_string()), ts)
}

fn second(value: u64, ts: i64) -> StreamRecord<CoElement<String, u64>> {
    StreamRecord::with_timestamp(CoElement::Second(value), ts)
}

#[test]
fn each_input_goes_to_its_own_method_with_its_timestamp_and_the_current_watermark() {
    let (mut op, log) = build(0, 1, &[]);
    op.collect(first("a", 5)).unwrap();
    op.emit_watermark(Watermark(4)).unwrap();
    op.collect(second(7, 9)).unwrap();
    op.collect(StreamRecord::new(CoElement::First("untimed".to_string())))
        .unwrap();
    assert_eq!(
        log.take(),
        vec![
            format!("1:a ts=Some(5) wm={} counts=1/0", i64::MIN),
            "2:7 ts=Some(9) wm=4 counts=1/1".to_string(),
            "1:untimed ts=None wm=4 counts=2/1".to_string(),
        ]
    );
}

#[test]
fn a_restored_subtask_continues_both_counts_where_the_checkpoint_left_them() {
    let (mut op, _) = build(0, 1, &[]);
    op.collect(first("a", 1)).unwrap();
    op.collect(second(1, 2)).unwrap();
    op.collect(second(2, 3)).unwrap();
    let snap = op.snapshot_state(1).unwrap();
    op.collect(first("lost after the checkpoint", 4)).unwrap();
    let (mut again, log) = build(0, 1, &[snap]);
    again.collect(first("b", 5)).unwrap();
    assert_eq!(log.take(), vec![format!("1:b ts=Some(5) wm={} counts=2/2", i64::MIN)]);
}

#[test]
fn scaling_two_subtasks_to_one_restores_the_counts_of_both() {
    let mut old = Vec::new();
    for i in 0..2 {
        let (mut op, _) = build(i, 2, &[]);
        op.collect(first("a", 1)).unwrap();
        for n in 0..=i as u64 {
            op.collect(second(n, 1)).unwrap();
        }
        old.push(op.snapshot_state(7).unwrap());
    }
    let (mut op, log) = build(0, 1, &old);
    op.collect(second(9, 2)).unwrap();
    assert_eq!(log.take(), vec![format!("2:9 ts=Some(2) wm={} counts=2/4", i64::MIN)]);
}
