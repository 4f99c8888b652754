//! `GET /jobs/:jid/execution-result` (Flink's `JobExecutionResultResponseBody`): what a
//! client polls to learn how a job ended.
//!
//! While the job has not reached a globally terminal state the answer is
//! `{"status": {"id": "IN_PROGRESS"}}`; afterwards `COMPLETED` with the
//! `job-execution-result` as Flink's `JobResultSerializer` writes it: id, name,
//! `application-status` (`SUCCEEDED`, `FAILED`, `CANCELED`), `accumulator-results`
//! (empty: Weir has no user accumulators yet), `net-runtime`, the `failure-cause` of a
//! failed job (its last root failure; Weir writes no `serialized-throwable`, which in
//! Flink is a Java-serialised exception), `start-time` and `end-time`.

use crate::messages::exceptions::JobExceptions;
use crate::messages::jobs::JobDetail;
use crate::messages::savepoints::{FailureCause, QueueStatus};
use crate::messages::status::JobStatus;
use crate::serde_util::display;
use serde::Serialize;
use std::collections::BTreeMap;
use weir_core::ids::JobId;

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobExecutionResultResponse {
    /// `IN_PROGRESS` or `COMPLETED`.
    pub status: QueueStatus,
    /// How the job ended, once it has.
    #[serde(rename = "job-execution-result", skip_serializing_if = "Option::is_none")]
    pub job_execution_result: Option<JobResult>,
}

/// How a job ended (Flink's `JobResult` as its REST API writes it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobResult {
    /// The job id.
    #[serde(serialize_with = "display")]
    pub id: JobId,
    /// The job's name.
    pub name: String,
    /// `SUCCEEDED`, `FAILED`, `CANCELED` or `UNKNOWN`.
    #[serde(rename = "application-status")]
    pub application_status: &'static str,
    /// The user accumulators by name (serialised values in Flink; none in Weir).
    #[serde(rename = "accumulator-results")]
    pub accumulator_results: BTreeMap<String, String>,
    /// Milliseconds from the job's start to its end.
    #[serde(rename = "net-runtime")]
    pub net_runtime: i64,
    /// Why a failed job failed.
    #[serde(rename = "failure-cause", skip_serializing_if = "Option::is_none")]
    pub failure_cause: Option<FailureCause>,
    /// When the job was submitted (ms since the epoch).
    #[serde(rename = "start-time")]
    pub start_time: i64,
    /// When it reached its terminal state (ms since the epoch).
    #[serde(rename = "end-time")]
    pub end_time: i64,
}

/// Flink's application status of a terminal job status (`ApplicationStatus.fromJobStatus`).
pub fn application_status(status: JobStatus) -> &'static str {
    match status {
        JobStatus::Finished => "SUCCEEDED",
        JobStatus::Failed => "FAILED",
        JobStatus::Canceled => "CANCELED",
        _ => "UNKNOWN",
    }
}

impl JobExecutionResultResponse {
    /// The answer for the job of `detail`, which is in `status` now; `exceptions` are
    /// its failure history (newest first), read for a failed job's cause.
    pub fn of(detail: &JobDetail, status: JobStatus, exceptions: Option<&JobExceptions>) -> Self {
        if !status.is_globally_terminal() {
            return Self {
                status: QueueStatus { id: "IN_PROGRESS" },
                job_execution_result: None,
            };
        }
        let failure_cause = (status == JobStatus::Failed)
            .then(|| exceptions.and_then(|e| e.exception_history.entries.first()))
            .flatten()
            .map(|root| FailureCause {
                class: root.exception.exception_name.clone(),
                stack_trace: root.exception.stacktrace.clone(),
            });
        Self {
            status: QueueStatus { id: "COMPLETED" },
            job_execution_result: Some(JobResult {
                id: detail.jid,
                name: detail.name.clone(),
                application_status: application_status(status),
                accumulator_results: BTreeMap::new(),
                net_runtime: detail.duration,
                failure_cause,
                start_time: detail.start_time,
                end_time: detail.end_time,
            }),
        }
    }
}
