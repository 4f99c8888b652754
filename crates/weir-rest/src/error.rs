//! Errors of the REST endpoint and Flink's error body.
//!
//! Owns [`RestError`] (what a [`crate::RestBackend`] or the router reports) and
//! [`ErrorResponse`], the `{"errors": [...]}` body every error is answered with.
//!
//! Invariant: each variant maps to one HTTP status and one body shape, the ones Flink
//! 2.3 answers in the same situation:
//!
//! | variant | status | `errors` |
//! |---|---|---|
//! | [`RestError::NotFound`] | 404 | `[message]` |
//! | [`RestError::JobNotFound`] | 404 | `["org.apache.flink.runtime.rest.NotFoundException: Job <jid> not found\nCaused by: …FlinkJobNotFoundException: Could not find Flink job (<jid>)"]` |
//! | [`RestError::BadRequest`] | 400 | `[message]` |
//! | [`RestError::Conflict`] | 409 | `[message]` |
//! | [`RestError::TaskManagerNotFound`] | 404 (Flink 2.3 answers 500, see below) | `["…RestHandlerException: Could not find TaskExecutor <id>\nCaused by: …UnknownTaskExecutorException: No TaskExecutor registered under <id>."]` |
//! | [`RestError::Internal`] | 500 | `["Internal server error.", "<Exception on server side:\n<message>\n\nEnd of exception on server side>"]` |
//!
//! An unknown TaskManager departs from Flink 2.3, which answers `GET /taskmanagers/<id>`
//! with a 500 (its handler's 404 mapping misses the wrapped exception): Weir answers
//! the 404 Flink's handler means, with the text Flink's log routes use, so that no
//! client-supplied id ever produces a server error.
//!
//! Flink's Java class names stay in the texts because clients search error texts for
//! them (e.g. `FlinkJobNotFoundException`, `Could not find Flink job`).

use crate::messages::status::JobStatus;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use weir_core::ids::JobId;

/// Flink's error body: `{"errors": ["…", …]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorResponse {
    /// The error messages, most important first.
    pub errors: Vec<String>,
}

impl ErrorResponse {
    /// A body with one message.
    pub fn single(message: impl Into<String>) -> Self {
        Self {
            errors: vec![message.into()],
        }
    }
}

/// An error answered with Flink's status code and `{"errors": [...]}` body (see the
/// module table).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestError {
    /// Something named in the request does not exist: 404 with `message`.
    #[error("{0}")]
    NotFound(String),
    /// The job named in the path does not exist: 404 with Flink's text.
    #[error("Job {0} not found")]
    JobNotFound(JobId),
    /// No TaskManager has this id: 404 with Flink's texts (see the module docs).
    #[error("No TaskExecutor registered under {0}.")]
    TaskManagerNotFound(String),
    /// The request is malformed or asks for something impossible: 400 with `message`.
    #[error("{0}")]
    BadRequest(String),
    /// The request conflicts with the resource's state, e.g. cancelling a job that
    /// already finished: 409 with `message`.
    #[error("{0}")]
    Conflict(String),
    /// The server failed: 500 with Flink's "Internal server error." body.
    #[error("{0}")]
    Internal(String),
}

impl RestError {
    /// Flink's answer to cancelling a job that already reached `status` (FINISHED or
    /// FAILED; cancelling a CANCELED job succeeds): 409.
    pub fn job_already_terminal(status: JobStatus) -> Self {
        RestError::Conflict(format!(
            "Job cancellation failed because the job has already reached another terminal state ({status})."
        ))
    }

    /// Flink's answer for a checkpoint id the job has no statistics for: 404
    /// `Could not find checkpointing statistics for checkpoint <id>.`
    pub fn checkpoint_not_found(checkpoint_id: u64) -> Self {
        RestError::NotFound(format!(
            "Could not find checkpointing statistics for checkpoint {checkpoint_id}."
        ))
    }

    /// Flink's answer to `GET /jobs/:jid/checkpoints/config` for a job that has no
    /// checkpoint coordinator at all (Flink: batch jobs): 404 `Checkpointing is not
    /// enabled for this job (<jid>).` A streaming job without checkpointing answers
    /// 200 with [`crate::CheckpointConfigInfo::disabled`] instead.
    pub fn checkpointing_not_enabled(jid: JobId) -> Self {
        RestError::NotFound(format!("Checkpointing is not enabled for this job ({jid})."))
    }

    /// Flink's answer for a vertex id the job does not have: 404 with the first line of
    /// Flink's `RestHandlerException` (`No vertex with ID '<vid>' exists.`).
    pub fn vertex_not_found(vertex_id: &str) -> Self {
        RestError::NotFound(format!(
            "org.apache.flink.runtime.rest.handler.RestHandlerException: No vertex with ID '{vertex_id}' exists."
        ))
    }

    /// Flink's answer for a subtask index at or beyond the vertex's parallelism: 404
    /// `Invalid subtask index for vertex <vid>`.
    pub fn subtask_not_found(vertex_id: &str) -> Self {
        RestError::NotFound(format!(
            "org.apache.flink.runtime.rest.handler.RestHandlerException: Invalid subtask index for vertex {vertex_id}"
        ))
    }

    /// Flink's answer to a log request for a TaskManager that is not registered: 404
    /// `Could not find TaskExecutor <id>` (where `/taskmanagers/:tmid` answers 500).
    pub fn taskexecutor_not_found(id: &str) -> Self {
        RestError::NotFound(format!(
            "org.apache.flink.runtime.rest.handler.RestHandlerException: Could not find TaskExecutor {id}"
        ))
    }

    /// Flink's answer for a log file a TaskManager does not have (`LOG`: its main log):
    /// 404.
    pub fn no_such_taskmanager_file(name: Option<&str>) -> Self {
        RestError::NotFound(format!(
            "The file {} does not exist on the TaskExecutor.",
            name.unwrap_or("LOG")
        ))
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            RestError::NotFound(_) | RestError::JobNotFound(_) | RestError::TaskManagerNotFound(_) => {
                StatusCode::NOT_FOUND
            }
            RestError::BadRequest(_) => StatusCode::BAD_REQUEST,
            RestError::Conflict(_) => StatusCode::CONFLICT,
            RestError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The `{"errors": [...]}` body of this error.
    pub fn body(&self) -> ErrorResponse {
        match self {
            RestError::NotFound(m) | RestError::BadRequest(m) | RestError::Conflict(m) => {
                ErrorResponse::single(m.clone())
            }
            RestError::JobNotFound(jid) => ErrorResponse::single(format!(
                "org.apache.flink.runtime.rest.NotFoundException: Job {jid} not found\n\
                 Caused by: org.apache.flink.runtime.messages.FlinkJobNotFoundException: \
                 Could not find Flink job ({jid})"
            )),
            RestError::TaskManagerNotFound(id) => ErrorResponse::single(format!(
                "org.apache.flink.runtime.rest.handler.RestHandlerException: Could not find TaskExecutor {id}\n\
                 Caused by: org.apache.flink.runtime.resourcemanager.exceptions.UnknownTaskExecutorException: \
                 No TaskExecutor registered under {id}."
            )),
            RestError::Internal(m) => internal_body(m),
        }
    }
}

/// Flink's body for an exception on the server side.
fn internal_body(detail: &str) -> ErrorResponse {
    ErrorResponse {
        errors: vec![
            "Internal server error.".to_string(),
            format!("<Exception on server side:\n{detail}\n\nEnd of exception on server side>"),
        ],
    }
}

/// A JSON response with `status` and the serialised `body`; a body that cannot be
/// serialised (impossible for this crate's types) becomes a 500 error body.
pub(crate) fn json_response<T: Serialize>(status: StatusCode, body: &T) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => {
            let mut response = (status, bytes).into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json; charset=UTF-8"),
            );
            response
        }
        Err(e) => {
            let fallback = internal_body(&format!("Could not serialise the response: {e}"));
            let text = format!(
                "{{\"errors\":{}}}",
                serde_json::to_string(&fallback.errors).unwrap_or_else(|_| "[\"Internal server error.\"]".to_string())
            );
            let mut response = (StatusCode::INTERNAL_SERVER_ERROR, text).into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json; charset=UTF-8"),
            );
            response
        }
    }
}

impl IntoResponse for RestError {
    fn into_response(self) -> Response {
        json_response(self.status(), &self.body())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample_check::{assert_matches_sample, sample};

    #[test]
    fn statuses() {
        assert_eq!(RestError::NotFound(String::new()).status(), 404);
        assert_eq!(RestError::JobNotFound(JobId(1)).status(), 404);
        assert_eq!(RestError::BadRequest(String::new()).status(), 400);
        assert_eq!(RestError::Conflict(String::new()).status(), 409);
        assert_eq!(RestError::TaskManagerNotFound(String::new()).status(), 404);
        assert_eq!(RestError::Internal(String::new()).status(), 500);
    }

    #[test]
    fn job_not_found_starts_like_flinks() {
        let jid = JobId(0);
        let body = RestError::JobNotFound(jid).body();
        assert_matches_sample(&body, "error_404_unknown_job.json");
        let flink = sample("error_404_unknown_job.json");
        let flink_text = flink["errors"][0].as_str().unwrap_or_default();
        let first_line = flink_text.lines().next().unwrap_or_default();
        assert!(body.errors[0].starts_with(first_line), "{}", body.errors[0]);
        assert!(body.errors[0].contains("Could not find Flink job (00000000000000000000000000000000)"));
        assert!(flink_text.contains("Could not find Flink job (00000000000000000000000000000000)"));
    }

    #[test]
    fn unknown_task_manager_is_a_404_naming_flinks_exception() {
        let body = RestError::TaskManagerNotFound("127.0.0.1:1-deadbeef".to_string()).body();
        let flink = sample("error_500_unknown_taskmanager.json");
        let flink_cause = flink["errors"][1]
            .as_str()
            .unwrap_or_default()
            .lines()
            .nth(1)
            .unwrap_or_default();
        assert_eq!(
            body.errors,
            vec![format!(
                "org.apache.flink.runtime.rest.handler.RestHandlerException: Could not find TaskExecutor 127.0.0.1:1-deadbeef\nCaused by: {flink_cause}"
            )]
        );
        assert_eq!(
            RestError::taskexecutor_not_found("127.0.0.1:1-deadbeef").body().errors[0],
            body.errors[0].lines().next().unwrap_or_default()
        );
    }

    #[test]
    fn checkpoint_errors_carry_flinks_texts_and_404() {
        let e = RestError::checkpoint_not_found(7);
        assert_eq!(e.status(), 404);
        assert_eq!(
            e.body().errors,
            vec!["Could not find checkpointing statistics for checkpoint 7.".to_string()]
        );
        let e = RestError::checkpointing_not_enabled(JobId(0xab));
        assert_eq!(e.status(), 404);
        assert_eq!(
            e.body().errors,
            vec!["Checkpointing is not enabled for this job (000000000000000000000000000000ab).".to_string()]
        );
    }

    #[test]
    fn conflict_names_the_state() {
        let e = RestError::job_already_terminal(JobStatus::Finished);
        assert_eq!(
            e.body().errors,
            vec![
                "Job cancellation failed because the job has already reached another terminal state (FINISHED)."
                    .to_string()
            ]
        );
    }
}
