//! Checkpoints after tasks finish: which subtasks are triggered and awaited, what the
//! metadata says of finished ones, and what a subtask finishing mid-checkpoint does.

use super::*;

const SOURCE_0: TaskKey = TASKS[0];
const SOURCE_1: TaskKey = TASKS[1];
const SINK: TaskKey = TASKS[2];

fn triggered(actions: &[CoordinatorAction]) -> Vec<TaskKey> {
    actions
        .iter()
        .find_map(|a| match a {
            CoordinatorAction::TriggerCheckpoint { tasks, .. } => Some(tasks.clone()),
            _ => None,
        })
        .expect("a trigger")
}

fn metadata(actions: &[CoordinatorAction]) -> &CheckpointMetadata {
    actions
        .iter()
        .find_map(|a| match a {
            CoordinatorAction::WriteMetadata { metadata, .. } => Some(metadata),
            _ => None,
        })
        .expect("metadata to write")
}

/// A coordinator whose scheduler runs, with `finished` reported finished, ticked to its
/// first trigger; returns the coordinator, the trigger's actions and its time.
fn first_trigger_with_finished(finished: &[TaskKey]) -> (CheckpointCoordinator, Vec<CoordinatorAction>, i64) {
    let mut c = coordinator(config(1000));
    for task in finished {
        assert!(c.task_finished(*task, 0).is_empty(), "nothing pending yet");
    }
    c.start_scheduler(0);
    let due = c.next_trigger_due().unwrap();
    let actions = c.tick(due);
    (c, actions, due)
}

#[test]
fn a_checkpoint_after_a_source_subtask_finished_triggers_the_other_and_records_the_finished_one() {
    let (mut c, actions, due) = first_trigger_with_finished(&[SOURCE_0]);
    assert_eq!(triggered(&actions), vec![SOURCE_1]);
    assert_eq!(c.acknowledge(ack(1, SOURCE_1), due).0, AckOutcome::Acknowledged);
    let (outcome, actions) = c.acknowledge(ack(1, SINK), due);
    assert_eq!(
        outcome,
        AckOutcome::AllAcknowledged,
        "the finished subtask is not awaited"
    );
    let sources = &metadata(&actions).tasks[0].subtasks;
    assert!(sources[0].finished && sources[0].handle.is_none(), "{:?}", sources[0]);
    assert!(!sources[1].finished && sources[1].handle.is_some(), "{:?}", sources[1]);
    let done = c.metadata_written(1, Ok(None), due);
    assert!(
        done.contains(&CoordinatorAction::NotifyComplete {
            checkpoint_id: 1,
            tasks: vec![SOURCE_1, SINK],
        }),
        "only unfinished subtasks are notified: {done:?}"
    );
}

#[test]
fn a_subtask_whose_upstream_subtasks_all_finished_is_triggered_like_a_source() {
    let (mut c, actions, due) = first_trigger_with_finished(&[SOURCE_0, SOURCE_1]);
    assert_eq!(triggered(&actions), vec![SINK]);
    let (outcome, actions) = c.acknowledge(ack(1, SINK), due);
    assert_eq!(outcome, AckOutcome::AllAcknowledged);
    assert!(metadata(&actions).tasks[0].subtasks.iter().all(|s| s.finished));
}

#[test]
fn an_acknowledgement_from_a_subtask_finished_before_the_trigger_is_ignored() {
    let (mut c, _, due) = first_trigger_with_finished(&[SOURCE_0]);
    assert_eq!(c.acknowledge(ack(1, SOURCE_0), due).0, AckOutcome::UnknownTask);
    assert_eq!(c.pending_ids(), vec![1]);
}

#[test]
fn a_subtask_finishing_before_it_acknowledged_aborts_the_checkpoint_without_counting_a_failure() {
    let mut cfg = config(1000);
    cfg.tolerable_failures = 0;
    let mut c = coordinator(cfg);
    let due = first_trigger(&mut c);
    c.acknowledge(ack(1, SOURCE_0), due);
    assert!(
        c.task_finished(SOURCE_0, due).is_empty(),
        "it acknowledged: nothing lost"
    );
    let actions = c.task_finished(SOURCE_1, due + 1);
    assert!(
        actions.iter().any(|a| matches!(
            a,
            CoordinatorAction::NotifyAborted { checkpoint_id: 1, reason, .. }
                if reason.contains("task is closing") && reason.contains("Source (1) finished")
        )),
        "{actions:?}"
    );
    assert!(fail_job(&actions).is_none(), "{actions:?}");
    assert_eq!(c.consecutive_failures(), 0);
    assert!(c.pending_ids().is_empty());
}

#[test]
fn a_subtask_deployed_again_is_awaited_again_unless_restored_as_finished() {
    let (mut c, _, due) = first_trigger_with_finished(&[SOURCE_0, SOURCE_1]);
    c.abort_all("restart", due);
    c.task_deployed(SOURCE_0, false);
    c.task_deployed(SOURCE_1, true);
    assert!(c.is_finished(SOURCE_1) && !c.is_finished(SOURCE_0));
    let actions = c.tick(due + 1000);
    assert_eq!(triggered(&actions), vec![SOURCE_0]);
}

#[test]
fn once_every_subtask_finished_nothing_is_triggered_and_savepoints_are_refused() {
    let (mut c, actions, due) = first_trigger_with_finished(&TASKS);
    assert!(actions.is_empty(), "{actions:?}");
    assert!(c.tick(due + 5000).is_empty());
    let refused = c
        .trigger_savepoint(due, SnapshotType::Savepoint, "/tmp/sp".to_string())
        .unwrap_err();
    assert!(
        refused.to_string().contains("every task of the job has finished"),
        "{refused}"
    );
}
