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
    network.tls = tls.map(|t| DataPlaneTls {
        server: t.server.clone(),
        client: t.client.clone(),
    });
    Ok(())
}

fn duration_ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}
