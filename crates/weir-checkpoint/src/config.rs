//! [`CheckpointConfig`]: Flink's checkpoint options of one job, typed and checked.
//!
//! The options are declared in `weir_config::options` (Flink's keys, deprecated keys,
//! descriptions and defaults); this module reads them once, applies Flink's checks
//! (`CheckpointConfig`/`CheckpointCoordinatorConfiguration`) and gives the coordinator
//! plain values. Invariants of a built config: `timeout >= 10 ms`, an interval, when
//! set, `>= 10 ms`, `max_concurrent >= 1`, `num_retained >= 1`,
//! `data_inline_threshold <= 1 MiB`, and `unaligned_enabled` only in exactly-once mode
//! (Flink warns and disables unaligned checkpoints in at-least-once mode).

use std::time::Duration;

use weir_config::options::{
    CHECKPOINTING_ALIGNED_TIMEOUT, CHECKPOINTING_DATA_INLINE_THRESHOLD, CHECKPOINTING_EXTERNALIZED_RETENTION,
    CHECKPOINTING_INTERVAL, CHECKPOINTING_MAX_CONCURRENT, CHECKPOINTING_MIN_PAUSE, CHECKPOINTING_MODE,
    CHECKPOINTING_NUM_RETAINED, CHECKPOINTING_TIMEOUT, CHECKPOINTING_TOLERABLE_FAILURES,
    CHECKPOINTING_UNALIGNED_ENABLED, CHECKPOINTS_DIRECTORY, CHECKPOINTS_HISTORY_SIZE, SAVEPOINT_DIRECTORY,
};
use weir_config::{ConfigError, ConfigOption, Configuration, ExternalizedCheckpointRetention};
use weir_core::CheckpointingMode;

/// Flink's `MINIMAL_CHECKPOINT_TIME`: the smallest interval and timeout, 10 ms.
pub const MINIMAL_CHECKPOINT_TIME: Duration = Duration::from_millis(10);

/// The largest `execution.checkpointing.data-inline-threshold`, 1 MiB.
pub const MAX_DATA_INLINE_THRESHOLD: u64 = 1024 * 1024;

/// The checkpoint settings of a job (Flink's defaults in [`CheckpointConfig::default`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointConfig {
    /// `execution.checkpointing.interval`; `None`: periodic checkpoints are off.
    pub interval: Option<Duration>,
    /// `execution.checkpointing.mode` (EXACTLY_ONCE).
    pub mode: CheckpointingMode,
    /// `execution.checkpointing.timeout` (10 min).
    pub timeout: Duration,
    /// `execution.checkpointing.min-pause` (0): time between the end of a checkpoint and
    /// the next periodic trigger.
    pub min_pause: Duration,
    /// `execution.checkpointing.max-concurrent-checkpoints` (1).
    pub max_concurrent: u32,
    /// `execution.checkpointing.tolerable-failed-checkpoints` (0).
    pub tolerable_failures: u32,
    /// `execution.checkpointing.num-retained` (1; old key `state.checkpoints.num-retained`).
    pub num_retained: u32,
    /// `execution.checkpointing.externalized-checkpoint-retention` (NO_EXTERNALIZED_CHECKPOINTS).
    pub externalized_retention: ExternalizedCheckpointRetention,
    /// `execution.checkpointing.dir` (old `state.checkpoints.dir`); `None`: checkpoints
    /// live in the JobManager's memory.
    pub checkpoint_dir: Option<String>,
    /// `execution.checkpointing.savepoint-dir` (old `state.savepoints.dir`).
    pub savepoint_dir: Option<String>,
    /// `execution.checkpointing.data-inline-threshold` in bytes (20 KiB, at most 1 MiB):
    /// state below it is carried inline in `_metadata`.
    pub data_inline_threshold: u64,
    /// `execution.checkpointing.unaligned.enabled` (false), already forced off in
    /// at-least-once mode.
    pub unaligned_enabled: bool,
    /// `execution.checkpointing.aligned-checkpoint-timeout` (0 ms).
    pub aligned_checkpoint_timeout: Duration,
    /// `web.checkpoints.history` (10): checkpoints kept in the statistics' history.
    pub history_size: u32,
    /// `state.backend.type` (hashmap), as REST reports it.
    pub state_backend: weir_config::StateBackendType,
    /// `execution.checkpointing.incremental` (false; old key `state.backend.incremental`).
    pub incremental: bool,
}

impl Default for CheckpointConfig {
    fn default() -> Self {
        CheckpointConfig {
            interval: None,
            mode: CheckpointingMode::ExactlyOnce,
            timeout: Duration::from_secs(600),
            min_pause: Duration::ZERO,
            max_concurrent: 1,
            tolerable_failures: 0,
            num_retained: 1,
            externalized_retention: ExternalizedCheckpointRetention::NoExternalizedCheckpoints,
            checkpoint_dir: None,
            savepoint_dir: None,
            data_inline_threshold: 20 * 1024,
            unaligned_enabled: false,
            aligned_checkpoint_timeout: Duration::ZERO,
            history_size: 10,
            state_backend: weir_config::StateBackendType::HashMap,
            incremental: false,
        }
    }
}

impl CheckpointConfig {
    /// Reads and checks the checkpoint options of `conf`. A value that does not parse or
    /// is out of range is an error naming its key.
    pub fn from_config(conf: &Configuration) -> Result<Self, ConfigError> {
        let mode = conf.get(&CHECKPOINTING_MODE)?;
        let config = CheckpointConfig {
            interval: conf.get(&CHECKPOINTING_INTERVAL)?,
            mode,
            timeout: conf.get(&CHECKPOINTING_TIMEOUT)?,
            min_pause: conf.get(&CHECKPOINTING_MIN_PAUSE)?,
            max_concurrent: conf.get(&CHECKPOINTING_MAX_CONCURRENT)?,
            tolerable_failures: conf.get(&CHECKPOINTING_TOLERABLE_FAILURES)?,
            num_retained: conf.get(&CHECKPOINTING_NUM_RETAINED)?,
            externalized_retention: conf.get(&CHECKPOINTING_EXTERNALIZED_RETENTION)?,
            checkpoint_dir: conf.get(&CHECKPOINTS_DIRECTORY)?.filter(|d| !d.trim().is_empty()),
            savepoint_dir: conf.get(&SAVEPOINT_DIRECTORY)?.filter(|d| !d.trim().is_empty()),
            data_inline_threshold: conf.get(&CHECKPOINTING_DATA_INLINE_THRESHOLD)?.0,
            unaligned_enabled: conf.get(&CHECKPOINTING_UNALIGNED_ENABLED)? && mode == CheckpointingMode::ExactlyOnce,
            aligned_checkpoint_timeout: conf.get(&CHECKPOINTING_ALIGNED_TIMEOUT)?,
            history_size: conf.get(&CHECKPOINTS_HISTORY_SIZE)?,
            state_backend: conf.get(&weir_config::options::STATE_BACKEND_TYPE)?,
            incremental: conf.get(&weir_config::options::CHECKPOINTING_INCREMENTAL)?,
        };
        config.validate()?;
        Ok(config)
    }

    /// Checks Flink's bounds; the error names the offending key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(interval) = self.interval {
            require(
                interval >= MINIMAL_CHECKPOINT_TIME,
                &CHECKPOINTING_INTERVAL,
                format!("{} ms", interval.as_millis()),
                "Checkpoint interval must be larger than or equal to 10 ms",
            )?;
        }
        require(
            self.timeout >= MINIMAL_CHECKPOINT_TIME,
            &CHECKPOINTING_TIMEOUT,
            format!("{} ms", self.timeout.as_millis()),
            "Checkpoint timeout must be larger than or equal to 10 ms",
        )?;
        require(
            self.max_concurrent >= 1,
            &CHECKPOINTING_MAX_CONCURRENT,
            self.max_concurrent,
            "The maximum number of concurrent attempts must be at least one.",
        )?;
        require(
            self.num_retained >= 1,
            &CHECKPOINTING_NUM_RETAINED,
            self.num_retained,
            "The number of retained checkpoints must be at least one.",
        )?;
        require(
            self.data_inline_threshold <= MAX_DATA_INLINE_THRESHOLD,
            &CHECKPOINTING_DATA_INLINE_THRESHOLD,
            format!("{} bytes", self.data_inline_threshold),
            "The threshold must be at most 1 mb.",
        )?;
        for (option, dir) in [
            (&CHECKPOINTS_DIRECTORY, &self.checkpoint_dir),
            (&SAVEPOINT_DIRECTORY, &self.savepoint_dir),
        ] {
            if let Some(dir) = dir {
                if let Err(e) = weir_filesystem::Location::parse(dir) {
                    require(false, option, dir, &e.to_string())?;
                }
            }
        }
        Ok(())
    }

    /// Whether periodic checkpoints are on (an interval is set).
    pub fn is_enabled(&self) -> bool {
        self.interval.is_some()
    }

    /// The interval in milliseconds, if set.
    pub fn interval_ms(&self) -> Option<i64> {
        self.interval.map(millis)
    }

    /// The timeout in milliseconds.
    pub fn timeout_ms(&self) -> i64 {
        millis(self.timeout)
    }

    /// The min pause in milliseconds.
    pub fn min_pause_ms(&self) -> i64 {
        millis(self.min_pause)
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn require<T>(ok: bool, option: &ConfigOption<T>, value: impl ToString, message: &str) -> Result<(), ConfigError> {
    if ok {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            key: option.key().to_string(),
            value: value.to_string(),
            message: message.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(entries: &[(&str, &str)]) -> Configuration {
        let mut conf = Configuration::new();
        for (k, v) in entries {
            conf.set_string(*k, *v);
        }
        conf
    }

    #[test]
    fn a_checkpoint_or_savepoint_directory_with_an_unsupported_scheme_is_refused_naming_its_key() {
        let err = CheckpointConfig::from_config(&conf(&[("execution.checkpointing.dir", "hdfs://nn/chk")]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "Invalid value 'hdfs://nn/chk' for key 'execution.checkpointing.dir': Unsupported file system \
             scheme 'hdfs' in 'hdfs://nn/chk': supported are local paths, file://, s3:// (or s3a://), gs:// \
             and az:// (or abfs://, abfss://)"
        );
        let err = CheckpointConfig::from_config(&conf(&[("state.savepoints.dir", "s3:///no-bucket")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("execution.checkpointing.savepoint-dir"), "{err}");
        for dir in ["s3://b/chk", "gs://b/chk", "az://c/chk", "file:///chk", "/chk"] {
            let config = CheckpointConfig::from_config(&conf(&[("execution.checkpointing.dir", dir)])).unwrap();
            assert_eq!(config.checkpoint_dir.as_deref(), Some(dir));
        }
    }

    #[test]
    fn an_empty_configuration_gives_flinks_defaults_with_checkpointing_off() {
        let config = CheckpointConfig::from_config(&Configuration::new()).unwrap();
        assert_eq!(config, CheckpointConfig::default());
        assert!(!config.is_enabled());
        assert_eq!(config.timeout_ms(), 600_000);
        assert_eq!(config.min_pause_ms(), 0);
    }

    #[test]
    fn every_option_is_read_with_its_flink_key() {
        let config = CheckpointConfig::from_config(&conf(&[
            ("execution.checkpointing.interval", "5 s"),
            ("execution.checkpointing.mode", "at_least_once"),
            ("execution.checkpointing.timeout", "1 min"),
            ("execution.checkpointing.min-pause", "500 ms"),
            ("execution.checkpointing.max-concurrent-checkpoints", "3"),
            ("execution.checkpointing.tolerable-failed-checkpoints", "2"),
            ("execution.checkpointing.num-retained", "4"),
            (
                "execution.checkpointing.externalized-checkpoint-retention",
                "retain_on_cancellation",
            ),
            ("execution.checkpointing.dir", "file:///tmp/chk"),
            ("execution.checkpointing.savepoint-dir", "/tmp/sp"),
            ("execution.checkpointing.data-inline-threshold", "1 kb"),
            ("execution.checkpointing.aligned-checkpoint-timeout", "30 s"),
            ("web.checkpoints.history", "20"),
        ]))
        .unwrap();
        assert_eq!(config.interval_ms(), Some(5000));
        assert_eq!(config.mode, CheckpointingMode::AtLeastOnce);
        assert_eq!(config.timeout_ms(), 60_000);
        assert_eq!(config.min_pause_ms(), 500);
        assert_eq!(config.max_concurrent, 3);
        assert_eq!(config.tolerable_failures, 2);
        assert_eq!(config.num_retained, 4);
        assert_eq!(
            config.externalized_retention,
            ExternalizedCheckpointRetention::RetainOnCancellation
        );
        assert_eq!(config.checkpoint_dir.as_deref(), Some("file:///tmp/chk"));
        assert_eq!(config.savepoint_dir.as_deref(), Some("/tmp/sp"));
        assert_eq!(config.data_inline_threshold, 1024);
        assert_eq!(config.aligned_checkpoint_timeout, Duration::from_secs(30));
        assert_eq!(config.history_size, 20);
    }

    #[test]
    fn old_keys_of_dir_savepoint_dir_and_num_retained_still_work() {
        let config = CheckpointConfig::from_config(&conf(&[
            ("state.checkpoints.dir", "/old/chk"),
            ("state.savepoints.dir", "/old/sp"),
            ("state.checkpoints.num-retained", "7"),
        ]))
        .unwrap();
        assert_eq!(config.checkpoint_dir.as_deref(), Some("/old/chk"));
        assert_eq!(config.savepoint_dir.as_deref(), Some("/old/sp"));
        assert_eq!(config.num_retained, 7);
    }

    #[test]
    fn unaligned_checkpoints_are_disabled_in_at_least_once_mode() {
        let on =
            CheckpointConfig::from_config(&conf(&[("execution.checkpointing.unaligned.enabled", "true")])).unwrap();
        assert!(on.unaligned_enabled);
        let off = CheckpointConfig::from_config(&conf(&[
            ("execution.checkpointing.unaligned.enabled", "true"),
            ("execution.checkpointing.mode", "AT_LEAST_ONCE"),
        ]))
        .unwrap();
        assert!(!off.unaligned_enabled);
    }

    #[test]
    fn out_of_range_values_are_errors_naming_the_key() {
        let cases = [
            ("execution.checkpointing.interval", "5 ms"),
            ("execution.checkpointing.timeout", "1 ms"),
            ("execution.checkpointing.max-concurrent-checkpoints", "0"),
            ("execution.checkpointing.num-retained", "0"),
            ("execution.checkpointing.data-inline-threshold", "2 mb"),
        ];
        for (key, value) in cases {
            let err = CheckpointConfig::from_config(&conf(&[(key, value)])).unwrap_err();
            assert!(
                matches!(&err, ConfigError::OutOfRange { key: k, .. } if k == key),
                "{key}: {err:?}"
            );
        }
    }

    #[test]
    fn an_unknown_enum_value_is_an_error_naming_the_key() {
        let err = CheckpointConfig::from_config(&conf(&[(
            "execution.checkpointing.externalized-checkpoint-retention",
            "sometimes",
        )]))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("key 'execution.checkpointing.externalized-checkpoint-retention'"),
            "{err}"
        );
    }
}
