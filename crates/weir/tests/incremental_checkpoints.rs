//! Incremental checkpoints of RocksDB state (`execution.checkpointing.incremental`)
//! across real processes: a keyed job survives TaskManager kills with exact sums,
//! restoring its stores from the files of incremental checkpoints; later checkpoints
//! store less than the whole state; the JobManager deletes exactly the shared files no
//! retained checkpoint refers to (none missing, none left behind beyond the uploads
//! in flight when the job was cancelled); a retained incremental checkpoint restores
//! at another parallelism, its files never touched by the new job.

mod common;

use common::*;
use serde_json::json;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn settings(local_dir: &Path) -> Vec<String> {
    vec![
        "state.backend.type=rocksdb".to_string(),
        format!("state.backend.rocksdb.localdir={}", local_dir.display()),
        "state.backend.rocksdb.weir.cache-entries=64".to_string(),
    ]
}

fn start(chk: &Path, local: &Path, extra: &[&str]) -> Cluster {
    let chk_dir = format!("execution.checkpointing.dir={}", chk.display());
    let mut jm = vec![
        "execution.checkpointing.incremental=true",
        &chk_dir,
        "restart-strategy.type=fixed-delay",
        "restart-strategy.fixed-delay.delay=0 s",
        "restart-strategy.fixed-delay.attempts=20",
    ];
    jm.extend_from_slice(extra);
    Cluster::start_with(2, 2, &jm, &settings(local))
}

fn keyed_sum(out: &Path, keys: u64, records: u64, rate: u64) -> serde_json::Value {
    json!({
        "keys": keys.to_string(),
        "records": records.to_string(),
        "seed": "9",
        "rate_per_sec": rate.to_string(),
        "output": out.display().to_string(),
    })
}

/// The files in `dir` (none if it is missing).
fn files_in(dir: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// The checkpoint that uploaded shared file `path` (its name ends in
/// `-<checkpoint>-<store file>`).
fn uploaded_by(path: &Path) -> u64 {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut parts = name.rsplitn(3, '-');
    parts.next();
    parts
        .next()
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("unexpected shared file {name}"))
}

#[test]
fn incremental_checkpoints_survive_two_taskmanager_kills_with_exact_sums_and_go_with_the_job() {
    let chk = tempfile::tempdir().unwrap();
    let local = tempfile::tempdir().unwrap();
    let mut cluster = start(chk.path(), local.path(), &["execution.checkpointing.interval=150 ms"]);
    let out = tempfile::tempdir().unwrap();
    let (keys, records) = (5_000u64, 150_000u64);
    let jid = cluster.submit(
        json!({ "program": "keyed-sum", "parallelism": 2, "args": keyed_sum(out.path(), keys, records, 15_000) }),
    );
    cluster.wait_running(&jid);
    let shared = chk.path().join(&jid).join("shared");
    // The stores' files are uploaded to the job's shared directory.
    wait_until(Duration::from_secs(60), || !files_in(&shared).is_empty());

    cluster.kill_after_checkpoints(&jid, 1);
    cluster.kill_after_checkpoints(&jid, 0);
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(180)), "FINISHED");
    assert_eq!(read_parts(out.path()), keyed_sum_output(keys, 9, records));

    let (_, stats) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints"));
    assert!(stats["counts"]["restored"].as_u64().unwrap() >= 2, "{stats}");
    // Some checkpoint referred to files an earlier one stored: it stored less than its
    // state.
    let history = stats["history"].as_array().unwrap();
    assert!(
        history.iter().any(|c| {
            c["status"] == "COMPLETED" && c["checkpointed_size"].as_u64().unwrap() < c["state_size"].as_u64().unwrap()
        }),
        "{stats}"
    );
    // A finished job's checkpoints go, and with them every shared file (those of the
    // killed TaskManagers' unfinished uploads too).
    wait_until(Duration::from_secs(30), || {
        !chk.path().join(&jid).join("shared").exists()
    });
    wait_until(Duration::from_secs(30), || {
        !files_in(&chk.path().join(&jid))
            .iter()
            .any(|p| p.file_name().unwrap().to_string_lossy().starts_with("chk-"))
    });
}

#[test]
fn over_fifty_checkpoints_exactly_the_unreferenced_shared_files_go_and_a_retained_one_restores_at_p3() {
    let chk = tempfile::tempdir().unwrap();
    let local = tempfile::tempdir().unwrap();
    let cluster = start(
        chk.path(),
        local.path(),
        &[
            "execution.checkpointing.interval=50 ms",
            "execution.checkpointing.num-retained=3",
            "execution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION",
        ],
    );
    let (keys, records) = (20_000u64, 400_000u64);
    let first_out = tempfile::tempdir().unwrap();
    let jid = cluster.submit(json!({
        "program": "keyed-sum", "parallelism": 2, "args": keyed_sum(first_out.path(), keys, records, 20_000)
    }));
    cluster.wait_running(&jid);
    wait_until(Duration::from_secs(120), || cluster.completed_checkpoints(&jid) >= 50);
    let (code, body) = send(&cluster.rest, "PATCH", &format!("/jobs/{jid}?mode=cancel"), None);
    assert_eq!(code, 202, "{body}");
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "CANCELED");

    // The retained checkpoints, and every shared file they refer to.
    let job_dir = chk.path().join(&jid);
    let retained: Vec<PathBuf> = files_in(&job_dir)
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("chk-"))
        .filter(|p| p.join("_metadata").exists())
        .collect();
    assert_eq!(retained.len(), 3, "{retained:?}");
    let mut referenced = BTreeSet::new();
    let mut newest = 0;
    for dir in &retained {
        let metadata = weir_checkpoint::metadata::read_metadata(&dir.display().to_string()).unwrap();
        newest = newest.max(metadata.checkpoint_id);
        for subtask in metadata.tasks.iter().flat_map(|t| &t.subtasks) {
            referenced.extend(subtask.shared_state.iter().map(|f| PathBuf::from(&f.path)));
        }
    }
    assert!(!referenced.is_empty());
    let present = files_in(&job_dir.join("shared"));
    let missing: Vec<_> = referenced.difference(&present).collect();
    assert!(missing.is_empty(), "referenced but deleted: {missing:?}");
    // Left beside them: only what checkpoints still in flight at the cancellation
    // uploaded, never a file of a discarded one.
    let leaked: Vec<_> = present
        .difference(&referenced)
        .filter(|p| uploaded_by(p) <= newest)
        .collect();
    assert!(
        leaked.is_empty(),
        "unreferenced files of completed checkpoints: {leaked:?}"
    );

    // The newest retained checkpoint restores at parallelism 3 (its stores copied and
    // clipped) and the job finishes with the sums of an undisturbed run.
    let latest = retained
        .iter()
        .max_by_key(|p| uploaded_by_dir(p))
        .unwrap()
        .display()
        .to_string();
    let out = tempfile::tempdir().unwrap();
    let (code, stdout, err) = run_program(
        &cluster.rest,
        &["-p", "3", "-s", &latest],
        "keyed-sum",
        &[
            format!("keys={keys}"),
            format!("records={records}"),
            "seed=9".to_string(),
            format!("output={}", out.path().display()),
        ],
    );
    assert_eq!(code, 0, "{stdout}{err}");
    assert_eq!(read_parts(out.path()), keyed_sum_output(keys, 9, records));
    // The new job did not claim the old one's files (Flink's NO_CLAIM mode).
    let still = files_in(&job_dir.join("shared"));
    assert!(
        referenced.is_subset(&still),
        "the restored job deleted files of the checkpoint it restored"
    );
}

/// The id of checkpoint directory `chk-<id>`.
fn uploaded_by_dir(dir: &Path) -> u64 {
    dir.file_name()
        .unwrap()
        .to_string_lossy()
        .trim_start_matches("chk-")
        .parse()
        .unwrap()
}

/// Store checkpoints (`<store>-chk-<n>`) kept under the RocksDB local directory: the
/// local copies and the checkpoints being uploaded.
fn local_checkpoints(local_dir: &Path) -> usize {
    files_in(local_dir)
        .iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("weir-rocksdb-"))
        .flat_map(|p| files_in(p))
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains("-chk-"))
        .count()
}

#[test]
fn with_local_recovery_a_failed_job_restarts_on_its_taskmanager_with_exact_sums_and_its_copies_go_with_it() {
    let chk = tempfile::tempdir().unwrap();
    let local = tempfile::tempdir().unwrap();
    let chk_dir = format!("execution.checkpointing.dir={}", chk.path().display());
    let mut common = settings(local.path());
    common.push("execution.state-recovery.from-local=true".to_string());
    // One TaskManager: the restarted tasks run where their local copies are.
    let cluster = Cluster::start_with(
        1,
        4,
        &[
            "execution.checkpointing.incremental=true",
            "execution.checkpointing.interval=150 ms",
            &chk_dir,
            "restart-strategy.type=fixed-delay",
            "restart-strategy.fixed-delay.delay=0 s",
        ],
        &common,
    );
    let out = tempfile::tempdir().unwrap();
    let (keys, records) = (3_000u64, 100_000u64);
    let mut args = keyed_sum(out.path(), keys, records, 20_000);
    args["fail-once-after"] = json!("20000");
    let jid = cluster.submit(json!({ "program": "keyed-sum", "parallelism": 2, "args": args }));
    // Each Sum subtask keeps a local copy of its last confirmed checkpoint.
    wait_until(Duration::from_secs(60), || local_checkpoints(local.path()) >= 2);
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(120)), "FINISHED");
    assert_eq!(read_parts(out.path()), keyed_sum_output(keys, 9, records));
    let (_, stats) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints"));
    assert!(stats["counts"]["restored"].as_u64().unwrap() >= 1, "{stats}");
    // The job ended: its local copies are gone.
    wait_until(Duration::from_secs(30), || local_checkpoints(local.path()) == 0);
}
