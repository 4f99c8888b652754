//! Application mode (Flink's standalone application mode): `weir jobmanager
//! --application <program> [-p N] [--arg k=v]...` starts a JobManager with the
//! configured addresses and ports, runs exactly that job on the TaskManagers that
//! register with it, and exits when the job ends: 0 when it FINISHED, 1 with the job's
//! root cause otherwise. The job and its settings are checked before any server starts.

use super::commands::checked_submission;
use super::embedded::EmbeddedJobManager;
use super::settings::jobmanager_settings;
use super::JobArgs;
use crate::programs::registry;
use anyhow::Result;
use weir_config::Configuration;
use weir_jobmanager::RestEndpoint;

/// Runs `program` with `args` as the JobManager's only job; see the module doc.
pub fn run(config: &Configuration, program: &str, parallelism: Option<u32>, args: &[String]) -> Result<()> {
    let job = JobArgs {
        program: program.to_string(),
        parallelism,
        args: args.to_vec(),
        max_parallelism: None,
        disable_chaining: false,
        buffer_timeout: None,
        auto_watermark_interval: None,
    };
    let (request, invocation, _) = checked_submission(config, &job)?;
    let settings = jobmanager_settings(config)?;
    super::security::warn_if_plaintext("JobManager", settings.internal_tls.is_none());
    let jobmanager = EmbeddedJobManager::start(settings, registry().clone(), RestEndpoint::Serve, "jm")?;
    let rest = jobmanager
        .rest_address()
        .map_or_else(|| "-".to_string(), |a| a.to_string());
    println!(
        "JobManager rpc={} rest={rest} application={program}",
        jobmanager.jobmanager().rpc_address()
    );
    let outcome = jobmanager
        .submit(request)
        .and_then(|job| Ok((job, jobmanager.wait_for_result(job)?)));
    jobmanager.shutdown();
    let (job, result) = outcome?;
    eprintln!("Application '{}' ({job}) ended {}", invocation.job_name, result.status);
    result.into_outcome(job, &invocation.job_name)
}
