//! Acknowledgements whose state handles name files outside the checkpoint's storage
//! locations: the checkpoint (or savepoint) is declined with that reason, and no action
//! moves, writes or deletes the file.

use super::*;

fn file_ack(id: CheckpointId, task: TaskKey, path: &str) -> SubtaskAcknowledgement {
    let mut a = ack(id, task);
    a.report.handle = Some(StreamStateHandle::File {
        path: path.to_string(),
        size: 10,
    });
    a
}

/// No action of `actions` discards `path` or writes metadata (which moves a
/// savepoint's files); messages may quote it.
fn untouched(actions: &[CoordinatorAction], path: &str) -> bool {
    actions.iter().all(|a| match a {
        CoordinatorAction::Discard { location } => !location.contains(path),
        CoordinatorAction::WriteMetadata { .. } => false,
        _ => true,
    })
}

#[test]
fn a_savepoint_acknowledged_with_a_file_elsewhere_fails_with_that_reason_and_moves_nothing() {
    let mut cfg = config(1000);
    cfg.checkpoint_dir = Some("/c".to_string());
    let mut c = coordinator(cfg);
    let (id, _) = c
        .trigger_savepoint(0, SnapshotType::Savepoint, "/sp".to_string())
        .unwrap();
    c.acknowledge(ack(id, TASKS[0]), 1);
    c.acknowledge(ack(id, TASKS[1]), 1);
    let (outcome, actions) = c.acknowledge(file_ack(id, TASKS[2], "/some/dir/secret.conf"), 2);
    assert_eq!(outcome, AckOutcome::Refused);
    assert!(untouched(&actions, "/some/dir/secret.conf"), "{actions:?}");
    assert!(
        !actions
            .iter()
            .any(|a| matches!(a, CoordinatorAction::WriteMetadata { .. })),
        "{actions:?}"
    );
    assert!(c.pending_ids().is_empty(), "the savepoint is declined");
    let failure = c
        .stats()
        .checkpoint(id)
        .and_then(|s| s.failure_message.clone())
        .unwrap_or_default();
    assert!(
        failure.contains("/some/dir/secret.conf") && failure.contains("outside the checkpoint's storage locations"),
        "{failure}"
    );
}

#[test]
fn handles_climbing_out_with_dotdot_or_in_another_bucket_are_refused_and_inside_ones_accepted() {
    let mut cfg = config(1000);
    cfg.checkpoint_dir = Some("s3://bucket/chk".to_string());
    let mut c = coordinator(cfg.clone());
    let t = first_trigger(&mut c);
    let job = JobId(0xabc);
    let inside = format!("s3://bucket/chk/{job}/chk-1/v-0-0");
    assert_eq!(
        c.acknowledge(file_ack(1, TASKS[0], &inside), t).0,
        AckOutcome::Acknowledged
    );
    let mut c = coordinator(cfg);
    let t = first_trigger(&mut c);
    for bad in [
        format!("s3://bucket/chk/{job}/chk-1/../../../../secret"),
        format!("s3://other/chk/{job}/chk-1/f"),
        format!("/chk/{job}/chk-1/f"),
    ] {
        assert_eq!(
            c.acknowledge(file_ack(1, TASKS[0], &bad), t).0,
            AckOutcome::Refused,
            "{bad}"
        );
    }
    assert!(c.pending_ids().is_empty(), "the checkpoint is declined");
}

#[test]
fn a_late_acknowledgement_naming_a_file_elsewhere_is_not_discarded() {
    let mut cfg = config(1000);
    cfg.checkpoint_dir = Some("/c".to_string());
    let mut c = coordinator(cfg);
    let t = first_trigger(&mut c);
    c.abort_all("failover", t + 1);
    let (outcome, actions) = c.acknowledge(file_ack(1, TASKS[0], "/etc/passwd"), t + 2);
    assert_eq!(outcome, AckOutcome::Refused);
    assert!(actions.is_empty(), "{actions:?}");
}
