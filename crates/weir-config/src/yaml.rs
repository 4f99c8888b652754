//! Reading Flink 2's `config.yaml`: standard YAML whose nested maps flatten to dotted
//! keys. Values must be scalars; lists, nulls and a key given twice (flat and nested)
//! are refused with the key and the file.

use std::collections::BTreeMap;
use std::path::Path;

use serde_yaml::Value;

use crate::error::ConfigError;

/// Parses YAML text into flattened `key → value` entries.
pub(crate) fn flatten_yaml(text: &str, path: &Path) -> Result<Vec<(String, String)>, ConfigError> {
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
