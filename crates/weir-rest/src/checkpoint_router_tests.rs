//! Router tests of the checkpoint routes, with and without `/v1`: a backend that
//! checkpoints (answers from the examples) and one that keeps the trait's defaults
//! (a job without checkpointing, as Flink 2.3 answers for it).

use crate::backend::RestBackend;
use crate::error::RestError;
use crate::examples::{self, JID};
use crate::handlers::router;
use crate::messages::checkpoint_config::CheckpointConfigInfo;
use crate::messages::checkpoints::{CheckpointDetails, CheckpointingStatistics};
use crate::messages::config::{ConfigEntry, JobConfig};
use crate::messages::exceptions::JobExceptions;
use crate::messages::jobs::{JobDetail, JobsOverview};
use crate::messages::overview::Overview;
use crate::messages::submit::{JobSubmitRequest, JobSubmitResponse};
use crate::messages::taskmanagers::{TaskManagerDetail, TaskManagersList};
use crate::sample_check::sample;
use crate::test_client::get;
use axum::http::StatusCode;
use axum::Router;
use serde_json::Value;
use std::sync::Arc;
use weir_core::ids::JobId;

/// The only job the fakes know.
fn known(jid: JobId) -> Result<(), RestError> {
    if jid == JID {
        Ok(())
    } else {
        Err(RestError::JobNotFound(jid))
    }
}

/// The methods every backend must have, answered from the examples.
macro_rules! required_methods {
    () => {
        fn overview(&self) -> Overview {
            examples::overview()
        }
        fn jobs_overview(&self) -> JobsOverview {
            examples::jobs_overview()
        }
        fn job_detail(&self, jid: JobId) -> Result<JobDetail, RestError> {
            known(jid).map(|()| examples::job_detail())
        }
        fn job_exceptions(&self, jid: JobId, _: Option<usize>) -> Result<JobExceptions, RestError> {
            known(jid).map(|()| JobExceptions::default())
        }
        fn job_config(&self, jid: JobId) -> Result<JobConfig, RestError> {
            known(jid).map(|()| examples::job_config())
        }
        fn taskmanagers(&self) -> TaskManagersList {
            TaskManagersList {
                taskmanagers: Vec::new(),
            }
        }
        fn taskmanager_detail(&self, id: &str) -> Result<TaskManagerDetail, RestError> {
            Err(RestError::TaskManagerNotFound(id.to_string()))
        }
        fn jobmanager_config(&self) -> Vec<ConfigEntry> {
            Vec::new()
        }
        fn cancel_job(&self, jid: JobId) -> Result<(), RestError> {
            known(jid)
        }
        fn submit_job(&self, _: JobSubmitRequest) -> Result<JobSubmitResponse, RestError> {
            Err(RestError::BadRequest("no programs".to_string()))
        }
    };
}

/// A backend whose job checkpoints every 2 s and has checkpoints 1 to 3.
struct Checkpointing;

impl RestBackend for Checkpointing {
    required_methods!();

    fn job_checkpoints(&self, jid: JobId) -> Result<CheckpointingStatistics, RestError> {
        known(jid).map(|()| examples::job_checkpoints_running())
    }

    fn job_checkpoints_config(&self, jid: JobId) -> Result<CheckpointConfigInfo, RestError> {
        known(jid).map(|()| CheckpointConfigInfo::with_interval(2000))
    }

    fn job_checkpoint_details(&self, jid: JobId, checkpoint_id: u64) -> Result<CheckpointDetails, RestError> {
        known(jid)?;
        match checkpoint_id {
            3 => Ok(examples::checkpoint_details()),
            id => Err(RestError::checkpoint_not_found(id)),
        }
    }
}

/// A backend that keeps the trait's checkpoint defaults.
struct NoCheckpointing;

impl RestBackend for NoCheckpointing {
    required_methods!();
}

fn apps() -> [(&'static str, Router); 2] {
    [
        ("checkpointing", router(Arc::new(Checkpointing))),
        ("defaults", router(Arc::new(NoCheckpointing))),
    ]
}

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("serialises")
}

#[tokio::test]
async fn a_checkpointing_job_is_served_on_every_checkpoint_route_with_and_without_v1() {
    let app = router(Arc::new(Checkpointing));
    let expected = [
        ("/checkpoints", to_json(&examples::job_checkpoints_running())),
        ("/checkpoints/config", sample("job_checkpoints_config.json")),
        ("/checkpoints/details/3", sample("job_checkpoint_details.json")),
        ("/checkpoints/details/+3", sample("job_checkpoint_details.json")),
    ];
    for (suffix, body) in &expected {
        for prefix in ["", "/v1"] {
            let uri = format!("{prefix}/jobs/{JID}{suffix}");
            let a = get(&app, &uri).await;
            assert_eq!(a.status, StatusCode::OK, "{uri}: {}", a.json);
            assert_eq!(&a.json, body, "{uri}");
        }
    }
}

#[tokio::test]
async fn a_checkpoint_the_job_does_not_know_is_flinks_404() {
    for (name, app) in apps() {
        for prefix in ["", "/v1"] {
            for id in ["7", "-1"] {
                let uri = format!("{prefix}/jobs/{JID}/checkpoints/details/{id}");
                let a = get(&app, &uri).await;
                assert_eq!(a.status, StatusCode::NOT_FOUND, "{name} {uri}");
                assert_eq!(
                    a.errors(),
                    vec![format!("Could not find checkpointing statistics for checkpoint {id}.")],
                    "{name} {uri}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_job_without_checkpointing_answers_as_flink_2_3_does() {
    let app = router(Arc::new(NoCheckpointing));
    for prefix in ["", "/v1"] {
        let a = get(&app, &format!("{prefix}/jobs/{JID}/checkpoints")).await;
        assert_eq!(a.status, StatusCode::OK);
        assert_eq!(a.json, sample("job_checkpoints_failed_no_ckpt.json"));
        let a = get(&app, &format!("{prefix}/jobs/{JID}/checkpoints/config")).await;
        assert_eq!(a.status, StatusCode::OK);
        assert_eq!(a.json, sample("job_checkpoints_config_no_ckpt.json"));
    }
}

#[tokio::test]
async fn an_unknown_job_is_flinks_404_on_every_checkpoint_route() {
    let unknown = "00000000000000000000000000000000";
    for (name, app) in apps() {
        for suffix in ["/checkpoints", "/checkpoints/config", "/checkpoints/details/3"] {
            let uri = format!("/v1/jobs/{unknown}{suffix}");
            let a = get(&app, &uri).await;
            assert_eq!(a.status, StatusCode::NOT_FOUND, "{name} {uri}");
            assert!(
                a.errors()[0].contains(&format!("Could not find Flink job ({unknown})")),
                "{name} {uri}: {:?}",
                a.errors()
            );
        }
    }
}

#[tokio::test]
async fn malformed_checkpoint_and_job_ids_are_flinks_400() {
    let app = router(Arc::new(Checkpointing));
    for id in ["abc", "1.5", "0x3", "99999999999999999999", "3%20"] {
        let uri = format!("/jobs/{JID}/checkpoints/details/{id}");
        let a = get(&app, &uri).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{uri}");
        let shown = id.replace("%20", " ");
        assert_eq!(
            a.errors(),
            vec![format!(
                "Bad request, could not parse parameters: Cannot resolve path parameter (checkpointid) from value \"{shown}\"."
            )],
            "{uri}"
        );
    }
    for suffix in ["/checkpoints", "/checkpoints/config", "/checkpoints/details/3"] {
        let uri = format!("/v1/jobs/xyz{suffix}");
        let a = get(&app, &uri).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{uri}");
        assert_eq!(
            a.errors(),
            vec![
                "Bad request, could not parse parameters: Cannot resolve path parameter (jobid) from value \"xyz\"."
                    .to_string()
            ]
        );
    }
}

#[tokio::test]
async fn the_web_ui_has_a_checkpoints_view_that_reads_these_routes() {
    use tower::ServiceExt;
    let request = axum::http::Request::builder()
        .uri("/web/job_tabs.js")
        .body(axum::body::Body::empty())
        .expect("valid request");
    let response = router(Arc::new(NoCheckpointing))
        .oneshot(request)
        .await
        .expect("infallible");
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
    let page = String::from_utf8_lossy(&bytes);
    for needle in [
        "/checkpoints/config",
        "/checkpoints`",
        "Checkpointing is not enabled for this job.",
        "Latest completed checkpoint",
    ] {
        assert!(page.contains(needle), "the page lacks {needle}");
    }
}
