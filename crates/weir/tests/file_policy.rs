//! `security.job.allowed-paths`: a TaskManager opens files for a job's sources and
//! sinks only below the listed directories — even when the JobManager that accepted the
//! job has no such list — and a refused file's contents never reach the job's
//! exceptions.

mod common;

use common::*;
use serde_json::json;
use std::time::Duration;

/// A JobManager without a file policy and one TaskManager allowed only `allowed`.
fn cluster_allowing(allowed: &std::path::Path) -> Cluster {
    let mut cluster = Cluster::start(0, 1, &[]);
    cluster
        .tm_dynamic
        .push(format!("security.job.allowed-paths={}", allowed.display()));
    cluster.add_taskmanager();
    cluster.wait_for_slots(1);
    cluster
}

/// The first exception's stack trace of job `jid`.
fn root_cause(cluster: &Cluster, jid: &str) -> String {
    let (code, exc) = get(&cluster.rest, &format!("/jobs/{jid}/exceptions"));
    assert_eq!(code, 200);
    exc["exceptionHistory"]["entries"][0]["stacktrace"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_taskmanager_refuses_a_source_file_outside_the_allowed_paths_without_quoting_it() {
    let allowed = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("shadow");
    std::fs::write(&secret, "root:$6$s3cr3t-hash:19000:0:99999:7:::\n").unwrap();
    let cluster = cluster_allowing(allowed.path());

    let refused = cluster.submit(json!({
        "program": "orders-per-minute",
        "parallelism": 1,
        "args": {
            "input": secret.display().to_string(),
            "output": allowed.path().join("opm").display().to_string(),
        },
    }));
    assert_eq!(cluster.wait_terminal(&refused, Duration::from_secs(60)), "FAILED");
    let cause = root_cause(&cluster, &refused);
    assert!(cause.contains("security.job.allowed-paths"), "{cause}");
    assert!(cause.contains(&secret.display().to_string()), "{cause}");
    assert!(!cause.contains("s3cr3t"), "the file's contents leaked: {cause}");

    let csv = orders_csv(allowed.path(), 200);
    let out = allowed.path().join("per-minute");
    let accepted = cluster.submit(json!({
        "program": "orders-per-minute",
        "parallelism": 1,
        "args": { "input": csv.display().to_string(), "output": out.display().to_string() },
    }));
    assert_eq!(cluster.wait_terminal(&accepted, Duration::from_secs(60)), "FINISHED");
    assert!(!read_parts(&out).is_empty());
}

#[test]
fn a_taskmanager_refuses_a_sink_directory_reached_through_a_link_out_of_the_allowed_paths() {
    let allowed = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), allowed.path().join("escape")).unwrap();
    let cluster = cluster_allowing(allowed.path());
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 1,
        "args": {
            "keys": "3",
            "records": "100",
            "output": allowed.path().join("escape").join("sums").display().to_string(),
        },
    }));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FAILED");
    let cause = root_cause(&cluster, &jid);
    assert!(cause.contains("security.job.allowed-paths"), "{cause}");
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing written outside"
    );
}
