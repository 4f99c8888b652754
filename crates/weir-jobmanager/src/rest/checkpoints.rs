//! Translation of a job's checkpoint coordinator into Flink 2.3's checkpoint REST
//! bodies: `GET /jobs/:jid/checkpoints` ([`checkpointing_statistics`]),
//! `GET /jobs/:jid/checkpoints/config` ([`checkpoint_config_info`]) and
//! `GET /jobs/:jid/checkpoints/details/:checkpointid` ([`checkpoint_details`]).
//!
//! Pure functions over [`CheckpointCoordinator`] and [`CheckpointConfig`]; the
//! JobManager's REST backend calls them under its lock.
//!
//! What is measured and what is constant:
//! - real: counts, ids, statuses, snapshot types, trigger/ack/failure timestamps,
//!   end-to-end durations, state sizes (acknowledged by the tasks), subtask counts,
//!   external paths, `discarded`, failure messages, the restore, and every
//!   configuration value Weir reads;
//! - `checkpointed_size` is what a checkpoint stored: the whole state for full
//!   snapshots, the snapshot and the newly uploaded store files for incremental ones
//!   (`state_size` then counts every file the checkpoint refers to);
//! - `persisted_data` is the in-flight data the tasks recorded as input and output
//!   channel state (unaligned checkpoints; 0 for aligned ones); `processed_data` is 0 (Weir does not
//!   measure the bytes processed during alignment), `alignment_buffered` is 0 as in
//!   Flink (deprecated);
//! - `checkpoint_type` is `CHECKPOINT`, `UNALIGNED_CHECKPOINT` (a checkpoint triggered
//!   with unaligned checkpoints enabled, also when it starts aligned with a timeout, as
//!   Flink's `RestAPICheckpointType`), `SAVEPOINT` or `SYNC_SAVEPOINT`; `savepointFormat`
//!   is `CANONICAL` for savepoints (Flink's default), null for checkpoints;
//! - the configuration's `state_backend` is Flink's class name of `state.backend.type`
//!   (`HashMapStateBackend`, `EmbeddedRocksDBStateBackend`), the changelog fields are Flink's defaults (Weir has no changelog) and
//!   `checkpoints_after_tasks_finish` is true.
//!
//! The summary covers every completed checkpoint and savepoint the tracker sampled (not
//! only the history); its percentiles are `NaN` until one completed. The history is
//! newest first and never longer than `web.checkpoints.history`. Details exist only for
//! checkpoints still in the history; others are [`RestError::checkpoint_not_found`].

use std::collections::BTreeMap;

use weir_checkpoint::stats::{CheckpointStats, CheckpointStatus as StatsStatus, StatsSummary as DomainSummary};
use weir_checkpoint::{CheckpointConfig, CheckpointCoordinator, CheckpointStorage, RestoredCheckpointStats};
use weir_config::ExternalizedCheckpointRetention;
use weir_core::{CheckpointingMode, SnapshotType};
use weir_rest::{
    CheckpointConfigInfo, CheckpointCounts, CheckpointDetails, CheckpointOutcome, CheckpointStatistics,
    CheckpointStatus, CheckpointSummary, CheckpointType, CheckpointingProcessingMode, CheckpointingStatistics,
    ExternalizedCheckpointInfo, LatestCheckpoints, RestError, RestoredCheckpointStatistics, StatsSummary,
    TaskCheckpointStatistics, DISABLED_CHECKPOINT_INTERVAL,
};

/// Flink's `external_path` of a completed checkpoint kept in the JobManager's memory.
pub const NOT_EXTERNALLY_ADDRESSABLE: &str = "<checkpoint-not-externally-addressable>";

/// Flink's `savepointFormat` of a savepoint (its default format).
pub const SAVEPOINT_FORMAT: &str = "CANONICAL";

/// The body of `GET /jobs/:jid/checkpoints`: counts, the summary over completed
/// checkpoints, the latest completed/savepoint/failed/restored and the history (newest
/// first, at most `web.checkpoints.history`), all without per-vertex `tasks`.
pub fn checkpointing_statistics(coordinator: &CheckpointCoordinator) -> CheckpointingStatistics {
    let stats = coordinator.stats();
    let c = stats.counts();
    let summary = stats.summary();
    let completed = summary.state_size.count;
    let state_size = stats_summary(&summary.state_size);
    CheckpointingStatistics {
        counts: CheckpointCounts {
            restored: c.restored,
            total: c.total,
            in_progress: c.in_progress,
            completed: c.completed,
            failed: c.failed,
        },
        summary: CheckpointSummary {
            checkpointed_size: stats_summary(&summary.checkpointed_size),
            state_size,
            end_to_end_duration: stats_summary(&summary.end_to_end_duration),
            alignment_buffered: StatsSummary::zero(),
            processed_data: unmeasured_summary(completed),
            persisted_data: stats_summary(&summary.persisted_data),
        },
        latest: LatestCheckpoints {
            completed: stats.latest_completed().map(|e| checkpoint_statistics(e, false)),
            savepoint: stats.latest_savepoint().map(|e| checkpoint_statistics(e, false)),
            failed: stats.latest_failed().map(|e| checkpoint_statistics(e, false)),
            restored: stats.latest_restored().map(restored_statistics),
        },
        history: stats
            .history()
            .take(coordinator.config().history_size as usize)
            .map(|e| checkpoint_statistics(e, false))
            .collect(),
    }
}

/// The body of `GET /jobs/:jid/checkpoints/details/:checkpointid`: the history entry
/// of `checkpoint_id` with its per-vertex `tasks` (keyed by JobVertexId), or
/// [`RestError::checkpoint_not_found`] when it was never triggered or has left the
/// history.
pub fn checkpoint_details(
    coordinator: &CheckpointCoordinator,
    checkpoint_id: u64,
) -> Result<CheckpointDetails, RestError> {
    coordinator
        .stats()
        .checkpoint(checkpoint_id)
        .map(|e| checkpoint_statistics(e, true))
        .ok_or_else(|| RestError::checkpoint_not_found(checkpoint_id))
}

/// The body of `GET /jobs/:jid/checkpoints/config` for a job with a coordinator. Without
/// an interval (no periodic checkpoints) it reports Flink's disabled interval
/// (`Long.MAX_VALUE`) and `at_least_once`, as Flink does, with the other values as
/// configured.
pub fn checkpoint_config_info(config: &CheckpointConfig) -> CheckpointConfigInfo {
    let mode = match (config.interval_ms(), config.mode) {
        (Some(_), CheckpointingMode::ExactlyOnce) => CheckpointingProcessingMode::ExactlyOnce,
        _ => CheckpointingProcessingMode::AtLeastOnce,
    };
    let retention = config.externalized_retention;
    let checkpoint_storage = match CheckpointStorage::from_config(config) {
        CheckpointStorage::JobManager => "JobManagerCheckpointStorage",
        CheckpointStorage::FileSystem { .. } => "FileSystemCheckpointStorage",
    };
    CheckpointConfigInfo {
        mode,
        interval: config.interval_ms().unwrap_or(DISABLED_CHECKPOINT_INTERVAL),
        timeout: config.timeout_ms(),
        min_pause: config.min_pause_ms(),
        max_concurrent: i64::from(config.max_concurrent),
        externalization: ExternalizedCheckpointInfo {
            enabled: retention != ExternalizedCheckpointRetention::NoExternalizedCheckpoints,
            delete_on_cancellation: retention != ExternalizedCheckpointRetention::RetainOnCancellation,
        },
        checkpoint_storage: checkpoint_storage.to_string(),
        state_backend: config.state_backend.class_name().to_string(),
        unaligned_checkpoints: config.unaligned_enabled,
        tolerable_failed_checkpoints: i32::try_from(config.tolerable_failures).unwrap_or(i32::MAX),
        aligned_checkpoint_timeout: i64::try_from(config.aligned_checkpoint_timeout.as_millis()).unwrap_or(i64::MAX),
        ..CheckpointConfigInfo::with_interval(DISABLED_CHECKPOINT_INTERVAL)
    }
}

/// One checkpoint of the statistics as Flink's entry; `with_tasks` fills `tasks` (the
/// details endpoint), otherwise it is empty (history and latest).
pub fn checkpoint_statistics(entry: &CheckpointStats, with_tasks: bool) -> CheckpointStatistics {
    let status = rest_status(entry.status);
    let state_size = to_i64(entry.state_size);
    let tasks = if with_tasks {
        entry
            .vertices
            .iter()
            .map(|v| {
                let task = TaskCheckpointStatistics {
                    id: entry.id,
                    status,
                    latest_ack_timestamp: v.latest_ack_timestamp.unwrap_or(-1),
                    checkpointed_size: to_i64(v.checkpointed_size),
                    state_size: to_i64(v.state_size),
                    end_to_end_duration: to_i64(v.max_end_to_end_duration_ms),
                    alignment_buffered: 0,
                    processed_data: 0,
                    persisted_data: to_i64(v.persisted_data),
                    num_subtasks: v.num_subtasks,
                    num_acknowledged_subtasks: v.num_acknowledged_subtasks,
                };
                (v.vertex_id.to_string(), task)
            })
            .collect()
    } else {
        BTreeMap::new()
    };
    let outcome = match entry.status {
        StatsStatus::InProgress => CheckpointOutcome::InProgress,
        StatsStatus::Completed => CheckpointOutcome::Completed {
            external_path: Some(
                entry
                    .external_path
                    .clone()
                    .unwrap_or_else(|| NOT_EXTERNALLY_ADDRESSABLE.to_string()),
            ),
            discarded: entry.discarded,
        },
        StatsStatus::Failed => CheckpointOutcome::Failed {
            failure_timestamp: entry.failure_timestamp.unwrap_or(-1),
            failure_message: entry.failure_message.clone(),
        },
    };
    let is_savepoint = entry.snapshot_type.is_savepoint();
    CheckpointStatistics {
        id: entry.id,
        is_savepoint,
        savepoint_format: is_savepoint.then(|| SAVEPOINT_FORMAT.to_string()),
        trigger_timestamp: entry.trigger_timestamp,
        latest_ack_timestamp: entry.latest_ack_timestamp.unwrap_or(-1),
        checkpointed_size: to_i64(entry.checkpointed_size),
        state_size,
        end_to_end_duration: to_i64(entry.end_to_end_duration_ms),
        alignment_buffered: 0,
        processed_data: 0,
        persisted_data: to_i64(entry.persisted_data),
        num_subtasks: entry.num_subtasks,
        num_acknowledged_subtasks: entry.num_acknowledged_subtasks,
        checkpoint_type: checkpoint_type(entry.snapshot_type, entry.unaligned),
        tasks,
        outcome,
    }
}

fn restored_statistics(r: &RestoredCheckpointStats) -> RestoredCheckpointStatistics {
    RestoredCheckpointStatistics {
        id: r.id,
        restore_timestamp: r.restore_timestamp,
        is_savepoint: r.snapshot_type.is_savepoint(),
        external_path: r.external_path.clone(),
    }
}

fn rest_status(s: StatsStatus) -> CheckpointStatus {
    match s {
        StatsStatus::InProgress => CheckpointStatus::InProgress,
        StatsStatus::Completed => CheckpointStatus::Completed,
        StatsStatus::Failed => CheckpointStatus::Failed,
    }
}

fn checkpoint_type(t: SnapshotType, unaligned: bool) -> CheckpointType {
    match t {
        SnapshotType::Checkpoint if unaligned => CheckpointType::UnalignedCheckpoint,
        SnapshotType::Checkpoint => CheckpointType::Checkpoint,
        SnapshotType::Savepoint => CheckpointType::Savepoint,
        SnapshotType::SyncSavepoint => CheckpointType::SyncSavepoint,
    }
}

/// The tracker's summary in Flink's shape: `NaN` percentiles while empty.
fn stats_summary(s: &DomainSummary) -> StatsSummary {
    if s.count == 0 {
        return StatsSummary::of(&[]);
    }
    StatsSummary {
        min: to_i64(s.min),
        max: to_i64(s.max),
        avg: to_i64(s.avg),
        p50: s.p50,
        p90: s.p90,
        p95: s.p95,
        p99: s.p99,
        p999: s.p999,
    }
}

/// The summary of a measure Weir does not take (0 for every completed checkpoint).
fn unmeasured_summary(completed: u64) -> StatsSummary {
    if completed == 0 {
        StatsSummary::of(&[])
    } else {
        StatsSummary::zero()
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use weir_checkpoint::{
        AckOutcome, CheckpointMetadata, CoordinatorAction, DeclineReason, SnapshotReport, SubtaskAcknowledgement,
        TaskKey, VertexInfo,
    };
    use weir_core::ids::{JobId, JobVertexId, OperatorId};
    use weir_rest::{
        ConfigEntry, JobConfig, JobDetail, JobExceptions, JobSubmitRequest, JobSubmitResponse, JobsOverview, Overview,
        RestBackend, RestServerHandle, TaskManagerDetail, TaskManagersList,
    };

    const SOURCE: JobVertexId = JobVertexId(0xc27d_cf7b_54ef_6bfd_6cff_02ca_8870_b681);
    const SINK: JobVertexId = JobVertexId(0xcbc3_57cc_b763_df28_52fe_e8c4_fc7d_55f2);

    fn config(interval_ms: u64, history_size: u32) -> CheckpointConfig {
        CheckpointConfig {
            interval: Some(Duration::from_millis(interval_ms)),
            timeout: Duration::from_millis(10_000),
            tolerable_failures: 5,
            history_size,
            ..CheckpointConfig::default()
        }
    }

    /// A source of parallelism 2 and a sink of parallelism 1.
    fn coordinator(config: CheckpointConfig) -> CheckpointCoordinator {
        let vertex = |vertex_id, name: &str, parallelism, is_source| VertexInfo {
            vertex_id,
            name: name.to_string(),
            parallelism,
            max_parallelism: 128,
            operator_ids: vec![OperatorId(vertex_id.0)],
            is_source,
            upstream: Vec::new(),
        };
        let vertices = vec![vertex(SOURCE, "Source", 2, true), vertex(SINK, "Sink", 1, false)];
        CheckpointCoordinator::new(config, JobId(0xabc), vertices, 7)
    }

    const SRC0: TaskKey = TaskKey { vertex: 0, subtask: 0 };
    const SRC1: TaskKey = TaskKey { vertex: 0, subtask: 1 };
    const SINK0: TaskKey = TaskKey { vertex: 1, subtask: 0 };

    fn ack(c: &mut CheckpointCoordinator, id: u64, task: TaskKey, size: u64, now: i64) -> Vec<CoordinatorAction> {
        let ack = SubtaskAcknowledgement {
            task,
            report: SnapshotReport {
                checkpoint_id: id,
                handle: None,
                state_size: size,
                sync_duration_ms: 1,
                async_duration_ms: 2,
                alignment_duration_ms: 0,
                persisted_data: 0,
                union_state: false,
                shared_state: Vec::new(),
                checkpointed_size: size,
            },
        };
        let (outcome, actions) = c.acknowledge(ack, now);
        assert!(
            matches!(outcome, AckOutcome::Acknowledged | AckOutcome::AllAcknowledged),
            "{outcome:?}"
        );
        actions
    }

    /// Ticks at the next due time and returns it with the triggered id.
    fn trigger(c: &mut CheckpointCoordinator) -> (i64, u64) {
        let due = c.next_trigger_due().expect("scheduler runs");
        let actions = c.tick(due);
        match actions[..] {
            [CoordinatorAction::TriggerCheckpoint { checkpoint_id, .. }] => (due, checkpoint_id),
            _ => panic!("{actions:?}"),
        }
    }

    /// Acknowledges every subtask (sizes 10, 20, 5 at +5, +6, +9) and writes the metadata
    /// at +10.
    fn complete(c: &mut CheckpointCoordinator, id: u64, t: i64, path: Option<&str>) {
        ack(c, id, SRC0, 10, t + 5);
        ack(c, id, SRC1, 20, t + 6);
        let actions = ack(c, id, SINK0, 5, t + 9);
        assert!(
            matches!(actions[..], [CoordinatorAction::WriteMetadata { .. }]),
            "{actions:?}"
        );
        c.metadata_written(id, Ok(path.map(str::to_string)), t + 10);
    }

    /// Checkpoint 1 completed (JobManager storage), 2 declined, 3 in progress with one
    /// acknowledgement, savepoint 4 completed. Returns the coordinator and the trigger
    /// time of checkpoint 1.
    fn scenario() -> (CheckpointCoordinator, i64) {
        let mut c = coordinator(config(1000, 10));
        c.start_scheduler(1_795_941_225_000);
        let (t1, id) = trigger(&mut c);
        assert_eq!(id, 1);
        complete(&mut c, 1, t1, None);
        let (t2, id) = trigger(&mut c);
        assert_eq!((id, t2), (2, t1 + 1000));
        c.decline(2, SRC0, DeclineReason::TaskNotReady, String::new(), t2 + 50);
        let (t3, id) = trigger(&mut c);
        assert_eq!(id, 3);
        ack(&mut c, 3, SRC1, 7, t3 + 100);
        let (id, _) = c
            .trigger_savepoint(t3 + 500, SnapshotType::Savepoint, "/tmp/weir-sp".to_string())
            .expect("savepoint triggers");
        assert_eq!(id, 4);
        complete(&mut c, 4, t3 + 500, Some("/tmp/weir-sp/savepoint-4"));
        (c, t1)
    }

    #[test]
    fn counts_latest_and_history_follow_the_coordinator() {
        let (c, t1) = scenario();
        let s = checkpointing_statistics(&c);
        assert_eq!(
            s.counts,
            CheckpointCounts {
                restored: 0,
                total: 4,
                in_progress: 1,
                completed: 2,
                failed: 1
            }
        );
        let history: Vec<(u64, CheckpointStatus)> = s.history.iter().map(|h| (h.id, h.status())).collect();
        assert_eq!(
            history,
            vec![
                (4, CheckpointStatus::Completed),
                (3, CheckpointStatus::InProgress),
                (2, CheckpointStatus::Failed),
                (1, CheckpointStatus::Completed)
            ]
        );
        assert!(s.history.iter().all(|h| h.tasks.is_empty()));

        let completed = s.latest.completed.as_ref().expect("latest completed");
        assert_eq!(completed.id, 1);
        assert_eq!(completed.class_name(), "completed");
        assert!(!completed.is_savepoint);
        assert_eq!(completed.savepoint_format, None);
        assert_eq!(completed.checkpoint_type, CheckpointType::Checkpoint);
        assert_eq!(
            (completed.trigger_timestamp, completed.latest_ack_timestamp),
            (t1, t1 + 9)
        );
        assert_eq!((completed.state_size, completed.checkpointed_size), (35, 35));
        assert_eq!(completed.end_to_end_duration, 9);
        assert_eq!((completed.num_subtasks, completed.num_acknowledged_subtasks), (3, 3));
        assert_eq!(
            completed.outcome,
            CheckpointOutcome::Completed {
                external_path: Some(NOT_EXTERNALLY_ADDRESSABLE.to_string()),
                discarded: false
            }
        );

        let savepoint = s.latest.savepoint.as_ref().expect("latest savepoint");
        assert_eq!(savepoint.id, 4);
        assert!(savepoint.is_savepoint);
        assert_eq!(savepoint.savepoint_format.as_deref(), Some("CANONICAL"));
        assert_eq!(savepoint.checkpoint_type, CheckpointType::Savepoint);
        assert_eq!(
            savepoint.outcome,
            CheckpointOutcome::Completed {
                external_path: Some("/tmp/weir-sp/savepoint-4".to_string()),
                discarded: false
            }
        );

        let failed = s.latest.failed.as_ref().expect("latest failed");
        assert_eq!(failed.id, 2);
        assert_eq!((failed.latest_ack_timestamp, failed.num_acknowledged_subtasks), (-1, 0));
        assert_eq!(failed.end_to_end_duration, 50);
        let CheckpointOutcome::Failed {
            failure_timestamp,
            failure_message,
        } = &failed.outcome
        else {
            panic!("{failed:?}")
        };
        assert_eq!(*failure_timestamp, t1 + 1050);
        assert!(
            failure_message
                .as_deref()
                .is_some_and(|m| m.starts_with("Checkpoint was declined (tasks not ready)")),
            "{failure_message:?}"
        );
        assert_eq!(s.latest.restored, None);

        let in_progress = &s.history[1];
        assert_eq!(in_progress.outcome, CheckpointOutcome::InProgress);
        assert_eq!((in_progress.num_acknowledged_subtasks, in_progress.state_size), (1, 7));
    }

    #[test]
    fn the_summary_covers_completed_checkpoints_only() {
        let (c, _) = scenario();
        let summary = checkpointing_statistics(&c).summary;
        // Checkpoint 1 and savepoint 4: 35 bytes, 9 ms each; 2 and 3 are left out.
        let expected = StatsSummary::of(&[35, 35]);
        assert_eq!(summary.state_size, expected);
        assert_eq!(summary.checkpointed_size, expected);
        assert_eq!(summary.end_to_end_duration, StatsSummary::of(&[9, 9]));
        assert_eq!(summary.alignment_buffered, StatsSummary::zero());
        assert_eq!(summary.processed_data, StatsSummary::zero());
        assert_eq!(summary.persisted_data, StatsSummary::zero());
    }

    #[test]
    fn an_unaligned_checkpoint_reports_its_type_and_the_persisted_in_flight_data() {
        let mut c = coordinator(CheckpointConfig {
            unaligned_enabled: true,
            ..config(1000, 10)
        });
        c.start_scheduler(0);
        let (t, id) = trigger(&mut c);
        for (task, persisted) in [(SRC0, 0), (SRC1, 0), (SINK0, 40)] {
            let ack = SubtaskAcknowledgement {
                task,
                report: SnapshotReport {
                    checkpoint_id: id,
                    handle: None,
                    state_size: 50,
                    sync_duration_ms: 1,
                    async_duration_ms: 2,
                    alignment_duration_ms: 0,
                    persisted_data: persisted,
                    union_state: false,
                    shared_state: Vec::new(),
                    checkpointed_size: 50,
                },
            };
            c.acknowledge(ack, t + 3);
        }
        c.metadata_written(id, Ok(None), t + 4);
        let s = checkpointing_statistics(&c);
        let entry = &s.history[0];
        assert_eq!(entry.checkpoint_type, CheckpointType::UnalignedCheckpoint);
        assert_eq!(entry.persisted_data, 40);
        assert_eq!((s.summary.persisted_data.min, s.summary.persisted_data.max), (40, 40));
        let details = checkpoint_details(&c, id).unwrap();
        assert_eq!(details.tasks[&SINK.to_string()].persisted_data, 40);
        assert_eq!(details.tasks[&SOURCE.to_string()].persisted_data, 0);
    }

    #[test]
    fn before_any_completion_the_summary_is_nan_like_flinks_empty_one() {
        let mut c = coordinator(config(1000, 10));
        c.start_scheduler(0);
        let (_, id) = trigger(&mut c);
        let s = checkpointing_statistics(&c);
        assert_eq!(s.counts.in_progress, 1);
        assert_eq!(s.history.len(), 1);
        assert_eq!(s.history[0].id, id);
        assert_eq!(s.latest, LatestCheckpoints::default());
        let empty = CheckpointingStatistics::disabled().summary;
        for (got, want) in [
            (s.summary.state_size, empty.state_size),
            (s.summary.checkpointed_size, empty.checkpointed_size),
            (s.summary.end_to_end_duration, empty.end_to_end_duration),
            (s.summary.processed_data, empty.processed_data),
            (s.summary.persisted_data, empty.persisted_data),
        ] {
            assert_eq!((got.min, got.max, got.avg), (want.min, want.max, want.avg));
            assert!(got.p50.is_nan() && got.p999.is_nan(), "{got:?}");
        }
        assert_eq!(s.summary.alignment_buffered, StatsSummary::zero());
    }

    #[test]
    fn the_history_keeps_the_configured_number_newest_first_and_the_summary_all() {
        let mut c = coordinator(config(1000, 2));
        c.start_scheduler(0);
        for expected in 1..=3 {
            let (t, id) = trigger(&mut c);
            assert_eq!(id, expected);
            complete(&mut c, id, t, Some(&format!("/chk/chk-{id}")));
        }
        let s = checkpointing_statistics(&c);
        assert_eq!(s.history.iter().map(|h| h.id).collect::<Vec<_>>(), vec![3, 2]);
        assert_eq!(s.counts.completed, 3);
        assert_eq!(s.summary.state_size, StatsSummary::of(&[35, 35, 35]));
        // num-retained 1: checkpoint 2 was subsumed and discarded by checkpoint 3.
        assert_eq!(
            s.history[1].outcome,
            CheckpointOutcome::Completed {
                external_path: Some("/chk/chk-2".to_string()),
                discarded: true
            }
        );
        assert_eq!(s.latest.completed.as_ref().map(|l| l.id), Some(3));
        assert_eq!(checkpoint_details(&c, 1), Err(RestError::checkpoint_not_found(1)));
        assert!(checkpoint_details(&c, 2).is_ok());
    }

    #[test]
    fn a_restore_is_counted_and_reported_as_latest_restored() {
        let mut c = coordinator(config(1000, 10));
        let metadata = CheckpointMetadata {
            job_id: JobId(0xabc),
            checkpoint_id: 41,
            timestamp: 100,
            snapshot_type: SnapshotType::Savepoint,
            tasks: Vec::new(),
        };
        c.restore_from(metadata, Some("/sp/savepoint-41".to_string()), 5000);
        let s = checkpointing_statistics(&c);
        assert_eq!(s.counts.restored, 1);
        assert_eq!(s.counts.total, 0);
        assert_eq!(
            s.latest.restored,
            Some(RestoredCheckpointStatistics {
                id: 41,
                restore_timestamp: 5000,
                is_savepoint: true,
                external_path: Some("/sp/savepoint-41".to_string())
            })
        );
        c.start_scheduler(5000);
        assert_eq!(trigger(&mut c).1, 42);
    }

    #[test]
    fn details_carry_per_vertex_tasks_keyed_by_job_vertex_id() {
        let (c, t1) = scenario();
        let d = checkpoint_details(&c, 1).expect("checkpoint 1 is in the history");
        assert_eq!((d.id, d.status()), (1, CheckpointStatus::Completed));
        assert_eq!(
            d.tasks.keys().cloned().collect::<Vec<_>>(),
            vec![
                "c27dcf7b54ef6bfd6cff02ca8870b681".to_string(),
                "cbc357ccb763df2852fee8c4fc7d55f2".to_string()
            ]
        );
        assert_eq!(
            d.tasks["c27dcf7b54ef6bfd6cff02ca8870b681"],
            TaskCheckpointStatistics {
                id: 1,
                status: CheckpointStatus::Completed,
                latest_ack_timestamp: t1 + 6,
                checkpointed_size: 30,
                state_size: 30,
                end_to_end_duration: 6,
                alignment_buffered: 0,
                processed_data: 0,
                persisted_data: 0,
                num_subtasks: 2,
                num_acknowledged_subtasks: 2,
            }
        );
        let sink = d.tasks["cbc357ccb763df2852fee8c4fc7d55f2"];
        assert_eq!(
            (sink.latest_ack_timestamp, sink.state_size, sink.end_to_end_duration),
            (t1 + 9, 5, 9)
        );
        assert_eq!((sink.num_subtasks, sink.num_acknowledged_subtasks), (1, 1));
        // Without tasks, the details are the history entry.
        let mut entry = d.clone();
        entry.tasks.clear();
        assert_eq!(checkpointing_statistics(&c).history[3], entry);

        let pending = checkpoint_details(&c, 3).expect("checkpoint 3 is in the history");
        assert_eq!(pending.status(), CheckpointStatus::InProgress);
        let source = pending.tasks[&SOURCE.to_string()];
        assert_eq!(
            (source.status, source.num_acknowledged_subtasks, source.state_size),
            (CheckpointStatus::InProgress, 1, 7)
        );
        let sink = pending.tasks[&SINK.to_string()];
        assert_eq!((sink.latest_ack_timestamp, sink.num_acknowledged_subtasks), (-1, 0));
        assert_eq!(
            checkpoint_details(&c, 2).map(|d| d.tasks[&SOURCE.to_string()].status),
            Ok(CheckpointStatus::Failed)
        );
    }

    #[test]
    fn details_of_an_unknown_checkpoint_are_flinks_404() {
        let (c, _) = scenario();
        let err = checkpoint_details(&c, 99).unwrap_err();
        assert_eq!(err, RestError::checkpoint_not_found(99));
        assert_eq!(err.status(), 404);
        assert_eq!(checkpoint_details(&c, 0), Err(RestError::checkpoint_not_found(0)));
    }

    #[test]
    fn the_default_config_with_an_interval_is_flinks_sample() {
        let cfg = CheckpointConfig {
            interval: Some(Duration::from_millis(2000)),
            ..CheckpointConfig::default()
        };
        assert_eq!(checkpoint_config_info(&cfg), CheckpointConfigInfo::with_interval(2000));
    }

    #[test]
    fn every_config_value_is_reported() {
        let cfg = CheckpointConfig {
            interval: Some(Duration::from_secs(5)),
            mode: CheckpointingMode::AtLeastOnce,
            timeout: Duration::from_secs(60),
            min_pause: Duration::from_millis(500),
            max_concurrent: 3,
            tolerable_failures: 2,
            externalized_retention: ExternalizedCheckpointRetention::RetainOnCancellation,
            checkpoint_dir: Some("file:///tmp/chk".to_string()),
            aligned_checkpoint_timeout: Duration::from_secs(30),
            ..CheckpointConfig::default()
        };
        let info = checkpoint_config_info(&cfg);
        assert_eq!(info.mode, CheckpointingProcessingMode::AtLeastOnce);
        assert_eq!(
            (info.interval, info.timeout, info.min_pause, info.max_concurrent),
            (5000, 60_000, 500, 3)
        );
        assert_eq!(
            info.externalization,
            ExternalizedCheckpointInfo {
                enabled: true,
                delete_on_cancellation: false
            }
        );
        assert_eq!(info.checkpoint_storage, "FileSystemCheckpointStorage");
        assert_eq!(info.tolerable_failed_checkpoints, 2);
        assert_eq!(info.aligned_checkpoint_timeout, 30_000);
        assert!(!info.unaligned_checkpoints);
        assert_eq!(info.state_backend, "HashMapStateBackend");

        let delete = CheckpointConfig {
            externalized_retention: ExternalizedCheckpointRetention::DeleteOnCancellation,
            unaligned_enabled: true,
            ..config(1000, 10)
        };
        let info = checkpoint_config_info(&delete);
        assert_eq!(info.mode, CheckpointingProcessingMode::ExactlyOnce);
        assert!(info.unaligned_checkpoints);
        assert_eq!(
            info.externalization,
            ExternalizedCheckpointInfo {
                enabled: true,
                delete_on_cancellation: true
            }
        );
        assert_eq!(info.checkpoint_storage, "JobManagerCheckpointStorage");
    }

    #[test]
    fn without_an_interval_the_config_reports_flinks_disabled_interval() {
        let info = checkpoint_config_info(&CheckpointConfig::default());
        assert_eq!(info, CheckpointConfigInfo::disabled());
        assert!(!info.is_enabled());
    }

    /// Serves the translations of one job's coordinator through Weir's real router.
    struct OneJob {
        jid: JobId,
        coordinator: Option<CheckpointCoordinator>,
    }

    impl OneJob {
        fn coordinator(&self, jid: JobId) -> Result<Option<&CheckpointCoordinator>, RestError> {
            if jid == self.jid {
                Ok(self.coordinator.as_ref())
            } else {
                Err(RestError::JobNotFound(jid))
            }
        }
    }

    impl RestBackend for OneJob {
        fn overview(&self) -> Overview {
            unreachable!("not asked")
        }
        fn jobs_overview(&self) -> JobsOverview {
            JobsOverview { jobs: Vec::new() }
        }
        fn job_detail(&self, jid: JobId) -> Result<JobDetail, RestError> {
            Err(RestError::JobNotFound(jid))
        }
        fn job_exceptions(&self, jid: JobId, _: Option<usize>) -> Result<JobExceptions, RestError> {
            Err(RestError::JobNotFound(jid))
        }
        fn job_config(&self, jid: JobId) -> Result<JobConfig, RestError> {
            Err(RestError::JobNotFound(jid))
        }
        fn job_checkpoints(&self, jid: JobId) -> Result<CheckpointingStatistics, RestError> {
            Ok(self
                .coordinator(jid)?
                .map_or_else(CheckpointingStatistics::disabled, checkpointing_statistics))
        }
        fn job_checkpoints_config(&self, jid: JobId) -> Result<CheckpointConfigInfo, RestError> {
            Ok(self
                .coordinator(jid)?
                .map_or_else(CheckpointConfigInfo::disabled, |c| checkpoint_config_info(c.config())))
        }
        fn job_checkpoint_details(&self, jid: JobId, checkpoint_id: u64) -> Result<CheckpointDetails, RestError> {
            match self.coordinator(jid)? {
                Some(c) => checkpoint_details(c, checkpoint_id),
                None => Err(RestError::checkpoint_not_found(checkpoint_id)),
            }
        }
        fn taskmanagers(&self) -> TaskManagersList {
            TaskManagersList {
                taskmanagers: Vec::new(),
            }
        }
        fn taskmanager_detail(&self, id: &str) -> Result<TaskManagerDetail, RestError> {
            Err(RestError::TaskManagerNotFound(id.to_string()))
        }
        fn jobmanager_config(&self) -> Vec<ConfigEntry> {
            Vec::new()
        }
        fn cancel_job(&self, jid: JobId) -> Result<(), RestError> {
            Err(RestError::JobNotFound(jid))
        }
        fn submit_job(&self, _: JobSubmitRequest) -> Result<JobSubmitResponse, RestError> {
            Err(RestError::BadRequest("not here".to_string()))
        }
    }

    /// `GET path` over HTTP/1.1; returns the status code and the body.
    async fn get(server: &RestServerHandle, path: &str) -> (u16, String) {
        let mut stream = tokio::net::TcpStream::connect(server.local_addr())
            .await
            .expect("connects");
        let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.expect("sends");
        let mut response = String::new();
        stream.read_to_string(&mut response).await.expect("reads");
        let (head, body) = response.split_once("\r\n\r\n").expect("a head and a body");
        let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status");
        (status, body.to_string())
    }

    fn assert_contains(body: &str, fragments: &[&str]) {
        for fragment in fragments {
            assert!(body.contains(fragment), "{fragment} not in {body}");
        }
    }

    #[tokio::test]
    async fn the_router_renders_flinks_json_from_the_coordinator() {
        let (c, t1) = scenario();
        let jid = JobId(0xabc);
        let backend = OneJob {
            jid,
            coordinator: Some(c),
        };
        let server = RestServerHandle::start("127.0.0.1:0", Arc::new(backend))
            .await
            .expect("binds");

        let (status, body) = get(&server, &format!("/jobs/{jid}/checkpoints")).await;
        assert_eq!(status, 200, "{body}");
        assert!(
            body.starts_with(r#"{"counts":{"restored":0,"total":4,"in_progress":1,"completed":2,"failed":1},"#),
            "{body}"
        );
        assert_contains(
            &body,
            &[
                r#""state_size":{"min":35,"max":35,"avg":35,"p50":35.0,"#,
                r#""alignment_buffered":{"min":0,"max":0,"avg":0,"p50":0.0,"#,
                r#""latest":{"completed":{"className":"completed","id":1,"status":"COMPLETED","is_savepoint":false,"savepointFormat":null,"#,
                r#""external_path":"<checkpoint-not-externally-addressable>","discarded":false},"savepoint":{"className":"completed","id":4,"#,
                r#""is_savepoint":true,"savepointFormat":"CANONICAL","#,
                r#""checkpoint_type":"SAVEPOINT","tasks":{},"external_path":"/tmp/weir-sp/savepoint-4","discarded":false}"#,
                r#""failed":{"className":"failed","id":2,"status":"FAILED","#,
                r#""failure_message":"Checkpoint was declined (tasks not ready)"#,
                r#""restored":null},"history":[{"className":"completed","id":4,"#,
                r#"{"className":"in_progress","id":3,"status":"IN_PROGRESS","#,
                r#""num_subtasks":3,"num_acknowledged_subtasks":1,"checkpoint_type":"CHECKPOINT","tasks":{}}"#,
                &format!(r#""failure_timestamp":{},"#, t1 + 1050),
            ],
        );
        let history_ids: Vec<usize> = ["\"id\":4", "\"id\":3", "\"id\":2", "\"id\":1"]
            .iter()
            .map(|id| body.rfind(id).expect("in the history"))
            .collect();
        assert!(history_ids.windows(2).all(|w| w[0] < w[1]), "{body}");

        let (status, body) = get(&server, &format!("/jobs/{jid}/checkpoints/details/1")).await;
        assert_eq!(status, 200, "{body}");
        assert_contains(
            &body,
            &[
                r#"{"className":"completed","id":1,"status":"COMPLETED","#,
                r#""num_subtasks":3,"num_acknowledged_subtasks":3,"checkpoint_type":"CHECKPOINT","tasks":{"#,
                &format!(
                    r#""c27dcf7b54ef6bfd6cff02ca8870b681":{{"id":1,"status":"COMPLETED","latest_ack_timestamp":{},"checkpointed_size":30,"state_size":30,"end_to_end_duration":6,"alignment_buffered":0,"processed_data":0,"persisted_data":0,"num_subtasks":2,"num_acknowledged_subtasks":2}}"#,
                    t1 + 6
                ),
                r#""cbc357ccb763df2852fee8c4fc7d55f2":{"id":1,"status":"COMPLETED","#,
                r#""external_path":"<checkpoint-not-externally-addressable>","discarded":false}"#,
            ],
        );

        let (status, body) = get(&server, &format!("/jobs/{jid}/checkpoints/details/99")).await;
        assert_eq!(status, 404, "{body}");
        assert_eq!(
            body,
            r#"{"errors":["Could not find checkpointing statistics for checkpoint 99."]}"#
        );

        let (status, body) = get(&server, &format!("/jobs/{jid}/checkpoints/config")).await;
        assert_eq!(status, 200, "{body}");
        assert!(
            body.starts_with(
                r#"{"mode":"exactly_once","interval":1000,"timeout":10000,"min_pause":0,"max_concurrent":1,"externalization":{"enabled":false,"delete_on_cancellation":true},"#
            ),
            "{body}"
        );
        assert_contains(
            &body,
            &[
                r#""checkpoint_storage":"JobManagerCheckpointStorage""#,
                r#""tolerable_failed_checkpoints":5"#,
            ],
        );
        server.shutdown().await.expect("stops");
    }

    #[tokio::test]
    async fn a_job_without_a_coordinator_answers_the_disabled_bodies() {
        let jid = JobId(0xdef);
        let backend = OneJob { jid, coordinator: None };
        let server = RestServerHandle::start("127.0.0.1:0", Arc::new(backend))
            .await
            .expect("binds");
        let (status, body) = get(&server, &format!("/jobs/{jid}/checkpoints")).await;
        assert_eq!(status, 200, "{body}");
        assert_contains(
            &body,
            &[
                r#"{"counts":{"restored":0,"total":0,"in_progress":0,"completed":0,"failed":0},"#,
                r#""p50":"NaN""#,
                r#""latest":{"completed":null,"savepoint":null,"failed":null,"restored":null},"history":[]}"#,
            ],
        );
        let (status, body) = get(&server, &format!("/jobs/{jid}/checkpoints/config")).await;
        assert_eq!(status, 200, "{body}");
        assert!(
            body.starts_with(r#"{"mode":"at_least_once","interval":9223372036854775807,"#),
            "{body}"
        );
        let (status, _) = get(&server, &format!("/jobs/{jid}/checkpoints/details/1")).await;
        assert_eq!(status, 404);
        server.shutdown().await.expect("stops");
    }
}
