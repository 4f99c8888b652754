//! The one error type of the configuration crate.
//!
//! Every variant names what the user has to fix: the key, the offending value, the file
//! it came from (when it came from a file) and, for the memory derivation, every number
//! that went into the failed sum.

use std::path::PathBuf;

use thiserror::Error;
use weir_core::excerpt::excerpt;

use crate::value::MemorySize;

/// What went wrong while loading, reading or interpreting the configuration.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ConfigError {
    /// A value does not parse as the option's type. Built with
    /// [`ConfigError::invalid_value`], which keeps both texts bounded.
    #[error("Could not parse value '{value}' for key '{key}'{origin} (expected {expected}): {reason}")]
    InvalidValue {
        /// The option's key.
        key: String,
        /// The value as configured, or an excerpt of it (`weir_core::excerpt`) when it
        /// is long.
        value: String,
        /// The option's type name (`Duration`, `MemorySize`, `Integer`, …).
        expected: &'static str,
        /// Why it does not parse (Flink's wording where Flink has one); cut to an
        /// excerpt when the value was long, since the reason may quote it.
        reason: String,
        /// Where the value came from: `" (from <file>)"`, `" (from -D)"` or empty.
        origin: String,
    },
    /// A value parses but is outside what the option allows (a negative attempt count, a
    /// fraction of 1 or more, …).
    #[error("Invalid value '{value}' for key '{key}': {message}")]
    OutOfRange {
        /// The option's key.
        key: String,
        /// The value in effect.
        value: String,
        /// What the option requires.
        message: String,
    },
    /// An option without a default was read but is not set.
    #[error("No value is configured for key '{key}' and it has no default")]
    MissingValue {
        /// The option's key.
        key: String,
    },
    /// The configuration directory given does not exist or is not a directory.
    #[error("The given configuration directory '{path}' does not describe an existing directory")]
    NotADirectory {
        /// The directory given.
        path: PathBuf,
    },
    /// The configuration file exists but could not be read.
    #[error("Could not read configuration file {path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// The configuration file is not valid YAML or its top level is not a map.
    #[error("Could not parse configuration file {path}: {message}")]
    Yaml {
        /// The file.
        path: PathBuf,
        /// The YAML parser's message.
        message: String,
    },
    /// An entry of the configuration file has a shape Weir does not accept: a list, a
    /// null or tagged value, a non-scalar key, or a key given twice.
    #[error("Invalid entry '{key}' in configuration file {path}: {message}")]
    InvalidEntry {
        /// The file.
        path: PathBuf,
        /// The (flattened) key.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// A `-D` dynamic property without `=` or with an empty key.
    #[error("Invalid dynamic property '{entry}': expected key=value")]
    MalformedDynamicProperty {
        /// The entry as given.
        entry: String,
    },
    /// The TaskManager memory components other than task heap exceed total Flink memory
    /// (Flink's `IllegalConfigurationException` text, every number shown).
    #[error(
        "Sum of configured Framework Heap Memory ({}), Framework Off-Heap Memory ({}), Task Off-Heap Memory ({}), \
         Managed Memory ({}) and Network Memory ({}) exceed configured Total Flink Memory ({}).",
        .framework_heap.to_human_readable(),
        .framework_off_heap.to_human_readable(),
        .task_off_heap.to_human_readable(),
        .managed.to_human_readable(),
        .network.to_human_readable(),
        .total_flink.to_human_readable()
    )]
    NegativeTaskHeap {
        /// `taskmanager.memory.framework.heap.size`.
        framework_heap: MemorySize,
        /// `taskmanager.memory.framework.off-heap.size`.
        framework_off_heap: MemorySize,
        /// `taskmanager.memory.task.off-heap.size`.
        task_off_heap: MemorySize,
        /// Managed memory, configured or derived.
        managed: MemorySize,
        /// Network memory, derived.
        network: MemorySize,
        /// Total Flink memory, configured or derived.
        total_flink: MemorySize,
    },
    /// A job's configuration names a key Weir does not know (a typo would otherwise
    /// silently give the default).
    #[error("Unknown configuration key '{key}': Weir has no option of that name")]
    UnknownKey {
        /// The key as given.
        key: String,
    },
    /// Any other inconsistent configuration (Flink's `IllegalConfigurationException`).
    #[error("{0}")]
    IllegalConfiguration(String),
}

impl ConfigError {
    /// [`ConfigError::InvalidValue`] for `value` of `key`, quoting at most an excerpt of
    /// the value, and of `reason` when the value is too long to quote whole (a reason
    /// quotes the value or a part of it): a megabyte-long `-D` value gives an error of a
    /// few hundred bytes that still says how long the value was.
    pub fn invalid_value(
        key: impl Into<String>,
        value: &str,
        expected: &'static str,
        reason: String,
        origin: String,
    ) -> Self {
        let quoted = excerpt(value);
        let reason = if quoted.len() == value.len() {
            reason
        } else {
            excerpt(&reason)
        };
        ConfigError::InvalidValue {
            key: key.into(),
            value: quoted,
            expected,
            reason,
            origin,
        }
    }
}
