//! Tests of [`crate::messages::execution_result`], over the example bodies of [`crate::examples`].

use crate::examples;
use crate::messages::exceptions::{ExceptionHistory, ExceptionInfo, JobExceptions, RootExceptionInfo};
use crate::messages::execution_result::*;
use crate::messages::status::JobStatus;
use serde_json::json;
use std::collections::BTreeMap;

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
