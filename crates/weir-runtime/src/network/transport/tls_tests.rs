//! Scenarios of the data plane's security and bounds: mutual TLS between two
//! environments, a consumer or a plaintext client the data server does not trust, and
//! the idle timeouts of both ends and the connection limit of the data server.

use super::protocol;
use super::tests::{config, expected, node, pid, produce, raw, read_all, read_until_closed, remote, wait_until};
use crate::network::*;
use std::io::{Read, Write};
use std::path::Path;
use weir_security::test_pki::TestCa;
use weir_security::InternalTls;

/// The data plane TLS of a process holding a certificate of `ca` that trusts `trusted`.
fn tls(dir: &Path, ca: &TestCa, trusted: &TestCa, stem: &str) -> DataPlaneTls {
    let me = ca.issue(dir, stem);
    let trust = trusted.write_ca(dir, &format!("{stem}-trust"));
    let mut c = weir_config::Configuration::new();
    c.set_string("security.ssl.internal.enabled", "true");
    c.set_string("security.ssl.internal.cert", me.cert.display().to_string());
    c.set_string("security.ssl.internal.key", me.key.display().to_string());
    c.set_string("security.ssl.internal.trust-cert", trust.display().to_string());
    let internal = InternalTls::from_config(&c).unwrap().expect("internal SSL is on");
    DataPlaneTls {
        server: internal.server.clone(),
        client: internal.client.clone(),
    }
}

fn with_tls(tls: DataPlaneTls) -> NetworkConfig {
    NetworkConfig {
        tls: Some(tls),
        ..config()
    }
}

#[test]
fn a_remote_channel_over_mutual_tls_delivers_records_and_events_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("cluster");
    let a = node(with_tls(tls(dir.path(), &ca, &ca, "a")));
    let b = node(with_tls(tls(dir.path(), &ca, &ca, "b")));
    let (w, subs) = a.env.create_result_partition(2, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), subs).unwrap();
    let specs = vec![remote(&a.addr, pid(1, 0), 0), remote(&a.addr, pid(1, 0), 1)];
    let gate = b.env.create_input_gate_from_specs(specs, CancelToken::new()).unwrap();
    let producer = produce(w, 20_000, 1_000);
    let mut reader = RecordReader::<(u32, u64)>::new(gate);
    assert_eq!(read_all(&mut reader).unwrap(), expected(2, 20_000, 1_000));
    producer.join().unwrap();
    assert_eq!((b.env.num_connections(), a.env.num_server_connections()), (1, 1));
}

#[test]
fn a_consumer_whose_certificate_another_ca_signed_cannot_read_a_partition() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, other) = (TestCa::new("cluster"), TestCa::new("intruder"));
    let a = node(with_tls(tls(dir.path(), &ca, &ca, "a")));
    // Trusts the cluster's CA, so only the server's check of the client can fail.
    let intruder = node(with_tls(tls(dir.path(), &other, &ca, "intruder")));
    let (_w, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), subs).unwrap();
    let result = intruder
        .env
        .create_input_gate_from_specs(vec![remote(&a.addr, pid(1, 0), 0)], CancelToken::new())
        .and_then(|gate| read_all(&mut RecordReader::<(u32, u64)>::new(gate)));
    let err = result.expect_err("an untrusted consumer reads nothing");
    assert!(
        matches!(
            err,
            NetworkError::PartitionGone { .. } | NetworkError::ConnectionLost { .. }
        ),
        "{err:?}"
    );
    assert_eq!(a.env.num_server_connections(), 0);
}

#[test]
fn a_plaintext_client_gets_no_hello_from_a_tls_data_server() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("cluster");
    let a = node(with_tls(tls(dir.path(), &ca, &ca, "a")));
    let mut s = raw(&a.addr);
    s.write_all(&protocol::hello()).unwrap();
    let answer = read_until_closed(&mut s);
    assert!(!answer.starts_with(&protocol::MAGIC.to_be_bytes()), "{answer:?}");
    assert_eq!(a.env.num_server_connections(), 0);
}

/// A raw connection that said hello and got the server's hello back.
fn greeted(addr: &str) -> std::net::TcpStream {
    let mut s = raw(addr);
    s.write_all(&protocol::hello()).unwrap();
    let mut hello = [0u8; protocol::HELLO_LEN];
    s.read_exact(&mut hello).unwrap();
    assert_eq!(hello, protocol::hello());
    s
}

#[test]
fn a_connection_that_serves_no_channel_is_closed_after_the_idle_timeout() {
    let a = node(NetworkConfig {
        data_idle_timeout_ms: 100,
        ..config()
    });
    let mut s = greeted(&a.addr);
    wait_until("the idle connection is closed", || a.env.num_server_connections() == 0);
    assert_eq!(read_until_closed(&mut s), Vec::<u8>::new());
}

#[test]
fn connections_beyond_the_limit_are_closed_without_a_hello_until_one_closes() {
    let a = node(NetworkConfig {
        data_max_connections: 2,
        ..config()
    });
    let first = greeted(&a.addr);
    let _second = greeted(&a.addr);
    let mut third = raw(&a.addr);
    third.write_all(&protocol::hello()).unwrap();
    assert_eq!(read_until_closed(&mut third), Vec::<u8>::new());
    wait_until("both admitted connections are served", || {
        a.env.num_server_connections() == 2
    });
    drop(first);
    wait_until("the closed connection's place is free", || {
        a.env.num_server_connections() == 1
    });
    let _fourth = greeted(&a.addr);
    wait_until("the new connection is served", || a.env.num_server_connections() == 2);
}

#[test]
fn a_client_connection_whose_channels_ended_closes_after_the_idle_timeout_and_a_later_gate_reconnects() {
    let a = node(config());
    let b = node(NetworkConfig {
        data_idle_timeout_ms: 100,
        ..config()
    });
    for edge in [1, 2] {
        let (w, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
        a.env.register_partition(pid(edge, 0), subs).unwrap();
        let gate = b
            .env
            .create_input_gate_from_specs(vec![remote(&a.addr, pid(edge, 0), 0)], CancelToken::new())
            .unwrap();
        let producer = produce(w, 500, 100);
        let mut reader = RecordReader::<(u32, u64)>::new(gate);
        assert_eq!(read_all(&mut reader).unwrap(), expected(1, 500, 100), "gate {edge}");
        producer.join().unwrap();
        drop(reader);
        wait_until("the client closed its idle connection", || b.env.num_connections() == 0);
        wait_until("the server saw the client go", || a.env.num_server_connections() == 0);
    }
}
