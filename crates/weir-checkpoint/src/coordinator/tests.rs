//! Tests of the checkpoint coordinator: one scenario per rule, then a property test
//! over random event sequences checking the module's invariants.

use super::*;
use proptest::prelude::*;
use std::time::Duration;
use weir_core::ids::OperatorId;

fn config(interval_ms: u64) -> CheckpointConfig {
    CheckpointConfig {
        interval: Some(Duration::from_millis(interval_ms)),
        timeout: Duration::from_millis(10_000),
        ..CheckpointConfig::default()
    }
}

fn vertices() -> Vec<VertexInfo> {
    vec![
        VertexInfo {
            vertex_id: JobVertexId(1),
            name: "Source".to_string(),
            parallelism: 2,
            max_parallelism: 128,
            operator_ids: vec![OperatorId(11)],
            is_source: true,
            upstream: vec![Vec::new(), Vec::new()],
        },
        VertexInfo {
            vertex_id: JobVertexId(2),
            name: "Sink".to_string(),
            parallelism: 1,
            max_parallelism: 128,
            operator_ids: vec![OperatorId(21)],
            is_source: false,
            upstream: vec![vec![UpstreamRange {
                vertex: 0,
                subtasks: 0..2,
            }]],
        },
    ]
}

const TASKS: [TaskKey; 3] = [
    TaskKey { vertex: 0, subtask: 0 },
    TaskKey { vertex: 0, subtask: 1 },
    TaskKey { vertex: 1, subtask: 0 },
];

fn coordinator(config: CheckpointConfig) -> CheckpointCoordinator {
    CheckpointCoordinator::new(config, JobId(0xabc), vertices(), 7)
}

fn ack(id: CheckpointId, task: TaskKey) -> SubtaskAcknowledgement {
    SubtaskAcknowledgement {
        task,
        report: SnapshotReport {
            checkpoint_id: id,
            handle: Some(StreamStateHandle::Inline(vec![task.subtask as u8])),
            state_size: 1,
            sync_duration_ms: 1,
            async_duration_ms: 2,
            alignment_duration_ms: 0,
            persisted_data: 0,
            union_state: false,
            shared_state: Vec::new(),
            checkpointed_size: 0,
        },
    }
}

/// Starts the scheduler at 0 and ticks until the first trigger; returns its time.
fn first_trigger(c: &mut CheckpointCoordinator) -> i64 {
    c.start_scheduler(0);
    let due = c.next_trigger_due().unwrap();
    let actions = c.tick(due);
    assert!(
        matches!(
            actions[..],
            [CoordinatorAction::TriggerCheckpoint { checkpoint_id: 1, .. }]
        ),
        "{actions:?}"
    );
    due
}

/// Acknowledges `id` from every task and reports the metadata written.
fn complete(c: &mut CheckpointCoordinator, id: CheckpointId, now: i64, path: Option<&str>) -> Vec<CoordinatorAction> {
    for task in TASKS {
        c.acknowledge(ack(id, task), now);
    }
    c.metadata_written(id, Ok(path.map(str::to_string)), now)
}

fn fail_job(actions: &[CoordinatorAction]) -> Option<&str> {
    actions.iter().find_map(|a| match a {
        CoordinatorAction::FailJob { reason } => Some(reason.as_str()),
        _ => None,
    })
}

#[test]
fn without_an_interval_the_scheduler_never_triggers() {
    let mut c = coordinator(CheckpointConfig::default());
    assert!(c.start_scheduler(0).is_empty());
    assert!(c.tick(1_000_000).is_empty());
}

#[test]
fn the_first_trigger_waits_a_seeded_delay_between_min_pause_and_interval_then_goes_to_the_sources() {
    let mut cfg = config(1000);
    cfg.min_pause = Duration::from_millis(200);
    let mut c = coordinator(cfg.clone());
    c.start_scheduler(5000);
    let due = c.next_trigger_due().unwrap();
    assert!((5200..=6000).contains(&due), "{due}");
    let mut same_seed = coordinator(cfg);
    same_seed.start_scheduler(5000);
    assert_eq!(same_seed.next_trigger_due(), Some(due));
    assert!(c.tick(due - 1).is_empty());
    let actions = c.tick(due);
    assert_eq!(
        actions,
        vec![CoordinatorAction::TriggerCheckpoint {
            checkpoint_id: 1,
            timestamp: due,
            options: CheckpointOptions::checkpoint(weir_core::CheckpointingMode::ExactlyOnce),
            tasks: TASKS[..2].to_vec(),
            location: None,
        }]
    );
    assert_eq!(c.next_trigger_due(), Some(due + 1000));
    assert_eq!(c.pending_ids(), vec![1]);
}

#[test]
fn with_unaligned_checkpoints_enabled_checkpoints_are_unaligned_and_savepoints_forced_aligned() {
    let mut cfg = config(1000);
    cfg.unaligned_enabled = true;
    cfg.checkpoint_dir = Some("/c".to_string());
    let mut c = coordinator(cfg);
    c.start_scheduler(0);
    let due = c.next_trigger_due().unwrap();
    let actions = c.tick(due);
    let [CoordinatorAction::TriggerCheckpoint { options, .. }] = &actions[..] else {
        panic!("{actions:?}")
    };
    assert!(options.is_unaligned());
    assert!(c.stats().checkpoint(1).unwrap().unaligned);
    let (_, actions) = c
        .trigger_savepoint(due, SnapshotType::Savepoint, "/sp".to_string())
        .unwrap();
    let CoordinatorAction::TriggerCheckpoint { options, .. } = &actions[0] else {
        panic!("{actions:?}")
    };
    assert_eq!(options.alignment, weir_core::AlignmentType::ForcedAligned);
    assert!(options.needs_alignment() && !c.stats().checkpoint(2).unwrap().unaligned);
}

#[test]
fn persisted_in_flight_data_of_the_acknowledgements_is_summed_in_the_statistics() {
    let mut c = coordinator(config(1000));
    let t = first_trigger(&mut c);
    for (i, task) in TASKS.into_iter().enumerate() {
        let mut a = ack(1, task);
        a.report.persisted_data = 100 * i as u64;
        c.acknowledge(a, t + 1);
    }
    assert_eq!(c.stats().checkpoint(1).unwrap().persisted_data, 300);
}

#[test]
fn all_acknowledgements_write_metadata_and_completion_notifies_every_task() {
    let mut c = coordinator(config(1000));
    let t = first_trigger(&mut c);
    assert_eq!(c.acknowledge(ack(1, TASKS[0]), t + 5).0, AckOutcome::Acknowledged);
    assert_eq!(c.acknowledge(ack(1, TASKS[1]), t + 6).0, AckOutcome::Acknowledged);
    let (outcome, actions) = c.acknowledge(ack(1, TASKS[2]), t + 9);
    assert_eq!(outcome, AckOutcome::AllAcknowledged);
    let CoordinatorAction::WriteMetadata {
        checkpoint_id: 1,
        metadata,
        snapshot_type: SnapshotType::Checkpoint,
        target: None,
    } = &actions[0]
    else {
        panic!("{actions:?}")
    };
    assert_eq!(metadata.tasks.len(), 2);
    assert_eq!(
        metadata.tasks[0].subtasks[1].key_group_range,
        KeyGroupRange::new(64, 127)
    );
    assert_eq!(
        metadata.tasks[1].subtasks[0].handle,
        Some(StreamStateHandle::Inline(vec![0]))
    );
    assert_eq!(c.stats().counts().in_progress, 1, "finalizing is still in progress");
    let actions = c.metadata_written(1, Ok(None), t + 20);
    assert_eq!(
        actions,
        vec![CoordinatorAction::NotifyComplete {
            checkpoint_id: 1,
            tasks: TASKS.to_vec()
        }]
    );
    let latest = c.latest_completed().unwrap();
    assert_eq!((latest.id, latest.timestamp, latest.completed_at), (1, t, t + 20));
    let stats = c.stats().checkpoint(1).unwrap();
    assert_eq!(stats.end_to_end_duration_ms, 9);
    assert_eq!(stats.num_acknowledged_subtasks, 3);
    assert!(c.pending_ids().is_empty());
}

#[test]
fn duplicate_late_and_foreign_acknowledgements_are_ignored() {
    let mut cfg = config(1000);
    cfg.checkpoint_dir = Some("/c".to_string());
    let mut c = coordinator(cfg);
    let t = first_trigger(&mut c);
    c.acknowledge(ack(1, TASKS[0]), t);
    assert_eq!(c.acknowledge(ack(1, TASKS[0]), t), (AckOutcome::Duplicate, vec![]));
    assert_eq!(
        c.acknowledge(ack(99, TASKS[0]), t),
        (AckOutcome::UnknownCheckpoint, vec![])
    );
    let foreign = TaskKey { vertex: 1, subtask: 1 };
    assert_eq!(c.acknowledge(ack(1, foreign), t).0, AckOutcome::UnknownTask);
    assert_eq!(
        c.acknowledge(ack(1, TaskKey { vertex: 5, subtask: 0 }), t).0,
        AckOutcome::UnknownTask
    );
    c.abort_all("failover", t + 1);
    let mut late = ack(1, TASKS[1]);
    let late_file = format!("/c/{}/chk-1/s1", JobId(0xabc));
    late.report.handle = Some(StreamStateHandle::File {
        path: late_file.clone(),
        size: 9,
    });
    assert_eq!(
        c.acknowledge(late, t + 2),
        (
            AckOutcome::UnknownCheckpoint,
            vec![CoordinatorAction::Discard { location: late_file }]
        )
    );
}

#[test]
fn max_concurrent_defers_the_periodic_trigger_until_a_checkpoint_completes() {
    let mut c = coordinator(config(1000));
    let t = first_trigger(&mut c);
    assert!(c.tick(t + 1000).is_empty(), "one pending is the limit");
    assert!(c.tick(t + 1500).is_empty());
    complete(&mut c, 1, t + 1600, None);
    let actions = c.tick(t + 1700);
    assert!(matches!(
        actions[..],
        [CoordinatorAction::TriggerCheckpoint { checkpoint_id: 2, .. }]
    ));
    assert_eq!(c.next_trigger_due(), Some(t + 2000));
}

#[test]
fn min_pause_defers_the_trigger_after_a_completion() {
    let mut cfg = config(1000);
    cfg.min_pause = Duration::from_millis(800);
    let mut c = coordinator(cfg);
    let t = first_trigger(&mut c);
    complete(&mut c, 1, t + 900, None);
    assert!(c.tick(t + 1000).is_empty(), "due, but only 100 ms since the completion");
    assert!(c.tick(t + 1699).is_empty());
    assert!(!c.tick(t + 1700).is_empty());
}

#[test]
fn an_expired_checkpoint_is_aborted_and_with_no_tolerance_fails_the_job() {
    let mut c = coordinator(config(1000));
    let t = first_trigger(&mut c);
    assert!(c.tick(t + 9_999).is_empty());
    let actions = c.tick(t + 10_000);
    assert_eq!(
        actions[0],
        CoordinatorAction::NotifyAborted {
            checkpoint_id: 1,
            tasks: TASKS.to_vec(),
            reason: "Checkpoint expired before completing.".to_string()
        }
    );
    assert_eq!(
        fail_job(&actions),
        Some(
            "Exceeded checkpoint tolerable failure threshold. The latest checkpoint failed due to Checkpoint \
             expired before completing., view the Checkpoint History tab or the Job Manager log to find out why \
             continuous checkpoints failed."
        )
    );
    assert_eq!(c.consecutive_failures(), 0, "reset after failing the job");
    let failed = c.stats().latest_failed().unwrap();
    assert_eq!(
        failed.failure_message.as_deref(),
        Some("Checkpoint expired before completing.")
    );
}

#[test]
fn declines_of_tasks_not_ready_running_or_finished_do_not_count() {
    let mut c = coordinator(config(1000));
    let mut t = first_trigger(&mut c);
    for (i, reason) in [
        DeclineReason::TaskNotReady,
        DeclineReason::TaskNotRunning,
        DeclineReason::TaskFinished,
    ]
    .into_iter()
    .enumerate()
    {
        let id = i as u64 + 1;
        let actions = c.decline(id, TASKS[0], reason, String::new(), t);
        assert!(matches!(&actions[0], CoordinatorAction::NotifyAborted { checkpoint_id, .. } if *checkpoint_id == id));
        assert_eq!(fail_job(&actions), None);
        assert_eq!(c.consecutive_failures(), 0);
        t += 1000;
        assert!(!c.tick(t).is_empty());
    }
    let actions = c.decline(4, TASKS[2], DeclineReason::SnapshotFailed, "disk full".to_string(), t);
    let CoordinatorAction::NotifyAborted { reason, .. } = &actions[0] else {
        panic!()
    };
    assert_eq!(
        reason,
        "Checkpoint was declined. Declined by Sink (0). Cause: disk full"
    );
    assert!(fail_job(&actions)
        .unwrap()
        .contains("failed due to Checkpoint was declined.,"));
}

#[test]
fn the_job_fails_when_consecutive_failures_exceed_the_tolerance_and_a_completion_resets_them() {
    let mut cfg = config(1000);
    cfg.tolerable_failures = 2;
    let mut c = coordinator(cfg);
    let mut t = first_trigger(&mut c);
    let mut id = 1;
    let mut next = |c: &mut CheckpointCoordinator, t: &mut i64| {
        *t += 1000;
        assert!(!c.tick(*t).is_empty());
        id += 1;
        id
    };
    assert_eq!(
        fail_job(&c.decline(1, TASKS[0], DeclineReason::SnapshotFailed, String::new(), t)),
        None
    );
    let i = next(&mut c, &mut t);
    assert_eq!(
        fail_job(&c.decline(i, TASKS[0], DeclineReason::AlignmentFailed, String::new(), t)),
        None
    );
    let i = next(&mut c, &mut t);
    complete(&mut c, i, t, None);
    assert_eq!(c.consecutive_failures(), 0);
    for _ in 0..2 {
        let i = next(&mut c, &mut t);
        assert_eq!(
            fail_job(&c.decline(i, TASKS[0], DeclineReason::SnapshotFailed, String::new(), t)),
            None
        );
    }
    let i = next(&mut c, &mut t);
    assert!(fail_job(&c.decline(i, TASKS[0], DeclineReason::SnapshotFailed, String::new(), t)).is_some());
    assert_eq!(c.consecutive_failures(), 0);
}

#[test]
fn savepoints_ignore_the_limits_share_the_counter_and_are_not_retained_for_recovery() {
    let mut cfg = config(1000);
    cfg.checkpoint_dir = Some("/c".to_string());
    let mut c = coordinator(cfg);
    let t = first_trigger(&mut c);
    let (id, actions) = c
        .trigger_savepoint(t, SnapshotType::Savepoint, "/sp".to_string())
        .unwrap();
    assert_eq!(id, 2);
    let CoordinatorAction::TriggerCheckpoint {
        options,
        location: Some(loc),
        ..
    } = &actions[0]
    else {
        panic!()
    };
    assert_eq!(options.snapshot_type, SnapshotType::Savepoint);
    assert!(loc.starts_with("/sp/savepoint-000000-"), "{loc}");
    assert_eq!(c.pending_ids(), vec![1, 2]);
    let done = complete(&mut c, 2, t + 1, Some(loc));
    assert!(
        matches!(done[..], [CoordinatorAction::NotifyComplete { checkpoint_id: 2, .. }]),
        "{done:?}"
    );
    assert_eq!(c.pending_ids(), vec![1], "a savepoint does not subsume checkpoints");
    assert!(
        c.latest_completed().is_none(),
        "an intermediate savepoint is no recovery point"
    );
    assert_eq!(c.stats().latest_savepoint().unwrap().id, 2);
    complete(&mut c, 1, t + 2, Some(&format!("/c/{}/chk-1", JobId(0xabc))));
    assert_eq!(c.latest_completed().unwrap().id, 1);
    let (id, _) = c
        .trigger_savepoint(t + 3, SnapshotType::SyncSavepoint, "/sp".to_string())
        .unwrap();
    complete(&mut c, id, t + 4, Some("/sp/x"));
    assert_eq!(
        c.latest_completed().unwrap().id,
        3,
        "stop-with-savepoint is a recovery point"
    );
    assert_eq!(c.completed_checkpoints().count(), 1);
}

#[test]
fn savepoint_failures_do_not_count_and_bad_targets_are_refused() {
    let mut c = coordinator(config(1000));
    let (id, _) = c
        .trigger_savepoint(0, SnapshotType::Savepoint, "/sp".to_string())
        .unwrap();
    let actions = c.decline(id, TASKS[0], DeclineReason::SnapshotFailed, String::new(), 1);
    assert_eq!(fail_job(&actions), None);
    assert!(matches!(&actions[1], CoordinatorAction::Discard { location } if location.starts_with("/sp/savepoint-")));
    assert!(matches!(
        c.trigger_savepoint(2, SnapshotType::Savepoint, " ".to_string()),
        Err(CheckpointError::NoSavepointDirectory { .. })
    ));
    assert!(matches!(
        c.trigger_savepoint(2, SnapshotType::Savepoint, "hdfs://nn/sp".to_string()),
        Err(CheckpointError::UnsupportedScheme { .. })
    ));
    assert!(c
        .trigger_savepoint(2, SnapshotType::Checkpoint, "/sp".to_string())
        .is_err());
    assert_eq!(
        c.trigger_savepoint(2, SnapshotType::Savepoint, "/sp".to_string())
            .unwrap()
            .0,
        2
    );
}

#[test]
fn the_store_retains_num_retained_checkpoints_and_discards_the_subsumed_ones() {
    let mut cfg = config(1000);
    cfg.num_retained = 2;
    cfg.checkpoint_dir = Some("/c".to_string());
    let mut c = coordinator(cfg);
    let mut t = first_trigger(&mut c);
    let job = JobId(0xabc);
    for id in 1..=3 {
        if id > 1 {
            t += 1000;
            let actions = c.tick(t);
            let CoordinatorAction::TriggerCheckpoint { location, .. } = &actions[0] else {
                panic!()
            };
            assert_eq!(location.as_deref(), Some(format!("/c/{job}/chk-{id}").as_str()));
        }
        let path = format!("/c/{job}/chk-{id}");
        let actions = complete(&mut c, id, t, Some(&path));
        if id == 3 {
            assert_eq!(
                actions[0],
                CoordinatorAction::Discard {
                    location: format!("/c/{job}/chk-1")
                }
            );
        }
    }
    assert_eq!(c.completed_checkpoints().map(|c| c.id).collect::<Vec<_>>(), vec![2, 3]);
    assert!(c.stats().checkpoint(1).unwrap().discarded);
}

#[test]
fn a_completed_checkpoint_subsumes_older_pending_ones_without_counting() {
    let mut cfg = config(1000);
    cfg.max_concurrent = 2;
    let mut c = coordinator(cfg);
    let t = first_trigger(&mut c);
    assert!(!c.tick(t + 1000).is_empty());
    let actions = complete(&mut c, 2, t + 1100, None);
    assert_eq!(
        actions[0],
        CoordinatorAction::NotifyAborted {
            checkpoint_id: 1,
            tasks: TASKS.to_vec(),
            reason: SUBSUMED_MESSAGE.to_string()
        }
    );
    assert!(matches!(
        actions[1],
        CoordinatorAction::NotifyComplete { checkpoint_id: 2, .. }
    ));
    assert_eq!(c.consecutive_failures(), 0);
}

#[test]
fn a_failed_metadata_write_aborts_counts_and_discards_the_location() {
    let mut cfg = config(1000);
    cfg.checkpoint_dir = Some("/c".to_string());
    cfg.tolerable_failures = 1;
    let mut c = coordinator(cfg);
    let t = first_trigger(&mut c);
    for task in TASKS {
        c.acknowledge(ack(1, task), t);
    }
    assert_eq!(
        c.decline(1, TASKS[0], DeclineReason::SnapshotFailed, String::new(), t),
        vec![]
    );
    assert!(c
        .tick(t + 50_000)
        .iter()
        .all(|a| !matches!(a, CoordinatorAction::NotifyAborted { .. })));
    let actions = c.metadata_written(1, Err("No space left on device".to_string()), t + 1);
    let CoordinatorAction::NotifyAborted { reason, .. } = &actions[0] else {
        panic!()
    };
    assert_eq!(reason, "Failure to finalize checkpoint. No space left on device");
    assert!(matches!(&actions[1], CoordinatorAction::Discard { location } if location.ends_with("/chk-1")));
    assert_eq!(c.consecutive_failures(), 1);
}

#[test]
fn abort_all_does_not_count_and_a_write_finishing_after_it_is_discarded() {
    let mut c = coordinator(config(1000));
    let t = first_trigger(&mut c);
    for task in TASKS {
        c.acknowledge(ack(1, task), t);
    }
    let actions = c.abort_all("Job is failing over.", t + 1);
    assert_eq!(actions.len(), 1);
    assert_eq!(fail_job(&actions), None);
    assert_eq!(c.stats().counts().failed, 1);
    assert_eq!(
        c.metadata_written(1, Ok(Some("/c/chk-1".to_string())), t + 2),
        vec![CoordinatorAction::Discard {
            location: "/c/chk-1".to_string()
        }]
    );
    assert_eq!(c.metadata_written(1, Ok(Some("/c/chk-1".to_string())), t + 3), vec![]);
}

#[test]
fn restoring_seeds_the_counter_the_stats_and_the_recovery_point() {
    let mut c = coordinator(config(1000));
    let metadata = CheckpointMetadata {
        job_id: JobId(1),
        checkpoint_id: 41,
        timestamp: 5,
        snapshot_type: SnapshotType::Savepoint,
        tasks: vec![],
    };
    c.restore_from(metadata, Some("/sp/savepoint-1".to_string()), 100);
    assert_eq!(c.latest_completed().unwrap().id, 41);
    assert_eq!(c.stats().counts().restored, 1);
    assert_eq!(
        c.stats().latest_restored().unwrap().external_path.as_deref(),
        Some("/sp/savepoint-1")
    );
    c.start_scheduler(0);
    let actions = c.tick(c.next_trigger_due().unwrap());
    assert!(matches!(
        actions[..],
        [CoordinatorAction::TriggerCheckpoint { checkpoint_id: 42, .. }]
    ));
    let actions = c.shutdown(JobTermination::Finished, 1);
    assert!(!actions
        .iter()
        .any(|a| matches!(a, CoordinatorAction::Discard { location } if location.contains("savepoint"))));
}

#[test]
fn shutdown_discards_what_the_retention_policy_does_not_keep() {
    use ExternalizedCheckpointRetention as R;
    let cases = [
        (R::NoExternalizedCheckpoints, JobTermination::Cancelled, true),
        (R::NoExternalizedCheckpoints, JobTermination::Failed, true),
        (R::NoExternalizedCheckpoints, JobTermination::Suspended, false),
        (R::RetainOnCancellation, JobTermination::Cancelled, false),
        (R::RetainOnCancellation, JobTermination::Failed, false),
        (R::RetainOnCancellation, JobTermination::Finished, true),
        (R::DeleteOnCancellation, JobTermination::Cancelled, true),
        (R::DeleteOnCancellation, JobTermination::Failed, false),
    ];
    for (retention, termination, discarded) in cases {
        let mut cfg = config(1000);
        cfg.externalized_retention = retention;
        let mut c = coordinator(cfg);
        let t = first_trigger(&mut c);
        complete(&mut c, 1, t, Some("/c/chk-1"));
        assert!(!c.tick(t + 1000).is_empty());
        let actions = c.shutdown(termination, t + 1001);
        assert!(
            matches!(&actions[0], CoordinatorAction::NotifyAborted { checkpoint_id: 2, reason, .. } if reason == SHUTDOWN_MESSAGE)
        );
        let discards = actions.iter().any(|a| {
            *a == CoordinatorAction::Discard {
                location: "/c/chk-1".to_string(),
            }
        });
        assert_eq!(discards, discarded, "{retention:?} {termination:?}");
        assert!(c.shutdown(termination, t + 2000).is_empty());
        assert!(c.tick(t + 5000).is_empty());
    }
}

// --- property test --------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Tick(u16),
    Ack(u8, u8),
    Decline(u8, u8),
    Written(u8, bool),
    AbortAll,
    Savepoint,
    StopStart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u16..3000).prop_map(Op::Tick),
        14 => (any::<u8>(), 0u8..3).prop_map(|(p, t)| Op::Ack(p, t)),
        1 => (any::<u8>(), 0u8..7).prop_map(|(p, r)| Op::Decline(p, r)),
        5 => (any::<u8>(), any::<bool>()).prop_map(|(p, ok)| Op::Written(p, ok || p % 4 != 0)),
        1 => Just(Op::AbortAll),
        1 => Just(Op::Savepoint),
        1 => Just(Op::StopStart),
    ]
}

const REASONS: [DeclineReason; 7] = [
    DeclineReason::TaskNotReady,
    DeclineReason::TaskNotRunning,
    DeclineReason::TaskFinished,
    DeclineReason::SnapshotFailed,
    DeclineReason::AlignmentFailed,
    DeclineReason::Expired,
    DeclineReason::MetadataWriteFailed,
];

/// A model of the failure counter and of the lifecycle of every trigger.
#[derive(Default)]
struct Model {
    last_id: CheckpointId,
    savepoints: BTreeSet<CheckpointId>,
    open: BTreeSet<CheckpointId>,
    last_succeeded: CheckpointId,
    failures: u32,
}

impl Model {
    fn observe(&mut self, actions: &[CoordinatorAction], tolerable: u32, periodic: bool, c: &CheckpointCoordinator) {
        let counted = |reason: &str| {
            REASONS
                .iter()
                .filter(|r| r.counts_as_failure())
                .any(|r| reason.starts_with(r.message()))
        };
        let mut expect_fail = false;
        for action in actions {
            match action {
                CoordinatorAction::TriggerCheckpoint {
                    checkpoint_id, options, ..
                } => {
                    assert_eq!(*checkpoint_id, self.last_id + 1, "ids strictly increase from 1");
                    self.last_id = *checkpoint_id;
                    self.open.insert(*checkpoint_id);
                    if options.snapshot_type.is_savepoint() {
                        self.savepoints.insert(*checkpoint_id);
                    } else if periodic {
                        assert!(c.pending_ids().len() <= c.config().max_concurrent as usize);
                    }
                }
                CoordinatorAction::NotifyComplete { checkpoint_id, .. } => {
                    assert!(self.open.remove(checkpoint_id), "{checkpoint_id} ended twice");
                    if *checkpoint_id > self.last_succeeded {
                        self.last_succeeded = *checkpoint_id;
                        self.failures = 0;
                    }
                }
                CoordinatorAction::NotifyAborted {
                    checkpoint_id, reason, ..
                } => {
                    assert!(self.open.remove(checkpoint_id), "{checkpoint_id} ended twice");
                    if counted(reason)
                        && !self.savepoints.contains(checkpoint_id)
                        && *checkpoint_id > self.last_succeeded
                    {
                        self.failures += 1;
                        if self.failures > tolerable {
                            self.failures = 0;
                            expect_fail = true;
                        }
                    }
                }
                CoordinatorAction::FailJob { .. } => {
                    assert!(expect_fail, "FailJob without exceeding the tolerance");
                    expect_fail = false;
                }
                _ => {}
            }
        }
        assert!(!expect_fail, "the tolerance was exceeded without FailJob");
        assert_eq!(c.consecutive_failures(), self.failures);
        assert!(c.completed_checkpoints().count() <= c.config().num_retained as usize);
        let pending: BTreeSet<_> = c.pending_ids().into_iter().collect();
        assert_eq!(pending, self.open, "pending ids are exactly the open triggers");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn random_event_sequences_keep_the_coordinator_invariants(
        ops in proptest::collection::vec(op(), 1..120),
        max_concurrent in 1u32..4,
        tolerable in 0u32..3,
        num_retained in 1u32..3,
        min_pause in 0u64..1500,
    ) {
        let mut cfg = config(1000);
        cfg.max_concurrent = max_concurrent;
        cfg.tolerable_failures = tolerable;
        cfg.num_retained = num_retained;
        cfg.min_pause = Duration::from_millis(min_pause);
        cfg.timeout = Duration::from_millis(4000);
        let mut c = coordinator(cfg);
        let mut model = Model::default();
        let mut now = 0i64;
        c.start_scheduler(now);
        for op in ops {
            let pick = |c: &CheckpointCoordinator, p: u8| {
                let ids = c.pending_ids();
                (!ids.is_empty()).then(|| ids[p as usize % ids.len()])
            };
            let (actions, periodic) = match op {
                Op::Tick(dt) => {
                    now += dt as i64;
                    (c.tick(now), true)
                }
                Op::Ack(p, t) => match pick(&c, p) {
                    Some(id) => (c.acknowledge(ack(id, TASKS[t as usize]), now).1, false),
                    None => (c.acknowledge(ack(p as u64, TASKS[t as usize]), now).1, false),
                },
                Op::Decline(p, r) => match pick(&c, p) {
                    Some(id) => (c.decline(id, TASKS[0], REASONS[r as usize], String::new(), now), false),
                    None => (vec![], false),
                },
                Op::Written(p, ok) => match pick(&c, p) {
                    Some(id) => {
                        let result = if ok { Ok(Some(format!("/c/chk-{id}"))) } else { Err("io".to_string()) };
                        (c.metadata_written(id, result, now), false)
                    }
                    None => (vec![], false),
                },
                Op::AbortAll => (c.abort_all("failover", now), false),
                Op::Savepoint => (c.trigger_savepoint(now, SnapshotType::Savepoint, "/sp".to_string()).unwrap().1, false),
                Op::StopStart => {
                    c.stop_scheduler();
                    (c.start_scheduler(now), false)
                }
            };
            model.observe(&actions, tolerable, periodic, &c);
        }
        let actions = c.shutdown(JobTermination::Cancelled, now);
        model.observe(&actions, tolerable, false, &c);
        prop_assert!(model.open.is_empty(), "every trigger ended: {:?}", model.open);
    }
}

mod finished_tasks;
mod hostile_handles;
mod shared_state;
