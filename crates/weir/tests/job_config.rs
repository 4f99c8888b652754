//! Per-job configuration across real processes: `weir run -D` and the `config` of
//! `POST /jobs` set the job's restart strategy and checkpointing, overriding the
//! cluster's; an unknown key or a bad value is refused by name and no job starts.

mod common;

use common::*;
use serde_json::json;
use std::time::Duration;

#[test]
fn weir_run_d_sets_the_jobs_checkpointing_and_restart_strategy_over_the_clusters() {
    let cluster = Cluster::start(1, 2, &["restart-strategy.type=none"]);
    let (code, out, err) = weir_cli(&[
        "run",
        "-d",
        "-m",
        &cluster.rest,
        "-D",
        "execution.checkpointing.interval=150 ms",
        "-D",
        "execution.checkpointing.mode=AT_LEAST_ONCE",
        "-D",
        "restart-strategy.type=fixed-delay",
        "-D",
        "restart-strategy.fixed-delay.attempts=7",
        "keyed-sum",
        "--arg",
        "records=1000000000",
        "--arg",
        "rate_per_sec=2000",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let jid = out.trim().rsplit(' ').next().expect("job id printed").to_string();
    cluster.wait_running(&jid);
    let (status, cfg) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints/config"));
    assert_eq!(status, 200, "{cfg}");
    assert_eq!(cfg["interval"], 150);
    assert_eq!(cfg["mode"], "at_least_once");
    let (_, job_cfg) = get(&cluster.rest, &format!("/jobs/{jid}/config"));
    let restart = job_cfg["execution-config"]["restart-strategy"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(restart.contains("FixedDelayRestartBackoffTimeStrategy"), "{restart}");
    assert!(restart.contains("maxNumberRestartAttempts=7"), "{restart}");
    wait_until(Duration::from_secs(20), || {
        get(&cluster.rest, &format!("/jobs/{jid}/checkpoints")).1["counts"]["completed"]
            .as_u64()
            .unwrap_or(0)
            >= 2
    });
    let (code, out, _) = weir_cli(&["list", "-m", &cluster.rest]);
    assert_eq!(code, 0);
    let line = out.lines().find(|l| l.contains(&jid)).unwrap_or_default().to_string();
    assert!(line.contains("(RUNNING), last checkpoint "), "{out}");
    let (code, _) = send(&cluster.rest, "PATCH", &format!("/jobs/{jid}"), None);
    assert_eq!(code, 202);
}

#[test]
fn an_unknown_or_invalid_job_config_key_is_a_400_naming_it_and_starts_no_job() {
    let cluster = Cluster::start(1, 1, &[]);
    let (code, body) = send(
        &cluster.rest,
        "POST",
        "/jobs",
        Some(json!({"program": "keyed-sum", "config": {"execution.checkpointing.intervall": "1 s"}})),
    );
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["errors"][0],
        "Unknown configuration key 'execution.checkpointing.intervall': Weir has no option of that name"
    );
    let (code, body) = send(
        &cluster.rest,
        "POST",
        "/jobs",
        Some(json!({"program": "keyed-sum", "config": {"restart-strategy.fixed-delay.attempts": "many"}})),
    );
    assert_eq!(code, 400, "{body}");
    assert!(
        body["errors"][0]
            .as_str()
            .unwrap_or_default()
            .contains("'restart-strategy.fixed-delay.attempts'"),
        "{body}"
    );
    let (code, out, err) = weir_cli(&["run", "-m", &cluster.rest, "-D", "no.such.key=1", "keyed-sum"]);
    assert_ne!(code, 0);
    assert!(err.contains("Unknown configuration key 'no.such.key'"), "{out}{err}");
    let (_, overview) = get(&cluster.rest, "/jobs/overview");
    assert_eq!(overview["jobs"].as_array().map(Vec::len), Some(0), "{overview}");
}
