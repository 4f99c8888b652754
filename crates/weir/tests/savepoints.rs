//! Savepoints across real processes: `weir savepoint` while a keyed job runs, `weir
//! stop` (stop-with-savepoint), and `weir run -s` resuming the savepoint at a higher
//! and a lower parallelism with the results of an undisturbed run; `weir stop --drain`
//! firing the end-of-input timers; bad savepoints are refused with a clear error and
//! start no job.

mod common;

use common::*;
use std::path::Path;
use std::time::Duration;

const KEYS: u64 = 30;
const SEED: u64 = 11;
const RECORDS: u64 = 60_000;

fn keyed_sum_args(output: &Path) -> Vec<String> {
    vec![
        format!("keys={KEYS}"),
        format!("records={RECORDS}"),
        format!("seed={SEED}"),
        "rate_per_sec=20000".to_string(),
        format!("output={}", output.display()),
    ]
}

/// `weir run` of keyed-sum; returns the job id (detached) or waits for the end.
fn run(cluster: &Cluster, extra: &[&str], output: &Path, detached: bool) -> (i32, String, String) {
    let mut options: Vec<&str> = if detached { vec!["-d"] } else { Vec::new() };
    options.extend_from_slice(extra);
    run_program(&cluster.rest, &options, "keyed-sum", &keyed_sum_args(output))
}

/// Starts keyed-sum detached at parallelism 2 writing to `output`, and waits until
/// Sum has read `records`; the job id.
fn start_running(cluster: &Cluster, output: &Path, records: u64) -> String {
    let (code, out, err) = run(cluster, &["-p", "2"], output, true);
    assert_eq!(code, 0, "{out}{err}");
    let jid = job_id(&out);
    cluster.wait_running(&jid);
    wait_until(Duration::from_secs(20), || {
        cluster.second_vertex_records_in(&jid) >= records
    });
    jid
}

#[test]
fn a_stopped_job_resumes_from_its_savepoint_at_three_and_at_one_subtask_with_exact_results() {
    let cluster = Cluster::start(2, 2, &[]);
    let sp_dir = tempfile::tempdir().unwrap();
    let first_out = tempfile::tempdir().unwrap();
    let jid = start_running(&cluster, first_out.path(), 5_000);

    // A savepoint while the job goes on.
    let (code, out, err) = weir_cli(&[
        "savepoint",
        "-m",
        &cluster.rest,
        &jid,
        &sp_dir.path().display().to_string(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let taken = savepoint_path(&out);
    let local = taken.strip_prefix("file:").unwrap_or(&taken);
    assert!(Path::new(local).join("_metadata").is_file(), "{taken}");
    assert!(local.starts_with(&sp_dir.path().display().to_string()), "{taken}");
    let (_, detail) = get(&cluster.rest, &format!("/jobs/{jid}"));
    assert_eq!(detail["state"], "RUNNING");

    // Stop with a savepoint: the job ends FINISHED and, without --drain, fires no
    // end-of-input timers (no sums are written).
    let stopped = cluster.stop_with_savepoint(&jid, &sp_dir.path().display().to_string());
    assert!(read_parts(first_out.path()).is_empty());
    let processed = cluster.second_vertex_records_in(&jid);
    assert!(
        processed < RECORDS,
        "the job ran to its end before the stop: {processed}"
    );

    // The savepoint resumed at parallelism 3 and at parallelism 1.
    for p in ["3", "1"] {
        let out_dir = tempfile::tempdir().unwrap();
        let (code, out, err) = run(&cluster, &["-p", p, "-s", &stopped], out_dir.path(), false);
        assert_eq!(code, 0, "p={p}: {out}{err}");
        assert_eq!(
            read_parts(out_dir.path()),
            keyed_sum_output(KEYS, SEED, RECORDS),
            "resumed at p={p}"
        );
        let jid = job_id(&out);
        let (_, stats) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints"));
        assert_eq!(stats["latest"]["restored"]["is_savepoint"], true, "{stats}");
        assert_eq!(
            stats["latest"]["restored"]["external_path"],
            stopped.as_str(),
            "{stats}"
        );
    }

    // The savepoint taken while running also resumes to the exact result.
    let out_dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run(&cluster, &["-p", "2", "-s", &taken], out_dir.path(), false);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(read_parts(out_dir.path()), keyed_sum_output(KEYS, SEED, RECORDS));
}

#[test]
fn bad_savepoints_and_missing_directories_are_clear_errors_and_start_no_job() {
    let cluster = Cluster::start(1, 2, &[]);
    let out = tempfile::tempdir().unwrap();
    let jobs = || {
        get(&cluster.rest, "/jobs/overview").1["jobs"]
            .as_array()
            .map_or(0, Vec::len)
    };

    let (code, _, err) = run(&cluster, &["-s", "/nonexistent/savepoint-1"], out.path(), true);
    assert_ne!(code, 0);
    assert!(
        err.contains("Cannot find checkpoint or savepoint file/directory '/nonexistent/savepoint-1'"),
        "{err}"
    );

    let corrupt = tempfile::tempdir().unwrap();
    std::fs::write(corrupt.path().join("_metadata"), b"WEIRCKPT garbage").unwrap();
    let (code, _, err) = run(
        &cluster,
        &["-s", &corrupt.path().display().to_string()],
        out.path(),
        true,
    );
    assert_ne!(code, 0);
    assert!(err.contains(&corrupt.path().display().to_string()), "{err}");
    assert_eq!(
        std::fs::read(corrupt.path().join("_metadata")).unwrap(),
        b"WEIRCKPT garbage"
    );
    assert_eq!(jobs(), 0);

    // A real savepoint of keyed-sum, then: another program's operators do not match;
    // another max parallelism does not fit.
    let sp_dir = tempfile::tempdir().unwrap();
    let (code, stdout, err) = run(&cluster, &["-p", "2"], out.path(), true);
    assert_eq!(code, 0, "{err}");
    let jid = job_id(&stdout);
    cluster.wait_running(&jid);
    let (code, no_dir_out, err) = weir_cli(&["savepoint", "-m", &cluster.rest, &jid]);
    assert_ne!(code, 0, "{no_dir_out}");
    assert!(err.contains("No savepoint directory configured"), "{err}");
    let (code, stdout, err) = weir_cli(&[
        "stop",
        "-m",
        &cluster.rest,
        "-p",
        &sp_dir.path().display().to_string(),
        &jid,
    ]);
    assert_eq!(code, 0, "{stdout}{err}");
    let path = savepoint_path(&stdout);
    let before = jobs();

    let (code, _, err) = weir_cli(&["run", "-m", &cluster.rest, "-d", "-s", &path, "wordcount"]);
    assert_ne!(code, 0);
    assert!(err.contains("Failed to rollback to checkpoint/savepoint"), "{err}");
    let (code, _, err) = run(
        &cluster,
        &["-p", "2", "--max-parallelism", "64", "-s", &path],
        out.path(),
        true,
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("max parallelism") || err.contains("Max parallelism"),
        "{err}"
    );
    assert_eq!(jobs(), before);

    // With --allowNonRestoredState the unmatched state is skipped.
    let (code, stdout, err) = weir_cli(&["run", "-m", &cluster.rest, "-s", &path, "-n", "wordcount"]);
    assert_eq!(code, 0, "{stdout}{err}");
}

#[test]
fn stop_with_drain_fires_the_end_of_input_timers_and_finishes() {
    let cluster = Cluster::start(1, 2, &[]);
    let sp_dir = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let jid = start_running(&cluster, out_dir.path(), 2_000);
    let sp = sp_dir.path().display().to_string();
    let (code, out, err) = weir_cli(&["stop", "--drain", "-m", &cluster.rest, "-p", &sp, &jid]);
    assert_eq!(code, 0, "{out}{err}");
    savepoint_path(&out);
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(10)), "FINISHED");
    // The MAX watermark fired every key's timer: one sum per key seen so far, none
    // above its sum over the whole input.
    let totals: std::collections::BTreeMap<String, u64> = keyed_sum_output(KEYS, SEED, RECORDS)
        .iter()
        .filter_map(|l| l.split_once(',').map(|(k, s)| (k.to_string(), s.parse().unwrap())))
        .collect();
    let drained = read_parts(out_dir.path());
    assert!(!drained.is_empty());
    assert!(drained.len() as u64 <= KEYS);
    for line in &drained {
        let (key, sum) = line.split_once(',').unwrap();
        assert!(sum.parse::<u64>().unwrap() <= totals[key], "{line}");
    }
    assert!(cluster.second_vertex_records_in(&jid) < RECORDS);
}
