//! `weir local`, `weir plan`, `weir programs`.

use super::JobArgs;
use crate::programs::builtin_registry;
use anyhow::{Context, Result};
use weir_api::prelude::*;
use weir_api::program::ProgramInvocation;
use weir_graph::{JobGraph, JobPlan};
use weir_runtime::executor::ExecutableGraph;

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

/// Builds the program of `job` into an environment configured from `job`.
pub fn build_job(job: &JobArgs) -> Result<(StreamExecutionEnvironment, ExecutableGraph)> {
    let inv = invocation(job)?;
    let program = builtin_registry().get(&inv.program)?.clone();
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

/// `weir local`.
pub fn local(job: &JobArgs) -> Result<()> {
    let (env, _) = build_job(job)?;
    env.execute(&job.program)
        .with_context(|| format!("job '{}' failed", job.program))?;
    Ok(())
}

/// `weir programs`.
pub fn programs() {
    for p in builtin_registry().iter() {
        println!("{:<12} {}", p.name, p.description);
        for a in p.args {
            println!("    --arg {}=…  {}", a.name, a.help);
        }
    }
}
