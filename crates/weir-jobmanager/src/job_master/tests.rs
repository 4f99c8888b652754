//! Scenario tests of the JobMaster state machine: scheduling, task reports, global
//! failover and restarts, cancellation.

use super::test_support::{cluster, deployments};
use super::*;
use crate::failover::restart_strategy::RestartStrategyConfig;
use weir_graph::{ChainingStrategy, ExecutionConfig, NodeKind, Partitioner, StreamEdge, StreamGraph, StreamNode};

pub(super) fn node(id: u32, p: u32) -> StreamNode {
    StreamNode {
        id,
        name: format!("n{id}"),
        kind: if id == 0 { NodeKind::Source } else { NodeKind::Operator },
        parallelism: p,
        parallelism_configured: false,
        source_splits: None,
        max_parallelism: None,
        chaining_strategy: ChainingStrategy::Always,
        slot_sharing_group: "default".into(),
        uid: None,
        keyed: id == 1,
    }
}

/// Job 9: a source and a keyed operator of parallelism `p` behind a hash edge.
pub(super) fn job(p: u32, restart: RestartStrategyConfig) -> JobMaster {
    job_in(weir_core::RuntimeExecutionMode::Streaming, p, restart)
}

/// [`job`] in runtime mode `mode` (BATCH makes the hash edge blocking).
pub(super) fn job_in(mode: weir_core::RuntimeExecutionMode, p: u32, restart: RestartStrategyConfig) -> JobMaster {
    job_master(job_graph_in(mode, p), restart)
}

/// Job 9 over `job_graph`, created at time 0 with a slot request timeout of 1 s.
pub(super) fn job_master(job_graph: JobGraph, restart: RestartStrategyConfig) -> JobMaster {
    JobMaster::new(
        JobId(9),
        ProgramInvocation::new("p"),
        "f".into(),
        job_graph,
        restart.create(1).unwrap(),
        1000,
        0,
    )
}

/// source (p) --hash--> aggregate (p) in `mode`.
pub(super) fn job_graph_in(mode: weir_core::RuntimeExecutionMode, p: u32) -> JobGraph {
    let g = StreamGraph {
        job_name: "j".into(),
        config: ExecutionConfig {
            runtime_mode: mode,
            ..ExecutionConfig::default()
        },
        nodes: vec![node(0, p), node(1, p)],
        edges: vec![StreamEdge {
            source: 0,
            target: 1,
            partitioner: Partitioner::Hash,
            input: 0,
        }],
    };
    JobGraph::from_stream_graph(&g).unwrap()
}

fn report_all(
    jm: &mut JobMaster,
    tdds: &[TaskDeploymentDescriptor],
    state: ExecutionState,
    slots: &mut SlotTable,
) -> Vec<Action> {
    let mut out = Vec::new();
    for t in tdds {
        out.extend(jm.on_task_state(&t.attempt_id, state, None, slots, 10));
    }
    out
}

#[test]
fn every_subtask_is_deployed_once_slots_are_available_with_remote_and_local_inputs() {
    let mut slots = cluster(2, 2);
    let mut jm = job(4, RestartStrategyConfig::NoRestart);
    let actions = jm.start(&mut slots, 0);
    let tdds = deployments(&actions);
    assert_eq!(tdds.len(), 8);
    assert_eq!(jm.status, JobStatus::Running);
    let consumer = tdds
        .iter()
        .find(|t| t.vertex_index == 1 && t.subtask_index == 0)
        .unwrap();
    assert_eq!(consumer.inputs.len(), 4);
    assert_eq!(consumer.inputs.iter().filter(|i| i.local).count(), 2);
    let producer = tdds
        .iter()
        .find(|t| t.vertex_index == 0 && t.subtask_index == 0)
        .unwrap();
    assert_eq!(producer.outputs[0].num_subpartitions, 4);
    assert_eq!(slots.free_slots(), 0);
}

#[test]
fn all_tasks_finished_finishes_the_job_and_frees_its_slots() {
    let mut slots = cluster(1, 2);
    let mut jm = job(2, RestartStrategyConfig::NoRestart);
    let tdds = deployments(&jm.start(&mut slots, 0));
    report_all(&mut jm, &tdds, ExecutionState::Running, &mut slots);
    let actions = report_all(&mut jm, &tdds, ExecutionState::Finished, &mut slots);
    assert_eq!(jm.status, JobStatus::Finished);
    assert!(matches!(actions.last(), Some(Action::ReleaseJob { .. })));
    assert_eq!(slots.free_slots(), 2);
}

#[test]
fn a_state_report_the_lifecycle_refuses_changes_nothing_and_the_job_goes_on() {
    let mut slots = cluster(1, 2);
    let mut jm = job(1, RestartStrategyConfig::NoRestart);
    let tdds = deployments(&jm.start(&mut slots, 0));
    report_all(&mut jm, &tdds, ExecutionState::Running, &mut slots);
    let state = |jm: &JobMaster| jm.execution_graph.execution_vertex(0, 0).unwrap().current.state;
    for refused in [
        ExecutionState::Running,
        ExecutionState::Scheduled,
        ExecutionState::Created,
    ] {
        let actions = jm.on_task_state(&tdds[0].attempt_id, refused, None, &mut slots, 20);
        assert!(actions.is_empty(), "{refused}: {actions:?}");
        assert_eq!(state(&jm), ExecutionState::Running, "after a {refused} report");
    }
    report_all(&mut jm, &tdds, ExecutionState::Finished, &mut slots);
    assert_eq!(jm.status, JobStatus::Finished);
}

#[test]
fn waiting_for_slots_fails_after_the_timeout_with_the_numbers() {
    let mut slots = cluster(1, 2);
    let mut jm = job(3, RestartStrategyConfig::NoRestart);
    assert!(jm.start(&mut slots, 0).is_empty());
    assert!(jm.tick(&mut slots, 500).is_empty());
    assert_eq!(jm.status, JobStatus::Running);
    jm.tick(&mut slots, 1000);
    assert_eq!(jm.status, JobStatus::Failed);
    let e = &jm.exceptions[0];
    assert!(
        e.stacktrace
            .contains("Recovery is suppressed by NoRestartBackoffTimeStrategy"),
        "{}",
        e.stacktrace
    );
    assert!(
        e.stacktrace.contains("the job needs 3 slots, 2 of 2 are available"),
        "{}",
        e.stacktrace
    );
}

#[test]
fn a_task_failure_without_restarts_fails_the_job_and_cancels_the_others() {
    let mut slots = cluster(2, 1);
    let mut jm = job(2, RestartStrategyConfig::NoRestart);
    let tdds = deployments(&jm.start(&mut slots, 0));
    report_all(&mut jm, &tdds, ExecutionState::Running, &mut slots);
    let actions = jm.on_task_state(
        &tdds[0].attempt_id,
        ExecutionState::Failed,
        Some(("E".into(), "boom".into())),
        &mut slots,
        20,
    );
    assert_eq!(jm.status, JobStatus::Failed);
    assert_eq!(actions.iter().filter(|a| matches!(a, Action::Cancel { .. })).count(), 3);
    let e = &jm.exceptions[0];
    assert!(e
        .stacktrace
        .starts_with("weir.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy"));
    assert!(e.stacktrace.contains("Caused by: E: boom"));
    assert!(
        e.task_name.as_deref().unwrap_or("").contains("(1/2)")
            || e.task_name.as_deref().unwrap_or("").contains("(2/2)")
    );
    assert_eq!(slots.free_slots(), 2);
}

#[test]
fn fixed_delay_restarts_with_new_attempts_after_the_delay() {
    let mut slots = cluster(2, 1);
    let mut jm = job(
        2,
        RestartStrategyConfig::FixedDelay {
            max_attempts: 1,
            delay_ms: 1000,
        },
    );
    let first = deployments(&jm.start(&mut slots, 0));
    report_all(&mut jm, &first, ExecutionState::Running, &mut slots);
    jm.on_task_state(&first[0].attempt_id, ExecutionState::Failed, None, &mut slots, 100);
    assert_eq!(jm.status, JobStatus::Restarting);
    assert!(jm.tick(&mut slots, 500).is_empty());
    let second = deployments(&jm.tick(&mut slots, 1100));
    assert_eq!(jm.status, JobStatus::Running);
    assert_eq!(second.len(), 4);
    assert!(second.iter().all(|t| t.attempt_number == 1));
    assert!(second
        .iter()
        .all(|t| t.outputs.iter().all(|o| o.partition.as_ref().unwrap().attempt == 1)));
    // Reports of the old attempts are ignored.
    assert!(jm
        .on_task_state(&first[1].attempt_id, ExecutionState::Failed, None, &mut slots, 1200)
        .is_empty());
    // The second failure exhausts the one allowed restart.
    jm.on_task_state(&second[0].attempt_id, ExecutionState::Failed, None, &mut slots, 1300);
    assert_eq!(jm.status, JobStatus::Failed);
    assert_eq!(jm.exceptions.len(), 2);
}

#[test]
fn a_lost_taskmanager_fails_the_tasks_it_ran() {
    let mut slots = cluster(2, 1);
    let mut jm = job(2, RestartStrategyConfig::NoRestart);
    let tdds = deployments(&jm.start(&mut slots, 0));
    report_all(&mut jm, &tdds, ExecutionState::Running, &mut slots);
    jm.on_taskmanager_lost("tm1", "heartbeat timed out", &mut slots, 50);
    assert_eq!(jm.status, JobStatus::Failed);
    assert!(jm.exceptions[0]
        .stacktrace
        .contains("TaskManager tm1 is lost: heartbeat timed out"));
    assert!(jm.on_taskmanager_lost("tm0", "x", &mut slots, 60).is_empty());
}

#[test]
fn cancel_cancels_running_attempts_and_is_terminal() {
    let mut slots = cluster(1, 2);
    let mut jm = job(2, RestartStrategyConfig::NoRestart);
    let tdds = deployments(&jm.start(&mut slots, 0));
    report_all(&mut jm, &tdds, ExecutionState::Running, &mut slots);
    let actions = jm.cancel(&mut slots, 30);
    assert_eq!(jm.status, JobStatus::Canceled);
    assert_eq!(actions.iter().filter(|a| matches!(a, Action::Cancel { .. })).count(), 4);
    assert!(jm.cancel(&mut slots, 40).is_empty());
}
