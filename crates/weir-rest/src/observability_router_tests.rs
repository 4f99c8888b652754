//! Router tests of the observability routes (vertex subtasks, job status and
//! accumulators, metric queries, environment, logs) against the [`FakeBackend`]: job
//! [`JID`] with the two-subtask vertex [`VID`] on one TaskManager, a finished job,
//! JobManager and TaskManager metrics, and a JobManager log file.

use crate::backend::RestBackend;
use crate::examples::{JID, TM_ID};
use crate::fake_backend::{subtask, FakeBackend, FINISHED, LOG_TEXT, VID};
use crate::handlers::process::NO_SUCH_LOG_FILE;
use crate::handlers::router_with_origin;
use crate::messages::metrics::Metric;
use crate::messages::vertex_subtasks::JobVertexTaskManagers;
use crate::sample_check::{assert_matches_sample, assert_matches_sample_part, sample};
use crate::test_client::{get, raw_get, Answer};
use axum::http::{header, StatusCode};
use axum::Router;
use serde_json::json;
use weir_core::ids::JobId;

/// A job nobody knows.
const UNKNOWN: JobId = JobId(0x0123);

fn app() -> Router {
    router_with_origin(FakeBackend::new(), Some(axum::http::HeaderValue::from_static("*")))
}

/// GET with and without `/v1`, asserting both answer the same; returns the answer.
async fn get_both(app: &Router, path: &str) -> Answer {
    let a = get(app, path).await;
    let v1 = get(app, &format!("/v1{path}")).await;
    assert_eq!(
        (a.status, &a.json),
        (v1.status, &v1.json),
        "{path} and /v1{path} differ"
    );
    a
}

fn ids(a: &Answer) -> Vec<String> {
    a.json
        .as_array()
        .map(|l| {
            l.iter()
                .map(|m| m["id"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn fixed_words_are_routes_not_ids() {
    let app = app();
    for path in [
        "/jobs/metrics",
        "/taskmanagers/metrics",
        "/jobmanager/metrics",
        "/jobs/overview",
    ] {
        let a = get_both(&app, path).await;
        assert_eq!(a.status, StatusCode::OK, "{path}: {}", a.json);
    }
    assert_eq!(ids(&get(&app, "/jobs/metrics").await), vec!["numRestarts", "uptime"]);
    assert_eq!(
        ids(&get(&app, "/taskmanagers/metrics").await),
        vec!["Status.JVM.Threads.Count"]
    );
    let v = format!("/jobs/{JID}/vertices/{VID}");
    assert_eq!(get(&app, &format!("{v}/subtasks/metrics")).await.status, StatusCode::OK);
}

#[tokio::test]
async fn unknown_paths_answer_flinks_404_body() {
    let app = app();
    let flink = sample("error_404_unknown_path.json");
    assert_eq!(get(&app, "/no/such/path").await.json, flink);
    for path in [
        format!("/jobs/{JID}/vertices/{VID}/nosuch"),
        format!("/jobs/{JID}/vertices/{VID}/subtasks/0/nosuch"),
        "/jobs/metrics/more".to_string(),
        "/jobmanager/nosuch".to_string(),
        format!("/taskmanagers/{TM_ID}/nosuch"),
    ] {
        let a = get(&app, &path).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(a.errors(), vec![format!("Unable to load requested file {path}.")]);
    }
}

#[tokio::test]
async fn job_status_and_accumulators_answer_flinks_shapes() {
    let app = app();
    let a = get_both(&app, &format!("/jobs/{JID}/status")).await;
    assert_eq!((a.status, a.json), (StatusCode::OK, json!({"status": "RUNNING"})));
    let a = get_both(&app, &format!("/jobs/{JID}/accumulators")).await;
    assert_eq!((a.status, &a.json), (StatusCode::OK, &sample("job_accumulators.json")));
    for suffix in ["status", "accumulators"] {
        let a = get(&app, &format!("/jobs/{UNKNOWN}/{suffix}")).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{suffix}");
        assert!(a.errors()[0].contains(&format!("Could not find Flink job ({UNKNOWN})")));
        assert_eq!(
            get(&app, &format!("/jobs/metrix/{suffix}")).await.status,
            StatusCode::BAD_REQUEST
        );
    }
}

#[tokio::test]
async fn one_subtask_is_the_current_attempt_of_the_vertex_detail() {
    let app = app();
    let v = format!("/jobs/{JID}/vertices/{VID}");
    let detail = get(&app, &v).await;
    let a = get_both(&app, &format!("{v}/subtasks/1")).await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.json, detail.json["subtasks"][1]);
    assert_matches_sample_part(&subtask(1), "job_vertex_detail.json", "/subtasks[]");
    // Upper-case hex names the same vertex, as in Flink.
    let upper = format!("/jobs/{JID}/vertices/{}/subtasks/1", VID.to_uppercase());
    assert_eq!(get(&app, &upper).await.json, a.json);
}

#[tokio::test]
async fn subtask_times_and_taskmanagers_answer_flinks_shapes() {
    let app = app();
    let v = format!("/jobs/{JID}/vertices/{VID}");
    let a = get_both(&app, &format!("{v}/subtasktimes")).await;
    assert_eq!(a.status, StatusCode::OK);
    let subtask = &a.json["subtasks"][0];
    assert_eq!(subtask["duration"], 6000 - 900);
    assert_eq!(subtask["timestamps"]["RUNNING"], 1100);
    assert_eq!(subtask["timestamps"]["FAILED"], 0);
    let a = get_both(&app, &format!("{v}/taskmanagers")).await;
    assert_eq!(a.status, StatusCode::OK);
    let detail = FakeBackend::new().vertex_detail(JID, VID).expect("known vertex");
    let tms = JobVertexTaskManagers::of(&detail);
    assert_matches_sample(&tms, "job_vertex_taskmanagers.json");
    assert_eq!(a.json, serde_json::to_value(&tms).expect("serialises"));
    assert_eq!(a.json["taskmanagers"][0]["metrics"]["read-records"], 1000);
    assert_eq!(a.json["taskmanagers"][0]["status-counts"]["RUNNING"], 2);
}

#[tokio::test]
async fn unknown_or_malformed_vertices_and_subtasks_are_flinks_errors() {
    let app = app();
    let unknown_vertex = "00000000000000000000000000000000";
    for suffix in [
        "",
        "/subtasks/0",
        "/subtasktimes",
        "/taskmanagers",
        "/watermarks",
        "/backpressure",
    ] {
        let a = get(&app, &format!("/jobs/{JID}/vertices/{unknown_vertex}{suffix}")).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{suffix}");
        assert_eq!(
            a.errors(),
            vec![format!(
                "org.apache.flink.runtime.rest.handler.RestHandlerException: No vertex with ID '{unknown_vertex}' exists."
            )],
            "{suffix}"
        );
        let a = get(&app, &format!("/jobs/{UNKNOWN}/vertices/{VID}{suffix}")).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{suffix}");
        assert!(a.errors()[0].contains("Could not find Flink job"), "{suffix}");
        let a = get(&app, &format!("/jobs/{JID}/vertices/not-a-vertex{suffix}")).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{suffix}");
        assert_eq!(
            a.errors(),
            vec![
                "Bad request, could not parse parameters: Cannot resolve path parameter (vertexid) from value \"not-a-vertex\"."
                    .to_string()
            ]
        );
    }
    let a = get(&app, &format!("/jobs/{JID}/vertices/{VID}/subtasks/2")).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert_eq!(
        a.errors(),
        vec![format!(
            "org.apache.flink.runtime.rest.handler.RestHandlerException: Invalid subtask index for vertex {VID}"
        )]
    );
    for bad in ["-1", "x", "2147483648", "1.5"] {
        let a = get(&app, &format!("/jobs/{JID}/vertices/{VID}/subtasks/{bad}")).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{bad}");
        assert_eq!(
            a.errors(),
            vec![format!(
                "Bad request, could not parse parameters: Cannot resolve path parameter (subtaskindex) from value \"{bad}\"."
            )]
        );
    }
}

#[tokio::test]
async fn vertex_metrics_are_listed_per_subtask_and_read_as_strings() {
    let app = app();
    let v = format!("/jobs/{JID}/vertices/{VID}");
    let a = get_both(&app, &format!("{v}/metrics")).await;
    assert_eq!(
        ids(&a),
        vec![
            "0.busyTimeMsPerSecond",
            "0.numRecordsIn",
            "1.busyTimeMsPerSecond",
            "1.currentInputWatermark",
            "1.numRecordsIn"
        ]
    );
    assert!(a.json[0].get("value").is_none(), "a listing carries no values");
    let a = get(
        &app,
        &format!("{v}/metrics?get=0.numRecordsIn,1.busyTimeMsPerSecond,nope"),
    )
    .await;
    assert_eq!(
        a.json,
        json!([{"id": "0.numRecordsIn", "value": "400"}, {"id": "1.busyTimeMsPerSecond", "value": "500.0"}])
    );
    let a = get_both(&app, &format!("{v}/subtasks/1/metrics?get=numRecordsIn")).await;
    assert_eq!(a.json, json!([{"id": "numRecordsIn", "value": "600"}]));
    assert_eq!(get(&app, &format!("{v}/subtasks/7/metrics")).await.json, json!([]));
    // Flink's sample is a vertex without watermarks: an empty list.
    assert_matches_sample(&Vec::<Metric>::new(), "job_vertex_watermarks.json");
    let a = get_both(&app, &format!("{v}/watermarks")).await;
    assert_eq!(a.json, json!([{"id": "1.currentInputWatermark", "value": "77"}]));
}

#[tokio::test]
async fn subtask_metrics_aggregate_as_flink_with_agg_and_subtasks() {
    let app = app();
    let base = format!("/jobs/{JID}/vertices/{VID}/subtasks/metrics");
    let a = get_both(&app, &format!("{base}?get=numRecordsIn&agg=sum")).await;
    assert_eq!(a.json, json!([{"id": "numRecordsIn", "sum": 1000.0}]));
    let a = get(&app, &format!("{base}?get=numRecordsIn")).await;
    assert_eq!(
        a.json,
        json!([{"id": "numRecordsIn", "min": 400.0, "max": 600.0, "avg": 500.0, "sum": 1000.0, "skew": 20.0}])
    );
    let a = get(&app, &format!("{base}?get=numRecordsIn&agg=MAX&subtasks=0")).await;
    assert_eq!(a.json, json!([{"id": "numRecordsIn", "max": 400.0}]));
    let a = get(&app, &format!("{base}?get=numRecordsIn&agg=sum&subtasks=0-1,9")).await;
    assert_eq!(a.json, json!([{"id": "numRecordsIn", "sum": 1000.0}]));
    let a = get(&app, &format!("{base}?get=numRecordsIn,missing")).await;
    assert_eq!(a.json, json!([]), "one missing metric empties the answer, as in Flink");
    let a = get(&app, &base).await;
    assert_eq!(
        ids(&a),
        vec!["busyTimeMsPerSecond", "currentInputWatermark", "numRecordsIn"]
    );
    for bad in ["median", "sum,p99", ""] {
        let a = get(&app, &format!("{base}?get=numRecordsIn&agg={bad}")).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{bad:?}");
        assert_eq!(
            a.errors(),
            vec![format!(
                "Bad request, could not parse parameters: Cannot resolve query parameter (agg) from value \"{bad}\"."
            )]
        );
    }
}

#[tokio::test]
async fn metrics_of_unknown_components_are_empty_and_malformed_ids_400() {
    let app = app();
    let unknown_vertex = "00000000000000000000000000000000";
    for path in [
        format!("/jobs/{UNKNOWN}/vertices/{VID}/metrics?get=0.numRecordsIn"),
        format!("/jobs/{JID}/vertices/{unknown_vertex}/subtasks/metrics?get=numRecordsIn"),
        format!("/jobs/{JID}/vertices/{unknown_vertex}/subtasks/0/metrics"),
        "/jobs/00000000000000000000000000000fff/metrics".to_string(),
        "/taskmanagers/no-such-tm/metrics".to_string(),
    ] {
        let a = get_both(&app, &path).await;
        assert_eq!((a.status, &a.json), (StatusCode::OK, &json!([])), "{path}");
    }
    for (path, key, value) in [
        ("/jobs/xyz/metrics".to_string(), "path parameter (jobid)", "xyz"),
        (
            format!("/jobs/{JID}/vertices/xyz/metrics"),
            "path parameter (vertexid)",
            "xyz",
        ),
        (
            format!("/jobs/{JID}/vertices/{VID}/subtasks/-3/metrics"),
            "path parameter (subtaskindex)",
            "-3",
        ),
        ("/jobs/metrics?jobs=xyz".to_string(), "query parameter (jobs)", "xyz"),
        (
            "/taskmanagers/metrics?get=a&agg=x".to_string(),
            "query parameter (agg)",
            "x",
        ),
    ] {
        let a = get(&app, &path).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{path}");
        assert_eq!(
            a.errors(),
            vec![format!(
                "Bad request, could not parse parameters: Cannot resolve {key} from value \"{value}\"."
            )],
            "{path}"
        );
    }
}

#[tokio::test]
async fn job_jobmanager_and_taskmanager_metrics_are_served() {
    let app = app();
    let a = get_both(&app, &format!("/jobs/{JID}/metrics?get=numRestarts,uptime")).await;
    assert_eq!(
        a.json,
        json!([{"id": "numRestarts", "value": "2"}, {"id": "uptime", "value": "5000"}])
    );
    let a = get_both(
        &app,
        &format!("/jobs/metrics?get=numRestarts&agg=sum,max&jobs={JID},{FINISHED}"),
    )
    .await;
    assert_eq!(a.json, json!([{"id": "numRestarts", "max": 2.0, "sum": 2.0}]));
    let a = get(&app, &format!("/jobs/metrics?get=uptime&agg=min&jobs={FINISHED}")).await;
    assert_eq!(a.json, json!([{"id": "uptime", "min": -1.0}]));
    let a = get_both(&app, "/jobmanager/metrics?get=taskSlotsTotal,Status.JVM.CPU.Load").await;
    assert_eq!(
        a.json,
        json!([{"id": "taskSlotsTotal", "value": "4"}, {"id": "Status.JVM.CPU.Load", "value": "0.125"}])
    );
    let a = get_both(
        &app,
        &format!("/taskmanagers/{TM_ID}/metrics?get=Status.JVM.Threads.Count"),
    )
    .await;
    assert_eq!(a.json, json!([{"id": "Status.JVM.Threads.Count", "value": "10"}]));
    let a = get_both(&app, "/taskmanagers/metrics?get=Status.JVM.Threads.Count&agg=avg").await;
    assert_eq!(a.json, json!([{"id": "Status.JVM.Threads.Count", "avg": 20.0}]));
    let a = get(
        &app,
        "/taskmanagers/metrics?get=Status.JVM.Threads.Count&agg=avg&taskmanagers=tm-b",
    )
    .await;
    assert_eq!(a.json, json!([{"id": "Status.JVM.Threads.Count", "avg": 30.0}]));
}

#[tokio::test]
async fn environment_and_logs_are_served_in_flinks_shapes() {
    let app = app();
    let a = get_both(&app, "/jobmanager/environment").await;
    assert_eq!(a.status, StatusCode::OK);
    assert!(a.json["jvm"]["version"]
        .as_str()
        .is_some_and(|v| v.starts_with("Weir ")));
    assert!(a.json["environment"].is_array() && a.json["classpath"].is_array());

    let a = get_both(&app, "/jobmanager/logs").await;
    let logs = a.json["logs"].as_array().cloned().unwrap_or_default();
    assert_eq!(logs.len(), 1, "{}", a.json);
    let name = logs[0]["name"].as_str().unwrap_or_default().to_string();
    assert!(name.starts_with("weir-rest-fake-"), "{name}");
    assert_eq!(logs[0]["size"], LOG_TEXT.len());
    assert!(logs[0]["mtime"].as_i64().is_some_and(|t| t > 0));

    for path in [format!("/jobmanager/logs/{name}"), "/jobmanager/log".to_string()] {
        let response = raw_get(&app, &path).await;
        assert_eq!(response.0, StatusCode::OK, "{path}");
        assert_eq!(response.1.as_deref(), Some("text/plain; charset=UTF-8"));
        assert_eq!(response.2, LOG_TEXT);
    }
    for other in ["config.yaml", "..%2F..%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd"] {
        let a = get(&app, &format!("/jobmanager/logs/{other}")).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{other}");
        assert_eq!(a.errors(), vec![NO_SUCH_LOG_FILE.to_string()]);
    }

    let a = get_both(&app, &format!("/taskmanagers/{TM_ID}/logs")).await;
    assert_eq!((a.status, a.json), (StatusCode::OK, json!({"logs": []})));
    let a = get(&app, "/taskmanagers/no-such-tm/logs").await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert_eq!(
        a.errors(),
        vec![
            "org.apache.flink.runtime.rest.handler.RestHandlerException: Could not find TaskExecutor no-such-tm"
                .to_string()
        ]
    );
    assert_eq!(
        a.headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).map(|v| v.as_bytes()),
        Some(&b"*"[..])
    );
}
