//! Stage-by-stage scheduling decisions, without threads: regions deploy as their
//! blocking inputs finish, slots come back as stages end, failover reruns one stage.

use super::super::test_support::{cluster, deployments};
use super::super::tests::job_in;
use super::*;
use crate::failover::restart_strategy::RestartStrategyConfig;
use weir_config::FailoverStrategy;
use weir_core::RuntimeExecutionMode;
use weir_rpc::TaskDeploymentDescriptor;

/// source (p) --hash--> aggregate (p) in `mode`, with region failover.
fn two_stage_job(mode: RuntimeExecutionMode, p: u32, restart: RestartStrategyConfig) -> JobMaster {
    let mut jm = job_in(mode, p, restart);
    jm.set_failover_strategy(FailoverStrategy::Region);
    jm
}

fn at(tdds: &[TaskDeploymentDescriptor]) -> Vec<(u32, u32, u32)> {
    tdds.iter()
        .map(|t| (t.vertex_index, t.subtask_index, t.attempt_number))
        .collect()
}

/// Reports RUNNING then `end` for `tdd`; returns the resulting actions.
pub(super) fn run_to(
    jm: &mut JobMaster,
    tdd: &TaskDeploymentDescriptor,
    end: ExecutionState,
    slots: &mut SlotTable,
) -> Vec<Action> {
    jm.on_task_state(&tdd.attempt_id, ExecutionState::Running, None, slots, 10);
    jm.on_task_state(&tdd.attempt_id, end, None, slots, 20)
}

#[test]
fn a_batch_job_runs_stage_by_stage_on_a_single_slot_and_its_outputs_are_blocking() {
    let mut slots = cluster(1, 1);
    let mut jm = two_stage_job(RuntimeExecutionMode::Batch, 2, RestartStrategyConfig::NoRestart);
    assert!(jm.is_scheduled_stage_by_stage());
    let first = deployments(&jm.start(&mut slots, 0));
    assert_eq!(at(&first), vec![(0, 0, 0)], "one slot: one source subtask");
    assert_eq!(
        first[0].outputs[0].partition_type(),
        weir_rpc::ResultPartitionType::Blocking
    );
    assert_eq!(slots.free_slots(), 0);
    let second = deployments(&run_to(&mut jm, &first[0], ExecutionState::Finished, &mut slots));
    assert_eq!(at(&second), vec![(0, 1, 0)], "the finished source gave its slot back");
    let third = deployments(&run_to(&mut jm, &second[0], ExecutionState::Finished, &mut slots));
    assert_eq!(
        at(&third),
        vec![(1, 0, 0)],
        "the aggregate starts once every source finished"
    );
    // It reads both sources' partitions, kept on the TaskManager they ran on.
    let producers: Vec<u32> = third[0]
        .inputs
        .iter()
        .filter_map(|i| i.partition.as_ref().map(|p| p.producer_subtask))
        .collect();
    assert_eq!(producers, vec![0, 1]);
    assert!(third[0].inputs.iter().all(|i| i.local));
    let fourth = deployments(&run_to(&mut jm, &third[0], ExecutionState::Finished, &mut slots));
    assert_eq!(at(&fourth), vec![(1, 1, 0)]);
    let last = run_to(&mut jm, &fourth[0], ExecutionState::Finished, &mut slots);
    assert_eq!(jm.status, JobStatus::Finished);
    // Its TaskManager holds no slot of it any more, but still its partitions.
    assert!(
        last.iter()
            .any(|a| matches!(a, Action::ReleaseJob { rpc_addresses, .. } if *rpc_addresses == ["rpc0"])),
        "{last:?}"
    );
    assert_eq!(slots.free_slots(), 1);
}

#[test]
fn a_streaming_job_of_the_same_shape_waits_for_all_its_slots_then_fails() {
    let mut slots = cluster(1, 1);
    let mut jm = two_stage_job(RuntimeExecutionMode::Streaming, 2, RestartStrategyConfig::NoRestart);
    assert!(!jm.is_scheduled_stage_by_stage());
    assert!(deployments(&jm.start(&mut slots, 0)).is_empty());
    jm.tick(&mut slots, 1000);
    assert_eq!(jm.status, JobStatus::Failed);
    assert!(jm.exceptions[0].stacktrace.contains("NoResourceAvailableException"));
}

#[test]
fn a_failed_second_stage_subtask_reruns_alone_and_the_first_stage_keeps_its_attempts() {
    let mut slots = cluster(2, 1);
    let restart = RestartStrategyConfig::FixedDelay {
        max_attempts: 1,
        delay_ms: 100,
    };
    let mut jm = two_stage_job(RuntimeExecutionMode::Batch, 2, restart);
    let sources = deployments(&jm.start(&mut slots, 0));
    assert_eq!(at(&sources), vec![(0, 0, 0), (0, 1, 0)]);
    run_to(&mut jm, &sources[0], ExecutionState::Finished, &mut slots);
    let aggregates = deployments(&run_to(&mut jm, &sources[1], ExecutionState::Finished, &mut slots));
    assert_eq!(at(&aggregates), vec![(1, 0, 0), (1, 1, 0)]);
    let actions = run_to(&mut jm, &aggregates[0], ExecutionState::Failed, &mut slots);
    assert!(
        !actions.iter().any(|a| matches!(a, Action::Cancel { .. })),
        "nothing else fails over"
    );
    assert_eq!(jm.status, JobStatus::Running);
    assert_eq!(slots.free_slots(), 1, "the failed region gave its slot back");
    assert!(
        deployments(&jm.tick(&mut slots, 50)).is_empty(),
        "the restart delay runs"
    );
    let again = deployments(&jm.tick(&mut slots, 150));
    assert_eq!(at(&again), vec![(1, 0, 1)]);
    // It reads the sources' partitions of their first (and only) generation.
    let generations: Vec<u32> = again[0]
        .inputs
        .iter()
        .filter_map(|i| i.partition.as_ref().map(|p| p.attempt))
        .collect();
    assert_eq!(generations, vec![sources[0].generation, sources[1].generation]);
    run_to(&mut jm, &aggregates[1], ExecutionState::Finished, &mut slots);
    run_to(&mut jm, &again[0], ExecutionState::Finished, &mut slots);
    assert_eq!(jm.status, JobStatus::Finished);
    for s in &sources {
        assert_eq!(
            jm.current_attempt(0, s.subtask_index).map(|a| a.to_string()),
            Some(s.attempt_id.clone())
        );
    }
}

#[test]
fn when_the_taskmanager_holding_finished_results_is_lost_their_producers_run_again() {
    let mut slots = cluster(2, 1);
    let restart = RestartStrategyConfig::FixedDelay {
        max_attempts: 3,
        delay_ms: 0,
    };
    let mut jm = two_stage_job(RuntimeExecutionMode::Batch, 1, restart);
    let source = deployments(&jm.start(&mut slots, 0));
    let aggregate = deployments(&run_to(&mut jm, &source[0], ExecutionState::Finished, &mut slots));
    assert_eq!(at(&aggregate), vec![(1, 0, 0)]);
    jm.on_task_state(&aggregate[0].attempt_id, ExecutionState::Running, None, &mut slots, 30);
    let lost_tm = jm.attempt_location(&source[0].attempt_id).unwrap().resource_id.clone();
    let aggregate_tm = jm
        .attempt_location(&aggregate[0].attempt_id)
        .unwrap()
        .resource_id
        .clone();
    assert_eq!(lost_tm, aggregate_tm, "the freed slot went to the aggregate");
    jm.on_taskmanager_lost(&lost_tm, "killed", &mut slots, 40);
    slots.remove(&lost_tm);
    let rerun = deployments(&jm.tick(&mut slots, 50));
    assert_eq!(at(&rerun), vec![(0, 0, 1)], "the lost source runs again first");
    assert_ne!(jm.attempt_location(&rerun[0].attempt_id).unwrap().resource_id, lost_tm);
    let aggregate_again = deployments(&run_to(&mut jm, &rerun[0], ExecutionState::Finished, &mut slots));
    assert_eq!(at(&aggregate_again), vec![(1, 0, 1)]);
    assert_eq!(
        aggregate_again[0].inputs[0].partition.as_ref().unwrap().attempt,
        rerun[0].generation
    );
}
