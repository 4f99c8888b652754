//! Checkpoint statistics (Flink's `CheckpointStatsTracker`): counts, the recent history,
//! a summary over completed checkpoints, and the latest completed, savepoint, failed and
//! restored entries.
//!
//! The tracker is fed only by the coordinator and read by the REST layer, which turns
//! these plain structs into Flink's JSON. Invariants: `in_progress + completed + failed
//! == total`; the history holds at most `web.checkpoints.history` entries, newest
//! first; an entry evicted from the history still counts and may still be the latest
//! completed/failed one; durations are never negative (`max(0, ack - trigger)`).
//! Percentiles follow Apache Commons Math's default `Percentile` estimation, which
//! Flink's histograms use.

use std::collections::VecDeque;

use weir_core::ids::JobVertexId;
use weir_core::{CheckpointId, SnapshotType};

/// How many completed checkpoints the summary keeps samples of (oldest dropped first).
pub const SUMMARY_WINDOW: usize = 10_000;

/// Status of a checkpoint in the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointStatus {
    /// Triggered, not all acknowledgements in (or metadata not written yet).
    InProgress,
    /// Completed.
    Completed,
    /// Aborted.
    Failed,
}

impl CheckpointStatus {
    /// Flink's name: `IN_PROGRESS`, `COMPLETED`, `FAILED`.
    pub fn flink_name(self) -> &'static str {
        match self {
            CheckpointStatus::InProgress => "IN_PROGRESS",
            CheckpointStatus::Completed => "COMPLETED",
            CheckpointStatus::Failed => "FAILED",
        }
    }
}

/// The counters of the checkpoint statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckpointCounts {
    /// Restores from a checkpoint or savepoint.
    pub restored: u64,
    /// Checkpoints and savepoints triggered.
    pub total: u64,
    /// Currently in progress.
    pub in_progress: u64,
    /// Completed.
    pub completed: u64,
    /// Failed.
    pub failed: u64,
}

/// What one subtask reported with its acknowledgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubtaskCheckpointStats {
    /// When the acknowledgement arrived, ms since the epoch.
    pub ack_timestamp: i64,
    /// `ack_timestamp - trigger timestamp`, at least 0.
    pub end_to_end_duration_ms: u64,
    /// Bytes of state.
    pub state_size: u64,
    /// Bytes this checkpoint stored for it (less than `state_size` when an
    /// incremental checkpoint refers to files stored before).
    pub checkpointed_size: u64,
    /// Synchronous part of the snapshot.
    pub sync_duration_ms: u64,
    /// Asynchronous part of the snapshot.
    pub async_duration_ms: u64,
    /// Time spent aligning barriers.
    pub alignment_duration_ms: u64,
    /// Bytes of in-flight data persisted as channel state (unaligned checkpoints).
    pub persisted_data: u64,
}

/// Per-vertex statistics of one checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VertexCheckpointStats {
    /// The vertex.
    pub vertex_id: JobVertexId,
    /// Its parallelism.
    pub num_subtasks: u32,
    /// Subtasks that acknowledged.
    pub num_acknowledged_subtasks: u32,
    /// Bytes of state of the acknowledged subtasks.
    pub state_size: u64,
    /// Bytes the checkpoint stored for the acknowledged subtasks.
    pub checkpointed_size: u64,
    /// Bytes of in-flight data its acknowledged subtasks persisted.
    pub persisted_data: u64,
    /// Latest acknowledgement of this vertex.
    pub latest_ack_timestamp: Option<i64>,
    /// Largest end-to-end duration of its subtasks.
    pub max_end_to_end_duration_ms: u64,
    /// Per subtask index; `None` until it acknowledged.
    pub subtasks: Vec<Option<SubtaskCheckpointStats>>,
}

/// One checkpoint (or savepoint) in the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointStats {
    /// Its id.
    pub id: CheckpointId,
    /// In progress, completed or failed.
    pub status: CheckpointStatus,
    /// Checkpoint or savepoint.
    pub snapshot_type: SnapshotType,
    /// Taken with unaligned checkpoints enabled (unaligned from the start, or aligned
    /// with a timeout that may switch), Flink's `unaligned_checkpoint`.
    pub unaligned: bool,
    /// When it was triggered.
    pub trigger_timestamp: i64,
    /// Latest acknowledgement so far.
    pub latest_ack_timestamp: Option<i64>,
    /// Bytes of state acknowledged so far.
    pub state_size: u64,
    /// Bytes stored by this checkpoint so far (Flink's `checkpointed_size`).
    pub checkpointed_size: u64,
    /// Bytes of in-flight data persisted so far.
    pub persisted_data: u64,
    /// Latest acknowledgement (or the failure, if later) minus the trigger time.
    pub end_to_end_duration_ms: u64,
    /// Subtasks of the whole job.
    pub num_subtasks: u32,
    /// Subtasks that acknowledged.
    pub num_acknowledged_subtasks: u32,
    /// Where it was written (completed file-system checkpoints and savepoints).
    pub external_path: Option<String>,
    /// Whether a completed checkpoint was discarded since (subsumed or shut down).
    pub discarded: bool,
    /// When it failed.
    pub failure_timestamp: Option<i64>,
    /// Why it failed.
    pub failure_message: Option<String>,
    /// Per vertex, in the job's vertex order.
    pub vertices: Vec<VertexCheckpointStats>,
}

/// The restore a job started from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoredCheckpointStats {
    /// The checkpoint or savepoint id.
    pub id: CheckpointId,
    /// When the restore happened.
    pub restore_timestamp: i64,
    /// Checkpoint or savepoint.
    pub snapshot_type: SnapshotType,
    /// Where it was read from.
    pub external_path: Option<String>,
}

/// Min, max, average and percentiles of a series (Flink's `StatsSummary`). All zero
/// while the series is empty.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StatsSummary {
    /// Number of samples.
    pub count: u64,
    /// Smallest sample.
    pub min: u64,
    /// Largest sample.
    pub max: u64,
    /// Integer average (Flink reports a long).
    pub avg: u64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
}

impl StatsSummary {
    /// The summary of `samples` (any order).
    pub fn of(samples: impl IntoIterator<Item = u64>) -> Self {
        let mut sorted: Vec<u64> = samples.into_iter().collect();
        if sorted.is_empty() {
            return StatsSummary::default();
        }
        sorted.sort_unstable();
        let sum: u128 = sorted.iter().map(|&v| v as u128).sum();
        let values: Vec<f64> = sorted.iter().map(|&v| v as f64).collect();
        let percentile = |p: f64| weir_core::stats::percentile(&values, p);
        StatsSummary {
            count: sorted.len() as u64,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            avg: (sum / sorted.len() as u128) as u64,
            p50: percentile(50.0),
            p90: percentile(90.0),
            p95: percentile(95.0),
            p99: percentile(99.0),
            p999: percentile(99.9),
        }
    }
}

/// Summaries over the completed checkpoints.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CompletedCheckpointSummary {
    /// Of the state size.
    pub state_size: StatsSummary,
    /// Of the checkpointed size.
    pub checkpointed_size: StatsSummary,
    /// Of the end-to-end duration.
    pub end_to_end_duration: StatsSummary,
    /// Of the persisted in-flight data.
    pub persisted_data: StatsSummary,
}

/// What the summaries are computed from, per completed checkpoint.
#[derive(Debug, Clone, Copy)]
struct SummarySample {
    state_size: u64,
    checkpointed_size: u64,
    end_to_end_duration_ms: u64,
    persisted_data: u64,
}

/// Collects checkpoint statistics; fed by the coordinator, read through its accessors.
#[derive(Debug, Clone)]
pub struct CheckpointStatsTracker {
    history_size: usize,
    counts: CheckpointCounts,
    history: VecDeque<CheckpointStats>,
    summary_samples: VecDeque<SummarySample>,
    latest_completed: Option<CheckpointStats>,
    latest_savepoint: Option<CheckpointStats>,
    latest_failed: Option<CheckpointStats>,
    latest_restored: Option<RestoredCheckpointStats>,
}

impl CheckpointStatsTracker {
    /// A tracker keeping `history_size` entries of history (`web.checkpoints.history`).
    pub fn new(history_size: u32) -> Self {
        CheckpointStatsTracker {
            history_size: history_size as usize,
            counts: CheckpointCounts::default(),
            history: VecDeque::new(),
            summary_samples: VecDeque::new(),
            latest_completed: None,
            latest_savepoint: None,
            latest_failed: None,
            latest_restored: None,
        }
    }

    /// The counters.
    pub fn counts(&self) -> CheckpointCounts {
        self.counts
    }

    /// The recent checkpoints, newest first.
    pub fn history(&self) -> impl Iterator<Item = &CheckpointStats> {
        self.history.iter()
    }

    /// The history entry of checkpoint `id`, if still kept.
    pub fn checkpoint(&self, id: CheckpointId) -> Option<&CheckpointStats> {
        self.history.iter().find(|c| c.id == id)
    }

    /// Summaries over the completed checkpoints.
    pub fn summary(&self) -> CompletedCheckpointSummary {
        CompletedCheckpointSummary {
            state_size: StatsSummary::of(self.summary_samples.iter().map(|s| s.state_size)),
            checkpointed_size: StatsSummary::of(self.summary_samples.iter().map(|s| s.checkpointed_size)),
            end_to_end_duration: StatsSummary::of(self.summary_samples.iter().map(|s| s.end_to_end_duration_ms)),
            persisted_data: StatsSummary::of(self.summary_samples.iter().map(|s| s.persisted_data)),
        }
    }

    /// The latest completed checkpoint (not savepoint).
    pub fn latest_completed(&self) -> Option<&CheckpointStats> {
        self.latest_completed.as_ref()
    }

    /// The latest completed savepoint.
    pub fn latest_savepoint(&self) -> Option<&CheckpointStats> {
        self.latest_savepoint.as_ref()
    }

    /// The latest failed checkpoint or savepoint.
    pub fn latest_failed(&self) -> Option<&CheckpointStats> {
        self.latest_failed.as_ref()
    }

    /// The latest restore.
    pub fn latest_restored(&self) -> Option<&RestoredCheckpointStats> {
        self.latest_restored.as_ref()
    }

    /// A checkpoint was triggered; `vertices` lists each vertex's id and parallelism,
    /// `unaligned` whether unaligned checkpoints are in play for it.
    pub fn report_pending(
        &mut self,
        id: CheckpointId,
        trigger_timestamp: i64,
        snapshot_type: SnapshotType,
        unaligned: bool,
        vertices: &[(JobVertexId, u32)],
    ) {
        self.counts.total += 1;
        self.counts.in_progress += 1;
        let entry = CheckpointStats {
            id,
            status: CheckpointStatus::InProgress,
            snapshot_type,
            unaligned,
            trigger_timestamp,
            latest_ack_timestamp: None,
            state_size: 0,
            checkpointed_size: 0,
            persisted_data: 0,
            end_to_end_duration_ms: 0,
            num_subtasks: vertices.iter().map(|v| v.1).sum(),
            num_acknowledged_subtasks: 0,
            external_path: None,
            discarded: false,
            failure_timestamp: None,
            failure_message: None,
            vertices: vertices
                .iter()
                .map(|&(vertex_id, parallelism)| VertexCheckpointStats {
                    vertex_id,
                    num_subtasks: parallelism,
                    num_acknowledged_subtasks: 0,
                    state_size: 0,
                    checkpointed_size: 0,
                    persisted_data: 0,
                    latest_ack_timestamp: None,
                    max_end_to_end_duration_ms: 0,
                    subtasks: vec![None; parallelism as usize],
                })
                .collect(),
        };
        self.history.push_front(entry);
        self.history.truncate(self.history_size);
    }

    /// Subtask `subtask` of the `vertex`-th vertex acknowledged checkpoint `id`.
    pub fn report_ack(&mut self, id: CheckpointId, vertex: usize, subtask: u32, stats: SubtaskCheckpointStats) {
        let Some(entry) = self.history.iter_mut().find(|c| c.id == id) else {
            return;
        };
        let Some(v) = entry.vertices.get_mut(vertex) else {
            return;
        };
        let Some(slot @ None) = v.subtasks.get_mut(subtask as usize) else {
            return;
        };
        *slot = Some(stats);
        v.num_acknowledged_subtasks += 1;
        v.state_size = v.state_size.saturating_add(stats.state_size);
        v.checkpointed_size = v.checkpointed_size.saturating_add(stats.checkpointed_size);
        v.persisted_data = v.persisted_data.saturating_add(stats.persisted_data);
        v.latest_ack_timestamp = v.latest_ack_timestamp.max(Some(stats.ack_timestamp));
        v.max_end_to_end_duration_ms = v.max_end_to_end_duration_ms.max(stats.end_to_end_duration_ms);
        entry.num_acknowledged_subtasks += 1;
        entry.state_size = entry.state_size.saturating_add(stats.state_size);
        entry.checkpointed_size = entry.checkpointed_size.saturating_add(stats.checkpointed_size);
        entry.persisted_data = entry.persisted_data.saturating_add(stats.persisted_data);
        entry.latest_ack_timestamp = entry.latest_ack_timestamp.max(Some(stats.ack_timestamp));
        entry.end_to_end_duration_ms = entry.end_to_end_duration_ms.max(stats.end_to_end_duration_ms);
    }

    /// Checkpoint `id` completed (its metadata is written).
    pub fn report_completed(&mut self, id: CheckpointId, external_path: Option<String>) {
        self.counts.in_progress = self.counts.in_progress.saturating_sub(1);
        self.counts.completed += 1;
        let Some(entry) = self.history.iter_mut().find(|c| c.id == id) else {
            return;
        };
        entry.status = CheckpointStatus::Completed;
        entry.external_path = external_path;
        self.summary_samples.push_back(SummarySample {
            state_size: entry.state_size,
            checkpointed_size: entry.checkpointed_size,
            end_to_end_duration_ms: entry.end_to_end_duration_ms,
            persisted_data: entry.persisted_data,
        });
        if self.summary_samples.len() > SUMMARY_WINDOW {
            self.summary_samples.pop_front();
        }
        if entry.snapshot_type.is_savepoint() {
            self.latest_savepoint = Some(entry.clone());
        } else {
            self.latest_completed = Some(entry.clone());
        }
    }

    /// Checkpoint `id` failed at `failure_timestamp` with `message`.
    pub fn report_failed(&mut self, id: CheckpointId, failure_timestamp: i64, message: &str) {
        self.counts.in_progress = self.counts.in_progress.saturating_sub(1);
        self.counts.failed += 1;
        let Some(entry) = self.history.iter_mut().find(|c| c.id == id) else {
            return;
        };
        entry.status = CheckpointStatus::Failed;
        entry.failure_timestamp = Some(failure_timestamp);
        entry.failure_message = Some(message.to_string());
        let until = entry
            .latest_ack_timestamp
            .unwrap_or(failure_timestamp)
            .max(failure_timestamp);
        entry.end_to_end_duration_ms = (until - entry.trigger_timestamp).max(0) as u64;
        self.latest_failed = Some(entry.clone());
    }

    /// Completed checkpoint `id` was discarded (subsumed or at shutdown).
    pub fn report_discarded(&mut self, id: CheckpointId) {
        for entry in self.history.iter_mut().chain(self.latest_completed.as_mut()) {
            if entry.id == id {
                entry.discarded = true;
            }
        }
    }

    /// The job was restored from checkpoint `id`.
    pub fn report_restored(
        &mut self,
        id: CheckpointId,
        restore_timestamp: i64,
        snapshot_type: SnapshotType,
        external_path: Option<String>,
    ) {
        self.counts.restored += 1;
        self.latest_restored = Some(RestoredCheckpointStats {
            id,
            restore_timestamp,
            snapshot_type,
            external_path,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(ts: i64, e2e: u64, size: u64) -> SubtaskCheckpointStats {
        SubtaskCheckpointStats {
            ack_timestamp: ts,
            end_to_end_duration_ms: e2e,
            state_size: size,
            checkpointed_size: size,
            sync_duration_ms: 1,
            async_duration_ms: 2,
            alignment_duration_ms: 3,
            persisted_data: size / 5,
        }
    }

    #[test]
    fn a_checkpoint_moves_from_in_progress_to_completed_with_its_acks_summed() {
        let mut t = CheckpointStatsTracker::new(10);
        let v = [(JobVertexId(1), 2), (JobVertexId(2), 1)];
        t.report_pending(1, 1000, SnapshotType::Checkpoint, false, &v);
        assert_eq!(t.counts().in_progress, 1);
        t.report_ack(1, 0, 0, ack(1100, 100, 10));
        t.report_ack(1, 0, 0, ack(1200, 200, 10)); // duplicate: ignored
        t.report_ack(1, 0, 1, ack(1150, 150, 5));
        t.report_ack(1, 1, 0, ack(1300, 300, 0));
        t.report_completed(1, Some("/c/chk-1".into()));
        let c = t.checkpoint(1).unwrap();
        assert_eq!(c.status, CheckpointStatus::Completed);
        assert_eq!((c.num_subtasks, c.num_acknowledged_subtasks), (3, 3));
        assert_eq!(c.state_size, 15);
        assert_eq!(c.end_to_end_duration_ms, 300);
        assert_eq!(c.latest_ack_timestamp, Some(1300));
        assert_eq!(c.vertices[0].state_size, 15);
        assert_eq!((c.persisted_data, c.vertices[0].persisted_data), (3, 3));
        assert_eq!(t.summary().persisted_data.max, 3);
        assert_eq!(c.vertices[0].max_end_to_end_duration_ms, 150);
        assert_eq!(c.vertices[0].subtasks[1].unwrap().alignment_duration_ms, 3);
        assert_eq!(
            t.counts(),
            CheckpointCounts {
                restored: 0,
                total: 1,
                in_progress: 0,
                completed: 1,
                failed: 0
            }
        );
        assert_eq!(t.latest_completed().unwrap().external_path.as_deref(), Some("/c/chk-1"));
        assert!(t.latest_savepoint().is_none());
    }

    #[test]
    fn failures_savepoints_restores_and_discards_are_tracked_separately() {
        let mut t = CheckpointStatsTracker::new(10);
        t.report_pending(1, 0, SnapshotType::Checkpoint, false, &[(JobVertexId(1), 1)]);
        t.report_failed(1, 500, "Checkpoint expired before completing.");
        t.report_pending(2, 600, SnapshotType::Savepoint, false, &[(JobVertexId(1), 1)]);
        t.report_ack(2, 0, 0, ack(700, 100, 1));
        t.report_completed(2, Some("/sp/savepoint-1".into()));
        t.report_restored(2, 900, SnapshotType::Savepoint, Some("/sp/savepoint-1".into()));
        let f = t.latest_failed().unwrap();
        assert_eq!(
            f.failure_message.as_deref(),
            Some("Checkpoint expired before completing.")
        );
        assert_eq!((f.failure_timestamp, f.end_to_end_duration_ms), (Some(500), 500));
        assert_eq!(t.latest_savepoint().unwrap().id, 2);
        assert_eq!(t.latest_restored().unwrap().id, 2);
        assert_eq!(t.counts().restored, 1);
        assert_eq!(t.counts().failed, 1);
        t.report_pending(3, 1000, SnapshotType::Checkpoint, false, &[]);
        t.report_completed(3, None);
        t.report_discarded(3);
        assert!(t.checkpoint(3).unwrap().discarded);
        assert!(t.latest_completed().unwrap().discarded);
    }

    #[test]
    fn the_history_keeps_the_newest_entries_only() {
        let mut t = CheckpointStatsTracker::new(3);
        for id in 1..=5 {
            t.report_pending(id, id as i64, SnapshotType::Checkpoint, false, &[]);
            t.report_completed(id, None);
        }
        assert_eq!(t.history().map(|c| c.id).collect::<Vec<_>>(), vec![5, 4, 3]);
        assert_eq!(t.counts().completed, 5);
        assert_eq!(t.summary().state_size.count, 5);
        t.report_ack(1, 0, 0, ack(1, 1, 1)); // evicted: ignored, no panic
    }

    #[test]
    fn summaries_follow_commons_math_percentiles() {
        let s = StatsSummary::of([5, 1, 4, 2, 3]);
        assert_eq!((s.count, s.min, s.max, s.avg), (5, 1, 5, 3));
        assert_eq!(s.p50, 3.0);
        assert_eq!(s.p90, 5.0);
        let s = StatsSummary::of(1..=10);
        assert!((s.p50 - 5.5).abs() < 1e-9);
        assert!((s.p90 - 9.9).abs() < 1e-9);
        assert_eq!(StatsSummary::of([]), StatsSummary::default());
        let s = StatsSummary::of([7]);
        assert_eq!((s.min, s.max, s.p999), (7, 7, 7.0));
    }
}
