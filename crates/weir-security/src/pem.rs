//! Reading PEM files named by configuration keys: a certificate chain with its private
//! key ([`Identity`]) and the CA certificates a peer must be signed by ([`Trust`]).
//!
//! Invariant: a loaded [`Identity`] has at least one certificate and exactly the key
//! of its file; a loaded [`Trust`] has at least one CA certificate that rustls accepts
//! as a trust anchor. Every failure names the key and the file.

use crate::error::SecurityError;
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};

/// A certificate chain and its private key, with the PEM text they were read from.
#[derive(Debug)]
pub struct Identity {
    /// The chain, leaf first.
    pub certs: Vec<CertificateDer<'static>>,
    /// The private key of the leaf.
    pub key: PrivateKeyDer<'static>,
    /// The certificate file's PEM text.
    pub cert_pem: Vec<u8>,
    /// The key file's PEM text.
    pub key_pem: Vec<u8>,
}

impl Clone for Identity {
    fn clone(&self) -> Self {
        Self {
            certs: self.certs.clone(),
            key: self.key.clone_key(),
            cert_pem: self.cert_pem.clone(),
            key_pem: self.key_pem.clone(),
        }
    }
}

/// CA certificates a peer's certificate must be signed by.
#[derive(Debug, Clone)]
pub struct Trust {
    /// The CAs as rustls trust anchors.
    pub roots: RootCertStore,
    /// The file's PEM text.
    pub pem: Vec<u8>,
}

/// A file named by the configuration key `key`.
#[derive(Debug, Clone, Copy)]
pub struct PemPath<'a> {
    /// The configuration key.
    pub key: &'static str,
    /// The file.
    pub path: &'a Path,
}

fn read(file: PemPath<'_>) -> Result<Vec<u8>, SecurityError> {
    std::fs::read(file.path).map_err(|source| SecurityError::Read {
        key: file.key,
        path: file.path.to_path_buf(),
        source,
    })
}

fn invalid(file: PemPath<'_>, reason: impl Into<String>) -> SecurityError {
    SecurityError::Invalid {
        key: file.key,
        path: PathBuf::from(file.path),
        reason: reason.into(),
    }
}

fn certificates(file: PemPath<'_>, pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, SecurityError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(file, format!("bad PEM: {e}")))?;
    if certs.is_empty() {
        return Err(invalid(file, "no CERTIFICATE block in the file"));
    }
    Ok(certs)
}

impl Identity {
    /// Reads the certificate chain of `cert` and the private key of `key`.
    pub fn load(cert: PemPath<'_>, key: PemPath<'_>) -> Result<Self, SecurityError> {
        let cert_pem = read(cert)?;
        let key_pem = read(key)?;
        Self::from_pem(cert, cert_pem, key, key_pem)
    }

    /// The identity of PEM text already read: `cert_pem` (from `cert`) and `key_pem`
    /// (from `key`); the paths only name the origin in errors.
    pub fn from_pem(
        cert: PemPath<'_>,
        cert_pem: Vec<u8>,
        key: PemPath<'_>,
        key_pem: Vec<u8>,
    ) -> Result<Self, SecurityError> {
        let certs = certificates(cert, &cert_pem)?;
        let private = PrivateKeyDer::from_pem_slice(&key_pem)
            .map_err(|e| invalid(key, format!("no usable PRIVATE KEY block: {e}")))?;
        Ok(Self {
            certs,
            key: private,
            cert_pem,
            key_pem,
        })
    }
}

impl Trust {
    /// Reads the CA certificates of `file`.
    pub fn load(file: PemPath<'_>) -> Result<Self, SecurityError> {
        let pem = read(file)?;
        let mut roots = RootCertStore::empty();
        for cert in certificates(file, &pem)? {
            roots
                .add(cert)
                .map_err(|e| invalid(file, format!("not a usable CA certificate: {e}")))?;
        }
        Ok(Self { roots, pem })
    }
}
