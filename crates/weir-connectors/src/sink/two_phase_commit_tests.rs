//! The operator's state machine against a sink that logs what it is asked to do.

use super::*;
use std::cell::RefCell;
use std::rc::Rc;

/// A transaction of the logging sink: its number.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Txn(u64);

impl TransactionCodec for Txn {
    fn encode(&self) -> Vec<u8> {
        let mut out = vec![1];
        out.extend_from_slice(&self.0.to_be_bytes());
        out
    }
    fn decode(bytes: &[u8]) -> Result<Self, StateDecodeError> {
        let mut r = StateReader::new("test transaction", bytes, 1)?;
        let n = r.u64()?;
        r.finish()?;
        Ok(Txn(n))
    }
}

type Log = Rc<RefCell<Vec<String>>>;

struct LoggingSink {
    log: Log,
    next: u64,
    fail_commit: bool,
}

impl LoggingSink {
    fn new(log: &Log) -> Self {
        Self {
            log: log.clone(),
            next: 0,
            fail_commit: false,
        }
    }
    fn push(&self, event: String) {
        self.log.borrow_mut().push(event);
    }
}

impl TwoPhaseCommitSink<&'static str> for LoggingSink {
    type Transaction = Txn;
    fn begin_transaction(&mut self) -> Result<Txn, TaskError> {
        self.next += 1;
        self.push(format!("begin {}", self.next - 1));
        Ok(Txn(self.next - 1))
    }
    fn invoke(&mut self, txn: &mut Txn, record: &'static str) -> Result<(), TaskError> {
        self.push(format!("write {} {record}", txn.0));
        Ok(())
    }
    fn pre_commit(&mut self, txn: &mut Txn) -> Result<(), TaskError> {
        self.push(format!("pre-commit {}", txn.0));
        Ok(())
    }
    fn commit(&mut self, txn: &Txn) -> Result<(), TaskError> {
        if self.fail_commit {
            return Err(TaskError::user("logging sink", format!("cannot commit {}", txn.0)));
        }
        self.push(format!("commit {}", txn.0));
        Ok(())
    }
    fn abort(&mut self, txn: Txn) -> Result<(), TaskError> {
        self.push(format!("abort {}", txn.0));
        Ok(())
    }
    fn restore(&mut self, open: &[Txn]) -> Result<(), TaskError> {
        self.push(format!("restore {open:?}"));
        if let Some(t) = open.first() {
            self.next = t.0;
        }
        Ok(())
    }
}

type Op = TwoPhaseCommitOperator<&'static str, LoggingSink>;

fn fresh(log: &Log) -> Op {
    Op::restore(LoggingSink::new(log), None, 0).unwrap()
}

fn write(op: &mut Op, record: &'static str) {
    op.collect(StreamRecord::new(record)).unwrap();
}

/// The log since the last call, emptied.
fn drain(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.borrow_mut())
}

fn restored(elements: Vec<Vec<u8>>) -> Option<OperatorSnapshot> {
    let mut s = OperatorSnapshot::default();
    s.list.insert(TWO_PHASE_COMMIT_STATE.to_string(), elements);
    Some(s)
}

fn element(snapshot: &OperatorSnapshot) -> Vec<u8> {
    snapshot.list[TWO_PHASE_COMMIT_STATE][0].clone()
}

#[test]
fn a_barrier_pre_commits_the_current_transaction_and_its_completion_commits_it() {
    let log = Log::default();
    let mut op = fresh(&log);
    write(&mut op, "a");
    op.snapshot_state(1).unwrap();
    assert_eq!(drain(&log), ["begin 0", "write 0 a", "pre-commit 0", "begin 1"]);
    assert_eq!(op.pending_checkpoints(), [1]);
    op.notify_checkpoint_complete(1).unwrap();
    assert_eq!(drain(&log), ["commit 0"]);
    assert!(op.pending_checkpoints().is_empty());
}

#[test]
fn a_completion_commits_only_checkpoints_up_to_its_id_oldest_first() {
    let log = Log::default();
    let mut op = fresh(&log);
    for id in 1..=3 {
        op.snapshot_state(id).unwrap();
    }
    drain(&log);
    op.notify_checkpoint_complete(2).unwrap();
    assert_eq!(drain(&log), ["commit 0", "commit 1"]);
    assert_eq!(op.pending_checkpoints(), [3]);
}

#[test]
fn an_aborted_checkpoint_stays_pending_until_a_later_checkpoint_completes() {
    let log = Log::default();
    let mut op = fresh(&log);
    op.snapshot_state(1).unwrap();
    op.snapshot_state(2).unwrap();
    drain(&log);
    op.notify_checkpoint_aborted(1).unwrap();
    assert!(drain(&log).is_empty());
    assert_eq!(op.pending_checkpoints(), [1, 2]);
    op.notify_checkpoint_complete(2).unwrap();
    assert_eq!(drain(&log), ["commit 0", "commit 1"]);
}

#[test]
fn restore_commits_the_restored_pending_transactions_and_aborts_the_open_one() {
    let log = Log::default();
    let mut op = fresh(&log);
    op.snapshot_state(1).unwrap();
    let state = op.snapshot_state(2).unwrap();
    drain(&log);
    let restored_op = Op::restore(LoggingSink::new(&log), restored(vec![element(&state)]), 2).unwrap();
    assert_eq!(
        drain(&log),
        ["restore [Txn(2)]", "commit 0", "commit 1", "abort 2", "begin 2"]
    );
    assert!(restored_op.pending_checkpoints().is_empty());
}

#[test]
fn rescaling_two_subtasks_states_into_one_commits_and_aborts_both() {
    let (log_a, log_b) = (Log::default(), Log::default());
    let mut a = fresh(&log_a);
    let mut b = fresh(&log_b);
    write(&mut b, "x");
    b.snapshot_state(1).unwrap();
    let state_a = a.snapshot_state(2).unwrap();
    let state_b = b.snapshot_state(2).unwrap();
    let log = Log::default();
    Op::restore(
        LoggingSink::new(&log),
        restored(vec![element(&state_a), element(&state_b)]),
        2,
    )
    .unwrap();
    assert_eq!(
        drain(&log),
        [
            "restore [Txn(1), Txn(2)]",
            "commit 0",
            "commit 0",
            "commit 1",
            "abort 1",
            "abort 2",
            "begin 1"
        ]
    );
}

#[test]
fn end_of_input_pre_commits_and_commits_everything_including_uncompleted_checkpoints() {
    let log = Log::default();
    let mut op = fresh(&log);
    write(&mut op, "a");
    op.snapshot_state(1).unwrap();
    write(&mut op, "b");
    drain(&log);
    op.end_input().unwrap();
    assert_eq!(drain(&log), ["pre-commit 1", "commit 0", "commit 1"]);
    assert!(op.pending_checkpoints().is_empty());
    assert!(op.collect(StreamRecord::new("late")).is_err());
}

#[test]
fn a_failed_commit_fails_the_task_and_keeps_the_transaction_pending() {
    let log = Log::default();
    let mut sink = LoggingSink::new(&log);
    sink.fail_commit = true;
    let mut op = Op::restore(sink, None, 0).unwrap();
    op.snapshot_state(1).unwrap();
    let err = op.notify_checkpoint_complete(1).unwrap_err().to_string();
    assert!(err.contains("cannot commit 0"), "{err}");
    assert_eq!(op.pending_checkpoints(), [1]);
}

#[test]
fn corrupt_truncated_or_foreign_state_bytes_are_restore_errors_naming_the_problem() {
    let log = Log::default();
    let good = element(&fresh(&log).snapshot_state(1).unwrap());
    let mut future = good.clone();
    future[0] = 9;
    let mut trailing = good.clone();
    trailing.push(0);
    let mut bad_flag = good.clone();
    let flag_at = good.len() - 1 - 1 - 4 - 9;
    bad_flag[flag_at] = 7;
    let mut bad_ended = good.clone();
    *bad_ended.last_mut().unwrap() = 3;
    let cases: [(Vec<u8>, &str); 6] = [
        (future, "format version 9 is not supported"),
        (good[..good.len() - 3].to_vec(), "truncated"),
        (trailing, "1 unexpected bytes after the end"),
        (bad_flag, "open-transaction flag 7 is neither 0 nor 1"),
        (bad_ended, "end-of-input flag 3 is neither 0 nor 1"),
        (Vec::new(), "truncated"),
    ];
    for (bytes, expected) in cases {
        let err = match Op::restore(LoggingSink::new(&log), restored(vec![bytes]), 5) {
            Ok(_) => panic!("restored from corrupt state ({expected})"),
            Err(e) => e,
        };
        assert!(matches!(err, TaskError::Restore { checkpoint_id: 5, .. }), "{err}");
        assert!(err.to_string().contains(expected), "{err} (expected {expected})");
    }
}

/// The operator of a job with periodic checkpoints.
fn checkpointed(log: &Log) -> Op {
    fresh(log).with_final_checkpoint(true)
}

#[test]
fn with_periodic_checkpoints_the_end_of_input_waits_for_the_final_checkpoint_to_commit() {
    let log = Log::default();
    let mut op = checkpointed(&log);
    write(&mut op, "a");
    op.snapshot_state(1).unwrap();
    write(&mut op, "b");
    drain(&log);
    op.end_input().unwrap();
    assert!(drain(&log).is_empty(), "nothing is committed at the end of input");
    assert!(op.awaits_final_checkpoint());
    assert!(op.collect(StreamRecord::new("late")).is_err());

    op.snapshot_state(2).unwrap();
    assert_eq!(drain(&log), ["pre-commit 1"], "no transaction begins after the end");
    assert_eq!(op.pending_checkpoints(), [1, 2]);
    op.notify_checkpoint_aborted(2).unwrap();
    assert!(
        op.awaits_final_checkpoint(),
        "an aborted final checkpoint keeps the task waiting"
    );

    op.snapshot_state(3).unwrap();
    assert!(drain(&log).is_empty());
    op.notify_checkpoint_complete(3).unwrap();
    assert_eq!(drain(&log), ["commit 0", "commit 1"]);
    assert!(!op.awaits_final_checkpoint());
}

#[test]
fn with_periodic_checkpoints_and_nothing_to_commit_the_end_of_input_does_not_wait() {
    let log = Log::default();
    let mut op = checkpointed(&log);
    op.snapshot_state(1).unwrap();
    op.notify_checkpoint_complete(1).unwrap();
    drain(&log);
    op.end_input().unwrap();
    assert!(!op.awaits_final_checkpoint());
    assert_eq!(drain(&log), ["pre-commit 1", "commit 1"]);
}

#[test]
fn restored_from_the_final_checkpoint_the_sink_commits_it_and_drops_replayed_records() {
    let log = Log::default();
    let mut op = checkpointed(&log);
    write(&mut op, "a");
    op.end_input().unwrap();
    let state = op.snapshot_state(4).unwrap();
    drain(&log);
    let mut restored_op = Op::restore(LoggingSink::new(&log), restored(vec![element(&state)]), 4)
        .unwrap()
        .with_final_checkpoint(true);
    assert_eq!(drain(&log), ["restore []", "commit 0"], "no new transaction begins");
    write(&mut restored_op, "a again");
    restored_op.end_input().unwrap();
    assert!(drain(&log).is_empty());
    assert_eq!(restored_op.dropped_after_end_of_input(), 1);
    assert!(!restored_op.awaits_final_checkpoint());
    // A later checkpoint of the restored operator still says the input had ended.
    let again = restored_op.snapshot_state(5).unwrap();
    let mut third = Op::restore(LoggingSink::new(&log), restored(vec![element(&again)]), 5).unwrap();
    write(&mut third, "a once more");
    assert_eq!(third.dropped_after_end_of_input(), 1);
}

#[test]
fn state_of_format_version_1_is_still_read_as_not_ended() {
    let log = Log::default();
    // Version 1: no pending transaction, open transaction 7, no end-of-input byte.
    let mut v1 = vec![1, 0, 0, 0, 0, 1];
    put_bytes(&mut v1, &Txn(7).encode());
    let mut op = Op::restore(LoggingSink::new(&log), restored(vec![v1]), 3).unwrap();
    assert_eq!(drain(&log), ["restore [Txn(7)]", "abort 7", "begin 7"]);
    write(&mut op, "x");
    assert_eq!(drain(&log), ["write 7 x"]);
}
