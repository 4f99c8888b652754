//! Checkpoints after tasks finish (Flink's FLIP-147), across real processes: a job
//! whose source subtasks finish while the rest runs goes on checkpointing, records the
//! finished subtasks in its checkpoints, and restores them as finished after a failure
//! — with the exact results of an undisturbed run.

mod common;

use common::*;
use std::path::Path;
use std::time::Duration;

const KEYS: u64 = 30;
const SEED: u64 = 5;

fn keyed_sum_args(records: u64, output: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        format!("keys={KEYS}"),
        format!("records={records}"),
        format!("seed={SEED}"),
        format!("output={}", output.display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// `weir run -m <rest> <options> keyed-sum <args>`.
fn run_keyed_sum(cluster: &Cluster, options: &[&str], args: &[String]) -> (i32, String, String) {
    run_program(&cluster.rest, options, "keyed-sum", args)
}

fn checkpoint_stats(cluster: &Cluster, jid: &str) -> serde_json::Value {
    get(&cluster.rest, &format!("/jobs/{jid}/checkpoints")).1
}

#[test]
fn a_job_resumed_with_a_source_subtask_that_has_no_split_checkpoints_and_recovers_with_exact_results() {
    let chk = tempfile::tempdir().unwrap();
    let cluster = Cluster::start_checkpointing(chk.path());
    let records = 60_000;

    // At parallelism 1 the source has one split; stop the job with a savepoint midway.
    let first_out = tempfile::tempdir().unwrap();
    let args = keyed_sum_args(records, first_out.path(), &["rate_per_sec=20000"]);
    let (code, out, err) = run_keyed_sum(&cluster, &["-d", "-p", "1"], &args);
    assert_eq!(code, 0, "{out}{err}");
    let jid = job_id(&out);
    cluster.wait_running(&jid);
    wait_until(Duration::from_secs(20), || {
        cluster.second_vertex_records_in(&jid) >= 5_000
    });
    let sp_dir = tempfile::tempdir().unwrap();
    let savepoint = cluster.stop_with_savepoint(&jid, &sp_dir.path().display().to_string());

    // Resumed at parallelism 2: the second source subtask has no split and finishes at
    // once, while the first goes on. Each Sum subtask of the first attempt fails after
    // 12,000 records, after checkpoints completed with the finished subtask in them.
    let out_dir = tempfile::tempdir().unwrap();
    let args = keyed_sum_args(
        records,
        out_dir.path(),
        &["rate_per_sec=20000", "fail-once-after=12000"],
    );
    let (code, out, err) = run_keyed_sum(&cluster, &["-p", "2", "-s", &savepoint], &args);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(read_parts(out_dir.path()), keyed_sum_output(KEYS, SEED, records));
    let jid = job_id(&out);
    let stats = checkpoint_stats(&cluster, &jid);
    assert!(stats["counts"]["completed"].as_u64().unwrap_or(0) >= 1, "{stats}");
    assert_eq!(
        stats["latest"]["restored"]["is_savepoint"], false,
        "the failover restored a checkpoint taken after the source subtask finished: {stats}"
    );
    assert!(stats["latest"]["restored"]["id"].as_u64().unwrap_or(0) > 0, "{stats}");
}

#[test]
fn a_task_whose_sources_finished_is_triggered_itself_and_snapshots_at_its_end_of_input() {
    let chk = tempfile::tempdir().unwrap();
    let cluster = Cluster::start_checkpointing(chk.path());
    // A slow Sum (2 ms a record): the 2,500 records fit into the network buffers, so the
    // source finishes at once and Sum reads for about five seconds after it.
    let records = 2_500;
    let out_dir = tempfile::tempdir().unwrap();
    let args = keyed_sum_args(records, out_dir.path(), &["work_us=2000"]);
    let (code, out, err) = run_keyed_sum(&cluster, &["-p", "1"], &args);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(read_parts(out_dir.path()), keyed_sum_output(KEYS, SEED, records));

    let jid = job_id(&out);
    let job = get(&cluster.rest, &format!("/jobs/{jid}")).1;
    let source_end = job["vertices"][0]["end-time"].as_i64().expect("source end time");
    let sum_end = job["vertices"][1]["end-time"].as_i64().expect("sum end time");
    assert!(sum_end - source_end > 1_000, "the source did not finish early: {job}");
    let stats = checkpoint_stats(&cluster, &jid);
    let history = stats["history"].as_array().expect("history");
    let after_source: Vec<&serde_json::Value> = history
        .iter()
        .filter(|c| c["trigger_timestamp"].as_i64().unwrap_or(0) > source_end)
        .collect();
    assert!(
        !after_source.is_empty(),
        "no checkpoint was triggered after the source finished at {source_end}: {stats}"
    );
    for c in after_source {
        // Sum took it once its input had ended, just before it finished; the finished
        // source counts as acknowledged. The job finishing right after may abort it
        // while its metadata is written (a finished job's checkpoints are discarded).
        assert_eq!(c["num_acknowledged_subtasks"], c["num_subtasks"], "{c}");
        let acked = c["latest_ack_timestamp"].as_i64().unwrap_or(0);
        assert!(
            acked > source_end + 1_000 && acked <= sum_end,
            "acknowledged at {acked}, not at Sum's end of input ({sum_end}): {c}"
        );
        assert!(
            c["status"] == "COMPLETED" || c["failure_message"] == "CheckpointCoordinator shutdown.",
            "{c}"
        );
    }
}
