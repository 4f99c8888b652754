//! `weir start-cluster` with internal and REST SSL: the JobManager and TaskManagers it
//! starts talk mutual TLS, it checks their readiness over HTTPS, and `weir run`,
//! `weir list` and `weir cancel` with the same `security.ssl.rest.*` keys (here from a
//! `config.yaml`) drive the cluster, while a client without them cannot.

mod common;

use common::security::ssl;
use common::*;
use std::time::Duration;
use weir_security::test_pki::TestCa;

/// `weir <args>` with `WEIR_CONF_DIR=conf`.
fn weir_in(conf: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    weir_with_env(args, &[("WEIR_CONF_DIR", conf.to_str().unwrap())], None)
}

#[test]
fn start_cluster_with_ssl_keys_starts_a_tls_cluster_that_run_list_and_cancel_drive_with_the_same_keys() {
    let pki = tempfile::tempdir().unwrap();
    let ca = TestCa::new("cluster");
    let mut settings = ssl("internal", pki.path(), &ca, &ca, "node");
    let rest = ssl("rest", pki.path(), &ca, &ca, "rest");
    settings.extend(rest.iter().cloned());
    settings.push("security.ssl.rest.authentication-enabled=true".into());
    let dynamic: Vec<&str> = settings.iter().map(String::as_str).collect();
    let cluster = BackgroundCluster::start(2, &dynamic);
    assert!(
        cluster
            .start_output
            .contains(&format!("2 TaskManagers, 2 slots, REST on https://{}", cluster.rest)),
        "{}",
        cluster.start_output
    );

    // The client's keys come from a config.yaml: REST SSL with a client certificate.
    let conf = tempfile::tempdir().unwrap();
    let yaml: String = rest
        .iter()
        .chain(std::iter::once(
            &"security.ssl.rest.authentication-enabled=true".to_string(),
        ))
        .map(|kv| kv.replacen('=', ": ", 1) + "\n")
        .collect();
    std::fs::write(conf.path().join("config.yaml"), yaml).unwrap();

    let out_dir = pki.path().join("sums");
    let output = format!("output={}", out_dir.display());
    let mut args = vec!["run", "-m", &cluster.rest, "-p", "2", "keyed-sum"];
    for arg in ["keys=5", "records=1000", &output] {
        args.extend(["--arg", arg]);
    }
    let (code, out, err) = weir_in(conf.path(), &args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("reached state FINISHED"), "{out}");
    assert_eq!(read_parts(&out_dir), keyed_sum_output(5, 42, 1000));

    let mut slow = vec!["run", "-m", &cluster.rest, "-d", "keyed-sum"];
    for arg in ["records=100000000", "rate_per_sec=1000"] {
        slow.extend(["--arg", arg]);
    }
    let (code, out, err) = weir_in(conf.path(), &slow);
    assert_eq!(code, 0, "{out}{err}");
    let jid = job_id(&out);
    wait_until(Duration::from_secs(30), || {
        weir_in(conf.path(), &["list", "-m", &cluster.rest])
            .1
            .contains(&format!("{jid} : keyed-sum (RUNNING)"))
    });
    let (code, out, err) = weir_in(conf.path(), &["cancel", "-m", &cluster.rest, &jid]);
    assert_eq!(code, 0, "{out}{err}");
    wait_until(Duration::from_secs(30), || {
        weir_in(conf.path(), &["list", "-m", &cluster.rest])
            .1
            .contains(&format!("{jid} : keyed-sum (CANCELED)"))
    });

    let (code, _, err) = weir_cli(&["list", "-m", &cluster.rest]);
    assert_ne!(code, 0, "a client without the keys is refused");
    assert!(err.contains("cannot reach the JobManager"), "{err}");
}
