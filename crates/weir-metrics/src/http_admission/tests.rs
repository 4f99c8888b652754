//! The gate in front of a real exporter on 127.0.0.1: idle connections are closed to
//! make room for a scraper; and [`Admitting`] over an in-memory connection: a first
//! request while the served connections are full is answered 503 with
//! `Connection: close`.

use super::{admit, Admitting, ServerNames};
use crate::exporter::start_prometheus_exporter;
use crate::reporter_config::{PortRange, PrometheusReporterConfig};
use crate::sample::{MetricSample, MetricSource};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use weir_core::admission::{Gate, Limits};

struct Empty;

impl MetricSource for Empty {
    fn samples(&self) -> Vec<MetricSample> {
        Vec::new()
    }
}

fn limited(max_connections: usize, max_connections_per_peer: usize) -> PrometheusReporterConfig {
    PrometheusReporterConfig {
        name: "prom".into(),
        ports: PortRange::parse("0").unwrap(),
        max_connections,
        max_connections_per_peer,
    }
}

async fn connect_from(source: &str, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(to).await.unwrap()
}

const REQUEST: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

/// Sends a keep-alive request on `s` and reads the head of the answer.
async fn ask(s: &mut TcpStream) -> String {
    s.write_all(REQUEST).await.unwrap();
    let mut head = vec![0u8; 1024];
    let n = s.read(&mut head).await.unwrap();
    String::from_utf8_lossy(&head[..n]).into_owned()
}

/// Reads until the server closes `s`; what it sent.
async fn until_closed(s: &mut TcpStream) -> String {
    let mut all = Vec::new();
    match s.read_to_end(&mut all).await {
        Ok(_) => String::from_utf8_lossy(&all).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => String::from_utf8_lossy(&all).into_owned(),
        Err(e) => panic!("the connection was not closed: {e}"),
    }
}

#[tokio::test]
async fn idle_connections_beyond_the_limit_are_closed_to_let_a_scraper_in() {
    let exporter = start_prometheus_exporter(&limited(2, 2), "127.0.0.1", Arc::new(Empty))
        .await
        .unwrap();
    let mut idle = Vec::new();
    for _ in 0..10 {
        idle.push(connect_from("127.0.0.2", exporter.address()).await);
    }
    let mut scraper = connect_from("127.0.0.1", exporter.address()).await;
    let answer = ask(&mut scraper).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(until_closed(&mut idle[0]).await, "", "the oldest idle connection");
}

#[tokio::test]
async fn a_first_request_while_the_served_connections_are_full_gets_503_and_is_closed() {
    let limits = Limits {
        max_pending: 2,
        ..Limits::new(1, 4, Duration::from_secs(10))
    };
    let gate = Gate::new(limits);
    let names = ServerNames {
        server: "test server",
        keys: "test.max-connections",
    };
    let peer: SocketAddr = "127.0.0.2:1".parse().unwrap();
    let (served, _) = admit(&gate, peer, names).expect("a place");
    let (waiting, evicted) = admit(&gate, peer, names).expect("a place");
    served.establish(Instant::now()).result.unwrap();
    let (mut client, server) = tokio::io::duplex(4096);
    let app = axum::Router::new().fallback(|| async { "served" });
    let service = Admitting::new(TowerToHyperService::new(app), gate.clone(), waiting, names);
    let connection = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(server), service);
    let serving = tokio::spawn(connection);
    client.write_all(REQUEST).await.unwrap();
    let mut answer = String::new();
    client.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("connection: close"), "{answer}");
    assert!(
        answer.ends_with(
            "test server is at its connection limit: the server has its limit of 1 established connections\n"
        ),
        "{answer}"
    );
    serving.await.unwrap().unwrap();
    assert_eq!(gate.counts(), (0, 1), "the refused connection's place is free");
    drop(evicted);
}
