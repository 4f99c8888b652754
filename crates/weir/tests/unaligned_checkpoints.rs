//! Unaligned checkpoints across real processes: `keyed-sum` with a slow Sum (CPU work
//! per record) behind an unthrottled generator, so the generator is backpressured and
//! the network buffers between them are full; small 4 KiB segments and a 10 ms buffer
//! timeout keep many buffers in flight. With
//! `execution.checkpointing.unaligned.enabled=true` the barriers overtake the queued
//! buffers: checkpoints complete while the job is backpressured, the generator's
//! snapshots hold output channel state (the buffers its barrier overtook) and
//! `persisted_data` > 0. A job restored from such a checkpoint — after a TaskManager
//! is SIGKILLed (channels over TCP), or after an injected failure on one TaskManager
//! (local channels) — re-sends the output channel state, replays the input channel
//! state, and its exactly-once file sink output is exactly that of an undisturbed run.
//! With an aligned-checkpoint timeout the same holds for checkpoints that start aligned
//! and switch to overtaking barriers.

mod common;

use common::*;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use weir_core::checkpoint::StreamStateHandle;
use weir_state::TaskSnapshot;

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

/// Channel state in the snapshots of checkpoint `id` of job `jid`, read back from its
/// `_metadata` and state handles: per vertex name, (output, input) channel state bytes.
fn channel_state_bytes(chk: &Path, jid: &str, id: u64) -> Vec<(String, u64, u64)> {
    let path = chk.join(jid).join(format!("chk-{id}")).join("_metadata");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let metadata = weir_checkpoint::metadata::decode(&bytes, &path.display().to_string()).unwrap();
    metadata
        .tasks
        .iter()
        .map(|task| {
            let (mut output, mut input) = (0, 0);
            for handle in task.subtasks.iter().filter_map(|s| s.handle.as_ref()) {
                let bytes = match handle {
                    StreamStateHandle::Inline(bytes) => bytes.clone(),
                    StreamStateHandle::File { path, .. } => std::fs::read(path).unwrap(),
                };
                let snapshot = TaskSnapshot::decode(&bytes).unwrap();
                output += snapshot
                    .output_channel_state
                    .iter()
                    .map(|s| s.data.len() as u64)
                    .sum::<u64>();
                input += snapshot
                    .input_channel_state
                    .iter()
                    .map(|s| s.data.len() as u64)
                    .sum::<u64>();
            }
            (task.vertex_name.clone(), output, input)
        })
        .collect()
}

/// Output channel state bytes of the generator in checkpoint `id`.
fn generator_output_state(chk: &Path, jid: &str, id: u64) -> u64 {
    let state = channel_state_bytes(chk, jid, id);
    println!("unaligned: channel state of checkpoint {id} (vertex, output, input bytes): {state:?}");
    state
        .iter()
        .filter(|(vertex, _, _)| vertex.starts_with("Source"))
        .map(|(_, output, _)| output)
        .sum()
}

/// A JobManager checkpointing unaligned every 300 ms into `chk` (with `extra`
/// settings), retaining every checkpoint (so the restored one can be read afterwards)
/// and restarting at once; TaskManagers added later get `slots` slots and 4 KiB
/// segments.
fn unaligned_cluster(chk: &Path, slots: u32, extra: &[&str]) -> Cluster {
    let chk_dir = format!("execution.checkpointing.dir={}", chk.display());
    let mut settings = vec![
        "execution.checkpointing.interval=300 ms",
        "execution.checkpointing.unaligned.enabled=true",
        "execution.checkpointing.num-retained=1000",
        "execution.buffer-timeout.interval=10 ms",
        &chk_dir,
        "restart-strategy.type=fixed-delay",
        "restart-strategy.fixed-delay.delay=0 s",
        "restart-strategy.fixed-delay.attempts=20",
    ];
    settings.extend_from_slice(extra);
    let mut cluster = Cluster::start(0, slots, &settings);
    cluster.tm_dynamic.push("taskmanager.memory.segment-size=4kb".into());
    cluster
}

/// Waits until an unaligned checkpoint completed with in-flight data while the
/// generator is backpressured; returns (persisted_data, back-pressure).
fn wait_for_an_unaligned_checkpoint_under_backpressure(cluster: &Cluster, jid: &str) -> (u64, f64) {
    let (code, config) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints/config"));
    assert_eq!(code, 200);
    assert_eq!(config["unaligned_checkpoints"], true, "{config}");
    assert_eq!(config["aligned_checkpoint_timeout"], 0, "{config}");
    let mut persisted = 0;
    let mut backpressure: f64 = 0.0;
    wait_until(Duration::from_secs(60), || {
        backpressure = backpressure.max(source_backpressure(cluster, jid));
        let stats = checkpoints(cluster, jid);
        let latest = &stats["latest"]["completed"];
        if latest["checkpoint_type"] == "UNALIGNED_CHECKPOINT" {
            persisted = latest["persisted_data"].as_u64().unwrap_or(0);
        }
        persisted > 0 && backpressure > 0.3
    });
    (persisted, backpressure)
}

fn keyed_sum_args(out: &Path, extra: &[(&str, &str)]) -> Value {
    let mut args = json!({
        "keys": KEYS.to_string(),
        "records": RECORDS.to_string(),
        "seed": SEED.to_string(),
        "work_us": "20",
        "output": out.display().to_string(),
    });
    for (k, v) in extra {
        args[*k] = json!(v);
    }
    args
}

/// The job is restored from an unaligned checkpoint whose generator snapshots hold
/// output channel state (read while the job runs: a finished job's checkpoints are
/// discarded) and finishes with exactly the undisturbed run's output.
fn assert_restored_exactly(cluster: &Cluster, jid: &str, chk: &Path, out: &Path) {
    let mut restored = None;
    wait_until(Duration::from_secs(60), || {
        let stats = checkpoints(cluster, jid);
        if stats["counts"]["restored"].as_u64().unwrap_or(0) >= 1 {
            restored = stats["latest"]["restored"]["id"].as_u64();
        }
        restored.is_some()
    });
    let restored = restored.unwrap_or(0);
    println!("unaligned: restored from checkpoint {restored}");
    assert!(
        generator_output_state(chk, jid, restored) > 0,
        "the generator's barrier overtook queued buffers at checkpoint {restored}"
    );
    let state = cluster.wait_terminal(jid, Duration::from_secs(180));
    assert_eq!(state, "FINISHED");
    assert_eq!(read_parts(out), keyed_sum_output(KEYS, SEED, RECORDS));
}

#[test]
fn unaligned_barriers_overtake_queued_buffers_and_a_job_restored_after_a_taskmanager_kill_has_exact_sums() {
    let chk = tempfile::tempdir().unwrap();
    let mut cluster = unaligned_cluster(chk.path(), 2, &[]);
    cluster.add_taskmanager();
    cluster.add_taskmanager();
    cluster.wait_for_slots(4);
    let out = tempfile::tempdir().unwrap();
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 2,
        "args": keyed_sum_args(out.path(), &[]),
    }));
    cluster.wait_running(&jid);
    let (persisted, backpressure) = wait_for_an_unaligned_checkpoint_under_backpressure(&cluster, &jid);
    let before_kill = checkpoints(&cluster, &jid);
    let latest = before_kill["latest"]["completed"]["id"].as_u64().unwrap_or(0);
    println!(
        "unaligned: persisted_data={persisted} source back-pressure={backpressure:.2} completed={} summary \
         persisted max={} end-to-end max={}",
        before_kill["counts"]["completed"],
        before_kill["summary"]["persisted_data"]["max"],
        before_kill["summary"]["end_to_end_duration"]["max"]
    );
    assert!(
        generator_output_state(chk.path(), &jid, latest) > 0,
        "checkpoint {latest} completed while the generator's queues were full: its barriers overtook them"
    );

    cluster.add_taskmanager();
    cluster.tms[0].kill();
    assert_restored_exactly(&cluster, &jid, chk.path(), out.path());
}

#[test]
fn a_job_on_one_taskmanager_restored_from_an_unaligned_checkpoint_after_an_injected_failure_has_exact_sums() {
    let chk = tempfile::tempdir().unwrap();
    // Four slots on one TaskManager: every channel is local.
    let mut cluster = unaligned_cluster(chk.path(), 4, &[]);
    cluster.add_taskmanager();
    cluster.wait_for_slots(4);
    let out = tempfile::tempdir().unwrap();
    // Each Sum subtask of the first attempt fails after 60 000 records (about 1.2 s of
    // work at 20 µs a record), by when unaligned checkpoints completed.
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 2,
        "args": keyed_sum_args(out.path(), &[("fail-once-after", "60000")]),
    }));
    cluster.wait_running(&jid);
    assert_restored_exactly(&cluster, &jid, chk.path(), out.path());
    let exceptions = get(&cluster.rest, &format!("/jobs/{jid}/exceptions")).1;
    assert!(
        exceptions["exceptionHistory"]["entries"]
            .as_array()
            .is_some_and(|e| !e.is_empty()),
        "the job failed over: {exceptions}"
    );
}

#[test]
fn aligned_checkpoints_that_time_out_switch_to_overtaking_barriers_and_a_job_restored_from_them_has_exact_sums() {
    let chk = tempfile::tempdir().unwrap();
    // A 1 ms alignment timeout: practically every checkpoint switches to unaligned at the
    // Sum tasks, which forward an overtaking barrier and promote the aligned barriers
    // queued at their end.
    let mut cluster = unaligned_cluster(
        chk.path(),
        4,
        &["execution.checkpointing.aligned-checkpoint-timeout=1 ms"],
    );
    cluster.add_taskmanager();
    cluster.wait_for_slots(4);
    let out = tempfile::tempdir().unwrap();
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 2,
        "args": keyed_sum_args(out.path(), &[("fail-once-after", "60000")]),
    }));
    cluster.wait_running(&jid);
    let (code, config) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints/config"));
    assert_eq!(code, 200);
    assert_eq!(config["aligned_checkpoint_timeout"], 1, "{config}");
    // Checkpoints that switched persist in-flight data: records of the channels whose
    // barrier had not come, and what the promoted barriers overtook.
    let (mut restored, mut persisted) = (None, 0);
    wait_until(Duration::from_secs(60), || {
        let stats = checkpoints(&cluster, &jid);
        if stats["counts"]["restored"].as_u64().unwrap_or(0) >= 1 {
            restored = stats["latest"]["restored"]["id"].as_u64();
        }
        persisted = stats["summary"]["persisted_data"]["max"].as_u64().unwrap_or(0);
        restored.is_some() && persisted > 0
    });
    let restored = restored.unwrap_or(0);
    let state = channel_state_bytes(chk.path(), &jid, restored);
    println!("unaligned (timeout): persisted_data max {persisted}; restored from checkpoint {restored}: {state:?}");
    let state = cluster.wait_terminal(&jid, Duration::from_secs(180));
    assert_eq!(state, "FINISHED");
    assert_eq!(read_parts(out.path()), keyed_sum_output(KEYS, SEED, RECORDS));
}
