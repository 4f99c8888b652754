//! Router tests of the attempt, accumulator and execution-result routes against the
//! [`FakeBackend`]: job [`JID`] (RUNNING) with the two-subtask vertex [`VID`], whose
//! subtasks are at attempt 0, and the finished job [`FINISHED`].

use crate::examples::JID;
use crate::fake_backend::{FakeBackend, FINISHED, VID};
use crate::handlers::router;
use crate::test_client::get;
use axum::http::StatusCode;
use axum::Router;
use serde_json::json;

fn app() -> Router {
    router(FakeBackend::new())
}

fn bad_attempt(value: &str) -> String {
    format!("Bad request, could not parse parameters: Cannot resolve path parameter (attempt) from value \"{value}\".")
}

#[tokio::test]
async fn the_current_attempt_is_the_subtask_and_other_numbers_are_flinks_404_or_400() {
    let app = app();
    let v = format!("/jobs/{JID}/vertices/{VID}");
    let subtask = get(&app, &format!("{v}/subtasks/1")).await;
    for prefix in ["", "/v1"] {
        let a = get(&app, &format!("{prefix}{v}/subtasks/1/attempts/0")).await;
        assert_eq!((a.status, &a.json), (StatusCode::OK, &subtask.json));
    }
    for (n, shown) in [("1", "1"), ("-1", "-1"), ("2147483647", "2147483647")] {
        let a = get(&app, &format!("{v}/subtasks/1/attempts/{n}")).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{n}");
        assert_eq!(
            a.errors(),
            vec![format!(
                "org.apache.flink.runtime.rest.handler.RestHandlerException: Invalid attempt num {shown}"
            )]
        );
    }
    for bad in ["x", "2147483648", "1.5", "0x1"] {
        for suffix in ["", "/accumulators"] {
            let a = get(&app, &format!("{v}/subtasks/1/attempts/{bad}{suffix}")).await;
            assert_eq!(a.status, StatusCode::BAD_REQUEST, "{bad}{suffix}");
            assert_eq!(a.errors(), vec![bad_attempt(bad)]);
        }
    }
}

#[tokio::test]
async fn attempt_paths_check_the_job_vertex_and_subtask_first() {
    let app = app();
    let unknown_vertex = "00000000000000000000000000000000";
    for suffix in [
        "/subtasks/0/attempts/0",
        "/subtasks/0/attempts/0/accumulators",
        "/accumulators",
        "/subtasks/accumulators",
    ] {
        let a = get(&app, &format!("/jobs/{JID}/vertices/{unknown_vertex}{suffix}")).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND, "{suffix}");
        assert!(a.errors()[0].contains("No vertex with ID"), "{suffix}");
        let a = get(&app, &format!("/jobs/{JID}/vertices/not-a-vertex{suffix}")).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{suffix}");
        let a = get(&app, &format!("/jobs/not-a-job/vertices/{VID}{suffix}")).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{suffix}");
    }
    let v = format!("/jobs/{JID}/vertices/{VID}");
    let a = get(&app, &format!("{v}/subtasks/2/attempts/0")).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert!(a.errors()[0].ends_with(&format!("Invalid subtask index for vertex {VID}")));
    let a = get(&app, &format!("{v}/subtasks/-1/attempts/0")).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn accumulators_answer_flinks_shapes_and_accumulators_is_not_a_subtask_index() {
    let app = app();
    let v = format!("/jobs/{JID}/vertices/{VID}");
    let a = get(&app, &format!("{v}/accumulators")).await;
    assert_eq!(
        (a.status, a.json),
        (StatusCode::OK, json!({"id": VID, "user-accumulators": []}))
    );
    let a = get(&app, &format!("/v1{v}/subtasks/accumulators")).await;
    assert_eq!(a.status, StatusCode::OK);
    let subtask = |i: u32| json!({"subtask": i, "attempt": 0, "host": "localhost", "user-accumulators": []});
    assert_eq!(
        a.json,
        json!({"id": VID, "parallelism": 2, "subtasks": [subtask(0), subtask(1)]})
    );
    let a = get(&app, &format!("{v}/subtasks/0/attempts/0/accumulators")).await;
    assert_eq!(
        (a.status, a.json),
        (
            StatusCode::OK,
            json!({"subtask": 0, "attempt": 0, "id": "", "user-accumulators": []})
        )
    );
}

#[tokio::test]
async fn the_execution_result_is_in_progress_until_the_job_ends() {
    let app = app();
    let a = get(&app, &format!("/jobs/{JID}/execution-result")).await;
    assert_eq!(
        (a.status, a.json),
        (StatusCode::OK, json!({"status": {"id": "IN_PROGRESS"}}))
    );
    let a = get(&app, &format!("/v1/jobs/{FINISHED}/execution-result")).await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.json["status"], json!({"id": "COMPLETED"}));
    assert_eq!(a.json["job-execution-result"]["application-status"], "SUCCEEDED");
    let unknown = "00000000000000000000000000000123";
    let a = get(&app, &format!("/jobs/{unknown}/execution-result")).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert!(a.errors()[0].contains("Could not find Flink job"));
    let a = get(&app, "/jobs/execution-result/execution-result").await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
}
