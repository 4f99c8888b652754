//! gRPC over mutual TLS (`security.ssl.internal.*`): the server configuration of the
//! JobManager's and TaskManagers' RPC endpoints (a client certificate signed by the
//! trust cert is required) and the endpoint a client connects with (it presents this
//! process's certificate and trusts only the trust cert's CAs).
//!
//! Without internal TLS the same functions give plaintext `http://` endpoints and no
//! server configuration, so callers have one code path.

use std::time::Duration;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity, ServerTlsConfig};
use weir_security::InternalTls;

/// The TLS configuration of an RPC server, or `None` without internal TLS.
pub fn server_tls(tls: Option<&InternalTls>) -> Option<ServerTlsConfig> {
    tls.map(|t| {
        ServerTlsConfig::new()
            .identity(Identity::from_pem(&t.identity.cert_pem, &t.identity.key_pem))
            .client_ca_root(Certificate::from_pem(&t.trust.pem))
    })
}

/// The endpoint of the RPC server at `address` (`host:port`): `https://` with this
/// process's certificate under internal TLS, `http://` otherwise; connecting may take
/// `connect_timeout`.
pub fn endpoint(
    address: &str,
    tls: Option<&InternalTls>,
    connect_timeout: Duration,
) -> Result<Endpoint, tonic::transport::Error> {
    let endpoint = match tls {
        None => Endpoint::from_shared(format!("http://{address}"))?,
        Some(t) => Endpoint::from_shared(format!("https://{address}"))?.tls_config(
            ClientTlsConfig::new()
                .ca_certificate(Certificate::from_pem(&t.trust.pem))
                .identity(Identity::from_pem(&t.identity.cert_pem, &t.identity.key_pem)),
        )?,
    };
    Ok(endpoint.connect_timeout(connect_timeout))
}
