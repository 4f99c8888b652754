//! The process behind the REST API: `GET /jobmanager/environment` (Flink's
//! `EnvironmentInfo`) and the log lists of `GET /jobmanager/logs` and
//! `GET /taskmanagers/:tmid/logs` (Flink's `LogListInfo`).
//!
//! A Weir process has no JVM; its `jvm` part describes the Weir binary instead:
//! `version` is `Weir <version> (<os>, <n> processors)`, `arch` the CPU architecture
//! (`x86_64`), `options` the process's command-line arguments, and `classpath` the
//! path of the binary. Environment variables are listed with their values, except
//! that a variable whose name contains one of the words Flink treats as sensitive in
//! configuration keys (`password`, `secret`, `token`, `apikey`, …) is answered with
//! Flink's mask `******`.

use serde::Serialize;

use weir_core::sensitive::is_sensitive_key;
pub use weir_core::sensitive::HIDDEN_CONTENT;

/// The answer of `/jobmanager/environment`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvironmentInfo {
    /// The process's environment variables, sensitive values masked.
    pub environment: Vec<EnvironmentVariable>,
    /// The runtime (for Weir: the binary).
    pub jvm: JvmInfo,
    /// Where the code comes from (for Weir: the binary's path).
    pub classpath: Vec<String>,
}

/// One environment variable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvironmentVariable {
    /// Its name.
    pub key: String,
    /// Its value, or [`HIDDEN_CONTENT`].
    pub value: String,
}

/// Flink's `jvm` part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JvmInfo {
    /// What runs: `Weir <version> (<os>, <n> processors)`.
    pub version: String,
    /// The CPU architecture.
    pub arch: String,
    /// The command-line arguments.
    pub options: Vec<String>,
}

impl EnvironmentInfo {
    /// The environment of this process, variables sorted by name.
    pub fn of_this_process() -> Self {
        let processors = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::new(
            std::env::vars_os().map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned())),
            JvmInfo {
                version: format!(
                    "Weir {} ({}, {processors} processors)",
                    env!("CARGO_PKG_VERSION"),
                    std::env::consts::OS
                ),
                arch: std::env::consts::ARCH.to_string(),
                options: std::env::args_os()
                    .skip(1)
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect(),
            },
            std::env::current_exe()
                .map(|p| vec![p.display().to_string()])
                .unwrap_or_default(),
        )
    }

    /// The answer for these variables (masked where sensitive, sorted by name).
    pub fn new(vars: impl IntoIterator<Item = (String, String)>, jvm: JvmInfo, classpath: Vec<String>) -> Self {
        let mut environment: Vec<EnvironmentVariable> = vars
            .into_iter()
            .map(|(key, value)| {
                let value = if is_sensitive_key(&key) {
                    HIDDEN_CONTENT.to_string()
                } else {
                    value
                };
                EnvironmentVariable { key, value }
            })
            .collect();
        environment.sort_by(|a, b| a.key.cmp(&b.key));
        Self {
            environment,
            jvm,
            classpath,
        }
    }
}

/// The answer of a log list endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LogListInfo {
    /// The log files.
    pub logs: Vec<LogInfo>,
}

/// One log file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogInfo {
    /// The file name.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its last modification, ms since the epoch.
    pub mtime: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_and_the_rest_kept_in_name_order() {
        let env = EnvironmentInfo::new(
            [
                ("PATH".to_string(), "/bin".to_string()),
                ("AWS_SECRET_ACCESS_KEY".to_string(), "abc".to_string()),
                ("GITHUB_TOKEN".to_string(), "t".to_string()),
                ("DB_PASSWORD".to_string(), "p".to_string()),
            ],
            JvmInfo {
                version: "Weir".into(),
                arch: "x86_64".into(),
                options: vec![],
            },
            vec![],
        );
        let got: Vec<(&str, &str)> = env
            .environment
            .iter()
            .map(|v| (v.key.as_str(), v.value.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("AWS_SECRET_ACCESS_KEY", HIDDEN_CONTENT),
                ("DB_PASSWORD", HIDDEN_CONTENT),
                ("GITHUB_TOKEN", HIDDEN_CONTENT),
                ("PATH", "/bin"),
            ]
        );
    }

    #[test]
    fn this_process_is_described_in_flinks_shape() {
        let v = serde_json::to_value(EnvironmentInfo::of_this_process()).expect("serialises");
        let keys: Vec<&str> = v
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(keys, vec!["classpath", "environment", "jvm"]);
        assert!(v["jvm"]["version"].as_str().is_some_and(|s| s.starts_with("Weir ")));
        assert!(v["jvm"]["arch"].is_string() && v["jvm"]["options"].is_array());
        assert!(v["environment"]
            .as_array()
            .is_some_and(|e| e.iter().all(|x| x["key"].is_string() && x["value"].is_string())));
    }
}
