//! Releasing blocking partitions during a batch job, without threads: which
//! TaskManager is told to release which partitions after which stage finished, and how
//! a failover reruns the producers of partitions that are gone.

use super::super::test_support::{cluster, deployments};
use super::super::tests::{job_graph_in, job_master, node};
use super::tests::run_to;
use super::*;
use crate::failover::restart_strategy::RestartStrategyConfig;
use weir_config::FailoverStrategy;
use weir_core::ids::JobId;
use weir_core::RuntimeExecutionMode;
use weir_graph::{ExecutionConfig, Partitioner, StreamEdge, StreamGraph};
use weir_rpc::TaskDeploymentDescriptor;

fn restart_three_times() -> RestartStrategyConfig {
    RestartStrategyConfig::FixedDelay {
        max_attempts: 3,
        delay_ms: 0,
    }
}

/// Job 9 over `job_graph` in BATCH, with region failover.
fn batch_job(job_graph: JobGraph, restart: RestartStrategyConfig) -> JobMaster {
    let mut jm = job_master(job_graph, restart);
    jm.set_failover_strategy(FailoverStrategy::Region);
    jm
}

/// source --hash--> aggregate --hash--> sink, each of parallelism 1: three stages.
fn three_stages(restart: RestartStrategyConfig) -> JobMaster {
    let edge = |source, target| StreamEdge {
        source,
        target,
        partitioner: Partitioner::Hash,
        input: 0,
    };
    let g = StreamGraph {
        job_name: "j".into(),
        config: ExecutionConfig {
            runtime_mode: RuntimeExecutionMode::Batch,
            ..ExecutionConfig::default()
        },
        nodes: vec![node(0, 1), node(1, 1), node(2, 1)],
        edges: vec![edge(0, 1), edge(1, 2)],
    };
    batch_job(JobGraph::from_stream_graph(&g).unwrap(), restart)
}

/// The partition of `edge` written by subtask 0 of its producer in `generation`.
fn partition(edge: u32, generation: u32) -> ResultPartitionId {
    ResultPartitionId {
        job_id: JobId(9).to_string(),
        job_edge: edge,
        producer_subtask: 0,
        attempt: generation,
    }
}

/// The `ReleasePartitions` actions among `actions`: (TaskManager, partitions).
fn released(actions: &[Action]) -> Vec<(String, Vec<ResultPartitionId>)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::ReleasePartitions {
                rpc_address,
                job_id,
                partitions,
            } => {
                assert_eq!(*job_id, JobId(9).to_string());
                Some((rpc_address.clone(), partitions.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The RPC address of the TaskManager `tdd` was deployed to.
fn rpc_of(jm: &JobMaster, tdd: &TaskDeploymentDescriptor) -> String {
    let tm = jm.attempt_location(&tdd.attempt_id).unwrap().resource_id.clone();
    format!("rpc{}", tm.trim_start_matches("tm"))
}

#[test]
fn each_stages_partitions_are_released_where_they_live_once_the_next_stage_finished() {
    let mut slots = cluster(2, 1);
    let mut jm = three_stages(RestartStrategyConfig::NoRestart);
    let source = deployments(&jm.start(&mut slots, 0));
    let source_tm = rpc_of(&jm, &source[0]);
    let after_source = run_to(&mut jm, &source[0], ExecutionState::Finished, &mut slots);
    assert!(released(&after_source).is_empty(), "the aggregate has not read it yet");
    let aggregate = deployments(&after_source);
    let aggregate_tm = rpc_of(&jm, &aggregate[0]);
    let after_aggregate = run_to(&mut jm, &aggregate[0], ExecutionState::Finished, &mut slots);
    assert_eq!(
        released(&after_aggregate),
        vec![(source_tm, vec![partition(0, source[0].generation)])],
        "its only consumer finished while the job runs on"
    );
    assert_eq!(jm.status, JobStatus::Running);
    let sink = deployments(&after_aggregate);
    assert_eq!(sink.len(), 1);
    let last = run_to(&mut jm, &sink[0], ExecutionState::Finished, &mut slots);
    assert_eq!(
        released(&last),
        vec![(aggregate_tm, vec![partition(1, aggregate[0].generation)])]
    );
    assert_eq!(jm.status, JobStatus::Finished);
    assert!(matches!(last.last(), Some(Action::ReleaseJob { .. })), "{last:?}");
}

#[test]
fn with_release_during_execution_off_the_partitions_go_only_with_the_job() {
    let mut slots = cluster(2, 1);
    let mut jm = three_stages(RestartStrategyConfig::NoRestart);
    jm.set_partition_release_during_job_execution(false);
    let source = deployments(&jm.start(&mut slots, 0));
    let after_source = run_to(&mut jm, &source[0], ExecutionState::Finished, &mut slots);
    let aggregate = deployments(&after_source);
    let after_aggregate = run_to(&mut jm, &aggregate[0], ExecutionState::Finished, &mut slots);
    assert!(released(&after_aggregate).is_empty(), "{after_aggregate:?}");
    let sink = deployments(&after_aggregate);
    let last = run_to(&mut jm, &sink[0], ExecutionState::Finished, &mut slots);
    assert!(released(&last).is_empty(), "{last:?}");
    assert_eq!(jm.status, JobStatus::Finished);
    assert!(matches!(last.last(), Some(Action::ReleaseJob { .. })), "{last:?}");
}

#[test]
fn an_all_to_all_partition_waits_for_every_consumer_and_a_failed_one_keeps_it() {
    let mut slots = cluster(1, 4);
    let mut jm = batch_job(
        job_graph_in(RuntimeExecutionMode::Batch, 2),
        RestartStrategyConfig::FixedDelay {
            max_attempts: 1,
            delay_ms: 100,
        },
    );
    let sources = deployments(&jm.start(&mut slots, 0));
    run_to(&mut jm, &sources[0], ExecutionState::Finished, &mut slots);
    let aggregates = deployments(&run_to(&mut jm, &sources[1], ExecutionState::Finished, &mut slots));
    assert_eq!(aggregates.len(), 2);
    assert!(released(&run_to(&mut jm, &aggregates[0], ExecutionState::Finished, &mut slots)).is_empty());
    // The other aggregate fails: it will read both source partitions again.
    assert!(released(&run_to(&mut jm, &aggregates[1], ExecutionState::Failed, &mut slots)).is_empty());
    let again = deployments(&jm.tick(&mut slots, 150));
    assert_eq!(again.len(), 1);
    assert_eq!((again[0].vertex_index, again[0].attempt_number), (1, 1));
    let last = run_to(&mut jm, &again[0], ExecutionState::Finished, &mut slots);
    let both = vec![partition(0, sources[0].generation), {
        let mut p = partition(0, sources[1].generation);
        p.producer_subtask = 1;
        p
    }];
    assert_eq!(released(&last), vec![("rpc0".to_string(), both)]);
}

#[test]
fn a_consumer_that_finds_its_input_partition_missing_reruns_its_producer_first() {
    let mut slots = cluster(2, 1);
    let mut jm = batch_job(job_graph_in(RuntimeExecutionMode::Batch, 2), restart_three_times());
    let sources = deployments(&jm.start(&mut slots, 0));
    run_to(&mut jm, &sources[0], ExecutionState::Finished, &mut slots);
    let aggregates = deployments(&run_to(&mut jm, &sources[1], ExecutionState::Finished, &mut slots));
    assert_eq!(aggregates.len(), 2);
    // A partition of an older run of the producer is not a reason to rerun it.
    let mut stale = partition(0, sources[0].generation);
    stale.attempt += 7;
    jm.record_missing_partition(&aggregates[0].attempt_id, &stale);
    jm.record_missing_partition(&aggregates[0].attempt_id, &partition(0, sources[0].generation));
    jm.on_task_state(&aggregates[0].attempt_id, ExecutionState::Running, None, &mut slots, 25);
    let failover = jm.on_task_state(
        &aggregates[0].attempt_id,
        ExecutionState::Failed,
        Some((
            "weir.runtime.io.network.partition.PartitionNotFoundException".into(),
            "result partition … is gone".into(),
        )),
        &mut slots,
        30,
    );
    assert_eq!(jm.status, JobStatus::Running, "a region failover");
    let cancelled: Vec<&str> = failover
        .iter()
        .filter_map(|a| match a {
            Action::Cancel { attempt_id, .. } => Some(attempt_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        cancelled,
        vec![aggregates[1].attempt_id.as_str()],
        "the other consumer of the source that reruns is cancelled"
    );
    let rerun = deployments(&jm.tick(&mut slots, 40));
    let at: Vec<(u32, u32, u32)> = rerun
        .iter()
        .map(|t| (t.vertex_index, t.subtask_index, t.attempt_number))
        .collect();
    assert_eq!(at, vec![(0, 0, 1)], "source 0 runs again, before its consumer");
    let consumer = deployments(&run_to(&mut jm, &rerun[0], ExecutionState::Finished, &mut slots));
    let at: Vec<(u32, u32, u32)> = consumer
        .iter()
        .map(|t| (t.vertex_index, t.subtask_index, t.attempt_number))
        .collect();
    assert_eq!(
        at,
        vec![(1, 0, 1), (1, 1, 1)],
        "both consumers of the rerun source run again, the failed one and the one still running"
    );
    for c in &consumer {
        let generations: Vec<u32> = c
            .inputs
            .iter()
            .filter_map(|i| i.partition.as_ref().map(|p| p.attempt))
            .collect();
        assert_eq!(
            generations,
            vec![rerun[0].generation, sources[1].generation],
            "it reads the new partition of source 0 and the kept one of source 1"
        );
    }
    assert!(jm.exceptions[0].stacktrace.contains("PartitionNotFoundException"));
}

#[test]
fn a_finished_stage_reset_after_its_inputs_were_released_reruns_their_producer_too() {
    let mut slots = cluster(3, 1);
    let mut jm = three_stages(restart_three_times());
    let source = deployments(&jm.start(&mut slots, 0));
    let aggregate = deployments(&run_to(&mut jm, &source[0], ExecutionState::Finished, &mut slots));
    let after_aggregate = run_to(&mut jm, &aggregate[0], ExecutionState::Finished, &mut slots);
    assert_eq!(
        released(&after_aggregate).len(),
        1,
        "the source's partition is released"
    );
    let sink = deployments(&after_aggregate);
    jm.on_task_state(&sink[0].attempt_id, ExecutionState::Running, None, &mut slots, 30);
    // The aggregate's results are lost with its TaskManager while the sink reads them.
    let lost = jm
        .attempt_location(&aggregate[0].attempt_id)
        .unwrap()
        .resource_id
        .clone();
    jm.on_taskmanager_lost(&lost, "killed", &mut slots, 40);
    slots.remove(&lost);
    let rerun = deployments(&jm.tick(&mut slots, 50));
    let at: Vec<(u32, u32)> = rerun.iter().map(|t| (t.vertex_index, t.attempt_number)).collect();
    assert_eq!(
        at,
        vec![(0, 1)],
        "the aggregate needs the released source partition again"
    );
    let aggregate_again = deployments(&run_to(&mut jm, &rerun[0], ExecutionState::Finished, &mut slots));
    assert_eq!(aggregate_again[0].attempt_number, 1);
    let after = run_to(&mut jm, &aggregate_again[0], ExecutionState::Finished, &mut slots);
    assert_eq!(
        released(&after).iter().flat_map(|(_, p)| p.clone()).collect::<Vec<_>>(),
        vec![partition(0, rerun[0].generation)]
    );
    let sink_again = deployments(&after);
    assert_eq!((sink_again[0].vertex_index, sink_again[0].attempt_number), (2, 1));
}
