//! `GET /jobs/:jid/accumulators` (Flink's `JobAccumulatorsInfo`).
//!
//! Weir has no user accumulators yet, so every job answers Flink's shape with empty
//! lists: `{"job-accumulators": [], "user-task-accumulators": [],
//! "serialized-user-task-accumulators": {}}`.

use serde::Serialize;
use std::collections::BTreeMap;

/// The answer: the job's accumulators (none in Weir yet).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JobAccumulatorsInfo {
    /// Flink's job accumulators (always empty in Flink 2.x too).
    #[serde(rename = "job-accumulators")]
    pub job_accumulators: Vec<UserAccumulator>,
    /// The user-defined accumulators, aggregated over the tasks.
    #[serde(rename = "user-task-accumulators")]
    pub user_task_accumulators: Vec<UserAccumulator>,
    /// The same, serialized (only with `includeSerializedValue=true` in Flink).
    #[serde(rename = "serialized-user-task-accumulators")]
    pub serialized_user_task_accumulators: BTreeMap<String, String>,
}

/// One user accumulator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserAccumulator {
    /// Its name.
    pub name: String,
    /// Its type (Flink: the Java class name).
    #[serde(rename = "type")]
    pub kind: String,
    /// Its value, printed.
    pub value: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample_check::assert_matches_sample;

    #[test]
    fn no_accumulators_match_flink_sample() {
        assert_matches_sample(&JobAccumulatorsInfo::default(), "job_accumulators.json");
    }
}
