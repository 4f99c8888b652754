//! Savepoint and stop-with-savepoint requests (Flink's `SavepointHandlers` and
//! `StopWithSavepointHandlers`): the bodies, the trigger answer and the operation
//! status that clients poll, with Flink's field names so that Flink's own CLI
//! (`flink savepoint`, `flink stop`) works unchanged.
//!
//! - `POST /jobs/:jid/savepoints` `{"target-directory": …, "cancel-job": false}` and
//!   `POST /jobs/:jid/stop` `{"targetDirectory": …, "drain": false}` answer `202`
//!   `{"request-id": "<trigger id>"}`.
//! - `GET /jobs/:jid/savepoints/:triggerid` answers `{"status": {"id": "IN_PROGRESS"}}`
//!   until the operation ends, then `{"status": {"id": "COMPLETED"}, "operation":
//!   {"location": "file:/…"}}` or `… "operation": {"failure-cause": {…}}`.

use serde::{Deserialize, Serialize};

/// The body of `POST /jobs/:jid/savepoints`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct SavepointTriggerRequest {
    /// Where to put the savepoint; the configured savepoint directory when absent.
    #[serde(default, rename = "target-directory")]
    pub target_directory: Option<String>,
    /// Cancel the job after the savepoint (deprecated in Flink; Weir refuses it).
    #[serde(default, rename = "cancel-job")]
    pub cancel_job: bool,
    /// A trigger id chosen by the client, for idempotent retries.
    #[serde(default, rename = "triggerId")]
    pub trigger_id: Option<String>,
    /// `CANONICAL` or `NATIVE` (Weir writes its one portable format for both).
    #[serde(default, rename = "formatType")]
    pub format_type: Option<String>,
}

/// The body of `POST /jobs/:jid/stop`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct StopWithSavepointRequest {
    /// Where to put the savepoint; the configured savepoint directory when absent.
    #[serde(default, rename = "targetDirectory")]
    pub target_directory: Option<String>,
    /// Emit the MAX watermark before stopping, so event-time windows fire.
    #[serde(default)]
    pub drain: bool,
    /// A trigger id chosen by the client, for idempotent retries.
    #[serde(default, rename = "triggerId")]
    pub trigger_id: Option<String>,
    /// `CANONICAL` or `NATIVE` (Weir writes its one portable format for both).
    #[serde(default, rename = "formatType")]
    pub format_type: Option<String>,
}

/// The answer to a trigger: the id to poll.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggerResponse {
    /// The trigger id.
    #[serde(rename = "request-id")]
    pub request_id: String,
}

/// The state of an asynchronous operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueStatus {
    /// `IN_PROGRESS` or `COMPLETED`.
    pub id: &'static str,
}

/// The failure of an operation, as Flink's `SerializedThrowable` JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailureCause {
    /// The exception class.
    pub class: String,
    /// The message with the class, as Java prints a stack trace's first line.
    #[serde(rename = "stack-trace")]
    pub stack_trace: String,
}

/// The result of a completed savepoint operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum SavepointInfo {
    /// The savepoint was written there.
    Location {
        /// The savepoint directory (a `file:` URL for local paths, as Flink reports).
        location: String,
    },
    /// It failed.
    Failure {
        /// Why.
        #[serde(rename = "failure-cause")]
        failure_cause: FailureCause,
    },
}

/// `GET /jobs/:jid/savepoints/:triggerid`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SavepointStatusResponse {
    /// In progress or completed.
    pub status: QueueStatus,
    /// The result, once completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<SavepointInfo>,
}

impl SavepointStatusResponse {
    /// Still running.
    pub fn in_progress() -> Self {
        Self {
            status: QueueStatus { id: "IN_PROGRESS" },
            operation: None,
        }
    }

    /// Written at `location` (a plain path is reported as a `file:` URL).
    pub fn completed(location: &str) -> Self {
        let location = if location.contains(':') {
            location.to_string()
        } else {
            format!("file:{location}")
        };
        Self {
            status: QueueStatus { id: "COMPLETED" },
            operation: Some(SavepointInfo::Location { location }),
        }
    }

    /// Failed with `message`.
    pub fn failed(message: &str) -> Self {
        let class = "java.util.concurrent.CompletionException".to_string();
        Self {
            status: QueueStatus { id: "COMPLETED" },
            operation: Some(SavepointInfo::Failure {
                failure_cause: FailureCause {
                    stack_trace: format!("{class}: {message}"),
                    class,
                },
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_bodies_have_flinks_shapes() {
        assert_eq!(
            serde_json::to_value(SavepointStatusResponse::in_progress()).unwrap(),
            serde_json::json!({"status": {"id": "IN_PROGRESS"}})
        );
        assert_eq!(
            serde_json::to_value(SavepointStatusResponse::completed("/tmp/sp/savepoint-1")).unwrap(),
            serde_json::json!({"status": {"id": "COMPLETED"}, "operation": {"location": "file:/tmp/sp/savepoint-1"}})
        );
        let failed = serde_json::to_value(SavepointStatusResponse::failed("expired")).unwrap();
        assert_eq!(
            failed["operation"]["failure-cause"]["stack-trace"],
            "java.util.concurrent.CompletionException: expired"
        );
    }

    #[test]
    fn requests_read_flinks_field_names() {
        let r: SavepointTriggerRequest =
            serde_json::from_str(r#"{"target-directory": "/sp", "cancel-job": false, "formatType": "CANONICAL"}"#)
                .unwrap();
        assert_eq!(r.target_directory.as_deref(), Some("/sp"));
        let r: StopWithSavepointRequest =
            serde_json::from_str(r#"{"targetDirectory": "/sp", "drain": true, "triggerId": "ab"}"#).unwrap();
        assert!(r.drain);
        assert_eq!(r.trigger_id.as_deref(), Some("ab"));
    }
}
