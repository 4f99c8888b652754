//! A [`ProcessOperator`] driven by direct calls: records in, output and snapshots out,
//! then restored into new subtasks at the same and at other parallelisms.

use super::*;
use std::cell::RefCell;
use std::rc::Rc;
use weir_core::ids::OperatorId;
use weir_core::Watermark;
use weir_state::{RestoredState, TaskSnapshot};

const OP: OperatorId = OperatorId(5);

#[derive(Clone, Default)]
pub(crate) struct Log<T>(pub Rc<RefCell<Vec<T>>>);

impl<T> Log<T> {
    pub(crate) fn take(&self) -> Vec<T> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

impl<T: 'static> Output<T> for Log<T> {
    fn collect(&mut self, r: StreamRecord<T>) -> Result<(), TaskError> {
        self.0.borrow_mut().push(r.value);
        Ok(())
    }
    fn emit_watermark(&mut self, _w: Watermark) -> Result<(), TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        Ok(())
    }
}

/// The context of subtask `index` of `parallelism`, restored from `old` (the snapshots
/// of every old subtask; only its own when the parallelism is unchanged).
pub(crate) fn context(index: u32, parallelism: u32, old: &[OperatorSnapshot], op: OperatorId) -> TaskContext {
    let snapshots = old.iter().map(|s| {
        let mut t = TaskSnapshot::default();
        t.operators.insert(op, s.clone());
        t
    });
    let restored = (!old.is_empty()).then(|| RestoredState::of_subtask(4, snapshots, index, parallelism));
    let ctx = TaskContext::new("job", "Process", index, parallelism, 128, 0, 0).with_restored_state(restored);
    ctx.state().set_current_operator(op);
    ctx
}

/// Numbers its records per subtask: a running count kept in a field, written into
/// list state at checkpoints and summed up from it on restore (Flink's
/// `CheckpointedFunction` pattern). Also remembers every record in union state.
#[derive(Clone, Default)]
struct Numbering {
    count: u64,
}

fn counts() -> ListStateDescriptor<u64> {
    ListStateDescriptor::new("count")
}

fn seen() -> ListStateDescriptor<String> {
    ListStateDescriptor::new("seen")
}

impl ProcessFunction<String, (String, u64)> for Numbering {
    fn initialize_state(&mut self, store: &mut OperatorStateStore) -> Result<(), UserError> {
        self.count = store.list_state(&counts())?.iter().sum();
        Ok(())
    }

    fn process_element(
        &mut self,
        value: String,
        ctx: &mut ProcessContext<'_>,
        out: &mut Collector<'_, (String, u64)>,
    ) -> Result<(), UserError> {
        self.count += 1;
        ctx.union_list_state(&seen())?.add(value.clone());
        out.collect((value, self.count));
        Ok(())
    }

    fn snapshot_state(&mut self, _checkpoint_id: u64, store: &mut OperatorStateStore) -> Result<(), UserError> {
        store.list_state(&counts())?.update(vec![self.count]);
        Ok(())
    }
}

type Op = ProcessOperator<String, (String, u64), Numbering>;

fn build(ctx: &TaskContext) -> (Op, Log<(String, u64)>) {
    let log = Log::default();
    let op = ProcessOperator::restored("Numbering".into(), Numbering::default(), ctx, Box::new(log.clone())).unwrap();
    (op, log)
}

fn feed(op: &mut Op, values: &[&str]) {
    for v in values {
        op.collect(StreamRecord::new(v.to_string())).unwrap();
    }
}

fn union_of(op: &mut Op) -> Vec<String> {
    let mut seen_now = op.store.union_list_state(&seen()).unwrap().get().to_vec();
    seen_now.sort();
    seen_now
}

#[test]
fn a_restored_subtask_continues_its_count_where_the_checkpoint_left_it() {
    let (mut op, log) = build(&context(0, 1, &[], OP));
    feed(&mut op, &["a", "b"]);
    let snap = op.snapshot_state(1).unwrap();
    feed(&mut op, &["lost after the checkpoint"]);
    let (mut again, log2) = build(&context(0, 1, &[snap], OP));
    feed(&mut again, &["c"]);
    assert_eq!(log.take()[..2], [("a".into(), 1), ("b".into(), 2)]);
    assert_eq!(log2.take(), vec![("c".to_string(), 3)]);
    assert_eq!(union_of(&mut again), vec!["a", "b", "c"]);
}

#[test]
fn scaling_two_subtasks_to_three_deals_counts_out_and_gives_each_the_whole_union() {
    let mut old = Vec::new();
    for (i, records) in [&["a", "b", "c"][..], &["d"][..]].iter().enumerate() {
        let (mut op, _) = build(&context(i as u32, 2, &[], OP));
        feed(&mut op, records);
        old.push(op.snapshot_state(1).unwrap());
    }
    let mut total = 0;
    for i in 0..3 {
        let (mut op, log) = build(&context(i, 3, &old, OP));
        feed(&mut op, &["x"]);
        let (_, n) = log.take()[0].clone();
        total += n - 1;
        assert_eq!(union_of(&mut op), vec!["a", "b", "c", "d", "x"]);
    }
    assert_eq!(total, 4, "the old counts 3 and 1 are each restored exactly once");
}

#[test]
fn scaling_three_subtasks_to_one_sums_every_count() {
    let mut old = Vec::new();
    for (i, records) in [&["a"][..], &["b", "c"][..], &[][..]].iter().enumerate() {
        let (mut op, _) = build(&context(i as u32, 3, &[], OP));
        feed(&mut op, records);
        old.push(op.snapshot_state(1).unwrap());
    }
    let (mut op, log) = build(&context(0, 1, &old, OP));
    feed(&mut op, &["d"]);
    assert_eq!(log.take(), vec![("d".to_string(), 4)]);
}

#[test]
fn corrupt_restored_list_state_fails_the_build_naming_the_state() {
    let mut bad = OperatorSnapshot::default();
    bad.list.insert("count".into(), vec![vec![1, 2, 3]]);
    let err = ProcessOperator::restored(
        "Numbering".into(),
        Numbering::default(),
        &context(0, 1, &[bad], OP),
        Box::new(Log::<(String, u64)>::default()),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.contains("Numbering: operator state 'count' cannot be restored"),
        "{err}"
    );
}
