//! Flink's observability REST endpoints on real clusters of `weir` processes: metric
//! values checked against jobs whose numbers are known (keyed-sum over N records reads
//! N records into its Sum vertex), per-second rates while a throttled job runs, the
//! JobManager's and TaskManagers' process metrics, the vertex views, and the log files
//! of `weir start-cluster` daemons.

mod common;

use common::*;
use serde_json::{json, Value};
use std::time::Duration;

const RECORDS: u64 = 30_000;

fn keyed_sum(out: &std::path::Path, records: u64, rate: Option<u64>) -> Value {
    let mut args = json!({"keys": "50", "records": records.to_string(), "output": out.display().to_string()});
    if let Some(rate) = rate {
        args["rate_per_sec"] = json!(rate.to_string());
    }
    json!({"program": "keyed-sum", "parallelism": 2, "args": args})
}

/// The ids of the job's source vertex and of its Sum vertex.
fn vertices(cluster: &Cluster, jid: &str) -> (String, String) {
    let (_, job) = get(&cluster.rest, &format!("/jobs/{jid}"));
    let id_of = |pred: &dyn Fn(&str) -> bool| {
        job["vertices"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| pred(v["name"].as_str().unwrap_or_default())))
            .and_then(|v| v["id"].as_str())
            .map(str::to_string)
            .unwrap_or_else(|| panic!("vertex not found in {job}"))
    };
    (id_of(&|n| n.starts_with("Source")), id_of(&|n| n.starts_with("Sum")))
}

/// An aggregate of a metric over a vertex's subtasks.
fn aggregate(cluster: &Cluster, jid: &str, vid: &str, metric: &str, agg: &str) -> Option<f64> {
    let (code, a) = get(
        &cluster.rest,
        &format!("/jobs/{jid}/vertices/{vid}/subtasks/metrics?get={metric}&agg={agg}"),
    );
    assert_eq!(code, 200, "{a}");
    a[0][agg].as_f64()
}

#[test]
fn metric_values_match_a_finished_keyed_sum_and_rates_flow_while_a_throttled_job_runs() {
    let cluster = Cluster::start(2, 2, &[]);
    let out = tempfile::tempdir().unwrap();

    // A finished job: its Sum vertex read every record; nothing restarted.
    let done = cluster.submit(keyed_sum(out.path(), RECORDS, None));
    assert_eq!(cluster.wait_terminal(&done, Duration::from_secs(60)), "FINISHED");
    let (source, sum) = vertices(&cluster, &done);
    assert_eq!(
        aggregate(&cluster, &done, &sum, "numRecordsIn", "sum"),
        Some(RECORDS as f64)
    );
    assert_eq!(
        aggregate(&cluster, &done, &source, "numRecordsOut", "sum"),
        Some(RECORDS as f64)
    );
    let (_, per_subtask) = get(
        &cluster.rest,
        &format!("/jobs/{done}/vertices/{sum}/metrics?get=0.numRecordsIn,1.numRecordsIn"),
    );
    let split: f64 = ["0.numRecordsIn", "1.numRecordsIn"]
        .iter()
        .filter_map(|id| metric_value(&per_subtask, id))
        .sum();
    assert_eq!(split, RECORDS as f64, "{per_subtask}");
    assert_eq!(
        get(&cluster.rest, &format!("/jobs/{done}/status")).1,
        json!({"status": "FINISHED"})
    );
    let (_, job) = get(
        &cluster.rest,
        &format!("/jobs/{done}/metrics?get=numRestarts,uptime,downtime"),
    );
    assert_eq!(metric_value(&job, "numRestarts"), Some(0.0), "{job}");
    assert_eq!(
        metric_value(&job, "uptime"),
        Some(-1.0),
        "a terminal job has no uptime: {job}"
    );
    let (_, ids) = get(&cluster.rest, &format!("/jobs/{done}/vertices/{sum}/subtasks/metrics"));
    let listed: Vec<&str> = ids
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(
        listed.contains(&"numRecordsIn") && listed.contains(&"accumulateBusyTimeMs"),
        "{ids}"
    );
    assert!(
        listed.contains(&"numBytesIn") && listed.contains(&"currentInputWatermark"),
        "{ids}"
    );
    let read = aggregate(&cluster, &done, &sum, "numBytesIn", "sum").unwrap_or(0.0);
    let written = aggregate(&cluster, &done, &source, "numBytesOut", "sum").unwrap_or(0.0);
    assert!(read > 0.0 && written > 0.0, "bytes read {read}, written {written}");
    let (_, detail) = get(&cluster.rest, &format!("/jobs/{done}"));
    let sum_vertex = detail["vertices"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["id"] == sum.as_str()))
        .expect("the Sum vertex");
    assert_eq!(sum_vertex["metrics"]["read-bytes"].as_f64(), Some(read), "{sum_vertex}");
    // The bounded source ended with the MAX watermark, which every Sum subtask received.
    let (code, watermarks) = get(&cluster.rest, &format!("/jobs/{done}/vertices/{sum}/watermarks"));
    assert_eq!(code, 200);
    let max = i64::MAX.to_string();
    assert_eq!(
        watermarks,
        json!([
            {"id": "0.currentInputWatermark", "value": max},
            {"id": "1.currentInputWatermark", "value": max}
        ])
    );

    // A throttled job: while it runs, the per-second rates of its vertices are positive.
    let slow = cluster.submit(keyed_sum(out.path(), 10_000_000, Some(4_000)));
    cluster.wait_running(&slow);
    let (source, sum) = vertices(&cluster, &slow);
    wait_until(Duration::from_secs(30), || {
        aggregate(&cluster, &slow, &sum, "numRecordsInPerSecond", "sum").is_some_and(|r| r > 0.0)
            && aggregate(&cluster, &slow, &source, "numRecordsOutPerSecond", "sum").is_some_and(|r| r > 0.0)
    });
    // Its source mostly waits for its rate, and that wait is idle time, not busy time.
    wait_until(Duration::from_secs(30), || {
        aggregate(&cluster, &slow, &source, "idleTimeMsPerSecond", "min").is_some_and(|i| i > 500.0)
    });
    let busy = aggregate(&cluster, &slow, &source, "busyTimeMsPerSecond", "max");
    assert!(busy.is_some_and(|b| (0.0..500.0).contains(&b)), "{busy:?}");
    let idle = aggregate(&cluster, &slow, &sum, "idleTimeMsPerSecond", "max");
    assert!(
        idle.is_some_and(|i| i > 0.0),
        "a throttled job's Sum waits for input: {idle:?}"
    );

    // The JobManager's metrics describe this cluster.
    let (_, jm) = get(
        &cluster.rest,
        "/jobmanager/metrics?get=taskSlotsTotal,taskSlotsAvailable,numRegisteredTaskManagers,numRunningJobs,Status.JVM.Threads.Count",
    );
    assert_eq!(metric_value(&jm, "taskSlotsTotal"), Some(4.0), "{jm}");
    assert_eq!(metric_value(&jm, "taskSlotsAvailable"), Some(2.0), "{jm}");
    assert_eq!(metric_value(&jm, "numRegisteredTaskManagers"), Some(2.0), "{jm}");
    assert_eq!(metric_value(&jm, "numRunningJobs"), Some(1.0), "{jm}");
    assert!(
        metric_value(&jm, "Status.JVM.Threads.Count").is_some_and(|t| t >= 1.0),
        "{jm}"
    );

    // Fixed words are never read as ids.
    let (code, jobs) = get(&cluster.rest, "/jobs/metrics?get=numRestarts&agg=sum");
    assert_eq!((code, jobs), (200, json!([{"id": "numRestarts", "sum": 0.0}])));
    let (code, tms) = get(&cluster.rest, "/taskmanagers/metrics");
    assert_eq!(code, 200, "{tms}");
    let tm_ids: Vec<&str> = tms
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(tm_ids.contains(&"Status.Shuffle.Netty.TotalMemorySegments"), "{tms}");
    let (_, total) = get(
        &cluster.rest,
        "/taskmanagers/metrics?get=Status.Shuffle.Netty.TotalMemorySegments,Status.Shuffle.Netty.UsedMemorySegments&agg=sum",
    );
    assert!(total[0]["sum"].as_f64().is_some_and(|n| n > 0.0), "{total}");
    assert!(total[1]["sum"].as_f64().is_some_and(|n| n >= 0.0), "{total}");
    // Every TaskManager reports its process; CPU time counts in clock ticks, so an idle
    // TaskManager that started in a few milliseconds may still report 0, but the ones
    // that ran the finished job's tasks have spent some.
    let tms: Vec<String> = get(&cluster.rest, "/taskmanagers").1["taskmanagers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(tms.len(), 2);
    let cpu_of = |id: &str| {
        let (_, process) = get(
            &cluster.rest,
            &format!("/taskmanagers/{id}/metrics?get=Status.JVM.CPU.Time,Status.ProcessTree.Memory.RSS"),
        );
        assert!(
            metric_value(&process, "Status.ProcessTree.Memory.RSS").is_some_and(|b| b > 0.0),
            "{process}"
        );
        let cpu = metric_value(&process, "Status.JVM.CPU.Time");
        assert!(cpu.is_some_and(|ns| ns >= 0.0), "{process}");
        cpu.unwrap_or(0.0)
    };
    // The values come with heartbeats: wait for one sampled after the finished job ran.
    wait_until(Duration::from_secs(60), || {
        tms.iter().map(|id| cpu_of(id)).sum::<f64>() > 0.0
    });
    let tm = tms[0].clone();
    // Processes whose output goes to no file list no logs, in Flink's shape.
    assert_eq!(get(&cluster.rest, "/jobmanager/logs"), (200, json!({"logs": []})));
    assert_eq!(
        get(&cluster.rest, &format!("/taskmanagers/{tm}/logs")),
        (200, json!({"logs": []}))
    );

    // The vertex views of a running job.
    let v = format!("/jobs/{slow}/vertices/{sum}");
    let (code, one) = get(&cluster.rest, &format!("{v}/subtasks/1"));
    assert_eq!(
        (code, one["subtask"].as_u64(), one["status"].as_str()),
        (200, Some(1), Some("RUNNING"))
    );
    let (code, times) = get(&cluster.rest, &format!("{v}/subtasktimes"));
    assert_eq!(code, 200);
    assert!(
        times["subtasks"][0]["timestamps"]["RUNNING"]
            .as_i64()
            .is_some_and(|t| t > 0),
        "{times}"
    );
    let (code, by_tm) = get(&cluster.rest, &format!("{v}/taskmanagers"));
    assert_eq!(code, 200);
    let counted: u64 = by_tm["taskmanagers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status-counts"]["RUNNING"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(counted, 2, "{by_tm}");
    // No watermark reached the Sum subtasks yet: Flink's gauges read Long.MIN_VALUE.
    let none = i64::MIN.to_string();
    assert_eq!(
        get(&cluster.rest, &format!("{v}/watermarks")),
        (
            200,
            json!([
                {"id": "0.currentInputWatermark", "value": none},
                {"id": "1.currentInputWatermark", "value": none}
            ])
        )
    );
    // A source has no input, so no input watermark.
    assert_eq!(
        get(&cluster.rest, &format!("/jobs/{slow}/vertices/{source}/watermarks")),
        (200, json!([]))
    );
    assert_eq!(get(&cluster.rest, &format!("{v}/subtasks/2")).0, 404);
    let (code, _) = send(&cluster.rest, "PATCH", &format!("/jobs/{slow}?mode=cancel"), None);
    assert_eq!(code, 202);
    assert_eq!(cluster.wait_terminal(&slow, Duration::from_secs(30)), "CANCELED");
}

#[test]
fn a_new_jobs_metrics_are_fetched_at_its_first_read_not_at_the_next_heartbeat() {
    // Heartbeats an hour apart: only the metric fetcher can bring the counters in.
    let slow_heartbeats = [
        "heartbeat.interval=1 h".to_string(),
        "heartbeat.timeout=2 h".to_string(),
    ];
    let cluster = Cluster::start_with(1, 2, &[], &slow_heartbeats);
    let out = tempfile::tempdir().unwrap();
    let jid = cluster.submit(keyed_sum(out.path(), 10_000_000, Some(20_000)));
    cluster.wait_running(&jid);
    let (source, sum) = vertices(&cluster, &jid);
    wait_until(Duration::from_secs(60), || {
        aggregate(&cluster, &jid, &sum, "numRecordsIn", "sum").is_some_and(|n| n > 0.0)
    });
    let written = aggregate(&cluster, &jid, &source, "numRecordsOut", "sum");
    assert!(written.is_some_and(|n| n > 0.0), "{written:?}");
    let (_, detail) = get(&cluster.rest, &format!("/jobs/{jid}"));
    let read: u64 = detail["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["metrics"]["read-records"].as_u64())
        .sum();
    assert!(read > 0, "{detail}");
    let (code, _) = send(&cluster.rest, "PATCH", &format!("/jobs/{jid}?mode=cancel"), None);
    assert_eq!(code, 202);
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(30)), "CANCELED");
}

#[test]
fn start_cluster_daemons_serve_their_log_files() {
    let cluster = BackgroundCluster::start(1, &["heartbeat.interval=200 ms"]);
    let rest = &cluster.rest;
    let (code, logs) = get(rest, "/jobmanager/logs");
    assert_eq!(code, 200, "{logs}");
    let names: Vec<&str> = logs["logs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["name"].as_str())
        .collect();
    assert_eq!(names, vec!["jobmanager.log"], "{logs}");
    let log = ureq::get(&format!("http://{rest}/jobmanager/logs/jobmanager.log"))
        .call()
        .expect("the log file is served");
    assert_eq!(log.status(), 200);
    let text = log.into_string().unwrap_or_default();
    assert!(
        text.contains("JobManager rpc="),
        "the log holds the start-up line: {text}"
    );
    assert_eq!(
        get(rest, "/jobmanager/logs/taskmanager-0.log").0,
        404,
        "only its own log"
    );
    // The TaskManager reports its log file with its heartbeats.
    let tm = get(rest, "/taskmanagers").1["taskmanagers"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    wait_until(Duration::from_secs(10), || {
        get(rest, &format!("/taskmanagers/{tm}/logs")).1["logs"][0]["name"] == "taskmanager-0.log"
    });
    // Its contents come from the TaskManager, through the JobManager, by name or as
    // the main log.
    for path in [
        format!("/taskmanagers/{tm}/logs/taskmanager-0.log"),
        format!("/taskmanagers/{tm}/log"),
    ] {
        let log = ureq::get(&format!("http://{rest}{path}"))
            .call()
            .expect("the TaskManager's log is served");
        assert_eq!(log.status(), 200, "{path}");
        let text = log.into_string().unwrap_or_default();
        assert!(
            text.contains(&format!("TaskManager {tm} rpc=")),
            "{path} holds the TaskManager's start-up line: {text}"
        );
    }
    // Only its own log files, answered as Flink answers.
    for name in ["jobmanager.log", "..%2Fjobmanager.log"] {
        let (code, body) = get(rest, &format!("/taskmanagers/{tm}/logs/{name}"));
        assert_eq!(code, 404, "{name}: {body}");
        assert_eq!(
            body["errors"][0].as_str().unwrap_or_default(),
            format!(
                "The file {} does not exist on the TaskExecutor.",
                name.replace("%2F", "/")
            ),
            "{body}"
        );
    }
    let (code, body) = get(rest, "/taskmanagers/0123456789abcdef0123456789abcdef/log");
    assert_eq!(code, 404, "{body}");
}
