//! The cluster's own certificate authority (feature `cluster-pki`): what `weir
//! start-cluster` makes in `<cluster.dir>/tls/` so that internal mutual TLS is on by
//! default, and what a TaskManager joining with `--cluster-dir` issues itself a
//! certificate from.
//!
//! Layout of [`TLS_DIR`]: `ca.crt` and `ca.key` (the CA, ECDSA P-256, valid ten years),
//! and per process `<name>.crt` and `<name>.key` (a leaf valid until the CA expires, for
//! both server and client authentication, with the process's host names).
//!
//! Invariants:
//! - the directory is mode 0700 and every file mode 0600, written whole (a temporary
//!   file renamed into place);
//! - an existing CA is reused, checked first: a CA file that is missing its pair,
//!   unreadable, not a CA certificate, expired, whose key is not the certificate's, or
//!   whose key file others may read, is a [`ClusterPkiError`] naming the file, never
//!   replaced silently (a new CA means every process of the cluster needs new
//!   certificates: the operator decides that by removing the directory);
//! - leaf certificates are issued anew at every start (cheap, and their host names
//!   follow the configuration).

use crate::error::SecurityError;
use crate::pem::{Identity, PemPath, Trust};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    PublicKeyData,
};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use thiserror::Error;
use time::{Duration, OffsetDateTime};

pub use crate::cluster_tls::TLS_DIR;

/// How long a new CA is valid.
const CA_VALIDITY: Duration = Duration::days(3650);

/// How far back a certificate's validity starts, for clocks of other hosts behind ours.
const CLOCK_SKEW: Duration = Duration::hours(1);

const TRUST_KEY: &str = "security.ssl.internal.trust-cert";
const CERT_KEY: &str = "security.ssl.internal.cert";
const KEY_KEY: &str = "security.ssl.internal.key";

/// Why the cluster's CA could not be made, reused or used; each names the file and,
/// where the CA itself is at fault, how to start over.
#[derive(Debug, Error)]
pub enum ClusterPkiError {
    /// The directory could not be made private or created.
    #[error("cannot create {} with mode 0700: {source}", path.display())]
    Dir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No CA in the directory (a TaskManager joining a cluster that has none).
    #[error("no cluster CA in {}: start the cluster with `weir start-cluster` (internal TLS on), or set security.ssl.internal.enabled: false to join a plaintext cluster", dir.display())]
    NoCa {
        /// The directory.
        dir: PathBuf,
    },
    /// One of the CA's two files exists without the other.
    #[error("{} exists but {} does not: restore it, or remove {} to make a new cluster CA", present.display(), missing.display(), dir.display())]
    Incomplete {
        /// The file that exists.
        present: PathBuf,
        /// The file that does not.
        missing: PathBuf,
        /// The directory.
        dir: PathBuf,
    },
    /// A CA file that is not what it must be.
    #[error("{} is not a usable cluster CA file: {reason}; remove {} to make a new cluster CA", path.display(), dir.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
        /// The directory.
        dir: PathBuf,
    },
    /// The CA certificate is outside its validity.
    #[error("the cluster CA {} is valid from {not_before} to {not_after}, not now; remove {} to make a new cluster CA", path.display(), dir.display())]
    Expired {
        /// The certificate file.
        path: PathBuf,
        /// Start of its validity.
        not_before: String,
        /// End of its validity.
        not_after: String,
        /// The directory.
        dir: PathBuf,
    },
    /// The CA key file may be read by other users.
    #[error("{} may be read by other users (mode {mode:o}); the cluster CA key must be mode 0600: chmod 600 it if nobody else read it, else remove {} to make a new cluster CA", path.display(), dir.display())]
    TooOpen {
        /// The key file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
        /// The directory.
        dir: PathBuf,
    },
    /// A certificate could not be made.
    #[error("cannot issue the certificate of {name}: {reason}")]
    Issue {
        /// The process (or `cluster CA`).
        name: String,
        /// rcgen's reason.
        reason: String,
    },
    /// The issued material does not make a TLS configuration.
    #[error(transparent)]
    Security(#[from] SecurityError),
}

/// The files of a certificate issued to one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedFiles {
    /// Its certificate (PEM).
    pub cert: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
}

/// The cluster's CA, loaded from (or made in) `<cluster.dir>/`[`TLS_DIR`].
pub struct ClusterPki {
    dir: PathBuf,
    issuer: Issuer<'static, KeyPair>,
    not_after: OffsetDateTime,
}

impl std::fmt::Debug for ClusterPki {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterPki")
            .field("dir", &self.dir)
            .field("not_after", &self.not_after)
            .finish_non_exhaustive()
    }
}

fn issue_error(name: &str, e: impl std::fmt::Display) -> ClusterPkiError {
    ClusterPkiError::Issue {
        name: name.to_string(),
        reason: e.to_string(),
    }
}

/// Writes `text` to `path` with mode 0600: `<path>.tmp` beside it (one per target file,
/// so a certificate and its key never share one), renamed.
fn write_private(path: &Path, text: &str) -> Result<(), ClusterPkiError> {
    let err = |source| ClusterPkiError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(err)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(err)?;
    file.write_all(text.as_bytes()).map_err(err)?;
    file.sync_all().map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

fn read(path: &Path) -> Result<Vec<u8>, ClusterPkiError> {
    std::fs::read(path).map_err(|source| ClusterPkiError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Leaf parameters for `hosts` (IP addresses become IP SANs) until `not_after`.
fn leaf_params(name: &str, hosts: &[String], not_after: OffsetDateTime) -> Result<CertificateParams, ClusterPkiError> {
    let mut params = CertificateParams::new(hosts.to_vec()).map_err(|e| issue_error(name, e))?;
    params
        .distinguished_name
        .push(DnType::CommonName, format!("weir {name}"));
    params.not_before = OffsetDateTime::now_utc() - CLOCK_SKEW;
    params.not_after = not_after;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
    params.use_authority_key_identifier_extension = true;
    Ok(params)
}

impl ClusterPki {
    /// The CA of `<cluster_dir>/tls`: reused when both its files exist (and pass the
    /// checks of the module doc), made when neither does.
    pub fn open_or_create(cluster_dir: &Path) -> Result<ClusterPki, ClusterPkiError> {
        let dir = cluster_dir.join(TLS_DIR);
        private_dir(&dir)?;
        let (cert, key) = (dir.join("ca.crt"), dir.join("ca.key"));
        if !cert.exists() && !key.exists() {
            create_ca(&dir, OffsetDateTime::now_utc() + CA_VALIDITY)?;
        }
        Self::load(&dir)
    }

    /// The existing CA of `<cluster_dir>/tls` (a process joining the cluster); an error
    /// when there is none.
    pub fn open(cluster_dir: &Path) -> Result<ClusterPki, ClusterPkiError> {
        let dir = cluster_dir.join(TLS_DIR);
        if !dir.join("ca.crt").exists() && !dir.join("ca.key").exists() {
            return Err(ClusterPkiError::NoCa { dir });
        }
        Self::load(&dir)
    }

    fn load(dir: &Path) -> Result<ClusterPki, ClusterPkiError> {
        let (cert_path, key_path) = (dir.join("ca.crt"), dir.join("ca.key"));
        for (present, missing) in [(&cert_path, &key_path), (&key_path, &cert_path)] {
            if present.exists() && !missing.exists() {
                return Err(ClusterPkiError::Incomplete {
                    present: present.clone(),
                    missing: missing.clone(),
                    dir: dir.to_path_buf(),
                });
            }
        }
        let corrupt = |path: &Path, reason: String| ClusterPkiError::Corrupt {
            path: path.to_path_buf(),
            reason,
            dir: dir.to_path_buf(),
        };
        let mode = std::fs::metadata(&key_path)
            .map_err(|source| ClusterPkiError::Read {
                path: key_path.clone(),
                source,
            })?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(ClusterPkiError::TooOpen {
                path: key_path,
                mode: mode & 0o777,
                dir: dir.to_path_buf(),
            });
        }
        let cert_pem = String::from_utf8(read(&cert_path)?).map_err(|_| corrupt(&cert_path, "not PEM text".into()))?;
        let key_pem = String::from_utf8(read(&key_path)?).map_err(|_| corrupt(&key_path, "not PEM text".into()))?;
        let der =
            rustls_pki_types::CertificateDer::from(pem_block(&cert_pem).map_err(|reason| corrupt(&cert_path, reason))?);
        let (_, x509) = x509_parser::parse_x509_certificate(&der)
            .map_err(|e| corrupt(&cert_path, format!("bad certificate: {e}")))?;
        if !x509.is_ca() {
            return Err(corrupt(&cert_path, "not a CA certificate".into()));
        }
        let validity = x509.validity();
        if !validity.is_valid() {
            return Err(ClusterPkiError::Expired {
                path: cert_path,
                not_before: validity.not_before.to_string(),
                not_after: validity.not_after.to_string(),
                dir: dir.to_path_buf(),
            });
        }
        let not_after = validity.not_after.to_datetime();
        let key = KeyPair::from_pem(&key_pem).map_err(|e| corrupt(&key_path, format!("no usable private key: {e}")))?;
        if key.subject_public_key_info() != x509.public_key().raw {
            return Err(corrupt(
                &key_path,
                format!("its key is not the key of {}", cert_path.display()),
            ));
        }
        let issuer = Issuer::from_ca_cert_der(&der, key).map_err(|e| corrupt(&cert_path, e.to_string()))?;
        Ok(ClusterPki {
            dir: dir.to_path_buf(),
            issuer,
            not_after,
        })
    }

    /// The CA certificate (the `security.ssl.internal.trust-cert` of every process).
    pub fn ca_cert(&self) -> PathBuf {
        self.dir.join("ca.crt")
    }

    /// When the CA (and every certificate it issues) expires.
    pub fn not_after(&self) -> OffsetDateTime {
        self.not_after
    }

    /// A certificate for the process `name` (`jobmanager`, `taskmanager-0`: letters,
    /// digits and `-`) valid for `hosts`, written to `tls/<name>.crt` and `.key`.
    pub fn issue_files(&self, name: &str, hosts: &[String]) -> Result<IssuedFiles, ClusterPkiError> {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(issue_error(name, "a process name is letters, digits and '-'"));
        }
        let (cert_pem, key_pem) = self.issue_pem(name, hosts)?;
        let files = IssuedFiles {
            cert: self.dir.join(format!("{name}.crt")),
            key: self.dir.join(format!("{name}.key")),
        };
        write_private(&files.key, &key_pem)?;
        write_private(&files.cert, &cert_pem)?;
        Ok(files)
    }

    /// A certificate for the process `name` valid for `hosts`, kept in memory: its
    /// identity and the cluster's trust, for [`crate::InternalTls::new`].
    pub fn issue_identity(&self, name: &str, hosts: &[String]) -> Result<(Identity, Trust), ClusterPkiError> {
        let (cert_pem, key_pem) = self.issue_pem(name, hosts)?;
        let origin = self.dir.join(format!("{name} (issued in memory)"));
        let identity = Identity::from_pem(
            PemPath {
                key: CERT_KEY,
                path: &origin,
            },
            cert_pem.into_bytes(),
            PemPath {
                key: KEY_KEY,
                path: &origin,
            },
            key_pem.into_bytes(),
        )?;
        let trust = Trust::load(PemPath {
            key: TRUST_KEY,
            path: &self.ca_cert(),
        })?;
        Ok((identity, trust))
    }

    fn issue_pem(&self, name: &str, hosts: &[String]) -> Result<(String, String), ClusterPkiError> {
        let params = leaf_params(name, hosts, self.not_after)?;
        let key = KeyPair::generate().map_err(|e| issue_error(name, e))?;
        let cert = params.signed_by(&key, &self.issuer).map_err(|e| issue_error(name, e))?;
        Ok((cert.pem(), key.serialize_pem()))
    }
}

/// The first `CERTIFICATE` block of `pem`, as DER.
fn pem_block(pem: &str) -> Result<Vec<u8>, String> {
    use rustls_pki_types::pem::PemObject;
    rustls_pki_types::CertificateDer::from_pem_slice(pem.as_bytes())
        .map(|c| c.to_vec())
        .map_err(|e| format!("no CERTIFICATE block: {e}"))
}

/// Creates `dir` with mode 0700, or makes an existing one 0700.
fn private_dir(dir: &Path) -> Result<(), ClusterPkiError> {
    let err = |source| ClusterPkiError::Dir {
        path: dir.to_path_buf(),
        source,
    };
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(err)
        }
        Err(e) => Err(err(e)),
    }
}

/// Makes a CA valid until `not_after` and writes `dir/ca.crt` and `dir/ca.key`.
fn create_ca(dir: &Path, not_after: OffsetDateTime) -> Result<(), ClusterPkiError> {
    let name = "cluster CA";
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(|e| issue_error(name, e))?;
    let now = OffsetDateTime::now_utc();
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.distinguished_name.push(
        DnType::CommonName,
        format!("Weir cluster CA {}", now.unix_timestamp_nanos()),
    );
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params.not_before = now - CLOCK_SKEW;
    params.not_after = not_after;
    let key = KeyPair::generate().map_err(|e| issue_error(name, e))?;
    let cert = params.self_signed(&key).map_err(|e| issue_error(name, e))?;
    write_private(&dir.join("ca.key"), &key.serialize_pem())?;
    write_private(&dir.join("ca.crt"), &cert.pem())
}

#[cfg(test)]
#[path = "cluster_pki_tests.rs"]
mod tests;
