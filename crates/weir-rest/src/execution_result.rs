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

use crate::exceptions::JobExceptions;
use crate::jobs::JobDetail;
use crate::savepoints::{FailureCause, QueueStatus};
use crate::serde_util::display;
use crate::status::JobStatus;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples;
    use crate::exceptions::{ExceptionHistory, ExceptionInfo, RootExceptionInfo};
    use serde_json::json;

    #[test]
    fn a_running_job_is_in_progress_with_no_result() {
        let detail = examples::job_detail();
        let a = JobExecutionResultResponse::of(&detail, JobStatus::Running, None);
        assert_eq!(
            serde_json::to_value(&a).expect("serialises"),
            json!({"status": {"id": "IN_PROGRESS"}})
        );
    }

    #[test]
    fn a_finished_job_has_succeeded_with_its_runtime_and_no_cause() {
        let mut detail = examples::job_detail();
        detail.start_time = 1000;
        detail.end_time = 4500;
        detail.duration = 3500;
        let a = JobExecutionResultResponse::of(&detail, JobStatus::Finished, None);
        assert_eq!(
            serde_json::to_value(&a).expect("serialises"),
            json!({
                "status": {"id": "COMPLETED"},
                "job-execution-result": {
                    "id": detail.jid.to_string(),
                    "name": detail.name,
                    "application-status": "SUCCEEDED",
                    "accumulator-results": {},
                    "net-runtime": 3500,
                    "start-time": 1000,
                    "end-time": 4500
                }
            })
        );
    }

    #[test]
    fn a_failed_job_carries_its_last_root_failure_as_the_cause() {
        let detail = examples::job_detail();
        let root = |name: &str, trace: &str| RootExceptionInfo {
            exception: ExceptionInfo {
                exception_name: name.into(),
                stacktrace: trace.into(),
                timestamp: 1,
                failure_labels: BTreeMap::new(),
                task_name: None,
                endpoint: None,
                task_manager_id: None,
            },
            concurrent_exceptions: Vec::new(),
        };
        let exceptions = JobExceptions {
            exception_history: ExceptionHistory {
                entries: vec![root("TaskError", "TaskError: bad cast"), root("Old", "Old: earlier")],
                truncated: false,
            },
        };
        let a = JobExecutionResultResponse::of(&detail, JobStatus::Failed, Some(&exceptions));
        let v = serde_json::to_value(&a).expect("serialises");
        assert_eq!(v["job-execution-result"]["application-status"], "FAILED");
        assert_eq!(
            v["job-execution-result"]["failure-cause"],
            json!({"class": "TaskError", "stack-trace": "TaskError: bad cast"})
        );
        let canceled = JobExecutionResultResponse::of(&detail, JobStatus::Canceled, Some(&exceptions));
        let v = serde_json::to_value(&canceled).expect("serialises");
        assert_eq!(v["job-execution-result"]["application-status"], "CANCELED");
        assert!(v["job-execution-result"].get("failure-cause").is_none());
    }
}
