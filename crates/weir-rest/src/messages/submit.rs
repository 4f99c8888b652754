//! Job submission: Weir's own body for `POST /jobs` and its response.
//!
//! Flink submits a job by uploading a jar and then `POST /jars/:jarid/run`; Weir's jobs
//! are *programs* compiled into the binary and chosen by name, so Weir takes one JSON
//! body naming the program:
//!
//! ```json
//! {
//!   "program": "keyed-sum",
//!   "args": {"keys": "10"},
//!   "parallelism": 4,
//!   "max-parallelism": 128,
//!   "job-name": "my sum",
//!   "config": {"execution.checkpointing.interval": "10s"}
//! }
//! ```
//!
//! Only `program` is required. `args` are the program's `--arg key=value` values,
//! `parallelism` the job's default parallelism (`parallelism.default` when absent),
//! `max-parallelism` the job-wide max parallelism, `job-name` overrides the program's
//! name, and `config` holds job-level configuration options as strings.
//! `savepointPath` and `allowNonRestoredState` (Flink's jar-run fields) start the job
//! from a savepoint or retained checkpoint. Unknown fields are rejected (Flink's REST
//! mapper is strict too).
//!
//! The answer is `202 Accepted` with `{"jobid": "<32 hex>"}`, like Flink's jar run.
//!
//! Invariant: a request that passes [`JobSubmitRequest::validate`] has a non-empty
//! program name, `parallelism >= 1`, and `1 <= max-parallelism <= 32768` and
//! `parallelism <= max-parallelism` where given.

use crate::error::RestError;
use crate::serde_util::display;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use weir_core::ids::JobId;

/// The largest max parallelism Flink accepts (2^15 key groups).
pub const UPPER_BOUND_MAX_PARALLELISM: u32 = 1 << 15;

/// The body of `POST /jobs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSubmitRequest {
    /// The registered program's name, e.g. `keyed-sum`.
    pub program: String,
    /// The program's arguments (`--arg key=value`).
    #[serde(default)]
    pub args: BTreeMap<String, String>,
    /// The job's default parallelism; the cluster's `parallelism.default` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<u32>,
    /// The job-wide max parallelism; derived from the parallelism when absent.
    #[serde(default, rename = "max-parallelism", skip_serializing_if = "Option::is_none")]
    pub max_parallelism: Option<u32>,
    /// The job's name; the program's own when absent.
    #[serde(default, rename = "job-name", skip_serializing_if = "Option::is_none")]
    pub job_name: Option<String>,
    /// Job-level configuration options (`key: value`, Flink's keys).
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// A savepoint or retained checkpoint to start from (Flink's jar-run field).
    #[serde(default, rename = "savepointPath", skip_serializing_if = "Option::is_none")]
    pub savepoint_path: Option<String>,
    /// Start even when state of the savepoint belongs to no operator of the job.
    #[serde(default, rename = "allowNonRestoredState")]
    pub allow_non_restored_state: bool,
}

impl JobSubmitRequest {
    /// A request to run `program` with no arguments and every default.
    pub fn new(program: impl Into<String>) -> Self {
        Self {
            program: program.into(),
            args: BTreeMap::new(),
            parallelism: None,
            max_parallelism: None,
            job_name: None,
            config: BTreeMap::new(),
            savepoint_path: None,
            allow_non_restored_state: false,
        }
    }

    /// Checks the invariants the module documents; a violation is a
    /// [`RestError::BadRequest`] naming the field.
    pub fn validate(&self) -> Result<(), RestError> {
        if self.program.trim().is_empty() {
            return Err(RestError::BadRequest(
                "Field 'program' must name a registered program.".to_string(),
            ));
        }
        if self.parallelism == Some(0) {
            return Err(RestError::BadRequest(
                "Field 'parallelism' must be at least 1.".to_string(),
            ));
        }
        if let Some(max) = self.max_parallelism {
            if max == 0 || max > UPPER_BOUND_MAX_PARALLELISM {
                return Err(RestError::BadRequest(format!(
                    "Field 'max-parallelism' must be between 1 and {UPPER_BOUND_MAX_PARALLELISM}, was {max}."
                )));
            }
            if let Some(p) = self.parallelism {
                if p > max {
                    return Err(RestError::BadRequest(format!(
                        "Field 'parallelism' ({p}) must not exceed 'max-parallelism' ({max})."
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The body of a `202 Accepted` answer to `POST /jobs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct JobSubmitResponse {
    /// The new job's id.
    #[serde(serialize_with = "display")]
    pub jobid: JobId,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_body_parses() {
        let body = r#"{"program": "keyed-sum", "args": {"keys": "10"}, "parallelism": 4,
            "max-parallelism": 128, "job-name": "sum", "config": {"a": "b"}}"#;
        let r: JobSubmitRequest = serde_json::from_str(body).expect("parses");
        assert_eq!(r.program, "keyed-sum");
        assert_eq!(r.args.get("keys").map(String::as_str), Some("10"));
        assert_eq!(r.parallelism, Some(4));
        assert_eq!(r.max_parallelism, Some(128));
        assert_eq!(r.job_name.as_deref(), Some("sum"));
        assert_eq!(r.config.get("a").map(String::as_str), Some("b"));
        assert!(r.validate().is_ok());
    }

    #[test]
    fn minimal_body_parses_and_unknown_fields_do_not() {
        let r: JobSubmitRequest = serde_json::from_str(r#"{"program":"x"}"#).expect("parses");
        assert_eq!(r, JobSubmitRequest::new("x"));
        assert!(serde_json::from_str::<JobSubmitRequest>(r#"{"program":"x","nope":1}"#).is_err());
        assert!(serde_json::from_str::<JobSubmitRequest>(r#"{}"#).is_err());
    }

    #[test]
    fn validation() {
        let mut r = JobSubmitRequest::new(" ");
        assert!(r.validate().is_err());
        r.program = "p".to_string();
        r.parallelism = Some(0);
        assert!(r.validate().is_err());
        r.parallelism = Some(8);
        r.max_parallelism = Some(4);
        assert!(r.validate().is_err());
        r.max_parallelism = Some(UPPER_BOUND_MAX_PARALLELISM + 1);
        assert!(r.validate().is_err());
        r.max_parallelism = Some(UPPER_BOUND_MAX_PARALLELISM);
        assert!(r.validate().is_ok());
    }

    #[test]
    fn response_writes_hex_job_id() {
        let v = serde_json::to_value(JobSubmitResponse { jobid: JobId(255) }).expect("serialises");
        assert_eq!(v["jobid"], "000000000000000000000000000000ff");
    }
}
