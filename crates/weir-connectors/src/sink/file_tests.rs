//! The file sink in a temporary directory, driven by the two-phase-commit operator.

use super::*;
use crate::sink::two_phase_commit::{TwoPhaseCommitOperator, TWO_PHASE_COMMIT_STATE};
use weir_core::StreamRecord;
use weir_runtime::checkpoint::CheckpointedOperator;
use weir_runtime::operator::Output;
use weir_state::OperatorSnapshot;

type Op = TwoPhaseCommitOperator<String, FileSink>;

fn open(dir: &Path, restored: Option<OperatorSnapshot>) -> Op {
    Op::restore(FileSink::create(dir).unwrap(), restored, 1).unwrap()
}

fn write(op: &mut Op, lines: &[&str]) {
    for l in lines {
        op.collect(StreamRecord::new(l.to_string())).unwrap();
    }
}

fn writer(op: &Op) -> String {
    op.sink().writer_id().to_string()
}

/// Names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// What a reader sees: the lines of the files not starting with `.`, sorted.
fn visible_lines(dir: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for name in names(dir).iter().filter(|n| !n.starts_with('.')) {
        lines.extend(fs::read_to_string(dir.join(name)).unwrap().lines().map(str::to_string));
    }
    lines.sort();
    lines
}

fn restored(elements: Vec<Vec<u8>>) -> Option<OperatorSnapshot> {
    let mut s = OperatorSnapshot::default();
    s.list.insert(TWO_PHASE_COMMIT_STATE.to_string(), elements);
    Some(s)
}

fn element(s: &OperatorSnapshot) -> Vec<u8> {
    s.list[TWO_PHASE_COMMIT_STATE][0].clone()
}

#[test]
fn a_part_file_goes_from_in_progress_to_pending_to_committed_and_only_then_is_visible() {
    let dir = tempfile::tempdir().unwrap();
    let mut op = open(dir.path(), None);
    let w = writer(&op);
    write(&mut op, &["a", "b"]);
    assert_eq!(names(dir.path()), [format!(".part-{w}-0.inprogress")]);
    op.snapshot_state(1).unwrap();
    assert_eq!(names(dir.path()), [format!(".part-{w}-0.pending")]);
    assert!(visible_lines(dir.path()).is_empty());
    op.notify_checkpoint_complete(1).unwrap();
    assert_eq!(names(dir.path()), [format!("part-{w}-0")]);
    assert_eq!(visible_lines(dir.path()), ["a", "b"]);
}

#[test]
fn committing_twice_succeeds_and_a_transaction_whose_files_vanished_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = FileSink::create(dir.path()).unwrap();
    let mut txn = TwoPhaseCommitSink::<&str>::begin_transaction(&mut sink).unwrap();
    TwoPhaseCommitSink::<&str>::invoke(&mut sink, &mut txn, "x").unwrap();
    TwoPhaseCommitSink::<&str>::pre_commit(&mut sink, &mut txn).unwrap();
    TwoPhaseCommitSink::<&str>::commit(&mut sink, &txn).unwrap();
    TwoPhaseCommitSink::<&str>::commit(&mut sink, &txn).unwrap();
    assert_eq!(visible_lines(dir.path()), ["x"]);
    let committed = dir.path().join(committed_name(&txn.writer, txn.seq));
    fs::remove_file(&committed).unwrap();
    let err = TwoPhaseCommitSink::<&str>::commit(&mut sink, &txn)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&committed.display().to_string()) && err.contains("state is lost"),
        "{err}"
    );
}

#[test]
fn restore_commits_pending_parts_and_deletes_the_open_and_every_later_part_of_its_writer() {
    let dir = tempfile::tempdir().unwrap();
    let mut other = open(dir.path(), None);
    write(&mut other, &["other"]);
    other.end_input().unwrap();

    // Checkpoint 1 covers "a"; then the subtask writes on, pre-commits "b" at
    // checkpoint 2 (never completed), writes "c" and finishes, committing everything.
    let mut op = open(dir.path(), None);
    let w = writer(&op);
    write(&mut op, &["a"]);
    let checkpoint_1 = op.snapshot_state(1).unwrap();
    write(&mut op, &["b"]);
    op.snapshot_state(2).unwrap();
    write(&mut op, &["c"]);
    op.end_input().unwrap();
    assert_eq!(visible_lines(dir.path()), ["a", "b", "c", "other"]);

    // The job fails over to checkpoint 1: "a" stays, "b" and "c" go; the replay
    // continues the same writer at the restored open seq.
    let mut replay = open(dir.path(), restored(vec![element(&checkpoint_1)]));
    assert_eq!(writer(&replay), w);
    assert_eq!(visible_lines(dir.path()), ["a", "other"]);
    write(&mut replay, &["b2"]);
    replay.end_input().unwrap();
    assert_eq!(visible_lines(dir.path()), ["a", "b2", "other"]);
    assert!(names(dir.path()).contains(&format!("part-{w}-1")));
    assert!(
        names(dir.path()).iter().all(|n| !n.starts_with('.')),
        "{:?}",
        names(dir.path())
    );
}

#[test]
fn restoring_twice_from_the_same_checkpoint_gives_the_same_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut op = open(dir.path(), None);
    write(&mut op, &["a"]);
    let checkpoint_1 = op.snapshot_state(1).unwrap();
    write(&mut op, &["lost"]);
    for attempt in ["first", "second"] {
        let mut replay = open(dir.path(), restored(vec![element(&checkpoint_1)]));
        write(&mut replay, &[attempt]);
        replay.snapshot_state(2).unwrap();
    }
    let replay = open(dir.path(), restored(vec![element(&checkpoint_1)]));
    drop(replay);
    assert_eq!(visible_lines(dir.path()), ["a"]);
    assert_eq!(names(dir.path()).len(), 1, "{:?}", names(dir.path()));
}

#[test]
fn rescaling_two_writers_into_one_subtask_commits_and_aborts_both_and_continues_with_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = open(dir.path(), None);
    let mut b = open(dir.path(), None);
    assert_ne!(writer(&a), writer(&b));
    write(&mut a, &["a1"]);
    write(&mut b, &["b1"]);
    let (state_a, state_b) = (a.snapshot_state(3).unwrap(), b.snapshot_state(3).unwrap());
    write(&mut a, &["a-lost"]);
    write(&mut b, &["b-lost"]);
    a.snapshot_state(4).unwrap();
    b.end_input().unwrap();

    let mut merged = open(dir.path(), restored(vec![element(&state_a), element(&state_b)]));
    assert_eq!(writer(&merged), writer(&a));
    assert_eq!(visible_lines(dir.path()), ["a1", "b1"]);
    write(&mut merged, &["after"]);
    merged.end_input().unwrap();
    assert_eq!(visible_lines(dir.path()), ["a1", "after", "b1"]);
    assert_eq!(names(dir.path()).len(), 3, "{:?}", names(dir.path()));
}

#[test]
fn transactions_without_records_leave_no_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut op = open(dir.path(), None);
    op.snapshot_state(1).unwrap();
    op.snapshot_state(2).unwrap();
    op.notify_checkpoint_complete(2).unwrap();
    op.end_input().unwrap();
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn a_file_part_round_trips_and_corrupt_bytes_are_clear_errors() {
    let part = FilePart {
        writer: "00ff".into(),
        seq: 7,
        committable: true,
        out: None,
    };
    let bytes = part.encode();
    let back = FilePart::decode(&bytes).unwrap();
    assert_eq!((back.writer(), back.seq(), back.committable), ("00ff", 7, true));

    let mut future = bytes.clone();
    future[0] = 2;
    let mut escaping = FilePart {
        writer: "../x".into(),
        ..back
    }
    .encode();
    let mut flag = bytes.clone();
    *flag.last_mut().unwrap() = 5;
    let cases: [(&[u8], &str); 5] = [
        (&future, "version 2 is not supported"),
        (&bytes[..bytes.len() - 2], "truncated"),
        (&[], "truncated"),
        (&flag, "flag 5"),
        (&escaping, "writer id \"../x\""),
    ];
    for (bad, expected) in cases {
        let err = FilePart::decode(bad).unwrap_err().to_string();
        assert!(err.contains(expected), "{err} (expected {expected})");
    }
    escaping.push(0);
    assert!(FilePart::decode(&escaping).is_err());
}

#[test]
fn part_names_parse_in_all_three_forms_and_nothing_else() {
    assert_eq!(parse_part_name("part-ab12-3"), Some(("ab12", 3)));
    assert_eq!(parse_part_name(".part-ab12-3.pending"), Some(("ab12", 3)));
    assert_eq!(parse_part_name(".part-ab12-30.inprogress"), Some(("ab12", 30)));
    for other in ["part-ab12", ".part-ab12-3", "part-ab12-x", "_SUCCESS", ".part-ab-1.tmp"] {
        assert_eq!(parse_part_name(other), None, "{other}");
    }
}
