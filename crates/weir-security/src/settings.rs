//! The TLS settings of a process, read from Flink's `security.ssl.*` keys (with PEM
//! files instead of keystores): [`InternalTls`] for the cluster's own connections,
//! [`rest_server_tls`] and [`rest_client_tls`] for the REST endpoint and its clients.
//!
//! Invariant: a switch that is on with a missing, unreadable or invalid file is an
//! error naming the key and the file, never a silent plaintext fallback.

use crate::configs::{client_config, server_config, IdentityKeys};
use crate::error::SecurityError;
use crate::pem::{Identity, PemPath, Trust};
use rustls::{ClientConfig, ServerConfig};
use std::path::PathBuf;
use std::sync::Arc;
use weir_config::options as o;
use weir_config::{ConfigOption, Configuration};

const INTERNAL: &str = "security.ssl.internal.enabled is true";
const REST: &str = "security.ssl.rest.enabled is true";
const REST_AUTH: &str = "security.ssl.rest.authentication-enabled is true";

const INTERNAL_KEYS: IdentityKeys = IdentityKeys {
    cert: "security.ssl.internal.cert",
    key: "security.ssl.internal.key",
};
const REST_KEYS: IdentityKeys = IdentityKeys {
    cert: "security.ssl.rest.cert",
    key: "security.ssl.rest.key",
};

fn required(
    config: &Configuration,
    option: &ConfigOption<Option<String>>,
    key: &'static str,
    because: &'static str,
) -> Result<PathBuf, SecurityError> {
    config
        .get(option)?
        .filter(|p| !p.trim().is_empty())
        .map(PathBuf::from)
        .ok_or(SecurityError::Missing { key, because })
}

fn identity(
    config: &Configuration,
    cert: &ConfigOption<Option<String>>,
    key: &ConfigOption<Option<String>>,
    keys: IdentityKeys,
    because: &'static str,
) -> Result<Identity, SecurityError> {
    let cert_path = required(config, cert, keys.cert, because)?;
    let key_path = required(config, key, keys.key, because)?;
    Identity::load(
        PemPath {
            key: keys.cert,
            path: &cert_path,
        },
        PemPath {
            key: keys.key,
            path: &key_path,
        },
    )
}

fn trust(
    config: &Configuration,
    option: &ConfigOption<Option<String>>,
    key: &'static str,
    because: &'static str,
) -> Result<Trust, SecurityError> {
    let path = required(config, option, key, because)?;
    Trust::load(PemPath { key, path: &path })
}

/// Mutual TLS for the cluster's internal connections (RPC and data plane): this
/// process's identity, the CAs its peers must be signed by, and the rustls
/// configurations built from them.
#[derive(Debug, Clone)]
pub struct InternalTls {
    /// This process's certificate and key (`security.ssl.internal.cert`, `.key`).
    pub identity: Identity,
    /// The CAs peers must be signed by (`security.ssl.internal.trust-cert`).
    pub trust: Trust,
    /// Servers: present the identity, require a trusted client certificate.
    pub server: Arc<ServerConfig>,
    /// Clients: present the identity, trust only the trust certificate's CAs.
    pub client: Arc<ClientConfig>,
}

impl InternalTls {
    /// The internal TLS settings, or `None` when `security.ssl.internal.enabled` is off.
    pub fn from_config(config: &Configuration) -> Result<Option<Arc<Self>>, SecurityError> {
        if !config.get(&o::SSL_INTERNAL_ENABLED)? {
            return Ok(None);
        }
        let identity = identity(
            config,
            &o::SSL_INTERNAL_CERT,
            &o::SSL_INTERNAL_KEY,
            INTERNAL_KEYS,
            INTERNAL,
        )?;
        let trust = trust(
            config,
            &o::SSL_INTERNAL_TRUST_CERT,
            "security.ssl.internal.trust-cert",
            INTERNAL,
        )?;
        Self::new(identity, trust).map(Some)
    }

    /// Mutual TLS presenting `identity` to peers signed by `trust` (errors name the
    /// `security.ssl.internal.*` keys).
    pub fn new(identity: Identity, trust: Trust) -> Result<Arc<Self>, SecurityError> {
        let server = server_config(&identity, INTERNAL_KEYS, Some(&trust))?;
        let client = client_config(&trust, Some((&identity, INTERNAL_KEYS)))?;
        Ok(Arc::new(Self {
            identity,
            trust,
            server,
            client,
        }))
    }
}

/// The REST endpoint's TLS configuration, or `None` when `security.ssl.rest.enabled`
/// is off. With `security.ssl.rest.authentication-enabled` a client must present a
/// certificate signed by `security.ssl.rest.trust-cert`.
pub fn rest_server_tls(config: &Configuration) -> Result<Option<Arc<ServerConfig>>, SecurityError> {
    if !config.get(&o::SSL_REST_ENABLED)? {
        return Ok(None);
    }
    let identity = identity(config, &o::SSL_REST_CERT, &o::SSL_REST_KEY, REST_KEYS, REST)?;
    let client_trust = if config.get(&o::SSL_REST_AUTHENTICATION_ENABLED)? {
        Some(trust(
            config,
            &o::SSL_REST_TRUST_CERT,
            "security.ssl.rest.trust-cert",
            REST_AUTH,
        )?)
    } else {
        None
    };
    server_config(&identity, REST_KEYS, client_trust.as_ref()).map(Some)
}

/// The TLS configuration of a REST client (the `weir` client commands), or `None` when
/// `security.ssl.rest.enabled` is off: it trusts `security.ssl.rest.trust-cert`, and
/// with authentication on presents `security.ssl.rest.cert`.
pub fn rest_client_tls(config: &Configuration) -> Result<Option<Arc<ClientConfig>>, SecurityError> {
    if !config.get(&o::SSL_REST_ENABLED)? {
        return Ok(None);
    }
    let trust = trust(config, &o::SSL_REST_TRUST_CERT, "security.ssl.rest.trust-cert", REST)?;
    let identity = if config.get(&o::SSL_REST_AUTHENTICATION_ENABLED)? {
        Some(identity(
            config,
            &o::SSL_REST_CERT,
            &o::SSL_REST_KEY,
            REST_KEYS,
            REST_AUTH,
        )?)
    } else {
        None
    };
    client_config(&trust, identity.as_ref().map(|i| (i, REST_KEYS))).map(Some)
}
