//! Limits a job's plan is checked against when it is built, so that a hostile or
//! mistaken job is refused with a clear message instead of exhausting memory or the
//! RPC message size once it runs.
//!
//! The JobManager sets them from the job's configuration
//! (`pipeline.window.max-windows-per-record`, `table.sql.max-statement-size`) before it
//! builds the job; a job it accepted is not checked again where it is rebuilt (a
//! TaskManager builds with [`PlanLimits::default`], which checks nothing).

/// The key of the windows-per-record limit.
pub const MAX_WINDOWS_PER_RECORD_KEY: &str = "pipeline.window.max-windows-per-record";
/// The key of the statement size limit.
pub const MAX_STATEMENT_SIZE_KEY: &str = "table.sql.max-statement-size";

/// The limits of one build; `None` checks nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanLimits {
    /// The most windows one record may belong to.
    pub max_windows_per_record: Option<u64>,
    /// The largest SQL statement or catalog script, in bytes.
    pub max_statement_bytes: Option<u64>,
}

impl PlanLimits {
    /// An error when `windows` (each record's windows under `what`, e.g.
    /// `SlidingEventTimeWindows(8640000000, 1)`) is over the limit, naming the key that
    /// raises it.
    pub fn check_windows_per_record(&self, what: &str, windows: u64) -> Result<(), String> {
        match self.max_windows_per_record {
            Some(max) if windows > max => Err(format!(
                "{what} puts every record into {windows} windows (size / slide), more than the limit of {max}; \
                 use a larger slide, or raise '{MAX_WINDOWS_PER_RECORD_KEY}'"
            )),
            _ => Ok(()),
        }
    }

    /// An error when `text` (`what`: `the SQL statement`, `the catalog script`) is
    /// longer than the limit, naming the key that raises it.
    pub fn check_statement_size(&self, what: &str, text: &str) -> Result<(), String> {
        match self.max_statement_bytes {
            Some(max) if text.len() as u64 > max => Err(format!(
                "{what} is {} bytes, more than the limit of {max} bytes; raise '{MAX_STATEMENT_SIZE_KEY}' \
                 (it must stay well below the 4 MiB RPC message limit)",
                text.len()
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_limits_check_nothing() {
        let none = PlanLimits::default();
        assert!(none.check_windows_per_record("w", u64::MAX).is_ok());
        assert!(none.check_statement_size("s", &"x".repeat(10 << 20)).is_ok());
    }

    #[test]
    fn a_limit_refuses_what_is_over_it_naming_its_key() {
        let limits = PlanLimits {
            max_windows_per_record: Some(10_000),
            max_statement_bytes: Some(10),
        };
        assert!(limits.check_windows_per_record("w", 10_000).is_ok());
        let err = limits
            .check_windows_per_record("HOP(size=[100 d])", 10_001)
            .unwrap_err();
        assert!(
            err.contains("10001 windows") && err.contains(MAX_WINDOWS_PER_RECORD_KEY),
            "{err}"
        );
        assert!(limits.check_statement_size("the SQL statement", "0123456789").is_ok());
        let err = limits
            .check_statement_size("the SQL statement", "0123456789a")
            .unwrap_err();
        assert!(
            err.contains("11 bytes") && err.contains(MAX_STATEMENT_SIZE_KEY),
            "{err}"
        );
    }

    /// A job of one sliding window of `size` every `slide` over `limits`.
    fn sliding_job(limits: PlanLimits, size: std::time::Duration, slide: std::time::Duration) -> Result<(), String> {
        use crate::windowing::assigners::SlidingEventTimeWindows;
        let mut env = crate::StreamExecutionEnvironment::new();
        env.set_plan_limits(limits);
        env.from_collection(vec![1u64, 2, 3])
            .key_by(|v: &u64| *v)
            .window(SlidingEventTimeWindows::of(size, slide))
            .reduce(|a, b| a + b)
            .print();
        env.build_graph("sliding").map(|_| ()).map_err(|e| e.to_string())
    }

    #[test]
    fn a_datastream_sliding_window_over_the_limit_is_refused_when_the_job_is_built() {
        use std::time::Duration;
        let limits = PlanLimits {
            max_windows_per_record: Some(10_000),
            max_statement_bytes: None,
        };
        let day = Duration::from_secs(86_400);
        let err = sliding_job(limits, day, Duration::from_millis(10)).unwrap_err();
        assert!(
            err.contains("8640000 windows") && err.contains(MAX_WINDOWS_PER_RECORD_KEY),
            "{err}"
        );
        sliding_job(limits, Duration::from_secs(60), Duration::from_secs(1)).unwrap();
        sliding_job(PlanLimits::default(), day, Duration::from_millis(10)).unwrap();
    }
}
