//! The final checkpoint (Flink's FLIP-147), across real processes: in a job that takes
//! periodic checkpoints, a bounded job's exactly-once output becomes visible only when
//! a checkpoint taken after its end of input completes; until then the sink's task
//! waits, RUNNING, with its last part files pending.

mod common;

use common::*;
use std::path::Path;
use std::time::Duration;

const KEYS: u64 = 30;
const SEED: u64 = 9;
const RECORDS: u64 = 5_000;

/// How many files under `dir` are pending parts (pre-committed, not committed).
fn pending_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".pending"))
                .count()
        })
        .unwrap_or(0)
}

/// keyed-sum's arguments, writing through the exactly-once file sink into `output`.
fn keyed_sum_args(output: &Path) -> Vec<String> {
    vec![
        format!("keys={KEYS}"),
        format!("records={RECORDS}"),
        format!("seed={SEED}"),
        format!("output={}", output.display()),
    ]
}

fn vertex_status(cluster: &Cluster, jid: &str, vertex: usize) -> String {
    get(&cluster.rest, &format!("/jobs/{jid}")).1["vertices"][vertex]["status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_bounded_job_commits_its_last_output_only_when_a_checkpoint_after_its_end_of_input_completes() {
    let chk = tempfile::tempdir().unwrap();
    let chk_dir = format!("execution.checkpointing.dir={}", chk.path().display());
    // Periodic checkpoints, but none due within the test: the first comes after an hour.
    let cluster = Cluster::start(
        1,
        2,
        &[
            "execution.checkpointing.interval=1 h",
            "execution.checkpointing.min-pause=1 h",
            &chk_dir,
        ],
    );
    let out_dir = tempfile::tempdir().unwrap();
    let args = keyed_sum_args(out_dir.path());
    let (code, out, err) = run_program(&cluster.rest, &["-d", "-p", "1"], "keyed-sum", &args);
    assert_eq!(code, 0, "{out}{err}");
    let jid = job_id(&out);

    // The source finishes and the Sum task ends its input, writing every sum into a
    // transaction it pre-commits only at the next checkpoint: nothing is visible yet.
    wait_until(Duration::from_secs(30), || {
        vertex_status(&cluster, &jid, 0) == "FINISHED"
    });
    // Every record reached the sink's task: what it would commit without a
    // checkpoint, it would have by now.
    wait_until(Duration::from_secs(30), || {
        let metrics = &get(&cluster.rest, &format!("/jobs/{jid}")).1["vertices"][1]["metrics"];
        metrics["read-records"] == RECORDS
    });
    assert_eq!(vertex_status(&cluster, &jid, 1), "RUNNING", "the sink's task waits");
    assert_eq!(get(&cluster.rest, &format!("/jobs/{jid}")).1["state"], "RUNNING");
    assert!(
        read_parts(out_dir.path()).is_empty(),
        "output committed without a checkpoint"
    );

    // A savepoint is the checkpoint after the end of input: the sink pre-commits,
    // commits on completion, and the job finishes with its whole output.
    let sp = tempfile::tempdir().unwrap();
    let (code, out, err) = weir_cli(&["savepoint", "-m", &cluster.rest, &jid, &sp.path().display().to_string()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Savepoint completed. Path: "), "{out}");
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(20)), "FINISHED");
    assert_eq!(read_parts(out_dir.path()), keyed_sum_output(KEYS, SEED, RECORDS));
    assert_eq!(pending_files(out_dir.path()), 0, "a pre-committed part was left behind");
}

#[test]
fn without_periodic_checkpoints_a_bounded_job_commits_at_its_end_of_input() {
    let cluster = Cluster::start(1, 2, &[]);
    let out_dir = tempfile::tempdir().unwrap();
    let args = keyed_sum_args(out_dir.path());
    let (code, out, err) = run_program(&cluster.rest, &["-p", "1"], "keyed-sum", &args);
    assert_eq!(code, 0, "{out}{err}");
    let jid = job_id(&out);
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(20)), "FINISHED");
    assert_eq!(read_parts(out_dir.path()), keyed_sum_output(KEYS, SEED, RECORDS));
    let stats = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints")).1;
    assert_eq!(stats["counts"]["completed"], 0, "{stats}");
}
