//! Loading the `security.ssl.*` settings: off, complete, and each way a file can be
//! wrong (the error names the key and the file).

use crate::test_pki::TestCa;
use crate::{rest_client_tls, rest_server_tls, InternalTls, SecurityError};
use weir_config::Configuration;

fn config(entries: &[(&str, String)]) -> Configuration {
    let mut c = Configuration::new();
    for (k, v) in entries {
        c.set_string(*k, v.clone());
    }
    c
}

fn internal(dir: &std::path::Path) -> Vec<(&'static str, String)> {
    let ca = TestCa::new("cluster");
    let trust = ca.write_ca(dir, "ca");
    let me = ca.issue(dir, "node");
    vec![
        ("security.ssl.internal.enabled", "true".into()),
        ("security.ssl.internal.cert", me.cert.display().to_string()),
        ("security.ssl.internal.key", me.key.display().to_string()),
        ("security.ssl.internal.trust-cert", trust.display().to_string()),
    ]
}

#[test]
fn internal_ssl_is_off_by_default() {
    assert!(InternalTls::from_config(&Configuration::new()).unwrap().is_none());
    assert!(rest_server_tls(&Configuration::new()).unwrap().is_none());
    assert!(rest_client_tls(&Configuration::new()).unwrap().is_none());
}

#[test]
fn internal_ssl_with_a_certificate_key_and_trust_cert_loads() {
    let dir = tempfile::tempdir().unwrap();
    let tls = InternalTls::from_config(&config(&internal(dir.path())))
        .unwrap()
        .expect("on");
    assert_eq!(tls.identity.certs.len(), 1);
    assert_eq!(tls.trust.roots.len(), 1);
}

#[test]
fn internal_ssl_without_a_trust_cert_names_the_missing_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = internal(dir.path());
    entries.retain(|(k, _)| *k != "security.ssl.internal.trust-cert");
    let err = InternalTls::from_config(&config(&entries)).unwrap_err();
    assert!(
        matches!(
            err,
            SecurityError::Missing {
                key: "security.ssl.internal.trust-cert",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn an_unreadable_certificate_file_names_the_key_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = internal(dir.path());
    let missing = dir.path().join("nowhere.crt");
    entries[1].1 = missing.display().to_string();
    let err = InternalTls::from_config(&config(&entries)).unwrap_err().to_string();
    assert!(err.starts_with("security.ssl.internal.cert: cannot read"), "{err}");
    assert!(err.contains(&missing.display().to_string()), "{err}");
}

#[test]
fn a_key_file_without_a_private_key_names_the_key_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = internal(dir.path());
    let garbage = dir.path().join("garbage.key");
    std::fs::write(&garbage, "not a key\n").unwrap();
    entries[2].1 = garbage.display().to_string();
    let err = InternalTls::from_config(&config(&entries)).unwrap_err().to_string();
    assert!(err.starts_with("security.ssl.internal.key: "), "{err}");
    assert!(err.contains("garbage.key is not valid"), "{err}");
}

#[test]
fn a_trust_cert_without_certificates_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = internal(dir.path());
    let empty = dir.path().join("empty.crt");
    std::fs::write(&empty, "").unwrap();
    entries[3].1 = empty.display().to_string();
    let err = InternalTls::from_config(&config(&entries)).unwrap_err().to_string();
    assert!(err.contains("no CERTIFICATE block"), "{err}");
}

#[test]
fn rest_client_authentication_needs_a_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("rest");
    let trust = ca.write_ca(dir.path(), "ca");
    let entries = vec![
        ("security.ssl.rest.enabled", "true".to_string()),
        ("security.ssl.rest.authentication-enabled", "true".to_string()),
        ("security.ssl.rest.trust-cert", trust.display().to_string()),
    ];
    let err = rest_client_tls(&config(&entries)).unwrap_err();
    assert!(
        matches!(
            err,
            SecurityError::Missing {
                key: "security.ssl.rest.cert",
                ..
            }
        ),
        "{err}"
    );
    let server = ca.issue(dir.path(), "server");
    let mut with_cert = entries.clone();
    with_cert.push(("security.ssl.rest.cert", server.cert.display().to_string()));
    with_cert.push(("security.ssl.rest.key", server.key.display().to_string()));
    assert!(rest_client_tls(&config(&with_cert)).unwrap().is_some());
    assert!(rest_server_tls(&config(&with_cert)).unwrap().is_some());
}
