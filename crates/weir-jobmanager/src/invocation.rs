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
    }
}

/// The invocation a submission asks for: the cluster configuration, overridden by the
/// submission's `config` entries, read through the typed option registry (so a bad
/// value is a clear error naming its key), then the request's own fields.
pub fn from_submission(cluster: &Configuration, request: &JobSubmitRequest) -> Result<ProgramInvocation, ConfigError> {
    let mut conf = cluster.clone();
    conf.extend_from(&Configuration::from_map(request.config.clone()));
    let mut inv = ProgramInvocation::new(request.program.clone());
    inv.args = request.args.clone();
    inv.parallelism = match request.parallelism {
        Some(p) => p,
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
    inv.job_name = request.job_name.clone().unwrap_or_else(|| request.program.clone());
    Ok(inv)
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
        let inv = from_submission(&cluster, &request(&[("execution.buffer-timeout.interval", "5 ms")])).unwrap();
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
        .unwrap();
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
}
