//! The path parameters of Flink's REST paths, parsed and checked as Flink's message
//! parameters are: a job or vertex id is 32 hex characters (either case), a subtask
//! index a non-negative `int`; anything else is Flink's 400 `Bad request, could not
//! parse parameters: Cannot resolve path parameter (<key>) from value "<value>".`,
//! with Flink's keys (`jobid`, `vertexid`, `subtaskindex`).
//!
//! Routes name their captures `jid`, `vid`, `subtaskindex`, `tmid` and `filename`.

use crate::error::RestError;
use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use weir_core::ids::JobId;

/// The captures of a route, as axum hands them over.
pub(crate) type RawPath = Result<Path<Vec<(String, String)>>, PathRejection>;

/// The captures of one request.
pub(crate) struct PathParams(Vec<(String, String)>);

/// Flink's 400 for a `kind` (path or query) parameter `key` that does not parse.
pub(crate) fn bad_parameter(kind: &str, key: &str, value: &str) -> RestError {
    RestError::BadRequest(format!(
        "Bad request, could not parse parameters: Cannot resolve {kind} parameter ({key}) from value \"{value}\"."
    ))
}

/// True for 32 ASCII hex digits (no sign, no spaces).
pub(crate) fn is_hex_id(raw: &str) -> bool {
    raw.len() == 32 && raw.bytes().all(|b| b.is_ascii_hexdigit())
}

impl PathParams {
    /// The captures, or a 400 when the path could not be decoded.
    pub(crate) fn of(path: RawPath) -> Result<Self, RestError> {
        path.map(|Path(pairs)| Self(pairs))
            .map_err(|e| RestError::BadRequest(format!("Bad request, could not parse parameters: {e}")))
    }

    /// The capture `name` as sent.
    pub(crate) fn text(&self, name: &str) -> Result<&str, RestError> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| RestError::Internal(format!("the route has no parameter '{name}'")))
    }

    /// The job id (`jid`).
    pub(crate) fn job(&self) -> Result<JobId, RestError> {
        let raw = self.text("jid")?;
        is_hex_id(raw)
            .then(|| JobId::parse(raw))
            .flatten()
            .ok_or_else(|| bad_parameter("path", "jobid", raw))
    }

    /// The vertex id (`vid`), lower-cased as Weir prints ids.
    pub(crate) fn vertex(&self) -> Result<String, RestError> {
        let raw = self.text("vid")?;
        if is_hex_id(raw) {
            Ok(raw.to_ascii_lowercase())
        } else {
            Err(bad_parameter("path", "vertexid", raw))
        }
    }

    /// The subtask index (`subtaskindex`): a Java `int`, not negative.
    pub(crate) fn subtask(&self) -> Result<u32, RestError> {
        let raw = self.text("subtaskindex")?;
        raw.parse::<i32>()
            .ok()
            .and_then(|i| u32::try_from(i).ok())
            .ok_or_else(|| bad_parameter("path", "subtaskindex", raw))
    }
}
