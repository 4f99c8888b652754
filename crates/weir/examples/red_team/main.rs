//! The red team of Weir issue 26: each reproduction of a hostile peer or hostile input
//! run against throwaway clusters of real `weir` processes, printing one verdict line
//! per probe (`PASS`/`FAIL`, what was sent, what came back). Every wait is bounded.
//!
//! `cargo run --example red_team -- --weir target/release/weir [--short]`, or
//! `scripts/red-team.sh [--short]`. `--short` (what CI runs) floods with fewer
//! connections against lowered limits; the full run floods the default limits.
//! Exits 1 when any probe fails.

mod cluster;
#[path = "../../tests/common/forger.rs"]
mod forger;
mod probes_conn;
mod probes_rest;
mod probes_rpc;

use anyhow::{bail, Context, Result};
use cluster::Throwaway;
use probes_conn::FloodSizes;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The Prometheus reporter of every process (on an ephemeral port).
const PROMETHEUS: [&str; 2] = [
    "metrics.reporter.prom.factory.class=org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
    "metrics.reporter.prom.port=0",
];

/// The command line.
struct Options {
    weir: PathBuf,
    short: bool,
}

fn options() -> Result<Options> {
    let mut weir = None;
    let mut short = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--weir" => weir = args.next().map(PathBuf::from),
            "--short" => short = true,
            other => bail!("unknown argument {other:?}; usage: red_team --weir PATH [--short]"),
        }
    }
    let weir = weir.context("usage: red_team --weir PATH [--short]")?;
    if !weir.is_file() {
        bail!("{} is not the weir binary", weir.display());
    }
    Ok(Options { weir, short })
}

/// Prints and counts verdicts.
#[derive(Default)]
struct Verdicts {
    passed: usize,
    failed: Vec<&'static str>,
}

impl Verdicts {
    fn record(&mut self, name: &'static str, outcome: Result<String>) {
        match outcome {
            Ok(detail) => {
                self.passed += 1;
                println!("PASS {name}: {detail}");
            }
            Err(e) => {
                self.failed.push(name);
                println!("FAIL {name}: {}", probes_rpc::first_line(&format!("{e:#}")));
            }
        }
    }
}

/// The options of the cluster most probes run against: plaintext internal RPC (so a
/// forger can speak it, as on a hand-started cluster), checkpoints every 200 ms, files
/// only below `work`, Prometheus on, and for `--short` lowered connection limits.
fn probe_cluster_options(work: &Path, short: bool) -> Vec<String> {
    let mut o = vec![
        "security.ssl.internal.enabled=false".to_string(),
        "taskmanager.numberOfTaskSlots=2".to_string(),
        "execution.checkpointing.interval=200 ms".to_string(),
        format!("execution.checkpointing.dir={}", work.join("checkpoints").display()),
        format!("security.job.allowed-paths={}", work.display()),
    ];
    o.extend(PROMETHEUS.iter().map(|s| s.to_string()));
    if short {
        o.extend(
            [
                "rest.server.max-connections=32",
                "taskmanager.data.max-connections=16",
                "metrics.reporter.prom.max-connections=16",
            ]
            .map(String::from),
        );
    }
    o
}

fn run(options: &Options) -> Result<Verdicts> {
    let work_dir = tempfile::tempdir().context("a work directory")?;
    let work = work_dir.path();
    let sizes = if options.short {
        FloodSizes {
            rest: 80,
            data: 40,
            prometheus: 60,
        }
    } else {
        FloodSizes {
            rest: 600,
            data: 300,
            prometheus: 2000,
        }
    };
    let mut v = Verdicts::default();
    println!(
        "red team: {} ({} form)",
        options.weir.display(),
        if options.short { "short" } else { "full" }
    );

    {
        let c = Throwaway::start(&options.weir, 1, &PROMETHEUS.map(String::from))?;
        v.record(
            "start-cluster.ports-0",
            Ok(format!("REST {} and RPC {} recorded", c.rest, c.rpc)),
        );
        v.record(
            "tls.plaintext-peer-refused-by-default",
            probes_rpc::plaintext_peer_against_default_tls(&c),
        );
    }
    let c = Throwaway::start(&options.weir, 2, &probe_cluster_options(work, options.short))?;
    v.record("rpc.register-4294967295-slots", probes_rpc::four_billion_slots(&c));
    v.record(
        "rpc.refusal-hides-fingerprint",
        probes_rpc::refusal_hides_fingerprint(&c),
    );
    v.record("rpc.spoofed-heartbeat", probes_rpc::spoofed_heartbeat(&c));
    v.record("rpc.forged-release-job", probes_rpc::forged_release_job(&c, work));
    v.record("rpc.forged-task-reports", probes_rpc::forged_reports(&c, work));
    v.record("rest.parallelism-32768", probes_rest::parallelism_32768(&c));
    v.record("rest.body-64mib", probes_rest::huge_body(&c));
    v.record("cli.terminal-injection", probes_rest::terminal_injection(&c));
    v.record("sql.hop-1ms-slide-100-days", probes_rest::hop_window(&c));
    v.record("sql.in-list-200000-literals", probes_rest::in_list(&c));
    v.record(
        "files.outside-allowed-paths",
        probes_rest::outside_allowed_paths(&c, work),
    );
    v.record("conn.rest-idle-flood", probes_conn::rest_flood(&c, &sizes));
    v.record("conn.data-port-idle-flood", probes_conn::data_flood(&c, &sizes, work));
    v.record("conn.prometheus-idle-flood", probes_conn::prometheus_flood(&c, &sizes));
    v.record(
        "rest.still-serving",
        probes_rpc::serving(&c).map(|()| "/overview 200".to_string()),
    );
    drop(c);
    v.record(
        "leftovers.local-checkpoints",
        probes_rest::local_checkpoint_leftovers(&options.weir, work),
    );
    v.record(
        "leftovers.failed-start-cluster",
        probes_rest::failed_start_leaves_nothing(&options.weir, work),
    );
    Ok(v)
}

fn main() -> ExitCode {
    let outcome = options().and_then(|o| run(&o));
    match outcome {
        Ok(v) if v.failed.is_empty() => {
            println!("red team: {} probes passed", v.passed);
            ExitCode::SUCCESS
        }
        Ok(v) => {
            println!(
                "red team: {} passed, {} FAILED: {}",
                v.passed,
                v.failed.len(),
                v.failed.join(", ")
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("red team: {e:#}");
            ExitCode::FAILURE
        }
    }
}
