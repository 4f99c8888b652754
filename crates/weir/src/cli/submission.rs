//! What a command line's job arguments (`JobArgs`) describe: the program invocation
//! and the `POST /jobs` body. Shared by `weir run` (REST) and `weir local` (in-process
//! Dispatcher), so both submit exactly the same job.

use super::JobArgs;
use anyhow::Result;
use weir_api::prelude::ProgramArgs;
use weir_api::program::ProgramInvocation;
use weir_rest::JobSubmitRequest;

/// The program invocation `job` describes (program, arguments, job settings).
pub fn invocation(job: &JobArgs) -> Result<ProgramInvocation> {
    let mut inv = ProgramInvocation::new(job.program.clone());
    inv.args = ProgramArgs::parse(&job.args)?
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if let Some(p) = job.parallelism {
        inv.parallelism = p;
    }
    inv.max_parallelism = job.max_parallelism;
    inv.chaining_enabled = !job.disable_chaining;
    if let Some(t) = job.buffer_timeout {
        if t < -1 {
            anyhow::bail!("invalid buffer timeout {t}: expected -1, 0 or a positive number of milliseconds");
        }
        inv.buffer_timeout_ms = t;
    }
    if let Some(ms) = job.auto_watermark_interval {
        inv.auto_watermark_interval_ms = ms as i64;
    }
    Ok(inv)
}

/// The `POST /jobs` body `job` describes: program, arguments, parallelism, and the
/// job settings of the command line as job-level configuration entries. `weir run` sends
/// it over REST; `weir local` hands it to its MiniCluster's Dispatcher.
pub fn submit_request(job: &JobArgs) -> Result<JobSubmitRequest> {
    let inv = invocation(job)?;
    let mut request = JobSubmitRequest::new(inv.program.clone());
    request.args = inv.args.clone();
    if !inv.chaining_enabled {
        request
            .config
            .insert("pipeline.operator-chaining.enabled".into(), "false".into());
    }
    if let Some(ms) = job.auto_watermark_interval {
        request
            .config
            .insert("pipeline.auto-watermark-interval".into(), format!("{ms} ms"));
    }
    match job.buffer_timeout {
        Some(-1) => {
            request
                .config
                .insert("execution.buffer-timeout.enabled".into(), "false".into());
        }
        Some(t) => {
            request
                .config
                .insert("execution.buffer-timeout.interval".into(), format!("{t} ms"));
        }
        None => {}
    }
    request.parallelism = job.parallelism;
    request.max_parallelism = inv.max_parallelism;
    Ok(request)
}
