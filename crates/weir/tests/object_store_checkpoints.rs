//! Checkpoints and savepoints on an object store across real processes: a JobManager
//! and TaskManagers configured with Flink's `s3.*` options talk S3 to an in-process
//! S3-compatible server (s3s over a temporary directory, 127.0.0.1). A keyed job
//! checkpoints into `s3://…` (`_metadata` and task state in the bucket), a savepoint
//! taken to `s3://…` resumes with `weir run -s s3://…` to the results of an undisturbed
//! run (also after being moved to another prefix), and broken or unsupported locations
//! are clear errors.

mod common;

use common::*;
use std::path::Path;
use std::time::Duration;
use weir_checkpoint::read_metadata;
use weir_core::checkpoint::StreamStateHandle;
use weir_filesystem::test_server::S3TestServer;
use weir_filesystem::Entry;

const KEYS: u64 = 60;
const SEED: u64 = 23;
const RECORDS: u64 = 60_000;

/// An S3 server with `bucket`, which this test process reaches too (through a store
/// registered for the bucket, so that tests running in parallel each reach their own
/// server).
fn s3_server(root: &Path, bucket: &str) -> S3TestServer {
    let server = S3TestServer::start(root, &[bucket]).expect("start the S3 test server");
    let url = format!("s3://{bucket}");
    let Ok(weir_filesystem::Location::Object(location)) = weir_filesystem::Location::parse(&url) else {
        panic!("{url} is an object store location");
    };
    let store = weir_filesystem::build_store(&location, &server.options(), Vec::new()).expect("S3 store");
    weir_filesystem::register_store(&url, store);
    server
}

/// A cluster of one JobManager and one TaskManager (4 slots) reaching `server`.
fn cluster_on(server: &S3TestServer, jm_dynamic: &[&str]) -> Cluster {
    Cluster::start_with(1, 4, jm_dynamic, &server.dynamic_properties())
}

/// `weir run` of keyed-sum (detached or waiting for the end).
fn run(cluster: &Cluster, extra: &[&str], output: &Path, detached: bool) -> (i32, String, String) {
    let mut options: Vec<&str> = if detached { vec!["-d"] } else { Vec::new() };
    options.extend_from_slice(extra);
    let args = [
        format!("keys={KEYS}"),
        format!("records={RECORDS}"),
        format!("seed={SEED}"),
        "rate_per_sec=20000".to_string(),
        format!("output={}", output.display()),
    ];
    run_program(&cluster.rest, &options, "keyed-sum", &args)
}

/// The file handles of a checkpoint or savepoint's `_metadata`.
fn file_handles(location: &str) -> Vec<String> {
    read_metadata(location)
        .unwrap_or_else(|e| panic!("{location}: {e}"))
        .tasks
        .iter()
        .flat_map(|t| &t.subtasks)
        .filter_map(|s| match &s.handle {
            Some(StreamStateHandle::File { path, .. }) => Some(path.clone()),
            _ => None,
        })
        .collect()
}

/// Whether the completed checkpoint at `location` is in the bucket: its `_metadata`
/// and every state file it names (false when it was subsumed and discarded meanwhile).
fn checkpoint_in_bucket(location: &str) -> bool {
    let Ok(metadata) = read_metadata(location) else {
        return false;
    };
    let handles: Vec<String> = metadata
        .tasks
        .iter()
        .flat_map(|t| &t.subtasks)
        .filter_map(|s| match &s.handle {
            Some(StreamStateHandle::File { path, .. }) => Some(path.clone()),
            _ => None,
        })
        .collect();
    !handles.is_empty()
        && handles
            .iter()
            .all(|h| h.starts_with(&format!("{location}/")) && weir_filesystem::stat(h).ok() == Some(Entry::File))
}

#[test]
fn a_keyed_job_checkpoints_to_s3_and_its_s3_savepoint_resumes_with_exact_results() {
    let root = tempfile::tempdir().unwrap();
    let server = s3_server(root.path(), "weir");
    let cluster = cluster_on(
        &server,
        &[
            "execution.checkpointing.interval=300 ms",
            "execution.checkpointing.dir=s3://weir/checkpoints",
            "execution.checkpointing.data-inline-threshold=0",
        ],
    );
    let first_out = tempfile::tempdir().unwrap();
    let (code, out, err) = run(&cluster, &["-p", "2"], first_out.path(), true);
    assert_eq!(code, 0, "{out}{err}");
    let jid = job_id(&out);
    cluster.wait_running(&jid);

    // Completed checkpoints: `_metadata` and every task's state file in the bucket.
    let mut seen = None;
    wait_until(Duration::from_secs(30), || {
        let (_, stats) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints"));
        let path = stats["latest"]["completed"]["external_path"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if checkpoint_in_bucket(&path) {
            seen = Some(path);
        }
        seen.is_some()
    });
    let checkpoint = seen.unwrap();
    assert!(
        checkpoint.starts_with(&format!("s3://weir/checkpoints/{jid}/chk-")),
        "{checkpoint}"
    );

    // A savepoint to s3:// while the job runs, then stop-with-savepoint.
    wait_until(Duration::from_secs(20), || {
        cluster.second_vertex_records_in(&jid) >= 5_000
    });
    let (code, out, err) = weir_cli(&["savepoint", "-m", &cluster.rest, &jid, "s3://weir/savepoints"]);
    assert_eq!(code, 0, "{out}{err}");
    let taken = savepoint_path(&out);
    assert!(taken.starts_with("s3://weir/savepoints/savepoint-"), "{taken}");
    let key = taken.strip_prefix("s3://weir/").unwrap();
    assert!(
        server.object_file("weir", &format!("{key}/_metadata")).is_file(),
        "_metadata is an object in the server's bucket"
    );
    let handles = file_handles(&taken);
    assert!(!handles.is_empty(), "the savepoint has state files");
    for h in &handles {
        assert!(h.starts_with(&format!("{taken}/")), "{h} is inside the savepoint");
        assert_eq!(weir_filesystem::stat(h), Ok(Entry::File), "{h}");
    }
    let stopped = cluster.stop_with_savepoint(&jid, "s3://weir/savepoints");
    assert!(
        read_parts(first_out.path()).is_empty(),
        "no sums before the end of input"
    );

    // Resumed from s3:// at another parallelism: the sums of an undisturbed run.
    let out_dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run(&cluster, &["-p", "3", "-s", &stopped], out_dir.path(), false);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(read_parts(out_dir.path()), keyed_sum_output(KEYS, SEED, RECORDS));
    let (_, stats) = get(&cluster.rest, &format!("/jobs/{}/checkpoints", job_id(&out)));
    assert_eq!(
        stats["latest"]["restored"]["external_path"],
        stopped.as_str(),
        "{stats}"
    );

    // The savepoint taken while running, moved whole to another prefix, resumes too:
    // its state files are named relative to its `_metadata`.
    let moved = "s3://weir/archive/the-savepoint";
    for file in weir_filesystem::list(&taken).unwrap() {
        let name = file.strip_prefix(&format!("{taken}/")).unwrap().to_string();
        weir_filesystem::move_file(&file, &format!("{moved}/{name}")).unwrap();
    }
    assert_eq!(weir_filesystem::stat(&taken), Ok(Entry::Missing));
    let out_dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run(&cluster, &["-p", "2", "-s", moved], out_dir.path(), false);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(read_parts(out_dir.path()), keyed_sum_output(KEYS, SEED, RECORDS));
}

#[test]
fn corrupt_missing_and_incomplete_savepoints_in_the_bucket_are_clear_errors() {
    let root = tempfile::tempdir().unwrap();
    let server = s3_server(root.path(), "broken");
    let cluster = cluster_on(
        &server,
        &[
            "execution.checkpointing.dir=s3://broken/checkpoints",
            "execution.checkpointing.data-inline-threshold=0",
        ],
    );
    let out = tempfile::tempdir().unwrap();
    let jobs = || {
        get(&cluster.rest, "/jobs/overview").1["jobs"]
            .as_array()
            .map_or(0, Vec::len)
    };

    weir_filesystem::put("s3://broken/bad/savepoint-1/_metadata", b"WEIRCKPT garbage".to_vec()).unwrap();
    let (code, _, err) = run(&cluster, &["-s", "s3://broken/bad/savepoint-1"], out.path(), true);
    assert_ne!(code, 0);
    assert!(
        err.contains("Corrupt checkpoint metadata s3://broken/bad/savepoint-1/_metadata"),
        "{err}"
    );
    assert_eq!(
        weir_filesystem::get("s3://broken/bad/savepoint-1/_metadata").unwrap(),
        b"WEIRCKPT garbage",
        "a corrupt _metadata is left as it was"
    );

    let (code, _, err) = run(&cluster, &["-s", "s3://broken/nothing-here"], out.path(), true);
    assert_ne!(code, 0);
    assert!(
        err.contains(
            "Cannot find checkpoint or savepoint file/directory 's3://broken/nothing-here' on file system 's3'"
        ),
        "{err}"
    );
    assert_eq!(jobs(), 0, "no job started from a bad savepoint");

    // A savepoint whose state file was deleted: the restoring task names the object.
    let (code, stdout, err) = run(&cluster, &["-p", "2"], out.path(), true);
    assert_eq!(code, 0, "{err}");
    let jid = job_id(&stdout);
    cluster.wait_running(&jid);
    let (code, stdout, err) = weir_cli(&["stop", "-m", &cluster.rest, "-p", "s3://broken/savepoints", &jid]);
    assert_eq!(code, 0, "{stdout}{err}");
    let savepoint = savepoint_path(&stdout);
    let lost = file_handles(&savepoint).pop().expect("a state file");
    weir_filesystem::delete_all(&lost).unwrap();
    let (code, _, err) = run(&cluster, &["-p", "2", "-s", &savepoint], out.path(), false);
    assert_ne!(code, 0);
    assert!(err.contains(&format!("{lost} does not exist")), "{err}");
}

#[test]
fn an_hdfs_location_is_refused_naming_the_supported_schemes() {
    let cluster = Cluster::start(1, 2, &[]);
    let out = tempfile::tempdir().unwrap();
    let supported = "supported are local paths, file://, s3:// (or s3a://), gs:// and az:// (or abfs://, abfss://)";

    let (code, _, err) = run(
        &cluster,
        &["-D", "execution.checkpointing.dir=hdfs://namenode/chk"],
        out.path(),
        true,
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("Unsupported file system scheme 'hdfs' in 'hdfs://namenode/chk'") && err.contains(supported),
        "{err}"
    );

    let (code, _, err) = run(&cluster, &["-s", "hdfs://namenode/sp/savepoint-1"], out.path(), true);
    assert_ne!(code, 0);
    assert!(
        err.contains("Unsupported file system scheme 'hdfs'") && err.contains(supported),
        "{err}"
    );

    let (code, stdout, err) = run(&cluster, &["-p", "1"], out.path(), true);
    assert_eq!(code, 0, "{err}");
    let jid = job_id(&stdout);
    cluster.wait_running(&jid);
    let (code, _, err) = weir_cli(&["savepoint", "-m", &cluster.rest, &jid, "hdfs://namenode/sp"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("Unsupported file system scheme 'hdfs'") && err.contains(supported),
        "{err}"
    );
}
