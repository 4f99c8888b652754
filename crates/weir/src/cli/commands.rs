//! `weir local` (a job on a MiniCluster), `weir plan`, `weir programs`.

use super::submission::{invocation, submit_request};
use super::{JobArgs, LocalArgs};
use crate::minicluster::{MiniCluster, MiniClusterSpec};
use crate::programs::registry;
use anyhow::Result;
use weir_api::prelude::*;
use weir_api::program::ProgramInvocation;
use weir_config::Configuration;
use weir_graph::{total_slots_required, JobGraph, JobPlan};
use weir_rest::JobSubmitRequest;
use weir_runtime::executor::ExecutableGraph;

/// Builds the program of `job` into an environment configured from `job`.
pub fn build_job(job: &JobArgs) -> Result<(StreamExecutionEnvironment, ExecutableGraph)> {
    let inv = invocation(job)?;
    let program = registry().get(&inv.program)?.clone();
    let env = inv.environment();
    program.build_into(&env, &ProgramArgs::from_pairs(inv.args.clone()))?;
    let graph = env.build_graph(program.name)?;
    Ok((env, graph))
}

/// `weir plan`.
pub fn plan(job: &JobArgs, json: bool) -> Result<()> {
    let (_, graph) = build_job(job)?;
    let job_graph = JobGraph::from_stream_graph(&graph.stream_graph)?;
    let plan = JobPlan::from_job_graph(&job_graph);
    if json {
        println!("{}", plan.to_json_pretty());
    } else {
        print!("{}", plan.to_text());
    }
    Ok(())
}

/// The submission of `job` under `config`, with everything the configuration and the
/// command line can get wrong (keys, values, the restart strategy, checkpointing, the
/// program and its arguments) checked: the request, the program's invocation and the
/// program built from it.
pub fn checked_submission(
    config: &Configuration,
    job: &JobArgs,
) -> Result<(JobSubmitRequest, ProgramInvocation, ExecutableGraph)> {
    let request = submit_request(job)?;
    let submission = weir_jobmanager::dispatcher::invocation::from_submission(config, &request)?;
    let checkpointing = weir_checkpoint::CheckpointConfig::from_config(&submission.config)?;
    weir_jobmanager::RestartStrategyConfig::from_config(&submission.config, checkpointing.is_enabled())?;
    let program = registry().build(&submission.invocation)?;
    Ok((request, submission.invocation, program))
}

/// The longest `weir local` waits for the deletion of the job's checkpoints.
const DISCARD_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// `weir local`: runs the program on a [`MiniCluster`] in this process, through the
/// JobManager's normal submission path (so the restart strategy, checkpointing and the
/// exception history apply as on a cluster); succeeds when the job FINISHED, else fails
/// with the job's root exception.
///
/// Everything the configuration and the command line can get wrong (keys, values, the
/// restart strategy, checkpointing, the memory model, the program and its arguments, the
/// slots) is checked before any server starts.
pub fn local(args: &LocalArgs) -> Result<()> {
    let config = args.config.load()?;
    super::settings::install_file_policy(&config)?;
    let (request, invocation, program) = checked_submission(&config, &args.job)?;
    let job_graph = JobGraph::from_stream_graph(&program.stream_graph)?;
    let spec = MiniClusterSpec::for_job(&config, total_slots_required(&job_graph))?;
    let cluster = MiniCluster::start(&config, spec, registry().clone())?;
    if let Some(rest) = cluster.rest_address() {
        eprintln!("MiniCluster REST endpoint on http://{rest}");
    }
    let outcome = cluster
        .submit(request)
        .and_then(|job| Ok((job, cluster.wait_for_result(job)?)));
    // The checkpoints retention does not keep are deleted before the process ends.
    if !weir_jobmanager::checkpoint::discards::wait_for_discards(DISCARD_WAIT) {
        eprintln!("warning: checkpoints of the job were still being deleted after {DISCARD_WAIT:?}");
    }
    cluster.shutdown();
    let (job, result) = outcome?;
    result.into_outcome(job, &invocation.job_name)
}

/// `weir programs`.
pub fn programs() {
    for p in registry().iter() {
        println!("{:<12} {}", p.name, p.description);
        for a in p.args {
            println!("    --arg {}=…  {}", a.name, a.help);
        }
    }
}
