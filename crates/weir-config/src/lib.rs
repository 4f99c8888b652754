//! Weir's configuration: the one typed, documented registry of options, with Flink's
//! keys, types and defaults wherever Flink has the option.
//!
//! - [`options`] declares every option ([`ConfigOption`] constants) and lists them in
//!   [`ALL_OPTIONS`] (key, type, default, description) for printing and for detecting
//!   unknown keys.
//! - [`Configuration`] holds string values and reads them typed; it loads
//!   `<conf_dir>/config.yaml` (nested or flat keys) and `-D key=value` overrides.
//! - [`value`] parses values exactly as Flink does: durations (`"10 s"`, `"500 ms"`,
//!   `"100"` = ms), memory sizes (`"1728m"`, `"32kb"`, binary units), booleans, numbers,
//!   enums.
//! - [`memory`] derives the TaskManager memory components from the
//!   `taskmanager.memory.*` options as Flink does, and serialises them as the REST API's
//!   `memoryConfiguration`.
//!
//! Nothing here knows about processes, threads or the network; every other crate reads
//! its settings through this one.
//!
//! ```
//! use weir_config::{options, Configuration};
//!
//! let conf = Configuration::load(None, &["taskmanager.numberOfTaskSlots=4".to_string()])?;
//! assert_eq!(conf.get(&options::NUM_TASK_SLOTS)?, 4);
//! assert_eq!(conf.get(&options::REST_PORT)?, 8081);
//! # Ok::<(), weir_config::ConfigError>(())
//! ```

#![warn(missing_docs)]

pub mod configuration;
pub mod error;
pub mod failover;
pub mod memory;
pub mod option;
pub mod options;
pub mod value;
mod yaml;

pub use configuration::{is_sensitive_key, Configuration, ValueOrigin, CONFIG_FILE_NAME, HIDDEN_CONTENT};
pub use error::ConfigError;
pub use failover::FailoverStrategy;
pub use memory::{MemoryConfiguration, TaskExecutorMemory};
pub use option::{ConfigOption, OptionInfo};
pub use options::{find_option, in_key_family, options_markdown, ALL_OPTIONS, KEY_FAMILIES};
pub use value::{
    format_duration, parse_duration, ConfigValue, ExternalizedCheckpointRetention, MemorySize, RestartStrategyType,
    StateBackendType,
};
