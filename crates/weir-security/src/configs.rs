//! rustls configurations built from loaded PEM material, all on one crypto provider
//! (aws-lc-rs, the provider the object-store client already builds).
//!
//! Invariant: [`install_crypto_provider`] runs before any configuration is built, so
//! libraries that build their own rustls configurations from the process default
//! (tonic's TLS server) find the same provider.

use crate::error::SecurityError;
use crate::pem::{Identity, Trust};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, ServerConfig};
use rustls_pki_types::ServerName;
use std::sync::{Arc, Once};

/// The configuration keys of an identity's certificate and key, named in errors.
#[derive(Debug, Clone, Copy)]
pub struct IdentityKeys {
    /// The certificate file's key.
    pub cert: &'static str,
    /// The private key file's key.
    pub key: &'static str,
}

/// Makes aws-lc-rs the process's default rustls crypto provider (once; a provider
/// installed before is kept), and starts warming its random number generator.
pub fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Err only when another thread installed one first, which is as good.
            drop(rustls::crypto::aws_lc_rs::default_provider().install_default());
        }
        warm_up_random();
    });
}

/// Draws the provider's first random bytes on a thread of its own. aws-lc seeds its
/// generator from CPU jitter entropy once per process on first use, which takes a
/// quarter to half a second of CPU; done at process start it overlaps with the rest of
/// start-up instead of delaying the process's first TLS handshake (a JobManager's
/// first handshake is a TaskManager registering, so every cluster start waited for it).
fn warm_up_random() {
    let Some(provider) = rustls::crypto::CryptoProvider::get_default().cloned() else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("weir-tls-rng-warm-up".into())
        .spawn(move || {
            if let Err(e) = provider.secure_random.fill(&mut [0u8; 32]) {
                tracing::debug!(error = ?e, "warming up the TLS random number generator failed");
            }
        });
    if let Err(e) = spawned {
        tracing::debug!(error = %e, "cannot start the TLS random number generator warm-up");
    }
}

fn config_error(keys: IdentityKeys, e: impl std::fmt::Display) -> SecurityError {
    SecurityError::Config {
        cert_key: keys.cert,
        key_key: keys.key,
        reason: e.to_string(),
    }
}

/// A server configuration presenting `identity`; with `client_trust`, a client must
/// present a certificate signed by one of its CAs (mutual TLS).
pub fn server_config(
    identity: &Identity,
    keys: IdentityKeys,
    client_trust: Option<&Trust>,
) -> Result<Arc<ServerConfig>, SecurityError> {
    install_crypto_provider();
    let builder = ServerConfig::builder();
    let builder = match client_trust {
        Some(trust) => {
            let verifier = WebPkiClientVerifier::builder(Arc::new(trust.roots.clone()))
                .build()
                .map_err(|e| config_error(keys, e))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(identity.certs.clone(), identity.key.clone_key())
        .map_err(|e| config_error(keys, e))?;
    // No session tickets: nothing is written after the handshake but application data,
    // which lets the data plane split a connection into a reading and a writing half.
    config.send_tls13_tickets = 0;
    Ok(Arc::new(config))
}

/// A client configuration trusting the CAs of `trust`, presenting `identity` when the
/// server asks for a certificate.
pub fn client_config(
    trust: &Trust,
    identity: Option<(&Identity, IdentityKeys)>,
) -> Result<Arc<ClientConfig>, SecurityError> {
    install_crypto_provider();
    let builder = ClientConfig::builder().with_root_certificates(trust.roots.clone());
    let config = match identity {
        Some((identity, keys)) => builder
            .with_client_auth_cert(identity.certs.clone(), identity.key.clone_key())
            .map_err(|e| config_error(keys, e))?,
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// The name a client checks the server's certificate against: the host of a
/// `host:port` address (an IP address or a DNS name; IPv6 in brackets).
pub fn server_name(address: &str) -> Result<ServerName<'static>, String> {
    let host = match address.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        _ => address,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(host.to_owned()).map_err(|e| format!("'{host}' is not a host name or IP address: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_name_of_an_address_is_its_host() {
        assert_eq!(server_name("127.0.0.1:6123").unwrap().to_str(), "127.0.0.1");
        assert_eq!(server_name("jobmanager:6123").unwrap().to_str(), "jobmanager");
        assert_eq!(server_name("[::1]:80").unwrap().to_str(), "::1");
        assert!(server_name("bad host:1").is_err());
    }
}
