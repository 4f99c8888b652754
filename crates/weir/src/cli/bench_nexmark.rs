//! `weir bench nexmark`: runs Nexmark queries over generated events with a discarding
//! sink and reports, per query, the events, seconds, events/s, events/s per core used,
//! the cores used and the peak resident memory — the figures the Nexmark suite
//! publishes (throughput per core).
//!
//! - `--local` (the default): each query runs on a MiniCluster (JobMaster and
//!   TaskExecutor in this process, as `weir bench`) of its own `weir` process (the
//!   bench runs itself once per query, so that memory one query's allocator keeps does
//!   not count for the next); the MiniCluster is started before the clock starts, so
//!   seconds are wall-clock from the job's submission to its end, cores used the
//!   process's CPU time (user + system, `getrusage`) over those seconds, and peak
//!   memory the process's `VmHWM`.
//! - `-m host:port`: each query is submitted to a running cluster's REST API; seconds
//!   are the job's duration, cores used the TaskManagers' CPU time over it, and peak
//!   memory the largest sum of TaskManager resident memory, both as TaskManagers report
//!   them on heartbeats (the bench waits for the first heartbeat after each job).

use super::commands::build_job;
use super::{client, JobArgs};
use crate::minicluster::{MiniCluster, MiniClusterExecutor, MiniClusterSpec};
use crate::programs::registry;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};
use weir_config::Configuration;

/// Options of `weir bench nexmark`.
#[derive(Debug, Args)]
pub struct NexmarkBenchArgs {
    /// A query to run (`q5` or `5`); repeatable. Default: every implemented query.
    #[arg(long = "query", value_name = "QUERY")]
    pub queries: Vec<String>,
    /// Events per query.
    #[arg(long, default_value_t = 1_000_000)]
    pub events: u64,
    /// Parallelism.
    #[arg(short = 'p', long = "parallelism", default_value_t = 1)]
    pub parallelism: u32,
    /// Run in this process (the default).
    #[arg(long, conflicts_with = "jobmanager")]
    pub local: bool,
    /// Submit to the cluster whose REST API is at `host:port`.
    #[arg(short = 'm', long = "jobmanager", value_name = "HOST:PORT")]
    pub jobmanager: Option<String>,
    /// One JSON object per query instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The figures of one query run.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct QueryFigures {
    /// The query, e.g. `q5`.
    pub query: String,
    /// Events generated.
    pub events: u64,
    /// Seconds the job ran.
    pub seconds: f64,
    /// Events per second.
    pub events_per_sec: f64,
    /// Events per second per core used.
    pub events_per_sec_per_core: f64,
    /// CPU seconds per second of the run.
    pub cores_used: f64,
    /// Peak resident memory in bytes.
    pub peak_rss_bytes: u64,
}

impl QueryFigures {
    fn new(query: &str, events: u64, seconds: f64, cpu_seconds: f64, peak_rss_bytes: u64) -> Self {
        let seconds = seconds.max(1e-9);
        let cores_used = cpu_seconds / seconds;
        let events_per_sec = events as f64 / seconds;
        Self {
            query: query.to_string(),
            events,
            seconds,
            events_per_sec,
            events_per_sec_per_core: if cores_used > 0.0 {
                events_per_sec / cores_used
            } else {
                0.0
            },
            cores_used,
            peak_rss_bytes,
        }
    }

    /// The table row.
    pub fn row(&self) -> String {
        format!(
            "{:<5} {:>10} {:>8.3} {:>12.0} {:>14.0} {:>6.2} {:>10.1}",
            self.query,
            self.events,
            self.seconds,
            self.events_per_sec,
            self.events_per_sec_per_core,
            self.cores_used,
            self.peak_rss_bytes as f64 / (1024.0 * 1024.0)
        )
    }
}

/// The table header.
pub const HEADER: &str = "query     events  seconds     events/s  events/s/core  cores   peak MiB";

/// The queries to run: each of `requested` as `qN` (checked), or all of them.
pub fn selected_queries(requested: &[String]) -> Result<Vec<String>> {
    if requested.is_empty() {
        return Ok(weir_nexmark::QUERIES.iter().map(|q| q.to_string()).collect());
    }
    requested
        .iter()
        .map(|r| {
            let q = if r.starts_with('q') { r.clone() } else { format!("q{r}") };
            if weir_nexmark::QUERIES.contains(&q.as_str()) {
                Ok(q)
            } else {
                Err(anyhow!(
                    "unknown Nexmark query '{r}': expected one of {}",
                    weir_nexmark::QUERIES.join(", ")
                ))
            }
        })
        .collect()
}

fn program_args(events: u64) -> Vec<String> {
    vec![format!("events={events}"), "output=discard".to_string()]
}

/// CPU time of this process (user + system) in seconds.
fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// `VmHWM` of this process in bytes.
fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

fn measure_local(query: &str, args: &NexmarkBenchArgs) -> Result<QueryFigures> {
    let job = JobArgs {
        program: format!("nexmark-{query}"),
        parallelism: Some(args.parallelism),
        args: program_args(args.events),
        max_parallelism: None,
        disable_chaining: false,
        buffer_timeout: None,
        auto_watermark_interval: None,
    };
    let (env, _) = build_job(&job)?;
    let spec = MiniClusterSpec {
        taskmanagers: 1,
        slots_per_taskmanager: args.parallelism,
    };
    let cluster = Arc::new(MiniCluster::start(&Configuration::new(), spec, registry().clone())?);
    let env = env.with_executor(Arc::new(MiniClusterExecutor::on(cluster.clone())));
    let cpu = process_cpu_seconds();
    let start = Instant::now();
    let outcome = env.execute(&job.program);
    let seconds = start.elapsed().as_secs_f64();
    drop(env);
    if let Some(cluster) = Arc::into_inner(cluster) {
        cluster.shutdown();
    }
    outcome?;
    Ok(QueryFigures::new(
        query,
        args.events,
        seconds,
        process_cpu_seconds() - cpu,
        peak_rss_bytes(),
    ))
}

/// The TaskManagers' summed CPU time (s) and resident memory (bytes), as last reported.
fn taskmanager_usage(rest: &str) -> Result<(f64, u64)> {
    let body = client::get(
        rest,
        "/taskmanagers/metrics?get=Status.JVM.CPU.Time,Status.ProcessTree.Memory.RSS&agg=sum",
    )?;
    let v: serde_json::Value = serde_json::from_str(&body).with_context(|| format!("TaskManager metrics: {body}"))?;
    let sum = |id: &str| {
        v.as_array()
            .and_then(|a| a.iter().find(|m| m["id"] == id))
            .and_then(|m| m["sum"].as_f64())
            .unwrap_or(0.0)
    };
    Ok((
        sum("Status.JVM.CPU.Time") / 1e9,
        sum("Status.ProcessTree.Memory.RSS") as u64,
    ))
}

fn measure_cluster(rest: &str, query: &str, args: &NexmarkBenchArgs) -> Result<QueryFigures> {
    let (cpu_before, _) = taskmanager_usage(rest)?;
    let body = serde_json::json!({
        "program": format!("nexmark-{query}"),
        "parallelism": args.parallelism,
        "args": { "events": args.events.to_string(), "output": "discard" },
    });
    let resp = client::post(rest, "/jobs", &body.to_string())?;
    let v: serde_json::Value = serde_json::from_str(&resp)?;
    let jid = v["jobid"]
        .as_str()
        .ok_or_else(|| anyhow!("unexpected response to the submission: {resp}"))?
        .to_string();
    let mut peak_rss = 0;
    let duration_ms = loop {
        std::thread::sleep(Duration::from_millis(50));
        peak_rss = peak_rss.max(taskmanager_usage(rest)?.1);
        let d: serde_json::Value = serde_json::from_str(&client::get(rest, &format!("/jobs/{jid}"))?)?;
        match d["state"].as_str() {
            Some("FINISHED") => break d["duration"].as_i64().unwrap_or(0).max(1),
            Some(s @ ("FAILED" | "CANCELED")) => bail!("the nexmark-{query} job ended {s}"),
            _ => {}
        }
    };
    let (cpu_at_end, _) = taskmanager_usage(rest)?;
    let deadline = Instant::now() + Duration::from_secs(30);
    let (cpu_after, rss_after) = loop {
        let usage = taskmanager_usage(rest)?;
        if usage.0 != cpu_at_end || Instant::now() > deadline {
            break usage;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Ok(QueryFigures::new(
        query,
        args.events,
        duration_ms as f64 / 1000.0,
        cpu_after - cpu_before,
        peak_rss.max(rss_after),
    ))
}

/// Runs `query` in a child `weir bench nexmark --local --json` process and reads the
/// figures it prints.
fn measure_in_child(query: &str, args: &NexmarkBenchArgs) -> Result<QueryFigures> {
    let exe = std::env::current_exe().context("cannot find the weir binary")?;
    let out = std::process::Command::new(exe)
        .args(["bench", "nexmark", "--local", "--json", "--query", query])
        .args([
            "--events",
            &args.events.to_string(),
            "-p",
            &args.parallelism.to_string(),
        ])
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("cannot run the bench of one query")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!("the bench of {query} failed ({}): {stdout}", out.status);
    }
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).with_context(|| format!("unexpected output of the bench of {query}: {stdout}"))
}

/// Runs the selected queries and prints their figures.
pub fn run(args: &NexmarkBenchArgs) -> Result<()> {
    let queries = selected_queries(&args.queries)?;
    if args.parallelism == 0 {
        bail!("invalid parallelism 0: expected at least 1");
    }
    if !args.json {
        println!(
            "Nexmark, {} events per query, p={}, {}",
            args.events,
            args.parallelism,
            args.jobmanager
                .as_deref()
                .map_or("in this process".to_string(), |m| format!("on {m}"))
        );
        println!("{HEADER}");
    }
    for query in &queries {
        let figures = match &args.jobmanager {
            Some(rest) => measure_cluster(rest, query, args)?,
            None if queries.len() > 1 => measure_in_child(query, args)?,
            None => measure_local(query, args)?,
        };
        if args.json {
            println!("{}", serde_json::to_string(&figures)?);
        } else {
            println!("{}", figures.row());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_named_with_or_without_q_and_unknown_ones_are_refused() {
        assert_eq!(selected_queries(&["5".into(), "q7".into()]).unwrap(), vec!["q5", "q7"]);
        assert_eq!(selected_queries(&[]).unwrap().len(), weir_nexmark::QUERIES.len());
        let err = selected_queries(&["q23".into()]).unwrap_err().to_string();
        assert!(err.contains("unknown Nexmark query 'q23'"), "{err}");
    }

    #[test]
    fn per_core_throughput_divides_by_the_cores_used() {
        let f = QueryFigures::new("q1", 1_000_000, 2.0, 3.0, 10);
        assert_eq!(f.events_per_sec, 500_000.0);
        assert_eq!(f.cores_used, 1.5);
        assert!((f.events_per_sec_per_core - 333_333.33).abs() < 0.01);
    }
}
