//! `weir start-cluster` with ephemeral ports, and start-ups that fail: the TaskManagers
//! and the client commands learn the ports the JobManager really bound, and a failed
//! start stops every daemon it started and says why.

mod common;

use common::*;
use std::net::TcpListener;
use std::path::Path;

/// `weir <command> -D cluster.dir=<dir> -D <settings>...`: (exit code, stdout, stderr).
fn weir_in_cluster_dir(dir: &Path, command: &[&str], settings: &[String]) -> (i32, String, String) {
    let mut args: Vec<String> = command.iter().map(|s| s.to_string()).collect();
    args.extend(["-D".into(), format!("cluster.dir={}", dir.display())]);
    for s in settings {
        args.extend(["-D".into(), s.clone()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    weir_cli(&args)
}

/// The pids of `Starting ... daemon (<name>, pid <n>).` lines.
fn started_pids(stdout: &str) -> Vec<u32> {
    stdout
        .lines()
        .filter_map(|l| l.rsplit("pid ").next()?.trim_end_matches(").").parse().ok())
        .collect()
}

/// Whether process `pid` still runs (a zombie counts as ended).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().map(|r| r.trim_start().chars().next()) != Some(Some('Z')),
        Err(_) => false,
    }
}

/// A port held by a listener of this test (so a daemon binding it fails).
fn taken_port() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

#[test]
fn a_cluster_started_with_ephemeral_rpc_and_rest_ports_runs_and_lists_a_job_found_without_an_address() {
    let dir = tempfile::tempdir().unwrap();
    let ports = vec!["jobmanager.rpc.port=0".to_string(), "rest.port=0".to_string()];
    let (code, out, err) = weir_in_cluster_dir(dir.path(), &["start-cluster", "--taskmanagers", "1"], &ports);
    let stop = || weir_in_cluster_dir(dir.path(), &["stop-cluster"], &[]);
    if code != 0 {
        stop();
        panic!("start-cluster failed: {out} {err}");
    }
    let rest = out
        .rsplit("REST on http://")
        .next()
        .map(str::trim)
        .unwrap_or_default()
        .to_string();
    assert!(!rest.ends_with(":0") && rest.starts_with("127.0.0.1:"), "{out}");

    let out_dir = dir.path().join("sums");
    let output = format!("output={}", out_dir.display());
    let (code, run_out, err) = weir_in_cluster_dir(
        dir.path(),
        &[
            "run",
            "keyed-sum",
            "--arg",
            "keys=5",
            "--arg",
            "records=1000",
            "--arg",
            "seed=42",
            "--arg",
            &output,
        ],
        &[],
    );
    let (list_code, list_out, list_err) = weir_in_cluster_dir(dir.path(), &["list"], &[]);
    let (stop_code, stop_out, _) = stop();
    assert_eq!(code, 0, "{run_out} {err}");
    assert!(run_out.contains("reached state FINISHED"), "{run_out}");
    assert_eq!(read_parts(&out_dir), keyed_sum_output(5, 42, 1000));
    let jid = job_id(&run_out);
    assert_eq!(list_code, 0, "{list_err}");
    assert!(
        list_out.contains(&format!("{jid} : keyed-sum (FINISHED)")),
        "{list_out}"
    );
    assert_eq!(stop_code, 0);
    assert!(stop_out.contains("Stopped jobmanager"), "{stop_out}");
    assert!(!dir.path().join("jobmanager.address").exists());
    let pid_files = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension() == Some("pid".as_ref()))
        .count();
    assert_eq!(pid_files, 0);
}

#[test]
fn a_start_whose_taskmanager_cannot_bind_stops_the_jobmanager_and_exits_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (_held, port) = taken_port();
    let settings = vec![
        "jobmanager.rpc.port=0".to_string(),
        "rest.port=0".to_string(),
        format!("taskmanager.rpc.port={port}"),
    ];
    let (code, out, err) = weir_in_cluster_dir(dir.path(), &["start-cluster", "--taskmanagers", "1"], &settings);
    let pids = started_pids(&out);
    if code == 0 {
        weir_in_cluster_dir(dir.path(), &["stop-cluster"], &[]);
    }
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("taskmanager-0 exited"), "{err}");
    assert_eq!(pids.len(), 2, "{out}");
    for pid in pids {
        assert!(!alive(pid), "pid {pid} still runs after the failed start: {out}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pid") || n.ends_with(".address"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_start_whose_rest_port_is_taken_exits_with_the_reason_and_starts_no_taskmanager() {
    let dir = tempfile::tempdir().unwrap();
    let (_held, port) = taken_port();
    let settings = vec!["jobmanager.rpc.port=0".to_string(), format!("rest.port={port}")];
    let (code, out, err) = weir_in_cluster_dir(dir.path(), &["start-cluster", "--taskmanagers", "1"], &settings);
    let pids = started_pids(&out);
    if code == 0 {
        weir_in_cluster_dir(dir.path(), &["stop-cluster"], &[]);
    }
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("jobmanager exited"), "{err}");
    assert!(err.to_lowercase().contains("in use"), "{err}");
    assert_eq!(pids.len(), 1, "no TaskManager is started: {out}");
    assert!(!alive(pids[0]));
    assert!(!dir.path().join("jobmanager.pid").exists());
}

#[test]
fn a_cluster_restarted_in_the_same_dir_reuses_its_ca_and_a_corrupt_ca_stops_the_start_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let ports = vec!["jobmanager.rpc.port=0".to_string(), "rest.port=0".to_string()];
    let start = || weir_in_cluster_dir(dir.path(), &["start-cluster", "--taskmanagers", "1"], &ports);
    let stop = || weir_in_cluster_dir(dir.path(), &["stop-cluster"], &[]);
    let ca = dir.path().join("tls").join("ca.crt");

    let (code, out, err) = start();
    stop();
    assert_eq!(code, 0, "{out} {err}");
    let first_ca = std::fs::read(&ca).unwrap();
    let (code, out, err) = start();
    let listed = weir_in_cluster_dir(dir.path(), &["list"], &[]);
    let (stop_code, stop_out, _) = stop();
    assert_eq!(code, 0, "the restart works: {out} {err}");
    assert!(out.contains("mutual TLS with the cluster CA"), "{out}");
    assert_eq!(std::fs::read(&ca).unwrap(), first_ca, "the CA is reused");
    assert_eq!(listed.0, 0, "{listed:?}");
    assert_eq!(stop_code, 0);
    assert!(stop_out.contains("Stopped taskmanager-0"), "{stop_out}");

    std::fs::write(&ca, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").unwrap();
    let (code, out, err) = start();
    if code == 0 {
        stop();
    }
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains(&format!("{} is not a usable cluster CA file", ca.display())),
        "{err}"
    );
    assert!(started_pids(&out).is_empty(), "no process is started: {out}");
}
