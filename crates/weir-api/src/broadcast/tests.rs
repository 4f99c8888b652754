//! The broadcast operators driven by direct calls: broadcast records write the state,
//! the other side reads it; snapshots restored into new subtasks at the same and at
//! other parallelisms.

use super::*;
use crate::process::tests::{context, Log};
use weir_core::ids::OperatorId;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::checkpoint::CheckpointedOperator;
use weir_runtime::operator::{CoElement, Output};
use weir_state::{ListStateDescriptor, OperatorSnapshot};

const OP: OperatorId = OperatorId(9);

fn rules() -> MapStateDescriptor<u32, u64> {
    MapStateDescriptor::new("rules")
}

fn pending() -> ListStateDescriptor<(u32, u64)> {
    ListStateDescriptor::new("pending")
}

fn declarations() -> Vec<Declare> {
    vec![Arc::new(|s: &mut OperatorStateStore| {
        s.broadcast_state(&rules()).map(|_| ())
    })]
}

/// Multiplies `(rule, value)` by the rule's factor; values whose rule has not arrived
/// yet wait in list state until it does.
#[derive(Clone)]
struct Enrich;

impl BroadcastProcessFunction<(u32, u64), (u32, u64), u64> for Enrich {
    fn process_element(
        &mut self,
        (rule, value): (u32, u64),
        ctx: &mut ReadOnlyContext<'_, '_>,
        out: &mut Collector<'_, u64>,
    ) -> Result<(), UserError> {
        let factor = ctx.broadcast_state(&rules())?.get(&rule).copied();
        match factor {
            Some(f) => out.collect(value * f),
            None => ctx.list_state(&pending())?.add((rule, value)),
        }
        Ok(())
    }

    fn process_broadcast_element(
        &mut self,
        (rule, factor): (u32, u64),
        ctx: &mut BroadcastContext<'_>,
        out: &mut Collector<'_, u64>,
    ) -> Result<(), UserError> {
        ctx.broadcast_state(&rules())?.put(rule, factor);
        let mut waiting = ctx.list_state(&pending())?;
        let (ready, still): (Vec<_>, Vec<_>) = waiting.take().into_iter().partition(|(r, _)| *r == rule);
        waiting.update(still);
        for (_, v) in ready {
            out.collect(v * factor);
        }
        Ok(())
    }
}

type Plain = BroadcastProcessOperator<(u32, u64), (u32, u64), u64, Enrich>;

fn plain(index: u32, parallelism: u32, old: &[OperatorSnapshot]) -> (Plain, Log<u64>) {
    let log = Log::default();
    let ctx = context(index, parallelism, old, OP);
    let op = BroadcastProcessOperator::with_broadcast_states(
        "Enrich".into(),
        Enrich,
        &declarations(),
        &ctx,
        Box::new(log.clone()),
    );
    (op.unwrap(), log)
}

fn element(rule: u32, value: u64) -> StreamRecord<CoElement<(u32, u64), (u32, u64)>> {
    StreamRecord::new(CoElement::First((rule, value)))
}

fn rule(rule: u32, factor: u64) -> StreamRecord<CoElement<(u32, u64), (u32, u64)>> {
    StreamRecord::new(CoElement::Second((rule, factor)))
}

#[test]
fn elements_read_the_rules_broadcast_before_them_and_wait_in_list_state_for_later_ones() {
    let (mut op, log) = plain(0, 1, &[]);
    op.collect(element(1, 5)).unwrap();
    op.collect(rule(2, 10)).unwrap();
    op.collect(element(2, 3)).unwrap();
    assert_eq!(log.take(), vec![30]);
    op.collect(rule(1, 100)).unwrap();
    assert_eq!(log.take(), vec![500]);
}

#[test]
fn scaling_two_to_three_gives_every_subtask_the_rules_and_deals_out_waiting_elements() {
    let mut old = Vec::new();
    for i in 0..2 {
        let (mut op, _) = plain(i, 2, &[]);
        op.collect(rule(1, 10)).unwrap();
        op.collect(element(7, i as u64 + 1)).unwrap();
        old.push(op.snapshot_state(1).unwrap());
    }
    let mut released = Vec::new();
    for i in 0..3 {
        let (mut op, log) = plain(i, 3, &old);
        op.collect(element(1, 2)).unwrap();
        assert_eq!(log.take(), vec![20], "subtask {i} has the rule");
        op.collect(rule(7, 100)).unwrap();
        released.extend(log.take());
    }
    released.sort();
    assert_eq!(
        released,
        vec![100, 200],
        "each waiting element is restored exactly once"
    );
}

#[test]
fn broadcast_state_the_stream_did_not_declare_is_an_error_on_either_side() {
    #[derive(Clone)]
    struct Undeclared;
    impl BroadcastProcessFunction<u8, u8, u8> for Undeclared {
        fn process_element(
            &mut self,
            _: u8,
            ctx: &mut ReadOnlyContext<'_, '_>,
            _: &mut Collector<'_, u8>,
        ) -> Result<(), UserError> {
            ctx.broadcast_state(&MapStateDescriptor::<u8, u8>::new("other"))?;
            Ok(())
        }
        fn process_broadcast_element(
            &mut self,
            _: u8,
            ctx: &mut BroadcastContext<'_>,
            _: &mut Collector<'_, u8>,
        ) -> Result<(), UserError> {
            ctx.broadcast_state(&MapStateDescriptor::<u8, u8>::new("other"))?;
            Ok(())
        }
    }
    let ctx = context(0, 1, &[], OP);
    let mut op = BroadcastProcessOperator::with_broadcast_states(
        "U".into(),
        Undeclared,
        &declarations(),
        &ctx,
        Box::new(Log::<u8>::default()),
    )
    .unwrap();
    for record in [CoElement::First(1), CoElement::Second(1)] {
        let err = op.collect(StreamRecord::new(record)).unwrap_err().to_string();
        assert!(err.contains("broadcast state 'other' does not exist"), "{err}");
    }
}

#[test]
fn a_corrupt_broadcast_copy_fails_the_restore_naming_the_state() {
    let mut bad = OperatorSnapshot::default();
    bad.union.insert("_broadcast/rules".into(), vec![vec![9]]);
    let ctx = context(0, 1, &[bad], OP);
    let err = BroadcastProcessOperator::with_broadcast_states(
        "Enrich".into(),
        Enrich,
        &declarations(),
        &ctx,
        Box::new(Log::<u64>::default()),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("cannot restore state from checkpoint 4"), "{err}");
    assert!(err.contains("operator state 'rules' cannot be restored"), "{err}");
}

/// Sums values per key in keyed state; at the end of input (an event-time timer) emits
/// `(key, sum * factor of the key's rule)`.
#[derive(Clone)]
struct ScaledSum;

impl KeyedBroadcastProcessFunction<u32, (u32, u64), (u32, u64), (u32, u64)> for ScaledSum {
    fn process_element(
        &mut self,
        (_, value): (u32, u64),
        ctx: &mut ReadOnlyContext<'_, '_, u32>,
        _out: &mut Collector<'_, (u32, u64)>,
    ) -> Result<(), UserError> {
        let keyed = ctx.keyed()?;
        let mut sum = keyed.value_state(&weir_state::ValueStateDescriptor::<u64>::new("sum"))?;
        let s = sum.value().unwrap_or(0) + value;
        sum.update(s);
        keyed.register_event_time_timer(i64::MAX)?;
        Ok(())
    }

    fn process_broadcast_element(
        &mut self,
        (rule, factor): (u32, u64),
        ctx: &mut BroadcastContext<'_>,
        _out: &mut Collector<'_, (u32, u64)>,
    ) -> Result<(), UserError> {
        ctx.broadcast_state(&rules())?.put(rule, factor);
        Ok(())
    }

    fn on_timer(
        &mut self,
        _ts: i64,
        ctx: &mut ReadOnlyContext<'_, '_, u32>,
        out: &mut Collector<'_, (u32, u64)>,
    ) -> Result<(), UserError> {
        let key = ctx.current_key().copied().ok_or("no key")?;
        let factor = ctx.broadcast_state(&rules())?.get(&key).copied().unwrap_or(1);
        let sum = ctx
            .keyed()?
            .value_state(&weir_state::ValueStateDescriptor::<u64>::new("sum"))?
            .value()
            .unwrap_or(0);
        out.collect((key, sum * factor));
        Ok(())
    }
}

/// The key of a `(key, value)` record.
type KeySelector = Arc<dyn Fn(&(u32, u64)) -> u32 + Send + Sync>;

type Keyed = KeyedBroadcastProcessOperator<u32, (u32, u64), (u32, u64), (u32, u64), ScaledSum>;

fn keyed(index: u32, parallelism: u32, old: &[OperatorSnapshot]) -> (Keyed, Log<(u32, u64)>) {
    let log = Log::default();
    let ctx = context(index, parallelism, old, OP);
    let key: KeySelector = Arc::new(|r: &(u32, u64)| r.0);
    let op = KeyedBroadcastProcessOperator::restored(
        "ScaledSum".into(),
        ScaledSum,
        key,
        &declarations(),
        &ctx,
        Box::new(log.clone()),
    );
    (op.unwrap(), log)
}

#[test]
fn keyed_state_and_broadcast_rules_are_restored_together_when_three_subtasks_become_one() {
    let ranges: Vec<_> = (0..3)
        .map(|i| weir_core::KeyGroupRange::for_subtask(128, 3, i))
        .collect();
    let mut old = Vec::new();
    for i in 0..3u32 {
        let (mut op, _) = keyed(i, 3, &[]);
        for k in 0..12u32 {
            op.collect(rule(k, 2)).unwrap();
            let kg = weir_core::key_group::assign_to_key_group(weir_core::key_hash::key_hash(&k), 128);
            if ranges[i as usize].contains(kg) {
                op.collect(element(k, k as u64)).unwrap();
                op.collect(element(k, 1)).unwrap();
            }
        }
        old.push(op.snapshot_state(1).unwrap());
    }
    let (mut op, log) = keyed(0, 1, &old);
    op.emit_watermark(Watermark(i64::MAX)).unwrap();
    let mut got = log.take();
    got.sort();
    assert_eq!(got, (0..12u32).map(|k| (k, (k as u64 + 1) * 2)).collect::<Vec<_>>());
}

#[test]
fn an_end_of_input_timer_reads_the_broadcast_rule_and_the_keyed_sum_of_its_key() {
    let (mut op, log) = keyed(0, 1, &[]);
    op.collect(rule(3, 5)).unwrap();
    op.collect(element(3, 4)).unwrap();
    op.emit_watermark(Watermark(i64::MAX)).unwrap();
    assert_eq!(log.take(), vec![(3, 20)]);
}
