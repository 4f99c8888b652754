//! Region failover across real processes: in a job of independent pipelines, a
//! TaskManager killed under one pipeline restarts only that pipeline (restored from the
//! latest checkpoint); the other keeps its attempt and the job stays RUNNING; the
//! committed output is exact. With `full`, everything restarts.

mod common;

use common::*;
use serde_json::json;
use std::time::Duration;

const RECORDS: u64 = 40_000;

fn cluster(failover: &str) -> Cluster {
    Cluster::start(
        2,
        1,
        &[
            "execution.checkpointing.interval=200 ms",
            "restart-strategy.type=fixed-delay",
            "restart-strategy.fixed-delay.delay=0 s",
            "restart-strategy.fixed-delay.attempts=5",
            &format!("jobmanager.execution.failover-strategy={failover}"),
        ],
    )
}

/// (attempt, TaskManager id) of each subtask of the job's only vertex.
fn subtasks(cluster: &Cluster, jid: &str) -> Vec<(u64, String)> {
    let (_, job) = get(&cluster.rest, &format!("/jobs/{jid}"));
    let vid = job["vertices"][0]["id"].as_str().unwrap().to_string();
    let (code, detail) = get(&cluster.rest, &format!("/jobs/{jid}/vertices/{vid}"));
    assert_eq!(code, 200, "{detail}");
    detail["subtasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["attempt"].as_u64().unwrap(),
                s["taskmanager-id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Runs the scenario: kills the TaskManager of subtask 0; returns the subtasks after
/// the failover and the job's status timestamps.
fn kill_pipeline_zero(failover: &str) -> (Vec<(u64, String)>, serde_json::Value) {
    let mut cluster = cluster(failover);
    let out = tempfile::tempdir().unwrap();
    let jid = cluster.submit(json!({
        "program": "forward-pipelines",
        "parallelism": 2,
        "args": {"records": RECORDS.to_string(), "rate_per_sec": "8000", "output": out.path().display().to_string()},
    }));
    cluster.wait_running(&jid);
    wait_until(Duration::from_secs(20), || {
        get(&cluster.rest, &format!("/jobs/{jid}/checkpoints")).1["counts"]["completed"]
            .as_u64()
            .unwrap_or(0)
            >= 2
    });
    let before = subtasks(&cluster, &jid);
    assert_eq!(before.iter().map(|s| s.0).collect::<Vec<_>>(), vec![0, 0]);
    let victim = cluster
        .tms
        .iter()
        .position(|tm| tm.line.split_whitespace().nth(1) == Some(before[0].1.as_str()))
        .expect("the TaskManager of subtask 0");
    cluster.add_taskmanager();
    cluster.wait_for_slots(3);
    cluster.tms[victim].kill();
    wait_until(Duration::from_secs(20), || {
        let s = subtasks(&cluster, &jid);
        s[0].0 >= 1 && s[0].1 != before[0].1
    });
    let after = subtasks(&cluster, &jid);
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    let expected: Vec<String> = {
        let mut v: Vec<String> = (0..RECORDS).map(|i| i.to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(read_parts(out.path()), expected);
    let (_, job) = get(&cluster.rest, &format!("/jobs/{jid}"));
    (after, job["timestamps"].clone())
}

#[test]
fn a_killed_pipeline_restarts_alone_while_the_other_keeps_its_attempt_and_the_output_is_exact() {
    let (after, timestamps) = kill_pipeline_zero("region");
    assert_eq!(after[1].0, 0, "the untouched pipeline was restarted: {after:?}");
    assert_eq!(timestamps["RESTARTING"], 0, "the job left RUNNING: {timestamps}");
}

#[test]
fn full_failover_restarts_the_other_pipeline_too() {
    let (after, timestamps) = kill_pipeline_zero("full");
    assert_eq!(after[1].0, 1, "{after:?}");
    assert!(timestamps["RESTARTING"].as_i64().unwrap_or(0) > 0, "{timestamps}");
}
