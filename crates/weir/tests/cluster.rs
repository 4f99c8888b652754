//! The cluster as separate OS processes on loopback: JobManager, TaskManagers, REST,
//! data exchange over TCP, failures and restart strategies.

mod common;
use common::enrich as connected;

use common::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;
use weir::programs::keyed_sum;
use weir_api::prelude::Rng;

fn expected_sums(keys: u64, records: u64, seed: u64) -> Vec<String> {
    let gen = keyed_sum::generate(keys);
    let mut sums: BTreeMap<u64, u64> = BTreeMap::new();
    for i in 0..records {
        let (k, v) = gen(i, &mut Rng::for_index(seed, i));
        *sums.entry(k).or_default() += v;
    }
    let mut lines: Vec<String> = sums.iter().map(|(k, s)| format!("{k},{s}")).collect();
    lines.sort();
    lines
}

fn keyed_sum_job(out: &std::path::Path, p: u32, records: u64, rate: u64) -> serde_json::Value {
    let mut args =
        json!({ "keys": "40", "records": records.to_string(), "seed": "7", "output": out.display().to_string() });
    if rate > 0 {
        args["rate_per_sec"] = json!(rate.to_string());
    }
    json!({ "program": "keyed-sum", "parallelism": p, "args": args })
}

#[test]
fn keyed_sum_at_p4_across_two_taskmanagers_gives_the_local_result() {
    let cluster = Cluster::start(2, 2, &[]);
    let dir = tempfile::tempdir().unwrap();
    let jid = cluster.submit(keyed_sum_job(dir.path(), 4, 200_000, 0));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(read_parts(dir.path()), expected_sums(40, 200_000, 7));

    // The REST API describes what happened, with Flink's fields.
    let (code, detail) = get(&cluster.rest, &format!("/jobs/{jid}"));
    assert_eq!(code, 200);
    assert_eq!(detail["jid"], jid.as_str());
    assert_eq!(detail["state"], "FINISHED");
    let vertices = detail["vertices"].as_array().unwrap();
    assert_eq!(vertices.len(), 2);
    for v in vertices {
        assert_eq!(v["parallelism"], 4);
        assert_eq!(v["status"], "FINISHED");
        assert_eq!(v["tasks"]["FINISHED"], 4);
    }
    assert_eq!(detail["plan"]["nodes"].as_array().unwrap().len(), 2);
    assert_eq!(vertices[0]["metrics"]["write-records"], 200_000);
    assert_eq!(vertices[1]["metrics"]["read-records"], 200_000);
    assert_eq!(vertices[1]["metrics"]["read-records-complete"], true);
    assert!(detail["end-time"].as_i64().unwrap() >= detail["start-time"].as_i64().unwrap());
    let (_, overview) = get(&cluster.rest, "/jobs/overview");
    let job = &overview["jobs"][0];
    assert_eq!(job["jid"], jid.as_str());
    assert_eq!(job["tasks"]["total"], 8);
    assert_eq!(job["tasks"]["finished"], 8);
    let (_, o) = get(&cluster.rest, "/v1/overview");
    assert_eq!(o["taskmanagers"], 2);
    assert_eq!(o["slots-total"], 4);
    assert_eq!(o["slots-available"], 4);
    assert_eq!(o["jobs-finished"], 1);
}

#[test]
fn a_two_input_job_at_p4_across_two_taskmanagers_gives_the_local_result() {
    let cluster = Cluster::start(2, 2, &[]);
    let dir = tempfile::tempdir().unwrap();
    let args = json!({ "users": "30", "orders": "20000", "seed": "9", "output": dir.path().display().to_string() });
    let jid = cluster.submit(json!({ "program": "enrich", "parallelism": 4, "args": args }));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(read_parts(dir.path()), connected::expected_enrich(30, 20_000, 9));
}

#[test]
fn rest_api_reports_taskmanagers_and_rejects_bad_requests_while_serving() {
    let cluster = Cluster::start(1, 2, &[]);
    let (code, tms) = get(&cluster.rest, "/taskmanagers");
    assert_eq!(code, 200);
    let tm = &tms["taskmanagers"][0];
    assert_eq!(tm["slotsNumber"], 2);
    assert_eq!(tm["freeSlots"], 2);
    assert_eq!(tm["memoryConfiguration"]["totalProcessMemory"], 1728u64 * 1024 * 1024);
    assert_eq!(tm["memoryConfiguration"]["jvmMetaspace"], 0);
    assert!(tm["hardware"]["cpuCores"].as_u64().unwrap() >= 1);
    assert!(tm["memoryConfiguration"]["networkMemory"].as_u64().unwrap() > 0);
    let id = tm["id"].as_str().unwrap();
    let (code, detail) = get(&cluster.rest, &format!("/taskmanagers/{id}"));
    assert_eq!(code, 200);
    assert_eq!(detail["id"], id);

    let (code, body) = send(&cluster.rest, "POST", "/jobs", Some(json!({ "program": "nosuch" })));
    assert_eq!(code, 400);
    assert!(
        body["errors"][0].as_str().unwrap().contains("unknown program 'nosuch'"),
        "{body}"
    );
    let (code, body) = send(
        &cluster.rest,
        "POST",
        "/jobs",
        Some(json!({ "program": "keyed-sum", "parallelism": 0 })),
    );
    assert_eq!(code, 400, "{body}");
    let (code, _) = send(
        &cluster.rest,
        "POST",
        "/jobs",
        Some(json!({ "program": "keyed-sum", "args": { "kes": "1" } })),
    );
    assert_eq!(code, 400);
    let (code, body) = get(&cluster.rest, "/jobs/00000000000000000000000000000000");
    assert_eq!(code, 404, "{body}");
    assert!(body["errors"].is_array());
    let (code, _) = get(&cluster.rest, "/jobs/not-a-job-id");
    assert_eq!(code, 400);
    let (code, _) = get(&cluster.rest, "/no/such/path");
    assert_eq!(code, 404);
    // Still serving.
    let (code, o) = get(&cluster.rest, "/overview");
    assert_eq!(code, 200);
    assert_eq!(o["taskmanagers"], 1);
    let (code, c) = get(&cluster.rest, "/config");
    assert_eq!(code, 200);
    assert!(c["flink-version"].is_string());
}

#[test]
fn killing_a_taskmanager_fails_the_job_with_that_cause_when_restarts_are_off() {
    let mut cluster = Cluster::start(2, 2, &[]);
    let dir = tempfile::tempdir().unwrap();
    let jid = cluster.submit(keyed_sum_job(dir.path(), 4, 10_000_000, 20_000));
    cluster.wait_running(&jid);
    cluster.tms[1].kill();
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FAILED");
    let (_, exc) = get(&cluster.rest, &format!("/jobs/{jid}/exceptions"));
    let entry = &exc["exceptionHistory"]["entries"][0];
    let trace = entry["stacktrace"].as_str().unwrap();
    assert!(
        trace.contains("Recovery is suppressed by NoRestartBackoffTimeStrategy"),
        "{trace}"
    );
    assert!(
        trace.contains("TaskManager") || trace.contains("Connection") || trace.contains("connection"),
        "the cause should name the lost TaskManager or connection: {trace}"
    );
}

#[test]
fn fixed_delay_restarts_the_job_which_finishes_once_a_replacement_taskmanager_registers() {
    let mut cluster = Cluster::start(
        2,
        2,
        &[
            "restart-strategy.type=fixed-delay",
            "restart-strategy.fixed-delay.attempts=3",
            "restart-strategy.fixed-delay.delay=500 ms",
            "slot.request.timeout=60 s",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let records = 60_000;
    let jid = cluster.submit(keyed_sum_job(dir.path(), 4, records, 20_000));
    cluster.wait_running(&jid);
    cluster.tms[0].kill();
    cluster.add_taskmanager();
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(90)), "FINISHED");
    assert_eq!(read_parts(dir.path()), expected_sums(40, records, 7));
    let (_, exc) = get(&cluster.rest, &format!("/jobs/{jid}/exceptions"));
    assert!(!exc["exceptionHistory"]["entries"].as_array().unwrap().is_empty());
}

#[test]
fn a_job_needing_more_slots_than_the_cluster_has_fails_after_the_slot_request_timeout() {
    let cluster = Cluster::start(2, 2, &["slot.request.timeout=1 s"]);
    let dir = tempfile::tempdir().unwrap();
    let jid = cluster.submit(keyed_sum_job(dir.path(), 5, 1000, 0));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(30)), "FAILED");
    let (_, exc) = get(&cluster.rest, &format!("/jobs/{jid}/exceptions"));
    let trace = exc["exceptionHistory"]["entries"][0]["stacktrace"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(trace.contains("NoResourceAvailableException"), "{trace}");
    assert!(trace.contains("needs 5 slots, 4 of 4 are available"), "{trace}");
}

#[test]
fn two_jobs_run_side_by_side_and_cancel_works() {
    let cluster = Cluster::start(2, 2, &[]);
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let slow = cluster.submit(keyed_sum_job(a.path(), 2, 10_000_000, 10_000));
    let quick = cluster.submit(keyed_sum_job(b.path(), 2, 50_000, 0));
    assert_eq!(cluster.wait_terminal(&quick, Duration::from_secs(60)), "FINISHED");
    assert_eq!(read_parts(b.path()), expected_sums(40, 50_000, 7));
    // While it runs, the heartbeats carry live counters into the job's vertex metrics.
    wait_until(Duration::from_secs(30), || {
        let v = get(&cluster.rest, &format!("/jobs/{slow}")).1;
        v["vertices"][0]["metrics"]["write-records"].as_u64().unwrap_or(0) > 0
            && v["vertices"][1]["metrics"]["read-records"].as_u64().unwrap_or(0) > 0
            && v["vertices"][0]["metrics"]["write-records-complete"] == false
    });
    let detail = get(&cluster.rest, &format!("/jobs/{slow}")).1;
    let vid = detail["vertices"][0]["id"].as_str().unwrap().to_string();
    let (code, bp) = get(&cluster.rest, &format!("/jobs/{slow}/vertices/{vid}/backpressure"));
    assert_eq!(code, 200, "{bp}");
    assert_eq!(bp["status"], "ok");
    assert_eq!(bp["subtasks"].as_array().unwrap().len(), 2);
    assert!(
        ["ok", "low", "high"].contains(&bp["backpressure-level"].as_str().unwrap()),
        "{bp}"
    );
    let (code, _) = get(
        &cluster.rest,
        &format!("/jobs/{slow}/vertices/00000000000000000000000000000000/backpressure"),
    );
    assert_eq!(code, 404);
    let (code, _) = send(&cluster.rest, "PATCH", &format!("/jobs/{slow}?mode=cancel"), None);
    assert_eq!(code, 202);
    assert_eq!(cluster.wait_terminal(&slow, Duration::from_secs(30)), "CANCELED");
    wait_until(Duration::from_secs(10), || {
        get(&cluster.rest, "/overview").1["slots-available"] == 4
    });
    let (_, o) = get(&cluster.rest, "/overview");
    assert_eq!(o["jobs-cancelled"], 1);
    assert_eq!(o["jobs-finished"], 1);
}

#[test]
fn run_list_and_cancel_from_the_command_line() {
    let cluster = Cluster::start(1, 2, &[]);
    let dir = tempfile::tempdir().unwrap();
    let out_arg = format!("output={}", dir.path().display());
    let (code, out, err) = weir_cli(&[
        "run",
        "-m",
        &cluster.rest,
        "-p",
        "2",
        "keyed-sum",
        "--arg",
        "keys=5",
        "--arg",
        "records=1000",
        "--arg",
        &out_arg,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Job has been submitted with JobID"), "{out}");
    assert!(out.contains("reached state FINISHED"), "{out}");
    assert_eq!(read_parts(dir.path()), expected_sums(5, 1000, 42));

    let (code, out, err) = weir_cli(&[
        "run",
        "-m",
        &cluster.rest,
        "-d",
        "keyed-sum",
        "--arg",
        "records=100000000",
        "--arg",
        "rate_per_sec=1000",
    ]);
    assert_eq!(code, 0, "{err}");
    let jid = out.trim().rsplit(' ').next().unwrap().to_string();
    let (code, out, _) = weir_cli(&["list", "-m", &cluster.rest]);
    assert_eq!(code, 0);
    assert!(out.contains(&jid), "{out}");
    let (code, out, err) = weir_cli(&["cancel", "-m", &cluster.rest, &jid]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&jid));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(30)), "CANCELED");
    let (code, _, err) = weir_cli(&["cancel", "-m", &cluster.rest, &jid]);
    assert_ne!(code, 0);
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    let (code, _, err) = weir_cli(&["run", "-m", &cluster.rest, "nosuch"]);
    assert_ne!(code, 0);
    assert!(err.contains("unknown program 'nosuch'"), "{err}");
}

#[test]
fn a_taskmanager_whose_task_heap_comes_out_negative_is_refused_with_the_numbers() {
    let (code, _, err) = weir_cli(&["taskmanager", "-D", "taskmanager.memory.process.size=600m"]);
    assert_ne!(code, 0);
    assert!(err.contains("Task Off-Heap Memory") || err.contains("exceed"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let (code, _, err) = weir_cli(&["jobmanager", "-D", "rest.port=notaport"]);
    assert_ne!(code, 0);
    assert!(err.contains("rest.port"), "{err}");
}

#[test]
fn start_cluster_and_stop_cluster_manage_background_processes() {
    let mut cluster = BackgroundCluster::start(2, &[]);
    assert!(
        cluster.start_output.contains("Cluster ready"),
        "{}",
        cluster.start_output
    );
    let dir = cluster.dir.path().to_path_buf();
    assert!(dir.join("jobmanager.pid").exists());
    assert!(dir.join("taskmanager-1.log").exists());
    assert_eq!(get(&cluster.rest, "/overview").1["taskmanagers"], 2);
    let (code, out, _) = cluster.stop();
    assert_eq!(code, 0);
    assert!(out.contains("Stopped jobmanager"), "{out}");
    assert!(!dir.join("jobmanager.pid").exists());
    wait_until(Duration::from_secs(10), || {
        std::net::TcpStream::connect(&cluster.rest).is_err()
    });
}
