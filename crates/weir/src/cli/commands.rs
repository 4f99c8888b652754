//! `weir local`, `weir plan`, `weir programs`.

use super::JobArgs;
use crate::programs::builtin_registry;
use anyhow::{Context, Result};
use weir_api::prelude::*;
use weir_graph::{JobGraph, JobPlan};
use weir_runtime::executor::ExecutableGraph;

/// Builds the program of `job` into an environment configured from `job`.
pub fn build_job(job: &JobArgs) -> Result<(StreamExecutionEnvironment, ExecutableGraph)> {
    let registry = builtin_registry();
    let program = registry.get(&job.program)?;
    let args = ProgramArgs::parse(&job.args)?;
    let mut env = StreamExecutionEnvironment::new();
    if let Some(p) = job.parallelism {
        env.set_parallelism(p);
    }
    if let Some(m) = job.max_parallelism {
        env.set_max_parallelism(m);
    }
    if job.disable_chaining {
        env.disable_operator_chaining();
    }
    if let Some(t) = job.buffer_timeout {
        if t < -1 {
            anyhow::bail!("invalid buffer timeout {t}: expected -1, 0 or a positive number of milliseconds");
        }
        env.set_buffer_timeout(t);
    }
    if let Some(ms) = job.auto_watermark_interval {
        env.set_auto_watermark_interval(std::time::Duration::from_millis(ms));
    }
    program.build_into(&env, &args)?;
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
