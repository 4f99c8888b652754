//! `GET /jobs/:jid/exceptions`: a job's failure history.
//!
//! Owns [`JobExceptions`], [`ExceptionHistory`], [`RootExceptionInfo`] (one failure
//! that triggered a restart or the job's end) and [`ExceptionInfo`] (one exception,
//! also used for the concurrent failures of a root).
//!
//! Invariants, as in Flink 2.3: only `exceptionHistory` is written (the deprecated
//! top-level `root-exception`, `timestamp`, `all-exceptions` and `truncated` are not);
//! absent optional fields (`taskName`, `endpoint`, `taskManagerId` of a global failure)
//! are omitted rather than written as `null`; entries are newest first.

use serde::Serialize;
use std::collections::BTreeMap;

/// The body of `GET /jobs/:jid/exceptions`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct JobExceptions {
    /// The failure history.
    #[serde(rename = "exceptionHistory")]
    pub exception_history: ExceptionHistory,
}

/// `exceptionHistory` of [`JobExceptions`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ExceptionHistory {
    /// The failures, newest first, at most `maxExceptions` of them.
    pub entries: Vec<RootExceptionInfo>,
    /// Whether entries were left out because of `maxExceptions`.
    pub truncated: bool,
}

/// One exception. A task failure names the task and where it ran; a global failure
/// (e.g. of the JobManager's own logic) does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExceptionInfo {
    /// The exception's type, e.g. `java.lang.NumberFormatException` in Flink; Weir
    /// writes its error type's name.
    #[serde(rename = "exceptionName")]
    pub exception_name: String,
    /// The full text of the error and its causes (Flink: the Java stack trace).
    pub stacktrace: String,
    /// When the failure happened (ms since the epoch).
    pub timestamp: i64,
    /// Labels attached by failure enrichers (Weir: usually empty).
    #[serde(rename = "failureLabels")]
    pub failure_labels: BTreeMap<String, String>,
    /// The failed task, e.g. `Source: S -> Map (2/2) - execution #0`; omitted for a
    /// global failure.
    #[serde(rename = "taskName", skip_serializing_if = "Option::is_none")]
    pub task_name: Option<String>,
    /// The `host:port` of the TaskManager the task ran on; omitted for a global failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The TaskManager's id; omitted for a global failure.
    #[serde(rename = "taskManagerId", skip_serializing_if = "Option::is_none")]
    pub task_manager_id: Option<String>,
}

/// One entry of [`ExceptionHistory`]: the failure that triggered a restart (or ended
/// the job), plus the failures that happened with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RootExceptionInfo {
    /// The failure itself.
    #[serde(flatten)]
    pub exception: ExceptionInfo,
    /// Other failures handled together with this one.
    #[serde(rename = "concurrentExceptions")]
    pub concurrent_exceptions: Vec<ExceptionInfo>,
}

impl JobExceptions {
    /// Keeps the entries whose failure labels contain every `(key, value)` pair of
    /// `filter`, then the first `max` of those, setting `truncated` when some were left
    /// out. This is what `?failureLabelFilter=` and `?maxExceptions=` do.
    pub fn filter_and_limit(&mut self, filter: &[(String, String)], max: usize) {
        let history = &mut self.exception_history;
        if !filter.is_empty() {
            history
                .entries
                .retain(|e| filter.iter().all(|(k, v)| e.exception.failure_labels.get(k) == Some(v)));
        }
        if history.entries.len() > max {
            history.entries.truncate(max);
            history.truncated = true;
        }
    }
}
