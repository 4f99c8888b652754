//! `GET /jobs/:jid/checkpoints` and `GET /jobs/:jid/checkpoints/details/:checkpointid`:
//! a job's checkpoint statistics, in Flink 2.3's shapes.
//!
//! Owns [`CheckpointingStatistics`] (counts, [`CheckpointSummary`], [`LatestCheckpoints`]
//! and the recent history), [`CheckpointStatistics`] (one checkpoint, also the body of
//! the details endpoint, see [`CheckpointDetails`]) with its per-vertex
//! [`TaskCheckpointStatistics`], and [`StatsSummary`] with Flink's percentile
//! estimation.
//!
//! Invariants, as in Flink 2.3:
//! - every checkpoint entry starts with `className` (`completed`, `failed`,
//!   `in_progress`) and `status` (`COMPLETED`, `FAILED`, `IN_PROGRESS`), both derived
//!   from its [`CheckpointOutcome`], so they never disagree; completed entries end with
//!   `external_path` and `discarded`, failed ones with `failure_timestamp` and
//!   `failure_message`, in-progress ones with `tasks`;
//! - `min`, `max` and `avg` of a summary are integers (0 when nothing was measured),
//!   the percentiles doubles (`"NaN"` when nothing was measured);
//! - `alignment_buffered` is deprecated in Flink and always 0 (percentiles `0.0`);
//! - a job without checkpointing answers [`CheckpointingStatistics::disabled`] with
//!   200, not an error (see `job_checkpoints_failed_no_ckpt.json`).

use crate::serde_util::jackson_double;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

/// The status of a checkpoint (Flink's `CheckpointStatsStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CheckpointStatus {
    /// Triggered, not every acknowledgement is in yet.
    InProgress,
    /// Every task acknowledged and the metadata was written.
    Completed,
    /// Declined, expired or aborted.
    Failed,
}

/// `checkpoint_type` of an entry (Flink's `RestAPICheckpointType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CheckpointType {
    /// An aligned periodic checkpoint.
    Checkpoint,
    /// A periodic checkpoint taken unaligned (in-flight data stored as channel state).
    UnalignedCheckpoint,
    /// A savepoint the user asked for.
    Savepoint,
    /// The savepoint of stop-with-savepoint.
    SyncSavepoint,
}

/// `counts` of [`CheckpointingStatistics`], over the job's whole life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct CheckpointCounts {
    /// How many times the job was restored from a checkpoint.
    pub restored: u64,
    /// Checkpoints triggered: `in_progress + completed + failed`.
    pub total: u64,
    /// Checkpoints triggered and not yet completed or failed.
    pub in_progress: u64,
    /// Checkpoints completed.
    pub completed: u64,
    /// Checkpoints failed.
    pub failed: u64,
}

/// One measure over the completed checkpoints: `{min,max,avg,p50,p90,p95,p99,p999}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StatsSummary {
    /// Smallest value, 0 when there is none.
    pub min: i64,
    /// Largest value, 0 when there is none.
    pub max: i64,
    /// Mean, rounded down as Flink's integer division does; 0 when there is none.
    pub avg: i64,
    /// Median, `NaN` when there is no value.
    #[serde(serialize_with = "jackson_double")]
    pub p50: f64,
    /// 90th percentile.
    #[serde(serialize_with = "jackson_double")]
    pub p90: f64,
    /// 95th percentile.
    #[serde(serialize_with = "jackson_double")]
    pub p95: f64,
    /// 99th percentile.
    #[serde(serialize_with = "jackson_double")]
    pub p99: f64,
    /// 99.9th percentile.
    #[serde(serialize_with = "jackson_double")]
    pub p999: f64,
}

impl StatsSummary {
    /// The summary of `values`, with the percentiles estimated as Flink does (Apache
    /// Commons Math's default `Percentile`: position `p·(n+1)`, linear interpolation,
    /// clamped to the smallest and largest value).
    pub fn of(values: &[i64]) -> Self {
        if values.is_empty() {
            return Self::uniform(f64::NAN);
        }
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let sum: i128 = sorted.iter().map(|&v| i128::from(v)).sum();
        let values: Vec<f64> = sorted.iter().map(|&v| v as f64).collect();
        let p = |q: f64| weir_core::stats::percentile(&values, q);
        Self {
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            avg: (sum / sorted.len() as i128) as i64,
            p50: p(50.0),
            p90: p(90.0),
            p95: p(95.0),
            p99: p(99.0),
            p999: p(99.9),
        }
    }

    /// All zeros, percentiles `0.0`: Flink's deprecated `alignment_buffered`.
    pub fn zero() -> Self {
        Self::uniform(0.0)
    }

    fn uniform(percentiles: f64) -> Self {
        Self {
            min: 0,
            max: 0,
            avg: 0,
            p50: percentiles,
            p90: percentiles,
            p95: percentiles,
            p99: percentiles,
            p999: percentiles,
        }
    }
}

/// `summary` of [`CheckpointingStatistics`]: measures over the completed checkpoints.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CheckpointSummary {
    /// Bytes persisted by each checkpoint (the increment for incremental checkpoints).
    pub checkpointed_size: StatsSummary,
    /// Full state size of each checkpoint in bytes.
    pub state_size: StatsSummary,
    /// Trigger to last acknowledgement, in ms.
    pub end_to_end_duration: StatsSummary,
    /// Deprecated, always zero.
    pub alignment_buffered: StatsSummary,
    /// Bytes processed during alignment.
    pub processed_data: StatsSummary,
    /// Bytes of in-flight data persisted (unaligned checkpoints).
    pub persisted_data: StatsSummary,
}

impl CheckpointSummary {
    /// The summary of the completed entries of `checkpoints` (others are ignored).
    pub fn of_completed<'a>(checkpoints: impl IntoIterator<Item = &'a CheckpointStatistics>) -> Self {
        let completed: Vec<&CheckpointStatistics> = checkpoints
            .into_iter()
            .filter(|c| c.status() == CheckpointStatus::Completed)
            .collect();
        let of =
            |f: fn(&CheckpointStatistics) -> i64| StatsSummary::of(&completed.iter().map(|c| f(c)).collect::<Vec<_>>());
        Self {
            checkpointed_size: of(|c| c.checkpointed_size),
            state_size: of(|c| c.state_size),
            end_to_end_duration: of(|c| c.end_to_end_duration),
            alignment_buffered: StatsSummary::zero(),
            processed_data: of(|c| c.processed_data),
            persisted_data: of(|c| c.persisted_data),
        }
    }
}

/// How a checkpoint ended (or that it has not yet), with the fields that only that
/// outcome has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointOutcome {
    /// Still waiting for acknowledgements.
    InProgress,
    /// Completed.
    Completed {
        /// Where the metadata is, or `<checkpoint-not-externally-addressable>` for
        /// checkpoints kept in the JobManager.
        external_path: Option<String>,
        /// Whether the checkpoint has since been discarded (subsumed).
        discarded: bool,
    },
    /// Failed.
    Failed {
        /// When it failed (ms since the epoch).
        failure_timestamp: i64,
        /// Why, e.g. `Checkpoint was declined (tasks not ready)`.
        failure_message: Option<String>,
    },
}

/// The statistics of one checkpoint of one vertex (a value of `tasks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TaskCheckpointStatistics {
    /// The checkpoint's id.
    pub id: u64,
    /// The checkpoint's status.
    pub status: CheckpointStatus,
    /// Last acknowledgement of a subtask of this vertex (ms since the epoch), -1 if none.
    pub latest_ack_timestamp: i64,
    /// Bytes persisted by this vertex.
    pub checkpointed_size: i64,
    /// State size of this vertex in bytes.
    pub state_size: i64,
    /// Trigger to this vertex's last acknowledgement, in ms.
    pub end_to_end_duration: i64,
    /// Deprecated, always 0.
    pub alignment_buffered: i64,
    /// Bytes processed during alignment.
    pub processed_data: i64,
    /// Bytes of in-flight data persisted.
    pub persisted_data: i64,
    /// Subtasks of the vertex.
    pub num_subtasks: u32,
    /// Subtasks that acknowledged.
    pub num_acknowledged_subtasks: u32,
}

/// One checkpoint: an entry of `history` and `latest`, and (with `tasks` filled) the
/// body of `GET /jobs/:jid/checkpoints/details/:checkpointid`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointStatistics {
    /// The checkpoint's id (1, 2, …).
    pub id: u64,
    /// Whether it is a savepoint.
    pub is_savepoint: bool,
    /// `CANONICAL` or `NATIVE` for savepoints, `None` (null) for checkpoints.
    pub savepoint_format: Option<String>,
    /// When it was triggered (ms since the epoch).
    pub trigger_timestamp: i64,
    /// Last acknowledgement (ms since the epoch), -1 if none.
    pub latest_ack_timestamp: i64,
    /// Bytes persisted.
    pub checkpointed_size: i64,
    /// Full state size in bytes.
    pub state_size: i64,
    /// Trigger to last acknowledgement (or to failure), in ms.
    pub end_to_end_duration: i64,
    /// Deprecated, always 0.
    pub alignment_buffered: i64,
    /// Bytes processed during alignment.
    pub processed_data: i64,
    /// Bytes of in-flight data persisted.
    pub persisted_data: i64,
    /// Subtasks that take part.
    pub num_subtasks: u32,
    /// Subtasks that acknowledged.
    pub num_acknowledged_subtasks: u32,
    /// What kind of snapshot.
    pub checkpoint_type: CheckpointType,
    /// Per vertex id (32 hex characters); empty in `history` and `latest`, filled by
    /// the details endpoint.
    pub tasks: BTreeMap<String, TaskCheckpointStatistics>,
    /// How it ended, with the fields of that outcome.
    pub outcome: CheckpointOutcome,
}

/// The body of `GET /jobs/:jid/checkpoints/details/:checkpointid`: one checkpoint with
/// its per-vertex `tasks`.
pub type CheckpointDetails = CheckpointStatistics;

impl CheckpointStatistics {
    /// The status its outcome implies.
    pub fn status(&self) -> CheckpointStatus {
        match self.outcome {
            CheckpointOutcome::InProgress => CheckpointStatus::InProgress,
            CheckpointOutcome::Completed { .. } => CheckpointStatus::Completed,
            CheckpointOutcome::Failed { .. } => CheckpointStatus::Failed,
        }
    }

    /// Flink's `className`: `in_progress`, `completed` or `failed`.
    pub fn class_name(&self) -> &'static str {
        match self.outcome {
            CheckpointOutcome::InProgress => "in_progress",
            CheckpointOutcome::Completed { .. } => "completed",
            CheckpointOutcome::Failed { .. } => "failed",
        }
    }
}

impl Serialize for CheckpointStatistics {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let extra = if self.outcome == CheckpointOutcome::InProgress {
            0
        } else {
            2
        };
        let mut m = s.serialize_map(Some(17 + extra))?;
        m.serialize_entry("className", self.class_name())?;
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("status", &self.status())?;
        m.serialize_entry("is_savepoint", &self.is_savepoint)?;
        m.serialize_entry("savepointFormat", &self.savepoint_format)?;
        m.serialize_entry("trigger_timestamp", &self.trigger_timestamp)?;
        m.serialize_entry("latest_ack_timestamp", &self.latest_ack_timestamp)?;
        m.serialize_entry("checkpointed_size", &self.checkpointed_size)?;
        m.serialize_entry("state_size", &self.state_size)?;
        m.serialize_entry("end_to_end_duration", &self.end_to_end_duration)?;
        m.serialize_entry("alignment_buffered", &self.alignment_buffered)?;
        m.serialize_entry("processed_data", &self.processed_data)?;
        m.serialize_entry("persisted_data", &self.persisted_data)?;
        m.serialize_entry("num_subtasks", &self.num_subtasks)?;
        m.serialize_entry("num_acknowledged_subtasks", &self.num_acknowledged_subtasks)?;
        m.serialize_entry("checkpoint_type", &self.checkpoint_type)?;
        m.serialize_entry("tasks", &self.tasks)?;
        match &self.outcome {
            CheckpointOutcome::InProgress => {}
            CheckpointOutcome::Completed {
                external_path,
                discarded,
            } => {
                m.serialize_entry("external_path", external_path)?;
                m.serialize_entry("discarded", discarded)?;
            }
            CheckpointOutcome::Failed {
                failure_timestamp,
                failure_message,
            } => {
                m.serialize_entry("failure_timestamp", failure_timestamp)?;
                m.serialize_entry("failure_message", failure_message)?;
            }
        }
        m.end()
    }
}

/// The checkpoint the job was last restored from (`latest.restored`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestoredCheckpointStatistics {
    /// The checkpoint's id.
    pub id: u64,
    /// When the restore happened (ms since the epoch).
    pub restore_timestamp: i64,
    /// Whether it was a savepoint.
    pub is_savepoint: bool,
    /// Where its metadata is.
    pub external_path: Option<String>,
}

/// `latest` of [`CheckpointingStatistics`]; each is `null` when there is none.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct LatestCheckpoints {
    /// The newest completed checkpoint.
    pub completed: Option<CheckpointStatistics>,
    /// The newest completed savepoint.
    pub savepoint: Option<CheckpointStatistics>,
    /// The newest failed checkpoint.
    pub failed: Option<CheckpointStatistics>,
    /// The checkpoint last restored from.
    pub restored: Option<RestoredCheckpointStatistics>,
}

/// The body of `GET /jobs/:jid/checkpoints`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckpointingStatistics {
    /// Counts over the job's life.
    pub counts: CheckpointCounts,
    /// Measures over the completed checkpoints.
    pub summary: CheckpointSummary,
    /// The newest checkpoint of each kind.
    pub latest: LatestCheckpoints,
    /// The most recent checkpoints (`web.checkpoints.history`, 10), newest first.
    pub history: Vec<CheckpointStatistics>,
}

impl CheckpointingStatistics {
    /// What Flink 2.3 answers for a job that never checkpointed, checkpointing off or
    /// not: zero counts, an empty summary, no latest checkpoints, no history.
    pub fn disabled() -> Self {
        Self {
            counts: CheckpointCounts::default(),
            summary: CheckpointSummary::of_completed([]),
            latest: LatestCheckpoints::default(),
            history: Vec::new(),
        }
    }
}
