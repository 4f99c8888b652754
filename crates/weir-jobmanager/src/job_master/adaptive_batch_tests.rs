//! The adaptive batch scheduler's decisions in the JobMaster, without threads: the
//! aggregate of a two-stage batch job is decided from the bytes its sources reported,
//! and deployments carry the wiring by key groups.

use super::super::test_support::{cluster, deployments};
use super::super::tests::job_graph_in;
use super::*;
use crate::failover::restart_strategy::RestartStrategyConfig;
use crate::resource_manager::slot_table::SlotTable;
use weir_api::program::ProgramInvocation;
use weir_core::ids::JobId;
use weir_core::JobStatus;
use weir_core::RuntimeExecutionMode;
use weir_rpc::{TaskDeploymentDescriptor, VertexParallelism};

fn finish(jm: &mut JobMaster, tdd: &TaskDeploymentDescriptor, slots: &mut SlotTable) -> Vec<TaskDeploymentDescriptor> {
    jm.on_task_state(&tdd.attempt_id, ExecutionState::Running, None, slots, 10);
    deployments(&jm.on_task_state(&tdd.attempt_id, ExecutionState::Finished, None, slots, 20))
}

#[test]
fn the_aggregate_is_decided_from_the_bytes_its_sources_reported_and_reads_its_key_groups() {
    let mut jg = job_graph_in(RuntimeExecutionMode::Batch, 2);
    let options = AdaptiveParallelismOptions {
        min_parallelism: 1,
        max_parallelism: 8,
        avg_data_volume_per_task: 100,
        default_source_parallelism: 2,
    };
    let adaptive = prepare_job_graph(&mut jg, &options);
    assert_eq!((jg.vertices[1].parallelism, jg.vertices[1].max_parallelism), (0, 8));
    let mut jm = JobMaster::new(
        JobId(9),
        ProgramInvocation::new("p"),
        "f".into(),
        jg,
        RestartStrategyConfig::NoRestart.create(1).unwrap(),
        1000,
        0,
    );
    jm.enable_adaptive_batch(adaptive);
    let mut slots = cluster(1, 2);
    let sources = deployments(&jm.start(&mut slots, 0));
    assert_eq!(sources.len(), 2, "only the sources: the aggregate is not decided");
    assert!(
        sources.iter().all(|t| t.outputs[0].num_subpartitions == 8),
        "one per key group"
    );
    assert_eq!(
        sources[0].vertex_parallelism[1],
        VertexParallelism {
            vertex_index: 1,
            parallelism: 0,
            max_parallelism: 8
        }
    );

    // 2 × 200 bytes at 100 bytes per task: parallelism 4.
    jm.record_result_bytes(&sources[0].attempt_id, vec![(0, vec![25; 8])]);
    jm.record_result_bytes(&sources[1].attempt_id, vec![(0, vec![25; 8])]);
    assert!(finish(&mut jm, &sources[0], &mut slots).is_empty());
    assert_eq!(
        jm.status,
        JobStatus::Running,
        "the undecided aggregate still has to run"
    );
    let mut aggregates = finish(&mut jm, &sources[1], &mut slots);
    assert_eq!(jm.job_graph.vertices[1].parallelism, 4);
    assert_eq!(jm.execution_graph.job_vertices[1].task_vertices.len(), 4);
    assert_eq!(aggregates.len(), 2, "two slots");
    // Subtask 1 of 4 owns key groups 2..=3 of 8: those subpartitions of both sources.
    let read: Vec<(u32, u32)> = aggregates[1]
        .inputs
        .iter()
        .map(|i| (i.partition.as_ref().unwrap().producer_subtask, i.subpartition))
        .collect();
    assert_eq!(read, vec![(0, 2), (0, 3), (1, 2), (1, 3)]);
    assert_eq!(aggregates[1].vertex_parallelism[1].parallelism, 4);

    let mut finished = 0;
    while let Some(tdd) = aggregates.pop() {
        aggregates.extend(finish(&mut jm, &tdd, &mut slots));
        finished += 1;
    }
    assert_eq!(finished, 4);
    assert_eq!(jm.status, JobStatus::Finished);
}
