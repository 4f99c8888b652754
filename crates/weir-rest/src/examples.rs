//! Test support: one realistic value of each response type, shaped like the Flink
//! samples they are compared with (lists non-empty where the sample's are, maps empty
//! where the sample's are).

use crate::messages::checkpoints::{
    CheckpointCounts, CheckpointDetails, CheckpointOutcome, CheckpointStatistics, CheckpointStatus, CheckpointSummary,
    CheckpointType, CheckpointingStatistics, LatestCheckpoints, TaskCheckpointStatistics,
};
use crate::messages::config::{ConfigEntry, DashboardConfig, ExecutionConfigInfo, JobConfig};
use crate::messages::exceptions::{ExceptionHistory, ExceptionInfo, JobExceptions, RootExceptionInfo};
use crate::messages::jobs::{
    JobDetail, JobOverview, JobPlan, JobType, JobsOverview, PlanInput, PlanNode, SchedulerType, VertexDetail,
    VertexMetrics,
};
use crate::messages::overview::Overview;
use crate::messages::status::{ExecutionState, ExecutionStateCounts, JobStatus, JobStatusTimestamps, JobTaskCounts};
use crate::messages::taskmanagers::{
    AllocatedSlot, GarbageCollectorInfo, HardwareDescription, MemoryConfiguration, ResourceProfileInfo,
    TaskManagerDetail, TaskManagerInfo, TaskManagerMetrics,
};
use std::collections::BTreeMap;
use weir_core::ids::JobId;

/// The job every example is about.
pub(crate) const JID: JobId = JobId(0xca04_c947_811b_49b7_a549_6fe7_6489_3d4c);

/// The TaskManager every example is about.
pub(crate) const TM_ID: &str = "127.0.0.1:35885-1605f8";

const SOURCE_VERTEX: &str = "cbc357ccb763df2852fee8c4fc7d55f2";
const SINK_VERTEX: &str = "c27dcf7b54ef6bfd6cff02ca8870b681";

pub(crate) fn overview() -> Overview {
    Overview {
        taskmanagers: 1,
        slots_total: 2,
        slots_available: 0,
        jobs_running: 1,
        jobs_finished: 0,
        jobs_cancelled: 0,
        jobs_failed: 0,
        flink_version: crate::FLINK_API_VERSION.to_string(),
        flink_commit: "weir".to_string(),
        slots_free_and_blocked: 0,
        taskmanagers_blocked: 0,
    }
}

pub(crate) fn dashboard_config() -> DashboardConfig {
    DashboardConfig::weir_default()
}

pub(crate) fn jobmanager_config() -> Vec<ConfigEntry> {
    vec![
        ConfigEntry::new("rest.port", "8081"),
        ConfigEntry::new("taskmanager.numberOfTaskSlots", "2"),
    ]
}

pub(crate) fn job_config() -> JobConfig {
    JobConfig {
        jid: JID,
        name: "keyed-sum".to_string(),
        execution_config: ExecutionConfigInfo {
            restart_strategy: "Cluster level default restart strategy".to_string(),
            job_parallelism: 2,
            object_reuse_mode: false,
            user_config: BTreeMap::new(),
        },
    }
}

fn running_counts(n: u32) -> ExecutionStateCounts {
    let mut c = ExecutionStateCounts::new();
    c.set(ExecutionState::Running, n);
    c
}

pub(crate) fn jobs_overview() -> JobsOverview {
    JobsOverview {
        jobs: vec![JobOverview {
            jid: JID,
            name: "keyed-sum".to_string(),
            job_type: JobType::Streaming,
            scheduler_type: SchedulerType::Default,
            start_time: 1_795_941_218_217,
            end_time: -1,
            duration: 7825,
            state: JobStatus::Running,
            last_modification: 1_795_941_221_060,
            tasks: JobTaskCounts::from_counts(running_counts(4)),
            pending_operators: 0,
        }],
    }
}

pub(crate) fn job_plan() -> JobPlan {
    JobPlan {
        jid: JID,
        name: "keyed-sum".to_string(),
        job_type: JobType::Streaming,
        nodes: vec![
            PlanNode {
                id: SINK_VERTEX.to_string(),
                operator: String::new(),
                parallelism: 2,
                operator_strategy: String::new(),
                description: "Sum<br/>+- Sink: Print to Std. Out<br/>".to_string(),
                optimizer_properties: BTreeMap::new(),
                inputs: vec![PlanInput {
                    id: SOURCE_VERTEX.to_string(),
                    num: 0,
                    exchange: "pipelined_bounded".to_string(),
                    ship_strategy: "HASH".to_string(),
                }],
            },
            PlanNode {
                id: SOURCE_VERTEX.to_string(),
                operator: String::new(),
                parallelism: 2,
                operator_strategy: String::new(),
                description: "Source: Generator<br/>".to_string(),
                optimizer_properties: BTreeMap::new(),
                inputs: Vec::new(),
            },
        ],
    }
}

pub(crate) fn job_detail() -> JobDetail {
    let mut timestamps = JobStatusTimestamps::new();
    timestamps.set(JobStatus::Initializing, 1_795_941_218_217);
    timestamps.set(JobStatus::Created, 1_795_941_219_082);
    timestamps.set(JobStatus::Running, 1_795_941_219_243);
    let vertex = |id: &str, name: &str, busy: f64| VertexDetail {
        id: id.to_string(),
        slot_sharing_group_id: "d1dd90ba19cbb2cd532084f21fd9de56".to_string(),
        name: name.to_string(),
        max_parallelism: 128,
        parallelism: 2,
        status: ExecutionState::Running,
        start_time: 1_795_941_219_533,
        end_time: -1,
        duration: 6537,
        tasks: running_counts(2),
        metrics: VertexMetrics {
            accumulated_busy_time: busy,
            ..VertexMetrics::default()
        },
    };
    JobDetail {
        jid: JID,
        application_id: JID,
        name: "keyed-sum".to_string(),
        is_stoppable: false,
        state: JobStatus::Running,
        job_type: JobType::Streaming,
        scheduler_type: SchedulerType::Default,
        start_time: 1_795_941_218_217,
        end_time: -1,
        duration: 7853,
        max_parallelism: -1,
        now: 1_795_941_226_070,
        timestamps,
        vertices: vec![
            vertex(SOURCE_VERTEX, "Source: Generator", f64::NAN),
            vertex(SINK_VERTEX, "Sum -> Sink: Print to Std. Out", 35.0),
        ],
        status_counts: running_counts(4),
        plan: job_plan(),
        pending_operators: 0,
    }
}

pub(crate) fn job_exceptions() -> JobExceptions {
    JobExceptions {
        exception_history: ExceptionHistory {
            entries: vec![RootExceptionInfo {
                exception: ExceptionInfo {
                    exception_name: "weir::JobException".to_string(),
                    stacktrace: "Recovery is suppressed by the restart strategy".to_string(),
                    timestamp: 1_795_941_257_081,
                    failure_labels: BTreeMap::new(),
                    task_name: None,
                    endpoint: None,
                    task_manager_id: None,
                },
                concurrent_exceptions: vec![ExceptionInfo {
                    exception_name: "weir::UserFunctionError".to_string(),
                    stacktrace: "bad input".to_string(),
                    timestamp: 1_795_941_257_012,
                    failure_labels: BTreeMap::new(),
                    task_name: Some("Source: Generator (2/2) - execution #0".to_string()),
                    endpoint: Some("localhost:37831".to_string()),
                    task_manager_id: Some(TM_ID.to_string()),
                }],
            }],
            truncated: false,
        },
    }
}

fn resource(cpu: f64, scale: i64) -> ResourceProfileInfo {
    ResourceProfileInfo {
        cpu_cores: cpu,
        task_heap_memory: 191 * scale,
        task_off_heap_memory: 0,
        managed_memory: 256 * scale,
        network_memory: 64 * scale,
        extended_resources: BTreeMap::new(),
    }
}

pub(crate) fn taskmanager_info() -> TaskManagerInfo {
    TaskManagerInfo {
        id: TM_ID.to_string(),
        path: "weir://127.0.0.1:35885/taskmanager_0".to_string(),
        data_port: 37831,
        jmx_port: -1,
        time_since_last_heartbeat: 1_795_941_221_028,
        slots_number: 2,
        free_slots: 0,
        assigned_tasks: 4,
        total_resource: resource(2.0, 2),
        free_resource: resource(0.0, 0),
        hardware: HardwareDescription {
            cpu_cores: 2,
            physical_memory: 25_276_510_208,
            free_memory: 536_870_912,
            managed_memory: 536_870_920,
        },
        memory_configuration: MemoryConfiguration {
            framework_heap: 134_217_728,
            task_heap: 402_653_174,
            framework_off_heap: 134_217_728,
            task_off_heap: 0,
            network_memory: 134_217_730,
            managed_memory: 536_870_920,
            jvm_metaspace: 268_435_456,
            jvm_overhead: 201_326_592,
            total_flink_memory: 1_342_177_280,
            total_process_memory: 1_811_939_328,
        },
        blocked: false,
    }
}

pub(crate) fn taskmanager_detail() -> TaskManagerDetail {
    let slot = AllocatedSlot {
        job_id: JID,
        resource: resource(1.0, 1),
        assigned_tasks: 2,
    };
    TaskManagerDetail {
        info: taskmanager_info(),
        allocated_slots: vec![slot.clone(), slot],
        metrics: TaskManagerMetrics {
            netty_shuffle_memory_segments_total: 4096,
            garbage_collectors: vec![GarbageCollectorInfo {
                name: "All".to_string(),
                count: 0,
                time: 0,
            }],
            ..TaskManagerMetrics::default()
        },
    }
}

/// A completed checkpoint of the example job as `history` lists it (no `tasks`).
pub(crate) fn completed_checkpoint(
    id: u64,
    trigger: i64,
    ack: i64,
    size: i64,
    processed: i64,
    discarded: bool,
) -> CheckpointStatistics {
    CheckpointStatistics {
        id,
        is_savepoint: false,
        savepoint_format: None,
        trigger_timestamp: trigger,
        latest_ack_timestamp: ack,
        checkpointed_size: size,
        state_size: size,
        end_to_end_duration: ack - trigger,
        alignment_buffered: 0,
        processed_data: processed,
        persisted_data: 0,
        num_subtasks: 4,
        num_acknowledged_subtasks: 4,
        checkpoint_type: CheckpointType::Checkpoint,
        tasks: BTreeMap::new(),
        outcome: CheckpointOutcome::Completed {
            external_path: Some("<checkpoint-not-externally-addressable>".to_string()),
            discarded,
        },
    }
}

/// A checkpoint declined by the tasks, as in `job_checkpoints_finished.json`.
pub(crate) fn failed_checkpoint(id: u64, trigger: i64) -> CheckpointStatistics {
    CheckpointStatistics {
        latest_ack_timestamp: -1,
        checkpointed_size: 0,
        state_size: 0,
        end_to_end_duration: 99,
        processed_data: 0,
        num_acknowledged_subtasks: 0,
        outcome: CheckpointOutcome::Failed {
            failure_timestamp: trigger + 99,
            failure_message: Some("Checkpoint was declined (tasks not ready)".to_string()),
        },
        ..completed_checkpoint(id, trigger, trigger, 0, 0, false)
    }
}

/// The statistics of `job_checkpoints_running.json`: three completed checkpoints.
pub(crate) fn job_checkpoints_running() -> CheckpointingStatistics {
    let history = vec![
        completed_checkpoint(3, 1_795_941_225_062, 1_795_941_225_411, 8_441_702, 7126, false),
        completed_checkpoint(2, 1_795_941_223_242, 1_795_941_223_930, 8_865_702, 219_675, true),
        completed_checkpoint(1, 1_795_941_221_061, 1_795_941_222_864, 9_727_194, 0, true),
    ];
    CheckpointingStatistics {
        counts: CheckpointCounts {
            restored: 0,
            total: 4,
            in_progress: 0,
            completed: 3,
            failed: 1,
        },
        summary: CheckpointSummary::of_completed(&history),
        latest: LatestCheckpoints {
            completed: Some(history[0].clone()),
            ..LatestCheckpoints::default()
        },
        history,
    }
}

/// The details of checkpoint 3 of the running example, per vertex.
pub(crate) fn checkpoint_details() -> CheckpointDetails {
    let task = |ack: i64, size: i64, duration: i64, processed: i64| TaskCheckpointStatistics {
        id: 3,
        status: CheckpointStatus::Completed,
        latest_ack_timestamp: ack,
        checkpointed_size: size,
        state_size: size,
        end_to_end_duration: duration,
        alignment_buffered: 0,
        processed_data: processed,
        persisted_data: 0,
        num_subtasks: 2,
        num_acknowledged_subtasks: 2,
    };
    let mut details = completed_checkpoint(3, 1_795_941_225_062, 1_795_941_225_411, 8_441_702, 7126, false);
    details.tasks = BTreeMap::from([
        (SINK_VERTEX.to_string(), task(1_795_941_225_201, 441_300, 139, 7126)),
        (SOURCE_VERTEX.to_string(), task(1_795_941_225_411, 8_000_402, 349, 0)),
    ]);
    details
}
