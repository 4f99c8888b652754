//! `jobmanager.execution.failover-strategy`: how much of a job a task failure restarts.

use crate::value::ConfigValue;
use std::fmt;

/// Flink's failover strategies (`full`, `region`), read case-insensitively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailoverStrategy {
    /// Restart every task of the job.
    Full,
    /// Restart only the pipelined regions the failure touches (Flink's default).
    Region,
}

impl FailoverStrategy {
    /// Flink's name.
    pub const fn flink_name(self) -> &'static str {
        match self {
            FailoverStrategy::Full => "full",
            FailoverStrategy::Region => "region",
        }
    }
}

impl fmt::Display for FailoverStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.flink_name())
    }
}

impl ConfigValue for FailoverStrategy {
    const TYPE_NAME: &'static str = "String";

    fn parse_config_value(text: &str) -> Result<Self, String> {
        match text.trim().to_lowercase().as_str() {
            "full" => Ok(FailoverStrategy::Full),
            "region" => Ok(FailoverStrategy::Region),
            other => Err(format!(
                "Unknown failover strategy: {other}. Accepted values: full, region"
            )),
        }
    }

    fn to_config_string(&self) -> Option<String> {
        Some(self.flink_name().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_strategies_parse_and_others_are_named_in_the_error() {
        assert_eq!(
            FailoverStrategy::parse_config_value(" Region "),
            Ok(FailoverStrategy::Region)
        );
        assert_eq!(FailoverStrategy::parse_config_value("full"), Ok(FailoverStrategy::Full));
        let err = FailoverStrategy::parse_config_value("partial").unwrap_err();
        assert_eq!(err, "Unknown failover strategy: partial. Accepted values: full, region");
    }
}
