//! Errors of reading reporter options and starting reporters.

/// Why a metric reporter could not be configured or started.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MetricsError {
    /// `metrics.reporter.<name>.factory.class` names a reporter Weir does not have.
    #[error("metrics.reporter.{reporter}.factory.class: unknown reporter factory '{class}'; Weir has {supported}")]
    UnknownFactory {
        /// The reporter's name.
        reporter: String,
        /// The configured class.
        class: String,
        /// The factories Weir has.
        supported: &'static str,
    },
    /// A reporter has options but no factory class.
    #[error("metric reporter '{reporter}' has no metrics.reporter.{reporter}.factory.class")]
    MissingFactory {
        /// The reporter's name.
        reporter: String,
    },
    /// `metrics.reporters` names a reporter that has no options.
    #[error("metrics.reporters lists '{reporter}', but no metrics.reporter.{reporter}.* options configure it")]
    UnconfiguredReporter {
        /// The listed name.
        reporter: String,
    },
    /// A port option that is neither a port nor a range.
    #[error("metrics.reporter.{reporter}.port: '{value}' is not a port or a port range like 9249-9259 ({reason})")]
    InvalidPort {
        /// The reporter's name.
        reporter: String,
        /// The configured value.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A connection bound (`max-connections`, `max-connections-per-peer`) that is not a
    /// whole number of at least 1.
    #[error("metrics.reporter.{reporter}.{option}: '{value}' is not a number of connections of at least 1")]
    InvalidLimit {
        /// The reporter's name.
        reporter: String,
        /// The option (`max-connections`, `max-connections-per-peer`).
        option: &'static str,
        /// The configured value.
        value: String,
    },
    /// No port of the range could be bound.
    #[error("Prometheus reporter '{reporter}': could not bind any port of {range} on {host}: {reason}")]
    Bind {
        /// The reporter's name.
        reporter: String,
        /// The host it tried.
        host: String,
        /// The ports it tried.
        range: String,
        /// The last bind error.
        reason: String,
    },
}
