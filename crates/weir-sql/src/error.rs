//! The errors of planning and running SQL: what the SQL client prints after `[ERROR]`.

use thiserror::Error;

/// Why a statement could not be parsed, validated, planned or run.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SqlError {
    /// A syntax error: `SQL parse failed. Encountered "<token>" at line L, column C.`
    #[error("SQL parse failed. {0}")]
    Parse(String),
    /// A reference or type error, naming the culprit (Flink's `ValidationException`).
    #[error("SQL validation failed. {0}")]
    Validation(String),
    /// A feature Weir's SQL does not have yet.
    #[error("{0} is not supported yet")]
    Unsupported(String),
    /// A table's options are wrong (Flink's `ValidationException` of a table factory).
    #[error("Unable to create a {role} for reading table '{table}'.\n\n{reason}", role = if *.is_source { "source" } else { "sink" })]
    TableOption {
        /// The table.
        table: String,
        /// Source or sink.
        is_source: bool,
        /// Which options are wrong.
        reason: String,
    },
    /// The plan is valid SQL but the streaming runtime cannot execute it.
    #[error("{0}")]
    Planner(String),
}

impl SqlError {
    /// A validation error.
    pub fn validation(msg: impl Into<String>) -> Self {
        SqlError::Validation(msg.into())
    }

    /// An unsupported feature.
    pub fn unsupported(what: impl Into<String>) -> Self {
        SqlError::Unsupported(what.into())
    }
}

/// Results of the SQL crate.
pub type Result<T> = std::result::Result<T, SqlError>;
