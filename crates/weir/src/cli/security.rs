//! The security settings of the `weir` processes, read from their configuration:
//! internal mutual TLS for the JobManager's and TaskManagers' RPC and the data plane,
//! the REST endpoint's HTTPS, CORS and connection bounds, and the data server's
//! bounds. Every error names the key (and file) at fault, at process start.

use anyhow::Result;
use std::sync::Arc;
use weir_config::options as o;
use weir_config::Configuration;
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
        max_connections: config.get(&o::REST_SERVER_MAX_CONNECTIONS)?.max(1) as usize,
        header_read_timeout: config.get(&o::REST_SERVER_HEADER_READ_TIMEOUT)?,
    })
}

/// Puts the data server's bounds (`taskmanager.data.*`) and the data plane's share of
/// internal TLS into `network`.
pub fn secure_data_plane(network: &mut NetworkConfig, config: &Configuration, tls: Option<&InternalTls>) -> Result<()> {
    network.data_max_connections = config.get(&o::TASKMANAGER_DATA_MAX_CONNECTIONS)?.max(1) as usize;
    network.data_handshake_timeout_ms = duration_ms(config.get(&o::TASKMANAGER_DATA_HANDSHAKE_TIMEOUT)?);
    network.data_idle_timeout_ms = duration_ms(config.get(&o::TASKMANAGER_DATA_IDLE_TIMEOUT)?);
    network.tls = tls.map(data_plane_tls);
    Ok(())
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

fn duration_ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}
