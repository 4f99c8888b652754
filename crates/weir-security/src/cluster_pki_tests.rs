//! The cluster CA: made private, reused, refused with the file named when it is wrong,
//! and its certificates make mutual TLS that a foreign CA's certificate cannot join.

use super::*;
use crate::cluster_tls::internal_ssl_entries;
use crate::test_pki::TestCa;
use crate::InternalTls;
use rustls::{ClientConfig, ClientConnection, ServerConfig, ServerConnection};
use std::sync::Arc;

fn hosts() -> Vec<String> {
    vec!["localhost".into(), "127.0.0.1".into()]
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn tls_of(files: &IssuedFiles, trust: &Path) -> Arc<InternalTls> {
    let mut c = weir_config::Configuration::new();
    c.apply_dynamic_properties(&internal_ssl_entries(&files.cert, &files.key, trust))
        .unwrap();
    InternalTls::from_config(&c).unwrap().expect("internal SSL is on")
}

fn pump(
    from: &mut dyn FnMut(&mut Vec<u8>),
    to: &mut rustls::ConnectionCommon<impl Sized>,
) -> Result<(), rustls::Error> {
    let mut bytes = Vec::new();
    from(&mut bytes);
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        to.read_tls(&mut rest).expect("read from memory");
    }
    to.process_new_packets().map(drop)
}

/// A TLS handshake in memory between `server` and `client` dialling `name`.
fn handshake(server: Arc<ServerConfig>, client: Arc<ClientConfig>, name: &str) -> Result<(), rustls::Error> {
    let name = rustls_pki_types::ServerName::try_from(name.to_string()).unwrap();
    let mut c = ClientConnection::new(client, name)?;
    let mut s = ServerConnection::new(server)?;
    for _ in 0..8 {
        let mut client_out = |buf: &mut Vec<u8>| {
            while c.wants_write() {
                c.write_tls(buf).unwrap();
            }
        };
        pump(&mut client_out, &mut s)?;
        let mut server_out = |buf: &mut Vec<u8>| {
            while s.wants_write() {
                s.write_tls(buf).unwrap();
            }
        };
        pump(&mut server_out, &mut c)?;
        if !c.is_handshaking() && !s.is_handshaking() {
            return Ok(());
        }
    }
    Err(rustls::Error::General("the handshake did not finish".into()))
}

#[test]
fn a_new_cluster_ca_is_private_and_its_certificates_make_mutual_tls_that_a_foreign_ca_cannot_join() {
    let dir = tempfile::tempdir().unwrap();
    let pki = ClusterPki::open_or_create(dir.path()).unwrap();
    let tls = dir.path().join(TLS_DIR);
    let jm = pki.issue_files("jobmanager", &hosts()).unwrap();
    let tm = pki.issue_files("taskmanager-0", &hosts()).unwrap();
    assert_eq!(mode(&tls), 0o700);
    for file in [
        tls.join("ca.crt"),
        tls.join("ca.key"),
        jm.cert.clone(),
        jm.key.clone(),
        tm.key.clone(),
    ] {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    assert_eq!(jm.cert, tls.join("jobmanager.crt"));
    let mut files: Vec<String> = std::fs::read_dir(&tls)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let expected = [
        "ca.crt",
        "ca.key",
        "jobmanager.crt",
        "jobmanager.key",
        "taskmanager-0.crt",
        "taskmanager-0.key",
    ];
    assert_eq!(files, expected, "no temporary file is left behind");
    assert!(pki.not_after() > OffsetDateTime::now_utc() + Duration::days(3600));

    let (server, client) = (tls_of(&jm, &pki.ca_cert()), tls_of(&tm, &pki.ca_cert()));
    handshake(server.server.clone(), client.client.clone(), "127.0.0.1").unwrap();
    handshake(server.server.clone(), client.client.clone(), "localhost").unwrap();
    let err = handshake(server.server.clone(), client.client.clone(), "other.example").unwrap_err();
    assert!(err.to_string().contains("certificate"), "{err}");

    // A client of another CA that trusts the cluster CA: only the server's check fails.
    let foreign = TestCa::new("intruder").issue(dir.path(), "intruder");
    let intruder = tls_of(
        &IssuedFiles {
            cert: foreign.cert,
            key: foreign.key,
        },
        &pki.ca_cert(),
    );
    let err = handshake(server.server.clone(), intruder.client.clone(), "127.0.0.1").unwrap_err();
    assert!(err.to_string().contains("certificate"), "{err}");
}

#[test]
fn reopening_reuses_the_ca_so_certificates_issued_before_and_after_trust_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let first = ClusterPki::open_or_create(dir.path()).unwrap();
    let ca_pem = std::fs::read(first.ca_cert()).unwrap();
    let before = first.issue_files("jobmanager", &hosts()).unwrap();
    let before_tls = tls_of(&before, &first.ca_cert());
    drop(first);
    let again = ClusterPki::open_or_create(dir.path()).unwrap();
    assert_eq!(std::fs::read(again.ca_cert()).unwrap(), ca_pem);
    let joined = ClusterPki::open(dir.path()).unwrap();
    let (identity, trust) = joined.issue_identity("taskmanager-joined", &hosts()).unwrap();
    let after = InternalTls::new(identity, trust).unwrap();
    handshake(before_tls.server.clone(), after.client.clone(), "127.0.0.1").unwrap();
    handshake(after.server.clone(), before_tls.client.clone(), "localhost").unwrap();
}

#[test]
fn a_corrupt_ca_certificate_is_an_error_naming_the_file_and_is_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    ClusterPki::open_or_create(dir.path()).unwrap();
    let cert = dir.path().join(TLS_DIR).join("ca.crt");
    std::fs::write(&cert, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").unwrap();
    let err = ClusterPki::open_or_create(dir.path()).unwrap_err();
    assert!(
        matches!(err, ClusterPkiError::Corrupt { ref path, .. } if *path == cert),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&cert.display().to_string()) && text.contains("remove"),
        "{text}"
    );
    assert!(
        std::fs::read_to_string(&cert).unwrap().contains("AAAA"),
        "left as it was"
    );
}

#[test]
fn a_ca_key_others_may_read_or_of_another_certificate_or_missing_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    ClusterPki::open_or_create(dir.path()).unwrap();
    let tls = dir.path().join(TLS_DIR);
    let key = tls.join("ca.key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = ClusterPki::open(dir.path()).unwrap_err();
    assert!(matches!(err, ClusterPkiError::TooOpen { mode: 0o644, .. }), "{err}");
    assert!(err.to_string().contains(&key.display().to_string()), "{err}");

    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(&key, KeyPair::generate().unwrap().serialize_pem()).unwrap();
    let err = ClusterPki::open(dir.path()).unwrap_err();
    assert!(
        matches!(err, ClusterPkiError::Corrupt { ref path, ref reason, .. } if *path == key && reason.contains("not the key of")),
        "{err}"
    );

    std::fs::remove_file(&key).unwrap();
    let err = ClusterPki::open_or_create(dir.path()).unwrap_err();
    assert!(
        matches!(err, ClusterPkiError::Incomplete { ref missing, .. } if *missing == key),
        "{err}"
    );
}

#[test]
fn an_expired_ca_is_refused_with_its_validity() {
    let dir = tempfile::tempdir().unwrap();
    let tls = dir.path().join(TLS_DIR);
    private_dir(&tls).unwrap();
    create_ca(&tls, OffsetDateTime::now_utc() - Duration::minutes(30)).unwrap();
    let err = ClusterPki::open_or_create(dir.path()).unwrap_err();
    assert!(matches!(err, ClusterPkiError::Expired { .. }), "{err}");
    assert!(
        err.to_string().contains(&tls.join("ca.crt").display().to_string()),
        "{err}"
    );
}

#[test]
fn joining_a_dir_without_a_ca_says_how_to_get_one_and_process_names_cannot_leave_the_dir() {
    let dir = tempfile::tempdir().unwrap();
    let err = ClusterPki::open(dir.path()).unwrap_err();
    assert!(matches!(err, ClusterPkiError::NoCa { .. }), "{err}");
    assert!(
        err.to_string().contains("security.ssl.internal.enabled: false"),
        "{err}"
    );
    let pki = ClusterPki::open_or_create(dir.path()).unwrap();
    let err = pki.issue_files("../escape", &hosts()).unwrap_err();
    assert!(matches!(err, ClusterPkiError::Issue { .. }), "{err}");
    assert!(!dir.path().join("escape.crt").exists());
}
