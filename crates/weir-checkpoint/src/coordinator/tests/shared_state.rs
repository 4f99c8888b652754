//! Shared state of incremental checkpoints through the coordinator: files are deleted
//! exactly when no retained checkpoint refers to them any more, files uploaded for a
//! checkpoint that did not complete are deleted, and a shared file outside the job's
//! shared directory declines the checkpoint.

use super::*;
use weir_core::checkpoint::SharedStateFile;

const DIR: &str = "/c";

fn shared_dir() -> String {
    crate::metadata::shared_state_directory(DIR, &JobId(0xabc))
}

fn file(name: &str) -> SharedStateFile {
    SharedStateFile {
        path: format!("{}/{name}", shared_dir()),
        size: 100,
    }
}

fn shared_ack(id: CheckpointId, task: TaskKey, files: &[&str]) -> SubtaskAcknowledgement {
    let mut a = ack(id, task);
    a.report.shared_state = files.iter().map(|f| file(f)).collect();
    a
}

/// Ticks until the next periodic trigger; returns its id and time.
fn trigger(c: &mut CheckpointCoordinator) -> (CheckpointId, i64) {
    let due = c.next_trigger_due().unwrap();
    let id = c
        .tick(due)
        .iter()
        .find_map(|a| match a {
            CoordinatorAction::TriggerCheckpoint { checkpoint_id, .. } => Some(*checkpoint_id),
            _ => None,
        })
        .unwrap();
    (id, due)
}

/// Completes checkpoint `id`, the stateful task referring to `files`.
fn complete_with(c: &mut CheckpointCoordinator, id: CheckpointId, now: i64, files: &[&str]) -> Vec<CoordinatorAction> {
    c.acknowledge(ack(id, TASKS[0]), now);
    c.acknowledge(ack(id, TASKS[1]), now);
    c.acknowledge(shared_ack(id, TASKS[2], files), now);
    c.metadata_written(id, Ok(Some(format!("{DIR}/chk-{id}"))), now)
}

/// The shared files `actions` delete, by name, sorted.
fn deleted(actions: &[CoordinatorAction]) -> Vec<String> {
    let prefix = format!("{}/", shared_dir());
    let mut out: Vec<String> = actions
        .iter()
        .filter_map(|a| match a {
            CoordinatorAction::Discard { location } => location.strip_prefix(&prefix).map(str::to_string),
            _ => None,
        })
        .collect();
    out.sort();
    out
}

#[test]
fn shared_files_are_deleted_once_no_retained_checkpoint_refers_to_them_and_with_the_job() {
    let mut cfg = config(1000);
    cfg.checkpoint_dir = Some(DIR.to_string());
    cfg.num_retained = 2;
    let mut c = coordinator(cfg);
    first_trigger(&mut c);
    assert!(deleted(&complete_with(&mut c, 1, 10, &["a", "b"])).is_empty());
    let (id, now) = trigger(&mut c);
    assert!(deleted(&complete_with(&mut c, id, now, &["b", "c"])).is_empty());
    // Checkpoint 3 uploads d, then is declined: d goes, c (retained) stays.
    let (id3, now) = trigger(&mut c);
    c.acknowledge(shared_ack(id3, TASKS[2], &["c", "d"]), now);
    let actions = c.decline(id3, TASKS[0], DeclineReason::SnapshotFailed, String::new(), now);
    assert_eq!(deleted(&actions), vec!["d"]);
    // Checkpoint 4 subsumes 1: a goes, b (in 2) stays.
    let (id, now) = trigger(&mut c);
    assert_eq!(deleted(&complete_with(&mut c, id, now, &["c", "e"])), vec!["a"]);
    // A late acknowledgement of 3 deletes what it alone uploaded.
    let (outcome, actions) = c.acknowledge(shared_ack(id3, TASKS[1], &["c", "f"]), now);
    assert_eq!(outcome, AckOutcome::UnknownCheckpoint);
    assert_eq!(deleted(&actions), vec!["f"]);
    // The job finishes: the retained checkpoints go, and the shared directory with
    // every file in it, in one discard.
    let actions = c.shutdown(JobTermination::Finished, now + 1);
    assert!(deleted(&actions).is_empty(), "{actions:?}");
    assert!(
        actions
            .iter()
            .any(|a| matches!(a, CoordinatorAction::Discard { location } if *location == shared_dir())),
        "{actions:?}"
    );
}

#[test]
fn retained_checkpoints_keep_their_shared_files_when_the_job_is_cancelled_with_retention() {
    let mut cfg = config(1000);
    cfg.checkpoint_dir = Some(DIR.to_string());
    cfg.externalized_retention = ExternalizedCheckpointRetention::RetainOnCancellation;
    let mut c = coordinator(cfg);
    first_trigger(&mut c);
    complete_with(&mut c, 1, 10, &["a"]);
    let actions = c.shutdown(JobTermination::Cancelled, 20);
    assert!(deleted(&actions).is_empty(), "{actions:?}");
    assert!(!actions.iter().any(|a| matches!(a, CoordinatorAction::Discard { .. })));
}

#[test]
fn a_shared_file_outside_the_jobs_shared_directory_declines_the_checkpoint_and_is_not_deleted() {
    for path in ["/etc/passwd", "/c/other-job/shared/x.sst", "/c/chk-1/../../etc/passwd"] {
        let mut cfg = config(1000);
        cfg.checkpoint_dir = Some(DIR.to_string());
        let mut c = coordinator(cfg);
        first_trigger(&mut c);
        let mut a = ack(1, TASKS[2]);
        a.report.shared_state = vec![SharedStateFile {
            path: path.to_string(),
            size: 1,
        }];
        let (outcome, actions) = c.acknowledge(a, 5);
        assert_eq!(outcome, AckOutcome::Refused, "{path}");
        assert!(
            actions
                .iter()
                .all(|a| !matches!(a, CoordinatorAction::Discard { location } if location.contains(path))),
            "{actions:?}"
        );
        assert!(c.pending_ids().is_empty(), "checkpoint 1 is declined");
    }
}

#[test]
fn the_state_of_a_replaced_attempt_goes_unless_a_retained_checkpoint_refers_to_it() {
    let mut cfg = config(1000);
    cfg.checkpoint_dir = Some(DIR.to_string());
    let mut c = coordinator(cfg);
    first_trigger(&mut c);
    let chk1 = format!("{DIR}/{}/chk-1/v-2-old", JobId(0xabc));
    let mut a = shared_ack(1, TASKS[2], &["a"]);
    a.report.handle = Some(StreamStateHandle::File {
        path: chk1.clone(),
        size: 10,
    });
    c.acknowledge(ack(1, TASKS[0]), 5);
    c.acknowledge(ack(1, TASKS[1]), 5);
    c.acknowledge(a.clone(), 5);
    c.metadata_written(1, Ok(Some(format!("{DIR}/chk-1"))), 6);
    // The same files acknowledged again by an attempt the job no longer runs: checkpoint
    // 1 refers to them, nothing goes.
    assert!(c.discard_late_state(&a.report).is_empty());
    // An aborted checkpoint's state from such an attempt goes, shared files included.
    let (id, now) = trigger(&mut c);
    c.abort_all("failover", now);
    let mut late = shared_ack(id, TASKS[2], &["a", "late"]);
    let file = format!("{DIR}/{}/chk-{id}/v-2-old", JobId(0xabc));
    late.report.handle = Some(StreamStateHandle::File {
        path: file.clone(),
        size: 10,
    });
    let actions = c.discard_late_state(&late.report);
    assert_eq!(deleted(&actions), vec!["late"]);
    assert!(
        actions
            .iter()
            .any(|a| matches!(a, CoordinatorAction::Discard { location } if *location == file)),
        "{actions:?}"
    );
    // A file outside the checkpoint's locations is never touched.
    late.report.handle = Some(StreamStateHandle::File {
        path: "/etc/passwd".into(),
        size: 10,
    });
    late.report.shared_state.clear();
    assert!(c.discard_late_state(&late.report).is_empty());
}
