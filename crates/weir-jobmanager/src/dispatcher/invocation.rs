//! The wire form of a [`ProgramInvocation`]: how a job's code travels from the
//! JobManager to TaskManagers (which read it back in `weir-taskmanager`).

use weir_api::program::ProgramInvocation;
use weir_config::options as o;
use weir_config::{ConfigError, Configuration};
use weir_rest::JobSubmitRequest;

/// The wire form.
pub fn to_proto(inv: &ProgramInvocation) -> weir_rpc::ProgramInvocation {
    weir_rpc::ProgramInvocation {
        program: inv.program.clone(),
        args: inv.args.clone().into_iter().collect(),
        parallelism: inv.parallelism,
        max_parallelism: inv.max_parallelism.unwrap_or(0),
        chaining_enabled: inv.chaining_enabled,
        buffer_timeout_ms: inv.buffer_timeout_ms,
        auto_watermark_interval_ms: inv.auto_watermark_interval_ms,
        job_name: inv.job_name.clone(),
        runtime_mode: inv.runtime_mode.flink_name().to_string(),
        state_backend: inv.state_backend.clone().into_iter().collect(),
    }
}

/// The prefix of the options that choose and tune a job's state backend.
const STATE_BACKEND_PREFIX: &str = "state.backend";

/// What a submission asks for: the program invocation and the job's configuration.
#[derive(Debug, Clone)]
pub struct JobSubmission {
    /// The program, its arguments and job settings.
    pub invocation: ProgramInvocation,
    /// The cluster configuration overridden by the submission's `config` entries: the
    /// job's restart strategy and checkpointing options are read from it.
    pub config: Configuration,
    /// The savepoint or retained checkpoint to start from.
    pub savepoint_path: Option<String>,
    /// Start even when savepoint state belongs to no operator of the job.
    pub allow_non_restored_state: bool,
    /// The id the job runs under, fixed by an in-process client (Flink's
    /// `$internal.pipeline.job-id`) so its program is found by id; a fresh random id
    /// when absent, as for every REST submission.
    pub job_id: Option<weir_core::ids::JobId>,
}

/// The submission `request` asks for: the cluster configuration, overridden by the
/// submission's `config` entries, read through the typed option registry (so an
/// unknown key or a bad value is a clear error naming its key), then the request's own
/// fields.
pub fn from_submission(cluster: &Configuration, request: &JobSubmitRequest) -> Result<JobSubmission, ConfigError> {
    let job_config = Configuration::from_map(request.config.clone());
    if let Some(key) = job_config.unknown_keys().first() {
        return Err(ConfigError::UnknownKey { key: key.to_string() });
    }
    job_config.validate()?;
    let mut conf = cluster.clone();
    conf.extend_from(&job_config);
    let mut inv = ProgramInvocation::new(request.program.clone());
    inv.args = request.args.clone();
    inv.parallelism = match request.parallelism {
        Some(p) => {
            // The request's parallelism is the job's `parallelism.default` (what the
            // adaptive batch scheduler's max parallelism falls back to).
            conf.set(&o::PARALLELISM_DEFAULT, p);
            p
        }
        None => conf.get(&o::PARALLELISM_DEFAULT)?,
    };
    let configured_max = conf.get(&o::MAX_PARALLELISM)?;
    inv.max_parallelism = request
        .max_parallelism
        .or((configured_max > 0).then_some(configured_max as u32));
    inv.chaining_enabled = conf.get(&o::CHAINING_ENABLED)?;
    inv.buffer_timeout_ms = if conf.get(&o::BUFFER_TIMEOUT_ENABLED)? {
        conf.get(&o::BUFFER_TIMEOUT)?.as_millis() as i64
    } else {
        -1
    };
    inv.auto_watermark_interval_ms = conf.get(&o::AUTO_WATERMARK_INTERVAL)?.as_millis() as i64;
    inv.runtime_mode = conf.get(&o::RUNTIME_MODE)?;
    inv.job_name = request.job_name.clone().unwrap_or_else(|| request.program.clone());
    // The TaskManagers open the job's keyed state with these over their own settings.
    inv.state_backend = request
        .config
        .iter()
        .filter(|(key, _)| key.starts_with(STATE_BACKEND_PREFIX))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    inv.limits = weir_api::limits::PlanLimits {
        max_windows_per_record: Some(u64::from(conf.get(&o::MAX_WINDOWS_PER_RECORD)?)),
        max_statement_bytes: Some(conf.get(&o::SQL_MAX_STATEMENT_SIZE)?.bytes()),
    };
    Ok(JobSubmission {
        invocation: inv,
        config: conf,
        savepoint_path: request.savepoint_path.clone().filter(|p| !p.trim().is_empty()),
        allow_non_restored_state: request.allow_non_restored_state,
        job_id: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(config: &[(&str, &str)]) -> JobSubmitRequest {
        let mut r = JobSubmitRequest::new("p");
        r.config = config.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        r
    }

    #[test]
    fn submission_settings_override_the_cluster_configuration() {
        let mut cluster = Configuration::new();
        cluster
            .set_string("parallelism.default", "3")
            .set_string("pipeline.auto-watermark-interval", "1 s");
        let inv = from_submission(&cluster, &request(&[("execution.buffer-timeout.interval", "5 ms")]))
            .unwrap()
            .invocation;
        assert_eq!(
            (inv.parallelism, inv.buffer_timeout_ms, inv.auto_watermark_interval_ms),
            (3, 5, 1000)
        );
        assert!(inv.chaining_enabled);
        let inv = from_submission(
            &cluster,
            &request(&[
                ("execution.buffer-timeout.enabled", "false"),
                ("pipeline.operator-chaining.enabled", "false"),
            ]),
        )
        .unwrap()
        .invocation;
        assert_eq!(inv.buffer_timeout_ms, -1);
        assert!(!inv.chaining_enabled);
    }

    #[test]
    fn a_bad_submission_setting_is_an_error_naming_its_key() {
        let err = from_submission(
            &Configuration::new(),
            &request(&[("pipeline.operator-chaining.enabled", "nope")]),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("pipeline.operator-chaining.enabled"), "{err}");
    }

    #[test]
    fn a_jobs_own_state_backend_settings_travel_with_its_invocation_and_bad_ones_are_refused() {
        let sub = from_submission(
            &Configuration::new(),
            &request(&[
                ("state.backend.type", "rocksdb"),
                ("state.backend.rocksdb.weir.cache-entries", "16"),
                ("parallelism.default", "2"),
            ]),
        )
        .unwrap();
        assert_eq!(
            sub.invocation.state_backend.into_iter().collect::<Vec<_>>(),
            vec![
                ("state.backend.rocksdb.weir.cache-entries".to_string(), "16".to_string()),
                ("state.backend.type".to_string(), "rocksdb".to_string()),
            ]
        );
        assert_eq!(
            sub.config.get(&o::STATE_BACKEND_TYPE).unwrap(),
            weir_config::StateBackendType::RocksDb
        );
        let plain = from_submission(&Configuration::new(), &request(&[])).unwrap();
        assert!(plain.invocation.state_backend.is_empty());
        let err = from_submission(&Configuration::new(), &request(&[("state.backend.type", "forst")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("state.backend.type") && err.contains("forst"), "{err}");
    }

    #[test]
    fn an_unknown_submission_key_is_refused_by_name() {
        let err = from_submission(
            &Configuration::new(),
            &request(&[("execution.checkpointing.intervall", "1 s")]),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "Unknown configuration key 'execution.checkpointing.intervall': Weir has no option of that name"
        );
    }

    #[test]
    fn the_job_configuration_carries_the_submission_restart_and_checkpoint_options() {
        let mut cluster = Configuration::new();
        cluster.set_string("restart-strategy.type", "none");
        let sub = from_submission(
            &cluster,
            &request(&[
                ("restart-strategy.type", "fixed-delay"),
                ("execution.checkpointing.interval", "250 ms"),
            ]),
        )
        .unwrap();
        assert_eq!(sub.config.get_string("restart-strategy.type"), Some("fixed-delay"));
        assert_eq!(
            sub.config.get_string("execution.checkpointing.interval"),
            Some("250 ms")
        );
        assert_eq!(cluster.get_string("restart-strategy.type"), Some("none"));
    }
}
