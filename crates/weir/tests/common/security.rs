//! Certificates for the security tests, made at test time.

use std::path::Path;
use weir_security::test_pki::TestCa;

/// `-D` entries turning `prefix` (`internal` or `rest`) SSL on with a certificate of
/// `ca` (files named after `stem` in `dir`) that trusts `trusted`.
pub fn ssl(prefix: &str, dir: &Path, ca: &TestCa, trusted: &TestCa, stem: &str) -> Vec<String> {
    let me = ca.issue(dir, stem);
    let trust = trusted.write_ca(dir, &format!("{stem}-trust"));
    vec![
        format!("security.ssl.{prefix}.enabled=true"),
        format!("security.ssl.{prefix}.cert={}", me.cert.display()),
        format!("security.ssl.{prefix}.key={}", me.key.display()),
        format!("security.ssl.{prefix}.trust-cert={}", trust.display()),
    ]
}
