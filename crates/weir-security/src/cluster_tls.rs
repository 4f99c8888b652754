//! Which internal TLS a cluster that `weir start-cluster` starts (or that a TaskManager
//! joins with `--cluster-dir`) runs with: secure by default where Flink is not.
//!
//! [`InternalTlsSource::choose`] is the whole rule, a plain function of what the
//! configuration says: `security.ssl.internal.enabled: false` set explicitly is
//! plaintext (Flink's behaviour, opted into); any of `security.ssl.internal.cert`,
//! `.key`, `.trust-cert` set is the operator's own material (TLS on, nothing
//! generated); anything else is the cluster's own CA in `cluster.dir` (see
//! `cluster_pki`, feature `cluster-pki`). Processes started by hand without a cluster dir keep Flink's
//! default (off) and are not governed by this module.
//!
//! A certificate is valid for the names peers dial: `localhost`, `127.0.0.1` and the
//! process's configured addresses ([`jobmanager_hosts`], [`taskmanager_hosts`]).

use std::path::Path;
use weir_config::options as o;
use weir_config::{ConfigError, Configuration};

/// The directory under `cluster.dir` holding the cluster's CA and certificates.
pub const TLS_DIR: &str = "tls";

/// Where a started cluster's internal TLS comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InternalTlsSource {
    /// Plaintext: `security.ssl.internal.enabled: false` was set explicitly.
    Off,
    /// The operator's `security.ssl.internal.*` files.
    Configured,
    /// Certificates of the cluster's own CA in `cluster.dir`.
    ClusterCa,
}

impl InternalTlsSource {
    /// The rule of the module doc: `enabled` is `security.ssl.internal.enabled` when set
    /// explicitly, `files_configured` whether any of its files is.
    pub fn choose(enabled: Option<bool>, files_configured: bool) -> InternalTlsSource {
        match (enabled, files_configured) {
            (Some(false), _) => InternalTlsSource::Off,
            (_, true) => InternalTlsSource::Configured,
            (_, false) => InternalTlsSource::ClusterCa,
        }
    }

    /// The source `config` asks for.
    pub fn of(config: &Configuration) -> Result<InternalTlsSource, ConfigError> {
        let enabled = if config.contains(&o::SSL_INTERNAL_ENABLED) {
            Some(config.get(&o::SSL_INTERNAL_ENABLED)?)
        } else {
            None
        };
        let mut files_configured = false;
        for option in [&o::SSL_INTERNAL_CERT, &o::SSL_INTERNAL_KEY, &o::SSL_INTERNAL_TRUST_CERT] {
            files_configured |= config.get(option)?.is_some_and(|v| !v.trim().is_empty());
        }
        Ok(Self::choose(enabled, files_configured))
    }

    /// One line for the operator: what the cluster's internal connections run with.
    pub fn describe(self, cluster_dir: &Path) -> String {
        match self {
            InternalTlsSource::Off => {
                "Internal connections (RPC, data): plaintext (security.ssl.internal.enabled: false).".to_string()
            }
            InternalTlsSource::Configured => {
                "Internal connections (RPC, data): mutual TLS with the configured security.ssl.internal.* files."
                    .to_string()
            }
            InternalTlsSource::ClusterCa => format!(
                "Internal connections (RPC, data): mutual TLS with the cluster CA in {}.",
                cluster_dir.join(TLS_DIR).display()
            ),
        }
    }
}

/// `localhost`, `127.0.0.1` and `configured` (in order, without duplicates, blanks and
/// the wildcard addresses `0.0.0.0` and `::`, which no peer dials).
pub fn san_hosts(configured: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut hosts = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    for host in configured {
        let host = host.trim().trim_start_matches('[').trim_end_matches(']').to_string();
        if host.is_empty() || host == "0.0.0.0" || host == "::" || hosts.contains(&host) {
            continue;
        }
        hosts.push(host);
    }
    hosts
}

/// The names a JobManager's certificate is valid for: `jobmanager.rpc.address` and
/// `jobmanager.bind-host` besides the loopback names.
pub fn jobmanager_hosts(config: &Configuration) -> Result<Vec<String>, ConfigError> {
    let address = config.get(&o::JOBMANAGER_RPC_ADDRESS)?;
    let bind = config.get(&o::JOBMANAGER_BIND_HOST)?;
    Ok(san_hosts(std::iter::once(address).chain(bind)))
}

/// The names a TaskManager's certificate is valid for: `taskmanager.host` and
/// `taskmanager.bind-host` besides the loopback names.
pub fn taskmanager_hosts(config: &Configuration) -> Result<Vec<String>, ConfigError> {
    let host = config.get(&o::TASKMANAGER_HOST)?;
    let bind = config.get(&o::TASKMANAGER_BIND_HOST)?;
    Ok(san_hosts(std::iter::once(host).chain(bind)))
}

/// The `key=value` entries turning internal TLS on with `cert`, `key` and the CA
/// certificate `trust`.
pub fn internal_ssl_entries(cert: &Path, key: &Path, trust: &Path) -> Vec<String> {
    vec![
        format!("{}=true", o::SSL_INTERNAL_ENABLED.key()),
        format!("{}={}", o::SSL_INTERNAL_CERT.key(), cert.display()),
        format!("{}={}", o::SSL_INTERNAL_KEY.key(), key.display()),
        format!("{}={}", o::SSL_INTERNAL_TRUST_CERT.key(), trust.display()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_explicit_false_turns_internal_tls_off_and_configured_files_win_over_the_cluster_ca() {
        use InternalTlsSource::*;
        assert_eq!(InternalTlsSource::choose(None, false), ClusterCa);
        assert_eq!(InternalTlsSource::choose(Some(true), false), ClusterCa);
        assert_eq!(InternalTlsSource::choose(None, true), Configured);
        assert_eq!(InternalTlsSource::choose(Some(true), true), Configured);
        assert_eq!(InternalTlsSource::choose(Some(false), false), Off);
        assert_eq!(InternalTlsSource::choose(Some(false), true), Off);
    }

    #[test]
    fn the_source_is_read_from_explicit_keys_and_the_default_false_does_not_count() {
        let source = |entries: &[&str]| {
            let mut c = Configuration::new();
            let entries: Vec<String> = entries.iter().map(|e| e.to_string()).collect();
            c.apply_dynamic_properties(&entries).unwrap();
            InternalTlsSource::of(&c).unwrap()
        };
        assert_eq!(source(&[]), InternalTlsSource::ClusterCa);
        assert_eq!(source(&["security.ssl.internal.enabled=false"]), InternalTlsSource::Off);
        assert_eq!(
            source(&["security.ssl.internal.trust-cert=/etc/ca.crt"]),
            InternalTlsSource::Configured
        );
        assert_eq!(source(&["security.ssl.internal.cert= "]), InternalTlsSource::ClusterCa);
    }

    #[test]
    fn certificate_names_are_the_loopback_names_and_the_configured_addresses_without_wildcards() {
        let mut c = Configuration::new();
        c.apply_dynamic_properties(&[
            "taskmanager.host=10.1.2.3".to_string(),
            "taskmanager.bind-host=0.0.0.0".to_string(),
            "jobmanager.rpc.address=jm.example".to_string(),
            "jobmanager.bind-host=127.0.0.1".to_string(),
        ])
        .unwrap();
        assert_eq!(
            taskmanager_hosts(&c).unwrap(),
            vec!["localhost", "127.0.0.1", "10.1.2.3"]
        );
        assert_eq!(
            jobmanager_hosts(&c).unwrap(),
            vec!["localhost", "127.0.0.1", "jm.example"]
        );
        assert_eq!(
            taskmanager_hosts(&Configuration::new()).unwrap(),
            vec!["localhost", "127.0.0.1"]
        );
        assert_eq!(
            san_hosts(["[::1]".to_string(), "::".to_string()]),
            vec!["localhost", "127.0.0.1", "::1"]
        );
    }
}
