//! [`Configuration`]: the string map of settings, its typed reads, and loading it from
//! `<conf_dir>/config.yaml` plus `-D key=value` overrides.
//!
//! Invariants:
//! - values are stored as strings exactly as configured; a typed read parses on every
//!   call, so a value is never interpreted in two ways;
//! - a `-D` entry overrides the file; a later `-D` entry overrides an earlier one;
//! - unknown keys are kept (Flink ignores them; jobs and plugins may read them) and are
//!   listed by [`Configuration::unknown_keys`] so that the binary can warn;
//! - [`Configuration::load`] validates every known key it loaded, so a bad value fails at
//!   start-up with its key, value and file, not later in the middle of a job.
//!
//! The file is standard YAML (Flink 2's `config.yaml`). Keys may be nested
//! (`taskmanager:\n  numberOfTaskSlots: 2`) or flat (`taskmanager.numberOfTaskSlots: 2`);
//! nested maps are flattened with `.`. Values must be scalars. Departure from Flink:
//! Flink stores a list value as its YAML text; Weir has no list-typed option yet and
//! rejects lists, as well as null values and a key given twice (flat and nested).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_yaml::Value;

use crate::error::ConfigError;
use crate::option::ConfigOption;
use crate::options::{find_option, in_key_family, ALL_OPTIONS, CLUSTER_DIR};
use crate::value::ConfigValue;

pub use weir_core::sensitive::{is_sensitive_key, HIDDEN_CONTENT};

/// The name of the configuration file inside the configuration directory.
pub const CONFIG_FILE_NAME: &str = "config.yaml";

/// Where a configured value came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueOrigin {
    /// A configuration file.
    File(PathBuf),
    /// A `-D key=value` dynamic property.
    DynamicProperty,
    /// Set by code ([`Configuration::set`], [`Configuration::set_string`]).
    Programmatic,
}

impl fmt::Display for ValueOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueOrigin::File(path) => write!(f, "{}", path.display()),
            ValueOrigin::DynamicProperty => f.write_str("-D"),
            ValueOrigin::Programmatic => f.write_str("code"),
        }
    }
}

/// A set of configured options: string keys to string values, with typed reads through
/// [`ConfigOption`]s.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Configuration {
    values: BTreeMap<String, String>,
    origins: BTreeMap<String, ValueOrigin>,
}

impl Configuration {
    /// An empty configuration: every option reads as its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// A configuration holding `map`'s entries (e.g. received from another process).
    pub fn from_map(map: BTreeMap<String, String>) -> Self {
        let origins = map.keys().map(|k| (k.clone(), ValueOrigin::Programmatic)).collect();
        Configuration { values: map, origins }
    }

    /// Loads `<conf_dir>/config.yaml` if `conf_dir` is given and the file exists, then
    /// applies the `-D` entries (`"key=value"`), then validates every known key.
    ///
    /// A `conf_dir` that is not an existing directory is an error (a typo should not
    /// silently give the defaults); a directory without `config.yaml` is fine.
    pub fn load(conf_dir: Option<&Path>, dynamic: &[String]) -> Result<Configuration, ConfigError> {
        let mut conf = Configuration::new();
        if let Some(dir) = conf_dir {
            if !dir.is_dir() {
                return Err(ConfigError::NotADirectory {
                    path: dir.to_path_buf(),
                });
            }
            let file = dir.join(CONFIG_FILE_NAME);
            if file.is_file() {
                conf.merge_yaml_file(&file)?;
            }
        }
        conf.apply_dynamic_properties(dynamic)?;
        conf.validate()?;
        Ok(conf)
    }

    /// Reads a YAML file and adds its flattened entries, overriding existing keys.
    pub fn merge_yaml_file(&mut self, path: &Path) -> Result<(), ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        self.merge_yaml_str(&text, path)
    }

    /// Parses YAML text (attributed to `path` in errors and origins) and adds its
    /// flattened entries, overriding existing keys.
    pub fn merge_yaml_str(&mut self, text: &str, path: &Path) -> Result<(), ConfigError> {
        let entries = flatten_yaml(text, path)?;
        for (key, value) in entries {
            self.origins.insert(key.clone(), ValueOrigin::File(path.to_path_buf()));
            self.values.insert(key, value);
        }
        Ok(())
    }

    /// Applies `-D` entries of the form `key=value` (split at the first `=`; key and
    /// value trimmed), later entries overriding earlier ones and the file.
    pub fn apply_dynamic_properties(&mut self, dynamic: &[String]) -> Result<(), ConfigError> {
        for entry in dynamic {
            let (key, value) = entry
                .split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| ConfigError::MalformedDynamicProperty { entry: entry.clone() })?;
            self.values.insert(key.to_string(), value.to_string());
            self.origins.insert(key.to_string(), ValueOrigin::DynamicProperty);
        }
        Ok(())
    }

    /// The value of `option`: the configured value parsed as `T`, else the default, else
    /// `None` for `Option<_>` options. A configured value that does not parse is an
    /// error naming key, value, expected type and origin.
    pub fn get<T: ConfigValue>(&self, option: &ConfigOption<T>) -> Result<T, ConfigError> {
        if let Some((key, value)) = self.configured_entry(option) {
            return T::parse_config_value(value).map_err(|reason| {
                ConfigError::invalid_value(key, value, T::TYPE_NAME, reason, self.origin_suffix(key))
            });
        }
        match option.default_text() {
            Some(default) => T::parse_config_value(default).map_err(|reason| {
                ConfigError::invalid_value(
                    option.key(),
                    default,
                    T::TYPE_NAME,
                    reason,
                    " (the registry default)".to_string(),
                )
            }),
            None => T::when_unset().ok_or_else(|| ConfigError::MissingValue {
                key: option.key().to_string(),
            }),
        }
    }

    /// The key under which `option` is configured and its raw value: the main key if
    /// set, else the first deprecated key that is set.
    fn configured_entry<T>(&self, option: &ConfigOption<T>) -> Option<(&'static str, &String)> {
        std::iter::once(option.key())
            .chain(option.deprecated_keys().iter().copied())
            .find_map(|key| self.values.get(key).map(|value| (key, value)))
    }

    /// Sets `option` to `value` (stored in its text form, under the main key); `None`
    /// for an `Option<_>` option removes the key.
    pub fn set<T: ConfigValue>(&mut self, option: &ConfigOption<T>, value: T) -> &mut Self {
        match value.to_config_string() {
            Some(text) => {
                self.values.insert(option.key().to_string(), text);
                self.origins.insert(option.key().to_string(), ValueOrigin::Programmatic);
            }
            None => {
                self.remove(option.key());
            }
        }
        self
    }

    /// Sets a raw `key` to `value`, known key or not.
    pub fn set_string(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        let key = key.into();
        self.origins.insert(key.clone(), ValueOrigin::Programmatic);
        self.values.insert(key, value.into());
        self
    }

    /// The raw configured value of `key`, if set (defaults are not included).
    pub fn get_string(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        self.origins.remove(key);
        self.values.remove(key)
    }

    /// Whether `option` is explicitly configured under its key or a deprecated key (a
    /// default does not count), as Flink's `Configuration.contains`.
    pub fn contains<T>(&self, option: &ConfigOption<T>) -> bool {
        self.configured_entry(option).is_some()
    }

    /// Whether the raw `key` is configured.
    pub fn contains_key(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    /// Where the value of `key` came from, if it is set.
    pub fn origin(&self, key: &str) -> Option<&ValueOrigin> {
        self.origins.get(key)
    }

    /// The configured entries, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Number of configured entries.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether nothing is configured.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The configured entries as a map (what Flink's REST `/jobmanager/config` and
    /// `/taskmanagers/:id` config views show: explicit entries, no defaults).
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.values.clone()
    }

    /// [`Configuration::to_map`] with the value of every sensitive key (see
    /// [`is_sensitive_key`]) replaced by [`HIDDEN_CONTENT`], as Flink shows its
    /// configuration in the REST API and the logs.
    pub fn to_map_hiding_secrets(&self) -> BTreeMap<String, String> {
        let mut map = self.values.clone();
        for (key, value) in map.iter_mut() {
            if is_sensitive_key(key) {
                *value = HIDDEN_CONTENT.to_string();
            }
        }
        map
    }

    /// The configured entries plus the default of every registered option that is not
    /// set (under its key or a deprecated key): the effective settings, for printing.
    pub fn to_map_with_defaults(&self) -> BTreeMap<String, String> {
        let mut map = self.values.clone();
        for info in ALL_OPTIONS {
            if info.deprecated_keys.iter().any(|old| self.values.contains_key(*old)) {
                continue;
            }
            if let Some(default) = info.default {
                map.entry(info.key.to_string()).or_insert_with(|| default.to_string());
            }
        }
        map
    }

    /// Adds every entry of `other`, overriding existing keys (e.g. job settings over
    /// cluster settings).
    pub fn extend_from(&mut self, other: &Configuration) {
        for (key, value) in &other.values {
            self.values.insert(key.clone(), value.clone());
            let origin = other.origins.get(key).cloned().unwrap_or(ValueOrigin::Programmatic);
            self.origins.insert(key.clone(), origin);
        }
    }

    /// Configured keys that are not in the registry, sorted. Flink ignores unknown keys;
    /// the binary should warn about them (a typo in a key silently gives the default).
    pub fn unknown_keys(&self) -> Vec<&str> {
        self.values
            .keys()
            .filter(|key| find_option(key).is_none() && !in_key_family(key))
            .map(String::as_str)
            .collect()
    }

    /// Checks that every configured known key parses as its option's type; the first
    /// failure (in key order) is returned.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (key, value) in &self.values {
            if let Some(info) = find_option(key) {
                (info.check)(value).map_err(|reason| {
                    ConfigError::invalid_value(key.as_str(), value, info.type_name, reason, self.origin_suffix(key))
                })?;
            }
        }
        Ok(())
    }

    /// `cluster.dir`, or `$HOME/.weir/cluster` when unset.
    pub fn cluster_dir(&self) -> Result<PathBuf, ConfigError> {
        if let Some(dir) = self.get(&CLUSTER_DIR)? {
            return Ok(PathBuf::from(dir));
        }
        std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(|home| PathBuf::from(home).join(".weir").join("cluster"))
            .ok_or_else(|| {
                ConfigError::IllegalConfiguration(format!(
                    "'{}' is not set and $HOME is not set to derive its default",
                    CLUSTER_DIR.key()
                ))
            })
    }

    fn origin_suffix(&self, key: &str) -> String {
        match self.origins.get(key) {
            Some(ValueOrigin::File(path)) => format!(" (from {})", path.display()),
            Some(ValueOrigin::DynamicProperty) => " (from -D)".to_string(),
            Some(ValueOrigin::Programmatic) | None => String::new(),
        }
    }
}

/// Parses YAML text into flattened `key → value` entries.
fn flatten_yaml(text: &str, path: &Path) -> Result<Vec<(String, String)>, ConfigError> {
    let root: Value = serde_yaml::from_str(text).map_err(|e| ConfigError::Yaml {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut out = BTreeMap::new();
    match root {
        Value::Null => {}
        Value::Mapping(map) => flatten_mapping(&map, "", path, &mut out)?,
        other => {
            return Err(ConfigError::Yaml {
                path: path.to_path_buf(),
                message: format!("the top level must be a map of keys to values, found {}", kind(&other)),
            })
        }
    }
    Ok(out.into_iter().collect())
}

fn flatten_mapping(
    map: &serde_yaml::Mapping,
    prefix: &str,
    path: &Path,
    out: &mut BTreeMap<String, String>,
) -> Result<(), ConfigError> {
    for (key, value) in map {
        let key_text = scalar_text(key).ok_or_else(|| ConfigError::InvalidEntry {
            path: path.to_path_buf(),
            key: format!("{prefix}{}", kind(key)),
            message: "keys must be strings, numbers or booleans".to_string(),
        })?;
        let full_key = format!("{prefix}{key_text}");
        let entry_error = |message: String| ConfigError::InvalidEntry {
            path: path.to_path_buf(),
            key: full_key.clone(),
            message,
        };
        match value {
            Value::Mapping(inner) => flatten_mapping(inner, &format!("{full_key}."), path, out)?,
            Value::Sequence(_) => {
                return Err(entry_error(
                    "list values are not supported; give a single value".to_string(),
                ))
            }
            Value::Null => return Err(entry_error("the key has no value".to_string())),
            other => {
                let text =
                    scalar_text(other).ok_or_else(|| entry_error(format!("unsupported value: {}", kind(other))))?;
                if out.insert(full_key.clone(), text).is_some() {
                    return Err(entry_error("the key is given more than once".to_string()));
                }
            }
        }
    }
    Ok(())
}

/// The text of a scalar YAML value; `None` for anything else.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a map",
        Value::Tagged(_) => "a tagged value",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::*;
    use crate::value::{MemorySize, RestartStrategyType};
    use std::time::Duration;

    fn yaml(text: &str) -> Result<Configuration, ConfigError> {
        let mut conf = Configuration::new();
        conf.merge_yaml_str(text, Path::new("/conf/config.yaml"))?;
        Ok(conf)
    }

    #[test]
    fn unset_options_read_as_their_defaults() {
        let conf = Configuration::new();
        assert_eq!(conf.get(&NUM_TASK_SLOTS), Ok(1));
        assert_eq!(conf.get(&REST_ADDRESS), Ok("127.0.0.1".to_string()));
        assert_eq!(conf.get(&REST_PORT), Ok(8081));
        assert_eq!(conf.get(&HEARTBEAT_TIMEOUT), Ok(Duration::from_secs(50)));
        assert_eq!(conf.get(&SLOT_REQUEST_TIMEOUT), Ok(Duration::from_secs(300)));
        assert_eq!(conf.get(&BUFFER_TIMEOUT), Ok(Duration::from_millis(100)));
        assert_eq!(conf.get(&MAX_PARALLELISM), Ok(-1));
        assert_eq!(conf.get(&CHAINING_ENABLED), Ok(true));
        assert_eq!(conf.get(&MEMORY_SEGMENT_SIZE), Ok(MemorySize(32 * 1024)));
        assert_eq!(conf.get(&CHECKPOINTING_INTERVAL), Ok(None));
        assert_eq!(conf.get(&RESTART_STRATEGY_TYPE), Ok(None));
        assert_eq!(
            conf.get(&RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS_BEFORE_RESET_BACKOFF),
            Ok(i32::MAX)
        );
        assert_eq!(conf.get(&TOTAL_PROCESS_MEMORY), Ok(MemorySize::from_mebibytes(1728)));
        assert_eq!(conf.get(&MANAGED_MEMORY_FRACTION), Ok(0.4f32));
        assert!(!conf.contains(&NUM_TASK_SLOTS));
    }

    #[test]
    fn nested_and_flat_yaml_keys_are_flattened_alike() {
        let conf = yaml(
            "taskmanager:\n  numberOfTaskSlots: 4\n  memory:\n    process.size: 2g\n\
             rest.port: 9091\nexecution.checkpointing.interval: 10 s\n\
             pipeline:\n  operator-chaining:\n    enabled: false\n\
             taskmanager.memory.managed.fraction: 0.25\n",
        )
        .unwrap();
        assert_eq!(conf.get(&NUM_TASK_SLOTS), Ok(4));
        assert_eq!(conf.get(&TOTAL_PROCESS_MEMORY), Ok(MemorySize(2 << 30)));
        assert_eq!(conf.get(&REST_PORT), Ok(9091));
        assert_eq!(conf.get(&CHECKPOINTING_INTERVAL), Ok(Some(Duration::from_secs(10))));
        assert_eq!(conf.get(&CHAINING_ENABLED), Ok(false));
        assert_eq!(conf.get(&MANAGED_MEMORY_FRACTION), Ok(0.25f32));
        assert_eq!(conf.get_string("taskmanager.numberOfTaskSlots"), Some("4"));
        assert!(conf.contains(&NUM_TASK_SLOTS));
        assert_eq!(
            conf.origin("rest.port"),
            Some(&ValueOrigin::File(PathBuf::from("/conf/config.yaml")))
        );
    }

    #[test]
    fn an_empty_or_comment_only_file_gives_an_empty_configuration() {
        assert!(yaml("").unwrap().is_empty());
        assert!(yaml("# nothing here\n").unwrap().is_empty());
    }

    #[test]
    fn lists_nulls_duplicates_and_non_maps_are_rejected_with_path_and_key() {
        let err = yaml("a:\n  b: [1, 2]\n").unwrap_err();
        assert_eq!(
            err,
            ConfigError::InvalidEntry {
                path: PathBuf::from("/conf/config.yaml"),
                key: "a.b".to_string(),
                message: "list values are not supported; give a single value".to_string(),
            }
        );
        assert!(err.to_string().contains("/conf/config.yaml"), "{err}");
        let err = yaml("rest.port:\n").unwrap_err();
        assert!(
            matches!(&err, ConfigError::InvalidEntry { key, .. } if key == "rest.port"),
            "{err:?}"
        );
        let err = yaml("rest.port: 1\nrest:\n  port: 2\n").unwrap_err();
        assert!(err.to_string().contains("more than once"), "{err}");
        let err = yaml("- 1\n- 2\n").unwrap_err();
        assert!(matches!(err, ConfigError::Yaml { .. }), "{err:?}");
        let err = yaml("a: [unclosed\n").unwrap_err();
        assert!(matches!(err, ConfigError::Yaml { .. }), "{err:?}");
    }

    #[test]
    fn a_bad_value_names_key_value_type_and_file() {
        let conf = yaml("heartbeat.timeout: soon\n").unwrap();
        let err = conf.get(&HEARTBEAT_TIMEOUT).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("Could not parse value 'soon' for key 'heartbeat.timeout' (from /conf/config.yaml) (expected Duration): text does not start with a number"), "{text}");
        assert_eq!(conf.validate(), Err(err));
    }

    #[test]
    fn dynamic_properties_override_the_file_and_each_other() {
        let mut conf = yaml("rest.port: 9091\nparallelism.default: 3\n").unwrap();
        conf.apply_dynamic_properties(&[
            "rest.port=9092".to_string(),
            " parallelism.default = 5 ".to_string(),
            "parallelism.default=6".to_string(),
            "my.job.flag=a=b".to_string(),
        ])
        .unwrap();
        assert_eq!(conf.get(&REST_PORT), Ok(9092));
        assert_eq!(conf.get(&PARALLELISM_DEFAULT), Ok(6));
        assert_eq!(conf.get_string("my.job.flag"), Some("a=b"));
        assert_eq!(conf.origin("rest.port"), Some(&ValueOrigin::DynamicProperty));
    }

    #[test]
    fn malformed_dynamic_properties_are_errors() {
        let mut conf = Configuration::new();
        for bad in ["rest.port", "=5", "  = 5"] {
            assert_eq!(
                conf.apply_dynamic_properties(&[bad.to_string()]),
                Err(ConfigError::MalformedDynamicProperty { entry: bad.to_string() })
            );
        }
    }

    #[test]
    fn a_bad_dynamic_value_says_it_came_from_dash_d() {
        let err = Configuration::load(None, &["taskmanager.numberOfTaskSlots=two".to_string()]).unwrap_err();
        assert!(err.to_string().contains("(from -D) (expected Integer)"), "{err}");
    }

    #[test]
    fn load_reads_config_yaml_then_applies_dynamic_properties() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.yaml"),
            "taskmanager:\n  numberOfTaskSlots: 2\nrestart-strategy.type: fixed-delay\nmy.custom.key: x\n",
        )
        .unwrap();
        let conf = Configuration::load(Some(dir.path()), &["rest.port=18081".to_string()]).unwrap();
        assert_eq!(conf.get(&NUM_TASK_SLOTS), Ok(2));
        assert_eq!(conf.get(&REST_PORT), Ok(18081));
        assert_eq!(
            conf.get(&RESTART_STRATEGY_TYPE),
            Ok(Some(RestartStrategyType::FixedDelay))
        );
        assert_eq!(conf.unknown_keys(), vec!["my.custom.key"]);
    }

    #[test]
    fn keys_of_a_named_metric_reporter_are_known() {
        let conf = Configuration::load(
            None,
            &[
                "metrics.reporter.prom.port=9250".to_string(),
                "metrics.reporter.prom.factory.class=org.apache.flink.metrics.prometheus.PrometheusReporterFactory"
                    .to_string(),
                "metrics.reporters=prom".to_string(),
                "metrics.reporter-typo=1".to_string(),
            ],
        )
        .unwrap();
        assert_eq!(conf.unknown_keys(), vec!["metrics.reporter-typo"]);
        assert_eq!(conf.len(), 4);
    }

    #[test]
    fn load_without_a_file_gives_defaults_but_a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let conf = Configuration::load(Some(dir.path()), &[]).unwrap();
        assert!(conf.is_empty());
        assert!(Configuration::load(None, &[]).unwrap().is_empty());
        let missing = dir.path().join("nope");
        assert_eq!(
            Configuration::load(Some(&missing), &[]),
            Err(ConfigError::NotADirectory { path: missing.clone() })
        );
    }

    #[test]
    fn load_fails_on_a_bad_value_in_the_file_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.yaml");
        std::fs::write(&file, "taskmanager.memory.process.size: 1.5g\n").unwrap();
        let err = Configuration::load(Some(dir.path()), &[]).unwrap_err();
        match &err {
            ConfigError::InvalidValue {
                key,
                value,
                expected,
                origin,
                ..
            } => {
                assert_eq!(key, "taskmanager.memory.process.size");
                assert_eq!(value, "1.5g");
                assert_eq!(*expected, "MemorySize");
                assert_eq!(origin, &format!(" (from {})", file.display()));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn unknown_restart_strategy_lists_the_accepted_values() {
        let conf = yaml("restart-strategy.type: sometimes\n").unwrap();
        let err = conf.get(&RESTART_STRATEGY_TYPE).unwrap_err().to_string();
        assert!(
            err.contains("sometimes is an unknown value of RestartStrategyType"),
            "{err}"
        );
        assert!(err.contains("exponential-delay, exponentialdelay"), "{err}");
    }

    #[test]
    fn set_stores_the_text_form_and_none_removes() {
        let mut conf = Configuration::new();
        conf.set(&HEARTBEAT_INTERVAL, Duration::from_secs(3))
            .set(&MEMORY_SEGMENT_SIZE, MemorySize(64 * 1024))
            .set(&CHECKPOINTING_INTERVAL, Some(Duration::from_millis(500)));
        assert_eq!(conf.get_string("heartbeat.interval"), Some("3 s"));
        assert_eq!(conf.get_string("taskmanager.memory.segment-size"), Some("64 kb"));
        assert_eq!(conf.get(&CHECKPOINTING_INTERVAL), Ok(Some(Duration::from_millis(500))));
        conf.set(&CHECKPOINTING_INTERVAL, None);
        assert!(!conf.contains(&CHECKPOINTING_INTERVAL));
        assert_eq!(conf.remove("heartbeat.interval"), Some("3 s".to_string()));
        assert_eq!(conf.get(&HEARTBEAT_INTERVAL), Ok(Duration::from_secs(10)));
    }

    #[test]
    fn maps_iteration_and_merging() {
        let mut conf = Configuration::new();
        conf.set_string("b.key", "2").set_string("a.key", "1");
        assert_eq!(conf.iter().collect::<Vec<_>>(), vec![("a.key", "1"), ("b.key", "2")]);
        let map = conf.to_map();
        assert_eq!(map.len(), 2);
        let with_defaults = conf.to_map_with_defaults();
        assert_eq!(with_defaults.get("rest.port").map(String::as_str), Some("8081"));
        assert_eq!(with_defaults.get("a.key").map(String::as_str), Some("1"));
        assert!(!with_defaults.contains_key("execution.checkpointing.interval"));

        let mut job = Configuration::from_map(map);
        let mut cluster = Configuration::new();
        cluster.set_string("a.key", "0").set_string("c.key", "3");
        job.extend_from(&cluster);
        assert_eq!(job.get_string("a.key"), Some("0"));
        assert_eq!(job.get_string("c.key"), Some("3"));
        assert!(job.contains_key("b.key"));
    }

    #[test]
    fn cluster_dir_defaults_under_home_unless_set() {
        let mut conf = Configuration::new();
        conf.set(&CLUSTER_DIR, Some("/var/weir".to_string()));
        assert_eq!(conf.cluster_dir(), Ok(PathBuf::from("/var/weir")));
        if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            assert_eq!(
                Configuration::new().cluster_dir(),
                Ok(PathBuf::from(home).join(".weir/cluster"))
            );
        }
    }

    #[test]
    fn missing_value_is_reported_for_a_required_option_without_default() {
        const REQUIRED: ConfigOption<u32> = ConfigOption::new("weir.test.required", None, "test");
        assert_eq!(
            Configuration::new().get(&REQUIRED),
            Err(ConfigError::MissingValue {
                key: "weir.test.required".to_string()
            })
        );
    }

    #[test]
    fn checkpoint_options_default_to_flinks_values() {
        use crate::value::ExternalizedCheckpointRetention;
        use weir_core::CheckpointingMode;
        let conf = Configuration::new();
        assert_eq!(conf.get(&CHECKPOINTING_MODE), Ok(CheckpointingMode::ExactlyOnce));
        assert_eq!(conf.get(&CHECKPOINTING_TIMEOUT), Ok(Duration::from_secs(600)));
        assert_eq!(conf.get(&CHECKPOINTING_MIN_PAUSE), Ok(Duration::ZERO));
        assert_eq!(conf.get(&CHECKPOINTING_MAX_CONCURRENT), Ok(1));
        assert_eq!(conf.get(&CHECKPOINTING_TOLERABLE_FAILURES), Ok(0));
        assert_eq!(conf.get(&CHECKPOINTING_NUM_RETAINED), Ok(1));
        assert_eq!(
            conf.get(&CHECKPOINTING_EXTERNALIZED_RETENTION),
            Ok(ExternalizedCheckpointRetention::NoExternalizedCheckpoints)
        );
        assert_eq!(conf.get(&CHECKPOINTS_DIRECTORY), Ok(None));
        assert_eq!(conf.get(&SAVEPOINT_DIRECTORY), Ok(None));
        assert_eq!(
            conf.get(&CHECKPOINTING_DATA_INLINE_THRESHOLD),
            Ok(MemorySize(20 * 1024))
        );
        assert_eq!(conf.get(&CHECKPOINTING_UNALIGNED_ENABLED), Ok(false));
        assert_eq!(conf.get(&CHECKPOINTING_ALIGNED_TIMEOUT), Ok(Duration::ZERO));
        assert_eq!(conf.get(&CHECKPOINTS_HISTORY_SIZE), Ok(10));
    }

    #[test]
    fn secrets_are_hidden_in_the_shown_configuration_and_other_values_are_not() {
        let conf = Configuration::load(
            None,
            &[
                "s3.secret-key=very-secret".to_string(),
                "s3.access-key=AKIA".to_string(),
                "my.api-key=k".to_string(),
                "rest.port=1".to_string(),
            ],
        )
        .unwrap();
        let shown = conf.to_map_hiding_secrets();
        assert_eq!(shown["s3.secret-key"], HIDDEN_CONTENT);
        assert_eq!(shown["my.api-key"], HIDDEN_CONTENT);
        assert_eq!(shown["s3.access-key"], "AKIA");
        assert_eq!(shown["rest.port"], "1");
        assert_eq!(conf.to_map()["s3.secret-key"], "very-secret");
        assert!(is_sensitive_key("S3.SECRET.KEY") && !is_sensitive_key("s3.endpoint"));
    }

    #[test]
    fn checkpoint_enums_parse_case_insensitively() {
        use crate::value::ExternalizedCheckpointRetention;
        use weir_core::CheckpointingMode;
        let conf = yaml(
            "execution.checkpointing.mode: at_least_once\n\
             execution.checkpointing.externalized-checkpoint-retention: retain_on_cancellation\n",
        )
        .unwrap();
        assert_eq!(conf.get(&CHECKPOINTING_MODE), Ok(CheckpointingMode::AtLeastOnce));
        assert_eq!(
            conf.get(&CHECKPOINTING_EXTERNALIZED_RETENTION),
            Ok(ExternalizedCheckpointRetention::RetainOnCancellation)
        );
        let mut conf = Configuration::new();
        conf.set(
            &CHECKPOINTING_EXTERNALIZED_RETENTION,
            ExternalizedCheckpointRetention::DeleteOnCancellation,
        )
        .set(&CHECKPOINTING_MODE, CheckpointingMode::AtLeastOnce);
        assert_eq!(
            conf.get_string("execution.checkpointing.externalized-checkpoint-retention"),
            Some("DELETE_ON_CANCELLATION")
        );
        assert_eq!(conf.get(&CHECKPOINTING_MODE), Ok(CheckpointingMode::AtLeastOnce));
    }

    #[test]
    fn deprecated_checkpoint_keys_are_read_when_the_new_key_is_unset() {
        let conf = yaml(
            "state.checkpoints.num-retained: 3\nstate.checkpoints.dir: /old/chk\n\
             state.savepoints.dir: /old/sp\n",
        )
        .unwrap();
        assert_eq!(conf.get(&CHECKPOINTING_NUM_RETAINED), Ok(3));
        let effective = conf.to_map_with_defaults();
        assert!(!effective.contains_key("execution.checkpointing.num-retained"));
        assert_eq!(conf.get(&CHECKPOINTS_DIRECTORY), Ok(Some("/old/chk".to_string())));
        assert_eq!(conf.get(&SAVEPOINT_DIRECTORY), Ok(Some("/old/sp".to_string())));
        assert!(conf.contains(&CHECKPOINTING_NUM_RETAINED));
        assert!(conf.unknown_keys().is_empty(), "{:?}", conf.unknown_keys());
        assert_eq!(
            find_option("state.checkpoints.dir").map(|o| o.key),
            Some("execution.checkpointing.dir")
        );
    }

    #[test]
    fn the_new_checkpoint_key_wins_over_its_deprecated_key() {
        let conf = yaml("state.checkpoints.num-retained: 3\nexecution.checkpointing.num-retained: 5\n").unwrap();
        assert_eq!(conf.get(&CHECKPOINTING_NUM_RETAINED), Ok(5));
    }

    #[test]
    fn a_bad_checkpoint_value_names_the_key_it_was_configured_under() {
        let conf = yaml(
            "execution.checkpointing.mode: twice
",
        )
        .unwrap();
        let err = conf.get(&CHECKPOINTING_MODE).unwrap_err().to_string();
        assert!(err.contains("'twice' for key 'execution.checkpointing.mode'"), "{err}");
        assert!(err.contains("EXACTLY_ONCE, AT_LEAST_ONCE"), "{err}");
        let conf = yaml(
            "state.checkpoints.num-retained: -1
",
        )
        .unwrap();
        let err = conf.get(&CHECKPOINTING_NUM_RETAINED).unwrap_err();
        assert!(
            matches!(&err, ConfigError::InvalidValue { key, .. } if key == "state.checkpoints.num-retained"),
            "{err:?}"
        );
        assert_eq!(conf.validate(), Err(err));
        let conf = yaml(
            "execution.checkpointing.externalized-checkpoint-retention: KEEP
",
        )
        .unwrap();
        let err = conf.validate().unwrap_err().to_string();
        assert!(
            err.contains("KEEP is an unknown value of ExternalizedCheckpointRetention"),
            "{err}"
        );
    }
}
