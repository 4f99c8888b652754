//! Flink's Prometheus reporter on every process of a real cluster: the JobManager
//! exports its cluster and job metrics, each TaskManager its process and its running
//! subtasks, under Flink's names and labels; the exposition text is read with a
//! Prometheus-format parser.

mod common;

use common::{get, send, wait_until, weir_cli, Cluster};
use prometheus_parse::{Sample, Scrape, Value};
use serde_json::json;
use std::collections::BTreeSet;
use std::time::Duration;

const FACTORY: &str =
    "metrics.reporter.prom.factory.class=org.apache.flink.metrics.prometheus.PrometheusReporterFactory";

fn scrape(url: &str) -> Scrape {
    let text = ureq::get(url)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"))
        .into_string()
        .expect("exposition text");
    Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("valid Prometheus text")
}

fn value(s: &Sample) -> f64 {
    match s.value {
        Value::Gauge(v) | Value::Untyped(v) | Value::Counter(v) => v,
        ref other => panic!("{} is not a gauge: {other:?}", s.metric),
    }
}

fn samples<'a>(scrape: &'a Scrape, metric: &str, job: &str) -> Vec<&'a Sample> {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == metric && s.labels.get("job_id") == Some(job))
        .collect()
}

fn single(scrape: &Scrape, metric: &str) -> f64 {
    let found: Vec<&Sample> = scrape.samples.iter().filter(|s| s.metric == metric).collect();
    assert_eq!(found.len(), 1, "{metric}: {found:?}");
    value(found[0])
}

#[test]
fn every_process_exports_its_metrics_with_flinks_names_and_labels() {
    let dir = tempfile::tempdir().unwrap();
    let common = vec![FACTORY.to_string(), "metrics.reporter.prom.port=0".to_string()];
    let cluster = Cluster::start_with(2, 1, &[], &common);
    let jm_url = cluster.jm.field("metrics.prom").expect("the JobManager's reporter");
    let tm_urls: Vec<(String, String)> = cluster
        .tms
        .iter()
        .map(|tm| {
            let id = tm.line.split_whitespace().nth(1).expect("TaskManager id").to_string();
            (id, tm.field("metrics.prom").expect("the TaskManager's reporter"))
        })
        .collect();

    let checkpoints = dir.path().display().to_string();
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 2,
        "args": {"records": "100000000", "rate_per_sec": "4000"},
        "config": {"execution.checkpointing.interval": "200 ms", "execution.checkpointing.dir": checkpoints},
    }));
    cluster.wait_running(&jid);
    let (_, job) = get(&cluster.rest, &format!("/jobs/{jid}"));
    let job_name = job["name"].as_str().expect("job name").to_string();
    let mut expected_subtasks = BTreeSet::new();
    for v in job["vertices"].as_array().expect("vertices") {
        for i in 0..v["parallelism"].as_u64().unwrap() {
            expected_subtasks.insert((
                v["id"].as_str().unwrap().to_string(),
                v["name"].as_str().unwrap().to_string(),
                i.to_string(),
            ));
        }
    }

    // Every subtask is exported once, by the TaskManager it runs on, with Flink's scope
    // variables as labels.
    let subtasks_exported = || {
        let mut seen = Vec::new();
        for (tm_id, url) in &tm_urls {
            for s in samples(&scrape(url), "flink_taskmanager_job_task_numRecordsOut", &jid) {
                assert_eq!(s.labels.get("tm_id"), Some(tm_id.as_str()));
                assert_eq!(s.labels.get("job_name"), Some(job_name.as_str()));
                assert_eq!(s.labels.get("host"), Some("127.0.0.1"));
                assert!(s.labels.get("task_attempt_id").is_some_and(|a| !a.is_empty()));
                assert_eq!(s.labels.get("task_attempt_num"), Some("0"));
                seen.push((
                    s.labels.get("task_id").unwrap_or_default().to_string(),
                    s.labels.get("task_name").unwrap_or_default().to_string(),
                    s.labels.get("subtask_index").unwrap_or_default().to_string(),
                ));
            }
        }
        seen
    };
    wait_until(Duration::from_secs(30), || {
        subtasks_exported().len() == expected_subtasks.len()
    });
    let seen = subtasks_exported();
    assert_eq!(seen.iter().cloned().collect::<BTreeSet<_>>(), expected_subtasks);
    assert_eq!(seen.len(), expected_subtasks.len(), "each subtask once");

    // The counters grow, and a later read has the rates.
    let source_out = |url: &str| -> f64 {
        samples(&scrape(url), "flink_taskmanager_job_task_numRecordsOut", &jid)
            .iter()
            .filter(|s| s.labels.get("task_name").is_some_and(|n| n.starts_with("Source")))
            .map(|s| value(s))
            .sum()
    };
    let before: f64 = tm_urls.iter().map(|(_, u)| source_out(u)).sum();
    // Records out of the sources grow.
    wait_until(Duration::from_secs(30), || {
        tm_urls.iter().map(|(_, u)| source_out(u)).sum::<f64>() > before
    });
    let rates = || -> f64 {
        tm_urls
            .iter()
            .flat_map(|(_, u)| {
                samples(&scrape(u), "flink_taskmanager_job_task_numRecordsInPerSecond", &jid)
                    .iter()
                    .map(|s| value(s))
                    .collect::<Vec<_>>()
            })
            .sum()
    };
    // The Sum subtasks read records per second.
    wait_until(Duration::from_secs(30), || rates() > 0.0);
    for (_, url) in &tm_urls {
        let tm = scrape(url);
        assert!(single(&tm, "flink_taskmanager_Status_JVM_Threads_Count") >= 1.0);
        assert!(single(&tm, "flink_taskmanager_Status_ProcessTree_Memory_RSS") > 0.0);
        let total = single(&tm, "flink_taskmanager_Status_Shuffle_Netty_TotalMemorySegments");
        let used = single(&tm, "flink_taskmanager_Status_Shuffle_Netty_UsedMemorySegments");
        let available = single(&tm, "flink_taskmanager_Status_Shuffle_Netty_AvailableMemorySegments");
        assert_eq!(used + available, total);
    }

    // The JobManager: the cluster, the job and its checkpoints.
    wait_until(Duration::from_secs(30), || cluster.completed_checkpoints(&jid) >= 2);
    let jm = scrape(&jm_url);
    assert_eq!(single(&jm, "flink_jobmanager_numRegisteredTaskManagers"), 2.0);
    assert_eq!(single(&jm, "flink_jobmanager_taskSlotsTotal"), 2.0);
    assert_eq!(single(&jm, "flink_jobmanager_taskSlotsAvailable"), 0.0);
    assert_eq!(single(&jm, "flink_jobmanager_numRunningJobs"), 1.0);
    let uptime = samples(&jm, "flink_jobmanager_job_uptime", &jid);
    assert_eq!(uptime.len(), 1);
    assert!(value(uptime[0]) > 0.0);
    assert_eq!(uptime[0].labels.get("job_name"), Some(job_name.as_str()));
    assert_eq!(value(samples(&jm, "flink_jobmanager_job_numRestarts", &jid)[0]), 0.0);
    let completed = value(samples(&jm, "flink_jobmanager_job_numberOfCompletedCheckpoints", &jid)[0]);
    assert!(completed >= 2.0, "{completed}");
    let last_id = value(samples(&jm, "flink_jobmanager_job_lastCompletedCheckpointId", &jid)[0]);
    assert!(last_id >= 2.0, "{last_id}");
    assert_eq!(
        value(samples(&jm, "flink_jobmanager_job_lastCheckpointRestoreTimestamp", &jid)[0]),
        -1.0,
        "never restored"
    );
    // The REST API serves the same job gauges.
    let (_, rest) = get(
        &cluster.rest,
        &format!("/jobs/{jid}/metrics?get=numberOfCompletedCheckpoints,lastCheckpointRestoreTimestamp"),
    );
    assert_eq!(rest.as_array().map(Vec::len), Some(2), "{rest}");

    // A cancelled job's subtasks leave the TaskManagers' exports.
    let (code, _) = send(&cluster.rest, "PATCH", &format!("/jobs/{jid}?mode=cancel"), None);
    assert_eq!(code, 202);
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(30)), "CANCELED");
    wait_until(Duration::from_secs(30), || {
        tm_urls
            .iter()
            .all(|(_, u)| samples(&scrape(u), "flink_taskmanager_job_task_numRecordsIn", &jid).is_empty())
    });
    let jm = scrape(&jm_url);
    assert_eq!(single(&jm, "flink_jobmanager_numRunningJobs"), 0.0);
    assert_eq!(value(samples(&jm, "flink_jobmanager_job_uptime", &jid)[0]), -1.0);
}

#[test]
fn a_bad_reporter_configuration_stops_the_process_with_the_reporters_name() {
    let (code, _, err) = weir_cli(&[
        "taskmanager",
        "-D",
        "metrics.reporter.jmx.factory.class=org.apache.flink.metrics.jmx.JMXReporterFactory",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("metrics.reporter.jmx.factory.class: unknown reporter factory 'org.apache.flink.metrics.jmx.JMXReporterFactory'"),
        "{err}"
    );
    let (code, _, err) = weir_cli(&["jobmanager", "-D", FACTORY, "-D", "metrics.reporter.prom.port=92a9"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("metrics.reporter.prom.port: '92a9' is not a port"),
        "{err}"
    );
}
