//! The security settings of the `weir` processes, read from their configuration:
//! internal mutual TLS for the JobManager's and TaskManagers' RPC and the data plane,
//! the REST endpoint's HTTPS, CORS and connection bounds, and the data server's
//! bounds. Every error names the key (and file) at fault, at process start.

use anyhow::Result;
use std::sync::Arc;
use std::time::Duration;
use weir_config::options as o;
use weir_config::{ConfigError, ConfigOption, Configuration};
use weir_rest::RestServerOptions;
use weir_runtime::network::{DataPlaneTls, NetworkConfig};
use weir_security::InternalTls;

/// Internal mutual TLS (`security.ssl.internal.*`), or `None` when it is off.
pub fn internal_tls(config: &Configuration) -> Result<Option<Arc<InternalTls>>> {
    Ok(InternalTls::from_config(config)?)
}

/// How the REST endpoint serves (`security.ssl.rest.*`, `web.access-control-allow-origin`,
/// `rest.server.*`).
pub fn rest_server_options(config: &Configuration) -> Result<RestServerOptions> {
    let allow_origin = config
        .get(&o::WEB_ACCESS_CONTROL_ALLOW_ORIGIN)?
        .map(|v| weir_rest::http_policy::parse_allow_origin(&v).map_err(anyhow::Error::msg))
        .transpose()?;
    Ok(RestServerOptions {
        tls: weir_security::rest_server_tls(config)?,
        allow_origin,
        max_connections: count(config, &o::REST_SERVER_MAX_CONNECTIONS)?,
        max_connections_per_peer: count(config, &o::REST_SERVER_MAX_CONNECTIONS_PER_PEER)?,
        header_read_timeout: timeout(config, &o::REST_SERVER_HEADER_READ_TIMEOUT)?,
    })
}

/// Puts the data server's bounds (`taskmanager.data.*`) and the data plane's share of
/// internal TLS into `network`.
pub fn secure_data_plane(network: &mut NetworkConfig, config: &Configuration, tls: Option<&InternalTls>) -> Result<()> {
    network.data_max_connections = count(config, &o::TASKMANAGER_DATA_MAX_CONNECTIONS)?;
    network.data_max_connections_per_peer = count(config, &o::TASKMANAGER_DATA_MAX_CONNECTIONS_PER_PEER)?;
    network.data_handshake_timeout_ms = duration_ms(timeout(config, &o::TASKMANAGER_DATA_HANDSHAKE_TIMEOUT)?);
    network.data_idle_timeout_ms = duration_ms(config.get(&o::TASKMANAGER_DATA_IDLE_TIMEOUT)?);
    network.tls = tls.map(data_plane_tls);
    Ok(())
}

/// A connection bound: at least 1.
fn count(config: &Configuration, option: &ConfigOption<u32>) -> Result<usize, ConfigError> {
    match config.get(option)? {
        0 => Err(ConfigError::OutOfRange {
            key: option.key().to_string(),
            value: "0".into(),
            message: "must be at least 1".into(),
        }),
        n => Ok(n as usize),
    }
}

/// A timeout of a connection bound: more than 0.
fn timeout(config: &Configuration, option: &ConfigOption<Duration>) -> Result<Duration, ConfigError> {
    match config.get(option)? {
        d if d.is_zero() => Err(ConfigError::OutOfRange {
            key: option.key().to_string(),
            value: weir_config::format_duration(d),
            message: "must be more than 0".into(),
        }),
        d => Ok(d),
    }
}

/// The data plane's share of internal TLS.
pub fn data_plane_tls(tls: &InternalTls) -> DataPlaneTls {
    DataPlaneTls {
        server: tls.server.clone(),
        client: tls.client.clone(),
    }
}

/// The one start-up line of a `role` (`JobManager`, `TaskManager`) whose internal
/// connections are plaintext (`plaintext`): who can reach its ports, and how to turn
/// mutual TLS on.
pub fn warn_if_plaintext(role: &str, plaintext: bool) {
    if plaintext {
        tracing::warn!(
            "{role}: internal connections (RPC and data ports) are PLAINTEXT: anyone who reaches them can act as a cluster member. Turn mutual TLS on with security.ssl.internal.enabled/.cert/.key/.trust-cert, or use `weir start-cluster` (TLS on by default) and join TaskManagers with `weir taskmanager --cluster-dir <cluster.dir>`"
        );
    }
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(key: &str, value: &str) -> Configuration {
        let mut c = Configuration::new();
        c.set_string(key, value);
        c
    }

    fn data_plane(config: &Configuration) -> Result<NetworkConfig> {
        let mut network = NetworkConfig::default();
        secure_data_plane(&mut network, config, None).map(|()| network)
    }

    #[test]
    fn the_defaults_bound_every_server_per_peer() {
        let rest = rest_server_options(&Configuration::new()).unwrap();
        assert_eq!((rest.max_connections, rest.max_connections_per_peer), (512, 128));
        let data = data_plane(&Configuration::new()).unwrap();
        assert_eq!(
            (
                data.data_max_connections,
                data.data_max_connections_per_peer,
                data.data_handshake_timeout_ms
            ),
            (256, 64, 10_000)
        );
    }

    #[test]
    fn zero_negative_or_garbage_connection_bounds_are_refused_naming_the_key() {
        let rest_keys = [
            "rest.server.max-connections",
            "rest.server.max-connections-per-peer",
            "rest.server.header-read-timeout",
        ];
        let data_keys = [
            "taskmanager.data.max-connections",
            "taskmanager.data.max-connections-per-peer",
            "taskmanager.data.handshake-timeout",
        ];
        for value in ["0", "-1", "lots"] {
            for key in rest_keys {
                let err = rest_server_options(&with(key, value)).unwrap_err().to_string();
                assert!(
                    err.contains(&format!("'{key}'")) && err.contains(value),
                    "{key}={value}: {err}"
                );
            }
            for key in data_keys {
                let err = data_plane(&with(key, value)).unwrap_err().to_string();
                assert!(
                    err.contains(&format!("'{key}'")) && err.contains(value),
                    "{key}={value}: {err}"
                );
            }
        }
        let err = data_plane(&with("taskmanager.data.max-connections-per-peer", "0")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid value '0' for key 'taskmanager.data.max-connections-per-peer': must be at least 1"
        );
    }
}
