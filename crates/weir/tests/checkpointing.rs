//! Checkpoints and recovery across real processes: a JobManager and TaskManagers on
//! loopback, TaskManagers killed with SIGKILL while a keyed job runs, replacements
//! started; the job resumes from its latest completed checkpoint.

mod common;

use common::*;
use serde_json::json;
use std::time::Duration;

const KEYS: u64 = 40;
const SEED: u64 = 7;

fn expected_sums(records: u64) -> Vec<String> {
    keyed_sum_output(KEYS, SEED, records)
}

#[test]
fn a_keyed_job_survives_two_taskmanager_kills_with_exact_sums_restored_from_checkpoints() {
    let chk = tempfile::tempdir().unwrap();
    let mut cluster = Cluster::start_checkpointing(chk.path());
    let out = tempfile::tempdir().unwrap();
    let records = 150_000u64;
    let args = json!({
        "keys": KEYS.to_string(),
        "records": records.to_string(),
        "seed": SEED.to_string(),
        "rate_per_sec": "15000",
        "output": out.path().display().to_string(),
    });
    let jid = cluster.submit(json!({ "program": "keyed-sum", "parallelism": 2, "args": args }));

    // While it runs, the REST API shows the checkpoints with Flink's fields.
    cluster.wait_running(&jid);
    wait_until(Duration::from_secs(30), || cluster.completed_checkpoints(&jid) >= 1);
    let (code, config) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints/config"));
    assert_eq!(code, 200);
    assert_eq!(config["mode"], "exactly_once");
    assert_eq!(config["interval"], 200);
    let (_, stats) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints"));
    let latest = &stats["latest"]["completed"];
    assert_eq!(latest["status"], "COMPLETED");
    assert_eq!(latest["num_subtasks"], 4);
    assert_eq!(latest["num_acknowledged_subtasks"], 4);
    let path = latest["external_path"].as_str().unwrap().to_string();
    assert!(
        path.starts_with(&format!("{}/{jid}/chk-", chk.path().display())),
        "{path}"
    );
    let (code, details) = get(
        &cluster.rest,
        &format!("/jobs/{jid}/checkpoints/details/{}", latest["id"]),
    );
    assert_eq!(code, 200);
    assert_eq!(details["tasks"].as_object().map(|t| t.len()), Some(2));

    cluster.kill_after_checkpoints(&jid, 1);
    cluster.kill_after_checkpoints(&jid, 0);

    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(90)), "FINISHED");
    assert_eq!(read_parts(out.path()), expected_sums(records));

    let (_, stats) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints"));
    assert!(stats["counts"]["restored"].as_u64().unwrap() >= 2, "{stats}");
    let (_, exceptions) = get(&cluster.rest, &format!("/jobs/{jid}/exceptions"));
    assert!(exceptions["exceptionHistory"]["entries"].as_array().unwrap().len() >= 2);
    // The sources of the last attempt resumed from their checkpointed positions.
    let (_, detail) = get(&cluster.rest, &format!("/jobs/{jid}"));
    let emitted = detail["vertices"][0]["metrics"]["write-records"].as_u64().unwrap();
    assert!(emitted < records, "the restored sources replayed everything: {emitted}");
    // A finished job's checkpoints are not retained (NO_EXTERNALIZED_CHECKPOINTS).
    wait_until(Duration::from_secs(10), || {
        std::fs::read_dir(chk.path().join(&jid))
            .map(|d| {
                d.flatten()
                    .all(|e| !e.file_name().to_string_lossy().starts_with("chk-"))
            })
            .unwrap_or(true)
    });
}

#[test]
fn a_job_without_checkpointing_reports_it_disabled_and_restarts_from_scratch() {
    let mut cluster = Cluster::start(
        2,
        2,
        &[
            "restart-strategy.type=fixed-delay",
            "restart-strategy.fixed-delay.delay=0 s",
            "restart-strategy.fixed-delay.attempts=20",
        ],
    );
    let out = tempfile::tempdir().unwrap();
    let records = 60_000u64;
    let args = json!({
        "keys": KEYS.to_string(),
        "records": records.to_string(),
        "seed": SEED.to_string(),
        "rate_per_sec": "20000",
        "output": out.path().display().to_string(),
    });
    let jid = cluster.submit(json!({ "program": "keyed-sum", "parallelism": 2, "args": args }));
    cluster.wait_running(&jid);
    let (code, config) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints/config"));
    assert_eq!(code, 200);
    assert_eq!(config["interval"], i64::MAX);
    // The TaskManager dies while the sources are part-way through their input.
    wait_until(Duration::from_secs(30), || {
        let (_, detail) = get(&cluster.rest, &format!("/jobs/{jid}"));
        detail["vertices"][0]["metrics"]["write-records"].as_u64().unwrap_or(0) > 0
    });
    cluster.add_taskmanager();
    cluster.tms[1].kill();
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(read_parts(out.path()), expected_sums(records));
    let (_, stats) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints"));
    assert_eq!(stats["counts"]["completed"], 0);
    let (_, detail) = get(&cluster.rest, &format!("/jobs/{jid}"));
    assert_eq!(
        detail["vertices"][0]["metrics"]["write-records"], records,
        "a restart without checkpoints replays all"
    );
}
