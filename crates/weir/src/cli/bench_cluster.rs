//! `weir bench-cluster`: the cluster against a MiniCluster in this process (one started
//! for the job, as `StreamExecutionEnvironment::execute` does), measured in one run.
//!
//! Starts a JobManager and two TaskManagers (one slot each) as child processes on
//! ephemeral loopback ports, and reports: start-up time (processes started → all slots
//! registered), each process's resident memory at idle, and records/s of
//! `bench-keyed` at p=2 across the two TaskManagers (one hash exchange over TCP) next
//! to the same job at p=2 inside this process, with their ratio.
//!
//! Internal TLS takes `weir start-cluster`'s default ([`super::internal_tls`]): mutual
//! TLS with a CA made for the run in a private temporary directory (removed at the
//! end; its making counts in the start-up time), plaintext with `-D
//! security.ssl.internal.enabled=false`, the given files with `-D
//! security.ssl.internal.*`.

use super::client;
use super::daemon::Daemon;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Options of `weir bench-cluster`.
#[derive(Debug, Args)]
pub struct BenchClusterArgs {
    /// Records per run.
    #[arg(long, default_value_t = 20_000_000)]
    pub records: u64,
    /// Distinct keys.
    #[arg(long, default_value_t = 10_000)]
    pub keys: u64,
    /// A configuration entry `key=value` for every started process (e.g.
    /// `security.ssl.internal.enabled=false` to measure without internal TLS);
    /// repeatable.
    #[arg(short = 'D', value_name = "KEY=VALUE")]
    pub dynamic: Vec<String>,
}

fn daemon(role: &str, dynamic: &[String]) -> Result<Daemon> {
    let exe = std::env::current_exe().context("cannot find the weir binary")?;
    Daemon::start(&exe, role, dynamic, Stdio::null())
}

fn rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .map(|kib| kib / 1024.0)
        .unwrap_or(0.0)
}

/// A private directory for the run's certificates, removed when dropped.
struct RunDir(std::path::PathBuf);

impl RunDir {
    fn create() -> Result<RunDir> {
        let path = std::env::temp_dir().join(format!("weir-bench-cluster-{}", std::process::id()));
        std::fs::create_dir_all(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(RunDir(path))
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0) {
            tracing::warn!("cannot remove {}: {e}", self.0.display());
        }
    }
}

/// Runs the comparison and prints the figures.
pub fn run(args: &BenchClusterArgs) -> Result<()> {
    let run_dir = RunDir::create()?;
    let start = Instant::now();
    let config = weir_config::Configuration::load(None, &args.dynamic)?;
    let tls = super::internal_tls::prepare(&config, &run_dir.0, 2)?;
    println!("{}", tls.source.describe(&run_dir.0));
    let mut jm_conf = vec!["jobmanager.rpc.port=0".to_string(), "rest.port=0".to_string()];
    jm_conf.extend(args.dynamic.iter().cloned());
    jm_conf.extend(tls.jobmanager.iter().cloned());
    let jm = daemon("jobmanager", &jm_conf)?;
    let rest = jm.field("rest")?;
    let rpc_port = jm.field("rpc")?.rsplit(':').next().unwrap_or("0").to_string();
    let mut tm_conf = vec![
        format!("jobmanager.rpc.port={rpc_port}"),
        "taskmanager.numberOfTaskSlots=1".to_string(),
    ];
    tm_conf.extend(args.dynamic.iter().cloned());
    let tm_daemon = |i: usize| {
        let mut conf = tm_conf.clone();
        conf.extend(tls.taskmanagers[i].iter().cloned());
        daemon("taskmanager", &conf)
    };
    let tms = [tm_daemon(0)?, tm_daemon(1)?];
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let body = client::get(&rest, "/overview").unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        if v["slots-total"].as_u64() == Some(2) {
            break;
        }
        if Instant::now() > deadline {
            bail!("the cluster did not register its slots within 30 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let startup = start.elapsed();
    std::thread::sleep(Duration::from_millis(500));
    println!(
        "cluster start-up (processes started -> 2 slots registered): {} ms",
        startup.as_millis()
    );
    println!(
        "resident memory at idle: jobmanager {:.1} MiB, taskmanager {:.1} MiB, taskmanager {:.1} MiB",
        rss_mib(jm.child.id()),
        rss_mib(tms[0].child.id()),
        rss_mib(tms[1].child.id())
    );

    let body = serde_json::json!({
        "program": "bench-keyed",
        "parallelism": 2,
        "args": { "records": args.records.to_string(), "keys": args.keys.to_string() },
    });
    let submitted = Instant::now();
    let resp = client::post(&rest, "/jobs", &body.to_string())?;
    let v: serde_json::Value = serde_json::from_str(&resp)?;
    let jid = v["jobid"]
        .as_str()
        .ok_or_else(|| anyhow!("unexpected response {resp}"))?
        .to_string();
    let duration_ms = loop {
        std::thread::sleep(Duration::from_millis(20));
        let d: serde_json::Value = serde_json::from_str(&client::get(&rest, &format!("/jobs/{jid}"))?)?;
        match d["state"].as_str() {
            Some("FINISHED") => break d["duration"].as_i64().unwrap_or(0).max(1),
            Some("FAILED") | Some("CANCELED") => bail!("the benchmark job ended {}", d["state"]),
            _ => {}
        }
    };
    let wall = submitted.elapsed();
    let cluster_rate = args.records as f64 / (duration_ms as f64 / 1000.0);
    drop(tms);
    drop(jm);

    let job = super::JobArgs {
        program: "bench-keyed".into(),
        parallelism: Some(2),
        args: vec![format!("records={}", args.records), format!("keys={}", args.keys)],
        max_parallelism: None,
        disable_chaining: false,
        buffer_timeout: None,
        auto_watermark_interval: None,
    };
    let (env, _) = super::commands::build_job(&job)?;
    let t = Instant::now();
    env.execute("bench-keyed")?;
    let local_rate = args.records as f64 / t.elapsed().as_secs_f64();
    println!(
        "bench-keyed p=2, {} records: cluster (2 TaskManagers, TCP) {:.2} M records/s (job {} ms, submit-to-finish {} ms); in-process {:.2} M records/s; ratio cluster/in-process {:.2}",
        args.records,
        cluster_rate / 1e6,
        duration_ms,
        wall.as_millis(),
        local_rate / 1e6,
        cluster_rate / local_rate
    );
    Ok(())
}
