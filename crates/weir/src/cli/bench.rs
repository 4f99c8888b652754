//! `weir bench`: records/s of the benchmark pipelines, measured in one run so the
//! figures can be compared as ratios.
//!
//! Every case runs through `StreamExecutionEnvironment::execute` on one MiniCluster
//! (JobMaster and TaskExecutor, the path every job takes) that all cases and runs
//! share: it is started once, with as many slots as the widest case needs, so a
//! figure measures the job from its submission to its end, not the start-up of a
//! cluster.

use super::commands::build_job;
use super::JobArgs;
use crate::minicluster::{MiniCluster, MiniClusterExecutor, MiniClusterSpec};
use crate::programs::registry;
use anyhow::Result;
use clap::{Args, Subcommand};
use std::sync::Arc;
use std::time::Instant;
use weir_config::options as o;
use weir_config::Configuration;

/// Options of `weir bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// A benchmark suite instead of the built-in pipelines.
    #[command(subcommand)]
    pub suite: Option<BenchSuite>,
    /// Records per run.
    #[arg(long, default_value_t = 20_000_000)]
    pub records: u64,
    /// Distinct keys of the keyed benchmark.
    #[arg(long, default_value_t = 10_000)]
    pub keys: u64,
    /// Runs per case; the best is reported.
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Whether the tasks collect their metrics while they run
    /// (`metrics.collection.enabled`); `false` measures the pipelines without them.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub metrics_collection: bool,
    /// Only the cases whose program's name contains this (e.g. `bench-chain`).
    #[arg(long)]
    pub only: Option<String>,
}

/// The benchmark suites of `weir bench <suite>`.
#[derive(Debug, Subcommand)]
pub enum BenchSuite {
    /// The Nexmark queries: events/s, per core, and peak memory per query.
    Nexmark(super::bench_nexmark::NexmarkBenchArgs),
}

/// The program arguments of a benchmark case.
fn case_args(program: &str, args: &BenchArgs) -> Vec<String> {
    match program {
        "orders-per-minute" => vec![
            format!("orders={}", args.records),
            format!("users={}", (args.keys / 10).max(1)),
            "output=discard".to_string(),
        ],
        _ => vec![format!("records={}", args.records), format!("keys={}", args.keys)],
    }
}

fn measure(cluster: &Arc<MiniCluster>, program: &str, parallelism: u32, args: &BenchArgs) -> Result<f64> {
    let job = JobArgs {
        program: program.to_string(),
        parallelism: Some(parallelism),
        args: case_args(program, args),
        max_parallelism: None,
        disable_chaining: false,
        buffer_timeout: None,
        auto_watermark_interval: None,
    };
    let mut best = 0f64;
    for _ in 0..args.runs.max(1) {
        let (env, _) = build_job(&job)?;
        let env = env.with_executor(Arc::new(MiniClusterExecutor::on(cluster.clone())));
        let start = Instant::now();
        env.execute(program)?;
        let rate = args.records as f64 / start.elapsed().as_secs_f64();
        best = best.max(rate);
    }
    Ok(best)
}

/// Runs every case and prints records/s.
pub fn run(args: &BenchArgs) -> Result<()> {
    if let Some(BenchSuite::Nexmark(nexmark)) = &args.suite {
        return super::bench_nexmark::run(nexmark);
    }
    println!(
        "records per run: {}, best of {} runs, metrics collection {}",
        args.records,
        args.runs,
        if args.metrics_collection { "on" } else { "off" }
    );
    let cases = [
        (
            "(a) generator -> map -> filter -> discard, chained, p=1",
            "bench-chain",
            1,
        ),
        ("(b) generator -> key_by -> sum -> discard, p=1", "bench-keyed", 1),
        ("(b) generator -> key_by -> sum -> discard, p=2", "bench-keyed", 2),
        (
            "(c) orders-per-minute: orders -> ParseOrder -> 1-min event-time windows -> discard, p=1",
            "orders-per-minute",
            1,
        ),
        (
            "(c) orders-per-minute: orders -> ParseOrder -> 1-min event-time windows -> discard, p=2",
            "orders-per-minute",
            2,
        ),
    ];
    let wanted = |program: &str| args.only.as_deref().is_none_or(|o| program.contains(o));
    let cases: Vec<_> = cases.into_iter().filter(|(_, program, _)| wanted(program)).collect();
    let mut config = Configuration::new();
    config.set(&o::METRICS_COLLECTION_ENABLED, args.metrics_collection);
    let spec = MiniClusterSpec {
        taskmanagers: 1,
        slots_per_taskmanager: cases.iter().map(|(_, _, p)| *p).max().unwrap_or(1),
    };
    let cluster = Arc::new(MiniCluster::start(&config, spec, registry().clone())?);
    let outcome = cases.into_iter().try_for_each(|(label, program, p)| {
        let rate = measure(&cluster, program, p, args)?;
        println!("{label}: {:.2} M records/s", rate / 1e6);
        anyhow::Ok(())
    });
    if let Some(cluster) = Arc::into_inner(cluster) {
        cluster.shutdown();
    }
    outcome
}
