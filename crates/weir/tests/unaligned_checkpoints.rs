//! Unaligned checkpoints across real processes: `keyed-sum` with a slow Sum (CPU work
//! per record) behind an unthrottled generator, so the generator is backpressured and
//! the network buffers between them are full; small 4 KiB segments and a 10 ms buffer
//! timeout keep many buffers in flight. With
//! `execution.checkpointing.unaligned.enabled=true` checkpoints complete while the job is
//! backpressured and record in-flight data (`persisted_data` > 0); a TaskManager
//! SIGKILLed after such a checkpoint (a replacement started first) restores it,
//! replaying the in-flight data, and the final sums are exact.

mod common;

use common::*;
use serde_json::{json, Value};
use std::time::Duration;

const KEYS: u64 = 40;
const SEED: u64 = 5;
const RECORDS: u64 = 400_000;

fn checkpoints(cluster: &Cluster, jid: &str) -> Value {
    get(&cluster.rest, &format!("/jobs/{jid}/checkpoints")).1
}

/// The largest back-pressure ratio among the subtasks of the job's first vertex (the
/// generator).
fn source_backpressure(cluster: &Cluster, jid: &str) -> f64 {
    let job = get(&cluster.rest, &format!("/jobs/{jid}")).1;
    let Some(vid) = job["vertices"][0]["id"].as_str() else {
        return 0.0;
    };
    let bp = get(&cluster.rest, &format!("/jobs/{jid}/vertices/{vid}/backpressure")).1;
    bp["subtasks"]
        .as_array()
        .map(|s| s.iter().filter_map(|t| t["ratio"].as_f64()).fold(0.0, f64::max))
        .unwrap_or(0.0)
}

#[test]
fn unaligned_checkpoints_complete_under_backpressure_persist_in_flight_data_and_restore_exact_sums_after_a_kill() {
    let chk = tempfile::tempdir().unwrap();
    let chk_dir = format!("execution.checkpointing.dir={}", chk.path().display());
    let mut cluster = Cluster::start(
        0,
        2,
        &[
            "execution.checkpointing.interval=300 ms",
            "execution.checkpointing.unaligned.enabled=true",
            "execution.buffer-timeout.interval=10 ms",
            &chk_dir,
            "restart-strategy.type=fixed-delay",
            "restart-strategy.fixed-delay.delay=0 s",
            "restart-strategy.fixed-delay.attempts=20",
        ],
    );
    cluster.tm_dynamic.push("taskmanager.memory.segment-size=4kb".into());
    cluster.add_taskmanager();
    cluster.add_taskmanager();
    cluster.wait_for_slots(4);
    let out = tempfile::tempdir().unwrap();
    let args = json!({
        "keys": KEYS.to_string(),
        "records": RECORDS.to_string(),
        "seed": SEED.to_string(),
        "work_us": "20",
        "output": out.path().display().to_string(),
    });
    let jid = cluster.submit(json!({ "program": "keyed-sum", "parallelism": 2, "args": args }));
    cluster.wait_running(&jid);

    let (code, config) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints/config"));
    assert_eq!(code, 200);
    assert_eq!(config["unaligned_checkpoints"], true, "{config}");
    assert_eq!(config["aligned_checkpoint_timeout"], 0, "{config}");

    // An unaligned checkpoint completes with in-flight data while the generator is held
    // back by the slow Sum.
    let mut persisted = 0;
    let mut backpressure: f64 = 0.0;
    wait_until(Duration::from_secs(60), || {
        backpressure = backpressure.max(source_backpressure(&cluster, &jid));
        let stats = checkpoints(&cluster, &jid);
        let latest = &stats["latest"]["completed"];
        if latest["checkpoint_type"] == "UNALIGNED_CHECKPOINT" {
            persisted = latest["persisted_data"].as_u64().unwrap_or(0);
        }
        persisted > 0 && backpressure > 0.3
    });
    let before_kill = checkpoints(&cluster, &jid);
    println!(
        "unaligned: persisted_data={persisted} source back-pressure={backpressure:.2} completed={} summary persisted max={}",
        before_kill["counts"]["completed"], before_kill["summary"]["persisted_data"]["max"]
    );

    cluster.add_taskmanager();
    cluster.tms[0].kill();
    let state = cluster.wait_terminal(&jid, Duration::from_secs(180));
    assert_eq!(state, "FINISHED");
    let stats = checkpoints(&cluster, &jid);
    assert!(
        stats["counts"]["restored"].as_u64().unwrap_or(0) >= 1,
        "{}",
        stats["counts"]
    );
    let restored = stats["latest"]["restored"]["id"].as_u64().unwrap_or(0);
    println!("unaligned: restored from checkpoint {restored}");
    assert_eq!(read_parts(out.path()), keyed_sum_output(KEYS, SEED, RECORDS));
}
