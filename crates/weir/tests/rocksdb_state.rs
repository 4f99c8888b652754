//! Keyed state on RocksDB (`state.backend.type: rocksdb`) across real processes: a
//! keyed job whose state is far larger than its operators' heap cache survives
//! TaskManager kills with exact sums, its state living in RocksDB stores under
//! `state.backend.rocksdb.localdir` while it runs; and savepoints carry keyed state
//! between a RocksDB cluster and a heap (`hashmap`) cluster in both directions.

mod common;

use common::*;
use serde_json::json;
use std::path::Path;
use std::time::Duration;

/// The RocksDB stores open under `local_dir` (one directory per keyed operator
/// subtask, under a `weir-rocksdb-<pid>` directory per TaskManager).
fn open_stores(local_dir: &Path) -> usize {
    let Ok(processes) = std::fs::read_dir(local_dir) else {
        return 0;
    };
    processes
        .flatten()
        .filter(|p| p.file_name().to_string_lossy().starts_with("weir-rocksdb-"))
        .map(|p| std::fs::read_dir(p.path()).map(|d| d.count()).unwrap_or(0))
        .sum()
}

fn rocksdb_settings(local_dir: &Path, cache_entries: u32) -> Vec<String> {
    vec![
        "state.backend.type=rocksdb".to_string(),
        format!("state.backend.rocksdb.localdir={}", local_dir.display()),
        format!("state.backend.rocksdb.weir.cache-entries={cache_entries}"),
    ]
}

#[test]
fn a_keyed_job_with_state_in_rocksdb_survives_two_taskmanager_kills_with_exact_sums() {
    let chk = tempfile::tempdir().unwrap();
    let local = tempfile::tempdir().unwrap();
    let chk_dir = format!("execution.checkpointing.dir={}", chk.path().display());
    // 3,000 keys against a cache of 16 entries per subtask: nearly every record's state
    // comes from and goes back to RocksDB.
    let mut cluster = Cluster::start_with(
        2,
        2,
        &[
            "execution.checkpointing.interval=200 ms",
            &chk_dir,
            "restart-strategy.type=fixed-delay",
            "restart-strategy.fixed-delay.delay=0 s",
            "restart-strategy.fixed-delay.attempts=20",
        ],
        &rocksdb_settings(local.path(), 16),
    );
    let (keys, seed, records) = (3_000u64, 5u64, 120_000u64);
    let out = tempfile::tempdir().unwrap();
    let args = json!({
        "keys": keys.to_string(),
        "records": records.to_string(),
        "seed": seed.to_string(),
        "rate_per_sec": "15000",
        "output": out.path().display().to_string(),
    });
    let jid = cluster.submit(json!({ "program": "keyed-sum", "parallelism": 2, "args": args }));
    cluster.wait_running(&jid);
    // Each Sum subtask has a store of its own on local disk.
    wait_until(Duration::from_secs(30), || open_stores(local.path()) == 2);
    let (code, config) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints/config"));
    assert_eq!(code, 200);
    assert_eq!(config["state_backend"], "EmbeddedRocksDBStateBackend", "{config}");

    cluster.kill_after_checkpoints(&jid, 1);
    cluster.kill_after_checkpoints(&jid, 0);

    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(120)), "FINISHED");
    assert_eq!(read_parts(out.path()), keyed_sum_output(keys, seed, records));
    let (_, stats) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints"));
    assert!(stats["counts"]["restored"].as_u64().unwrap() >= 2, "{stats}");
    // Finished tasks close their stores, and the stores the killed TaskManagers left
    // behind were removed when the restarted tasks opened theirs.
    wait_until(Duration::from_secs(30), || open_stores(local.path()) == 0);
}

fn keyed_sum_args(output: &Path, records: u64) -> Vec<String> {
    vec![
        "keys=500".to_string(),
        format!("records={records}"),
        "seed=3".to_string(),
        "rate_per_sec=20000".to_string(),
        format!("output={}", output.display()),
    ]
}

/// Starts keyed-sum at parallelism `p` on `cluster` (restoring `savepoint`, if given),
/// waits until Sum has read 5,000 records, and stops it with a savepoint into `dir`.
fn run_and_stop(cluster: &Cluster, p: &str, savepoint: Option<&str>, dir: &Path, records: u64) -> String {
    let out = tempfile::tempdir().unwrap();
    let mut options = vec!["-d", "-p", p];
    if let Some(s) = savepoint {
        options.extend(["-s", s]);
    }
    let (code, stdout, err) = run_program(
        &cluster.rest,
        &options,
        "keyed-sum",
        &keyed_sum_args(out.path(), records),
    );
    assert_eq!(code, 0, "{stdout}{err}");
    let jid = job_id(&stdout);
    // Not every task need be RUNNING: restored at a higher parallelism, a source
    // subtask without a share of the input finishes at once.
    wait_until(Duration::from_secs(20), || {
        cluster.second_vertex_records_in(&jid) >= 5_000
    });
    cluster.stop_with_savepoint(&jid, &dir.display().to_string())
}

#[test]
fn savepoints_carry_keyed_state_from_rocksdb_to_the_heap_and_back_with_exact_sums() {
    let local = tempfile::tempdir().unwrap();
    let rocks = Cluster::start_with(1, 3, &[], &rocksdb_settings(local.path(), 8));
    let heap = Cluster::start(1, 3, &[]);
    let sp = tempfile::tempdir().unwrap();
    let records = 200_000u64;

    // Taken on RocksDB at p=2, resumed on the heap at p=3, stopped again there, and
    // finished on RocksDB at p=1: the sums of an undisturbed run.
    let from_rocksdb = run_and_stop(&rocks, "2", None, sp.path(), records);
    let from_heap = run_and_stop(&heap, "3", Some(&from_rocksdb), sp.path(), records);
    let out = tempfile::tempdir().unwrap();
    let (code, stdout, err) = run_program(
        &rocks.rest,
        &["-p", "1", "-s", &from_heap],
        "keyed-sum",
        &keyed_sum_args(out.path(), records),
    );
    assert_eq!(code, 0, "{stdout}{err}");
    assert_eq!(read_parts(out.path()), keyed_sum_output(500, 3, records));
}

#[test]
fn an_unknown_backend_or_a_bad_rocksdb_setting_is_refused_naming_the_key() {
    for (value, says) in [
        ("forst", "not supported by Weir yet"),
        ("leveldb", "Accepted values: hashmap, rocksdb"),
    ] {
        let (code, out, err) = weir_cli(&["local", "wordcount", "-D", &format!("state.backend.type={value}")]);
        assert_ne!(code, 0, "{out}");
        assert!(
            err.contains("state.backend.type") && err.contains(says),
            "{value}: {err}"
        );
    }
    let (code, out, err) = weir_cli(&[
        "local",
        "wordcount",
        "-D",
        "state.backend.type=rocksdb",
        "-D",
        "state.backend.rocksdb.memory.write-buffer-ratio=1.5",
    ]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("state.backend.rocksdb.memory.write-buffer-ratio must be above 0 and below 1, not 1.5"),
        "{err}"
    );
}

#[test]
fn a_job_chooses_its_own_state_backend_on_either_cluster_and_a_bad_setting_fails_it_naming_the_key() {
    let local = tempfile::tempdir().unwrap();
    let heap = Cluster::start(1, 2, &["restart-strategy.type=none"]);
    let (keys, records) = (2_000u64, 60_000u64);
    let out = tempfile::tempdir().unwrap();
    let args = json!({
        "keys": keys.to_string(), "records": records.to_string(), "seed": "4",
        "rate_per_sec": "20000", "output": out.path().display().to_string(),
    });
    let jid = heap.submit(json!({
        "program": "keyed-sum", "parallelism": 2, "args": args,
        "config": {
            "state.backend.type": "rocksdb",
            "state.backend.rocksdb.localdir": local.path().display().to_string(),
            "state.backend.rocksdb.weir.cache-entries": "8",
            "execution.checkpointing.interval": "200 ms",
        },
    }));
    // On a heap cluster, the job's Sum subtasks open RocksDB stores of their own.
    wait_until(Duration::from_secs(30), || open_stores(local.path()) == 2);
    let (_, config) = get(&heap.rest, &format!("/jobs/{jid}/checkpoints/config"));
    assert_eq!(config["state_backend"], "EmbeddedRocksDBStateBackend", "{config}");
    assert_eq!(heap.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(read_parts(out.path()), keyed_sum_output(keys, 4, records));

    // On a RocksDB cluster, a job asking for the heap opens no store.
    let rocks_dir = tempfile::tempdir().unwrap();
    let rocks = Cluster::start_with(1, 2, &[], &rocksdb_settings(rocks_dir.path(), 8));
    let out = tempfile::tempdir().unwrap();
    let args = json!({
        "keys": keys.to_string(), "records": records.to_string(), "seed": "4",
        "rate_per_sec": "20000", "output": out.path().display().to_string(),
    });
    let jid = rocks.submit(json!({
        "program": "keyed-sum", "parallelism": 2, "args": args,
        "config": { "state.backend.type": "hashmap" },
    }));
    wait_until(Duration::from_secs(30), || {
        rocks.second_vertex_records_in(&jid) >= 5_000
    });
    assert_eq!(open_stores(rocks_dir.path()), 0);
    assert_eq!(rocks.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(read_parts(out.path()), keyed_sum_output(keys, 4, records));

    // A value only the TaskManager can check fails the job with its reason.
    let jid = heap.submit(json!({
        "program": "keyed-sum", "parallelism": 1,
        "args": { "records": "10", "output": "discard" },
        "config": {
            "state.backend.type": "rocksdb",
            "state.backend.rocksdb.localdir": local.path().display().to_string(),
            "state.backend.rocksdb.memory.write-buffer-ratio": "1.5",
        },
    }));
    assert_eq!(heap.wait_terminal(&jid, Duration::from_secs(60)), "FAILED");
    let (_, exceptions) = get(&heap.rest, &format!("/jobs/{jid}/exceptions"));
    assert!(
        exceptions
            .to_string()
            .contains("state.backend.rocksdb.memory.write-buffer-ratio must be above 0 and below 1, not 1.5"),
        "{exceptions}"
    );
    // On a TaskManager that restricts the files jobs open, a job's own RocksDB
    // directory must lie where it allows.
    let allowed = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let fenced = Cluster::start_with(
        1,
        1,
        &["restart-strategy.type=none"],
        &[format!("security.job.allowed-paths={}", allowed.path().display())],
    );
    let jid = fenced.submit(json!({
        "program": "keyed-sum", "parallelism": 1,
        "args": { "records": "10", "output": "discard" },
        "config": {
            "state.backend.type": "rocksdb",
            "state.backend.rocksdb.localdir": outside.path().display().to_string(),
        },
    }));
    assert_eq!(fenced.wait_terminal(&jid, Duration::from_secs(60)), "FAILED");
    let (_, exceptions) = get(&fenced.rest, &format!("/jobs/{jid}/exceptions"));
    let text = exceptions.to_string();
    assert!(
        text.contains("state.backend.rocksdb.localdir") && text.contains("security.job.allowed-paths"),
        "{exceptions}"
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing was created outside"
    );
    // A value the JobManager can check is refused at submission.
    let (code, body) = send(
        &heap.rest,
        "POST",
        "/jobs",
        Some(json!({ "program": "keyed-sum", "config": { "state.backend.type": "forst" } })),
    );
    assert_eq!(code, 400, "{body}");
    assert!(body.to_string().contains("state.backend.type"), "{body}");
}
