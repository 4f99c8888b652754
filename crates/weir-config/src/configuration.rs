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

use crate::error::ConfigError;
use crate::option::ConfigOption;
use crate::options::{find_option, in_key_family, ALL_OPTIONS, CLUSTER_DIR};
use crate::value::ConfigValue;
use crate::yaml::flatten_yaml;

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

#[cfg(test)]
#[path = "configuration_tests.rs"]
mod tests;
