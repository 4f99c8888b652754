//! Outsiders against the connection limits of a real cluster of `weir` processes: an
//! attacker on 127.0.0.2 (all of 127/8 is loopback on Linux) holds more idle
//! connections than a server's limit — to a TaskManager's data port, to the REST
//! endpoint, to a Prometheus reporter — and the cluster's own peers and users are
//! still served, because connections that never speak are closed to make room for
//! those that do.

mod common;

use common::*;
use serde_json::json;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

const ATTACKER: &str = "127.0.0.2";

/// `n` connections from [`ATTACKER`] to `to` (`host:port`), each having sent `first`.
fn attack(to: &str, n: usize, first: &[u8]) -> Vec<TcpStream> {
    let to: SocketAddr = to.parse().expect("host:port");
    let source: SocketAddr = format!("{ATTACKER}:0").parse().unwrap();
    (0..n)
        .map(|_| {
            let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
            socket.bind(&source.into()).expect("bind 127.0.0.2");
            socket.connect(&to.into()).expect("connect");
            let mut stream: TcpStream = socket.into();
            stream.write_all(first).expect("send");
            stream
        })
        .collect()
}

/// Waits until the server closes `s` (what it sent is discarded).
fn closed_by_server(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 512];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) => return e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

/// Open descriptors of process `pid`.
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

#[test]
fn a_job_exchanging_data_between_two_taskmanagers_finishes_while_idle_connections_flood_their_data_ports() {
    let limits = [
        "taskmanager.data.max-connections=8".to_string(),
        // Idle connections are not closed for their slowness within the test: only
        // the admission of new connections can make room.
        "taskmanager.data.handshake-timeout=10 min".to_string(),
    ];
    let cluster = Cluster::start_with(2, 1, &[], &limits);
    let mut idle = Vec::new();
    for tm in &cluster.tms {
        let data = tm.field("data").expect("the data address");
        idle.push(attack(&data, 12, b""));
    }
    let out = tempfile::tempdir().unwrap();
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 2,
        "args": { "keys": "50", "records": "5000", "seed": "7",
                  "output": out.path().display().to_string() },
    }));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(300)), "FINISHED");
    assert_eq!(read_parts(out.path()), keyed_sum_output(50, 7, 5000));
    for flood in &mut idle {
        assert!(closed_by_server(&mut flood[0]), "the oldest idle connection was closed");
    }
}

#[test]
fn a_user_is_answered_while_slow_connections_exceed_the_rest_endpoints_limit() {
    let cluster = Cluster::start(0, 1, &["rest.server.max-connections=8"]);
    let mut slow = attack(&cluster.rest, 12, b"GET /overview HTTP/1.1\r\nHost: x\r\n");
    let (code, overview) = get(&cluster.rest, "/overview");
    assert_eq!(code, 200, "{overview}");
    assert_eq!(overview["taskmanagers"], 0, "{overview}");
    assert!(closed_by_server(&mut slow[0]), "the oldest slow connection was closed");
}

#[test]
fn a_scrape_is_answered_and_descriptors_stay_bounded_while_idle_connections_flood_the_prometheus_reporter() {
    let reporter = [
        "metrics.reporter.prom.factory.class=org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
        "metrics.reporter.prom.port=0",
    ];
    let cluster = Cluster::start(0, 1, &reporter);
    let url = cluster.jm.field("metrics.prom").expect("the reporter's URL");
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_string();
    let scrape = || ureq::get(&url).call().map(|r| r.status()).map_err(|e| e.to_string());
    assert_eq!(scrape().expect("a scrape"), 200);
    let pid = cluster.jm.child.id();
    let before = open_fds(pid);
    let _idle = attack(&address, 200, b"");
    assert_eq!(scrape().expect("a scrape during the flood"), 200);
    // The default bounds: 16 connections with a request and 16 without.
    let bound = before + 2 * 16;
    wait_until(Duration::from_secs(60), || open_fds(pid) <= bound);
}
