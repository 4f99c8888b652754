//! `GET /jobs/:jid/checkpoints/config`: how a job checkpoints, in Flink 2.3's shape.
//!
//! Owns [`CheckpointConfigInfo`], [`ExternalizedCheckpointInfo`] and
//! [`CheckpointingProcessingMode`].
//!
//! Invariant, as in Flink 2.3: a streaming job without checkpointing still answers 200,
//! with `interval` = `Long.MAX_VALUE` ([`DISABLED_CHECKPOINT_INTERVAL`]) and mode
//! `at_least_once` (see `job_checkpoints_config_no_ckpt.json`);
//! [`CheckpointConfigInfo::disabled`] is that answer. Clients (Flink's web UI, Weir's)
//! recognise disabled checkpointing by that interval.

use serde::Serialize;

/// The `interval` Flink reports for a job without periodic checkpoints
/// (`Long.MAX_VALUE`).
pub const DISABLED_CHECKPOINT_INTERVAL: i64 = i64::MAX;

/// `mode` of [`CheckpointConfigInfo`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointingProcessingMode {
    /// `exactly_once`: aligned (or unaligned) barriers.
    ExactlyOnce,
    /// `at_least_once`: no alignment; also what a job without checkpointing reports.
    AtLeastOnce,
}

/// `externalization` of [`CheckpointConfigInfo`]: whether completed checkpoints are
/// retained when the job ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ExternalizedCheckpointInfo {
    /// Whether checkpoints are retained (`RETAIN_ON_CANCELLATION` or
    /// `DELETE_ON_CANCELLATION`).
    pub enabled: bool,
    /// Whether they are deleted when the job is cancelled (true unless
    /// `RETAIN_ON_CANCELLATION`).
    pub delete_on_cancellation: bool,
}

/// The body of `GET /jobs/:jid/checkpoints/config`. Durations are in ms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckpointConfigInfo {
    /// `execution.checkpointing.mode`.
    pub mode: CheckpointingProcessingMode,
    /// `execution.checkpointing.interval`; [`DISABLED_CHECKPOINT_INTERVAL`] when off.
    pub interval: i64,
    /// `execution.checkpointing.timeout` (default 10 min).
    pub timeout: i64,
    /// `execution.checkpointing.min-pause`.
    pub min_pause: i64,
    /// `execution.checkpointing.max-concurrent-checkpoints` (default 1).
    pub max_concurrent: i64,
    /// Retention of completed checkpoints.
    pub externalization: ExternalizedCheckpointInfo,
    /// The state backend's class name, e.g. `HashMapStateBackend`.
    pub state_backend: String,
    /// The checkpoint storage's class name: `JobManagerCheckpointStorage` or
    /// `FileSystemCheckpointStorage`.
    pub checkpoint_storage: String,
    /// `execution.checkpointing.unaligned.enabled`.
    pub unaligned_checkpoints: bool,
    /// `execution.checkpointing.tolerable-failed-checkpoints`.
    pub tolerable_failed_checkpoints: i32,
    /// `execution.checkpointing.aligned-checkpoint-timeout`.
    pub aligned_checkpoint_timeout: i64,
    /// `execution.checkpointing.checkpoints-after-tasks-finish`.
    pub checkpoints_after_tasks_finish: bool,
    /// `state.changelog.enabled`.
    pub state_changelog_enabled: bool,
    /// `state.changelog.periodic-materialize.interval` (default 10 min).
    pub changelog_periodic_materialization_interval: i64,
    /// `state.changelog.storage` (default `memory`).
    pub changelog_storage: String,
}

impl CheckpointConfigInfo {
    /// Flink's defaults with checkpoints every `interval_ms`, exactly once, kept in the
    /// JobManager.
    pub fn with_interval(interval_ms: i64) -> Self {
        Self {
            mode: CheckpointingProcessingMode::ExactlyOnce,
            interval: interval_ms,
            timeout: 600_000,
            min_pause: 0,
            max_concurrent: 1,
            externalization: ExternalizedCheckpointInfo {
                enabled: false,
                delete_on_cancellation: true,
            },
            state_backend: "HashMapStateBackend".to_string(),
            checkpoint_storage: "JobManagerCheckpointStorage".to_string(),
            unaligned_checkpoints: false,
            tolerable_failed_checkpoints: 0,
            aligned_checkpoint_timeout: 0,
            checkpoints_after_tasks_finish: true,
            state_changelog_enabled: false,
            changelog_periodic_materialization_interval: 600_000,
            changelog_storage: "memory".to_string(),
        }
    }

    /// What Flink 2.3 answers for a job without checkpointing: the defaults with
    /// [`DISABLED_CHECKPOINT_INTERVAL`] and `at_least_once`.
    pub fn disabled() -> Self {
        Self {
            mode: CheckpointingProcessingMode::AtLeastOnce,
            ..Self::with_interval(DISABLED_CHECKPOINT_INTERVAL)
        }
    }

    /// Whether periodic checkpoints are on.
    pub fn is_enabled(&self) -> bool {
        self.interval != DISABLED_CHECKPOINT_INTERVAL
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample_check::{assert_matches_sample, sample};

    #[test]
    fn a_checkpointed_job_answers_exactly_like_flinks_sample() {
        let config = CheckpointConfigInfo::with_interval(2000);
        assert_matches_sample(&config, "job_checkpoints_config.json");
        assert_eq!(
            serde_json::to_value(&config).ok(),
            Some(sample("job_checkpoints_config.json"))
        );
        assert!(config.is_enabled());
    }

    #[test]
    fn a_job_without_checkpointing_answers_exactly_like_flinks_sample() {
        let config = CheckpointConfigInfo::disabled();
        assert_matches_sample(&config, "job_checkpoints_config_no_ckpt.json");
        assert_eq!(
            serde_json::to_value(&config).ok(),
            Some(sample("job_checkpoints_config_no_ckpt.json"))
        );
        assert!(!config.is_enabled());
    }
}
