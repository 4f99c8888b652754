//! Certificates made at test time (feature `test-pki`): a [`TestCa`] writes its CA
//! certificate and issues leaf certificates valid for `localhost` and `127.0.0.1`, as
//! PEM files for the `security.ssl.*` keys.

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use std::path::{Path, PathBuf};

/// A certificate authority living for one test.
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// The files of an issued certificate.
#[derive(Debug, Clone)]
pub struct IssuedFiles {
    /// The certificate (PEM).
    pub cert: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
}

fn write(path: PathBuf, text: &str) -> PathBuf {
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

impl TestCa {
    /// A new self-signed CA named `name`.
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().expect("CA key");
        Self {
            issuer: CertifiedIssuer::self_signed(params, key).expect("CA certificate"),
        }
    }

    /// Writes the CA certificate to `dir/<stem>.crt` (a trust cert).
    pub fn write_ca(&self, dir: &Path, stem: &str) -> PathBuf {
        write(dir.join(format!("{stem}.crt")), &self.issuer.pem())
    }

    /// Issues a certificate for `localhost` and `127.0.0.1` and writes it with its key
    /// to `dir/<stem>.crt` and `dir/<stem>.key`.
    pub fn issue(&self, dir: &Path, stem: &str) -> IssuedFiles {
        let params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).expect("leaf parameters");
        let key = KeyPair::generate().expect("leaf key");
        let cert = params.signed_by(&key, &self.issuer).expect("leaf certificate");
        IssuedFiles {
            cert: write(dir.join(format!("{stem}.crt")), &cert.pem()),
            key: write(dir.join(format!("{stem}.key")), &key.serialize_pem()),
        }
    }
}
