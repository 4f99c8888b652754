//! `execution.runtime-mode` (Flink's `RuntimeExecutionMode`): whether a job runs as a
//! stream (pipelined exchanges, checkpoints, periodic watermarks, incremental results)
//! or as a batch (blocking exchanges scheduled stage by stage, final results only).
//!
//! `Automatic` is only a request: a built job is always `Streaming` or `Batch`
//! ([`RuntimeExecutionMode::resolve`]).

use serde::{Deserialize, Serialize};
use std::fmt;

/// The runtime mode a job asks for, or runs in once resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum RuntimeExecutionMode {
    /// Unbounded processing: the default.
    #[default]
    Streaming,
    /// Bounded processing: every source must be bounded.
    Batch,
    /// Batch when every source is bounded, streaming otherwise.
    Automatic,
}

impl RuntimeExecutionMode {
    /// Flink's name: `STREAMING`, `BATCH` or `AUTOMATIC`.
    pub fn flink_name(self) -> &'static str {
        match self {
            RuntimeExecutionMode::Streaming => "STREAMING",
            RuntimeExecutionMode::Batch => "BATCH",
            RuntimeExecutionMode::Automatic => "AUTOMATIC",
        }
    }

    /// Parses Flink's name, case-insensitively.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_uppercase().as_str() {
            "STREAMING" => Some(RuntimeExecutionMode::Streaming),
            "BATCH" => Some(RuntimeExecutionMode::Batch),
            "AUTOMATIC" => Some(RuntimeExecutionMode::Automatic),
            _ => None,
        }
    }

    /// The mode a job with these sources runs in: `Automatic` becomes `Batch` when every
    /// source is bounded.
    pub fn resolve(self, all_sources_bounded: bool) -> Self {
        match self {
            RuntimeExecutionMode::Automatic if all_sources_bounded => RuntimeExecutionMode::Batch,
            RuntimeExecutionMode::Automatic => RuntimeExecutionMode::Streaming,
            other => other,
        }
    }

    /// True for `Batch`.
    pub fn is_batch(self) -> bool {
        self == RuntimeExecutionMode::Batch
    }
}

impl fmt::Display for RuntimeExecutionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.flink_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_case_insensitively_and_automatic_resolves_by_boundedness() {
        assert_eq!(
            RuntimeExecutionMode::parse(" batch "),
            Some(RuntimeExecutionMode::Batch)
        );
        assert_eq!(
            RuntimeExecutionMode::parse("Automatic"),
            Some(RuntimeExecutionMode::Automatic)
        );
        assert_eq!(RuntimeExecutionMode::parse("bulk"), None);
        assert_eq!(
            RuntimeExecutionMode::Automatic.resolve(true),
            RuntimeExecutionMode::Batch
        );
        assert_eq!(
            RuntimeExecutionMode::Automatic.resolve(false),
            RuntimeExecutionMode::Streaming
        );
        assert_eq!(
            RuntimeExecutionMode::Streaming.resolve(true),
            RuntimeExecutionMode::Streaming
        );
        assert_eq!(RuntimeExecutionMode::Batch.resolve(false), RuntimeExecutionMode::Batch);
    }
}
