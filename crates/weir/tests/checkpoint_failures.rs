//! Failures around checkpoints across real processes: checkpoints that expire fail the
//! job once more of them failed in a row than tolerated (Flink's message in the
//! exception history and the checkpoint history), and a sink that fails on every
//! attempt ends the job FAILED with its root cause once the restart strategy gives up.

mod common;

use common::*;
use serde_json::json;
use std::time::Duration;

#[test]
fn expiring_checkpoints_fail_the_job_once_more_failed_in_a_row_than_tolerated() {
    let cluster = Cluster::start(
        1,
        2,
        &[
            "execution.checkpointing.interval=100 ms",
            "execution.checkpointing.timeout=200 ms",
            "execution.checkpointing.tolerable-failed-checkpoints=2",
            "restart-strategy.type=none",
        ],
    );
    // Sum takes 2 ms per record while the source offers far more: the barriers wait
    // behind full network buffers and every checkpoint expires.
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 1,
        "args": {"records": "100000000", "rate_per_sec": "100000", "work_us": "2000"},
    }));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(30)), "FAILED");
    let (_, stats) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints"));
    assert_eq!(stats["counts"]["completed"], 0, "{stats}");
    // Three expired in a row (more than the two tolerated); one triggered meanwhile is
    // aborted by the failover.
    let expired = stats["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["failure_message"] == "Checkpoint expired before completing.")
        .count();
    assert_eq!(expired, 3, "{stats}");
    let (_, exceptions) = get(&cluster.rest, &format!("/jobs/{jid}/exceptions"));
    let root = exceptions["exceptionHistory"]["entries"][0]["stacktrace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        root.contains("Recovery is suppressed by NoRestartBackoffTimeStrategy"),
        "{root}"
    );
    assert!(
        root.contains("Exceeded checkpoint tolerable failure threshold.")
            && root.contains("The latest checkpoint failed due to Checkpoint expired before completing."),
        "{root}"
    );
}

#[test]
fn a_sink_that_always_fails_ends_the_job_failed_with_its_root_cause_once_the_strategy_gives_up() {
    let cluster = Cluster::start(
        1,
        2,
        &[
            "execution.checkpointing.interval=100 ms",
            "restart-strategy.type=fixed-delay",
            "restart-strategy.fixed-delay.attempts=2",
            "restart-strategy.fixed-delay.delay=0 s",
        ],
    );
    // The output "directory" is below a regular file: every attempt's sink fails.
    let file = tempfile::NamedTempFile::new().unwrap();
    let output = file.path().join("out");
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 1,
        "args": {"records": "1000", "output": output.display().to_string()},
    }));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(30)), "FAILED");
    let (_, exceptions) = get(&cluster.rest, &format!("/jobs/{jid}/exceptions"));
    let entries = exceptions["exceptionHistory"]["entries"].as_array().unwrap().clone();
    assert_eq!(entries.len(), 3, "two restarts, then the final failure: {exceptions}");
    let root = entries[0]["stacktrace"].as_str().unwrap_or_default();
    assert!(
        root.contains("Recovery is suppressed by FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=2, backoffTimeMS=0)"),
        "{root}"
    );
    assert!(
        root.contains(&output.display().to_string()),
        "the cause names the path: {root}"
    );
    assert!(
        entries[0]["taskName"].as_str().unwrap_or_default().contains("Sink"),
        "{exceptions}"
    );
}
