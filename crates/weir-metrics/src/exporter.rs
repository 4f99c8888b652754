//! The HTTP endpoint of a Prometheus reporter: `GET /metrics` (and `/`, as Flink's
//! reporter answers any path) returns the process's samples in the text exposition
//! format, read from its [`MetricSource`] at the moment of the scrape.
//!
//! A reporter binds the first free port of its list on the process's bind host. One
//! that finds no free port is not started; as in Flink, the process runs on without it
//! and says so in its log.
//!
//! Its connections pass a gate ([`crate::http_admission`]): at most
//! `metrics.reporter.<name>.max-connections` that sent a request, as many that have not
//! yet (each for at most [`HEADER_READ_TIMEOUT`]; a new connection closes the oldest),
//! and `metrics.reporter.<name>.max-connections-per-peer` from one address, so idle
//! connections can neither keep scrapers out nor exhaust the process's descriptors.

use crate::error::MetricsError;
use crate::exposition::{self, CONTENT_TYPE};
use crate::http_admission::{self, Admitting, HttpGate, ServerNames};
use crate::reporter_config::PrometheusReporterConfig;
use crate::sample::MetricSource;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use weir_core::admission::{Gate, Limits};

/// How long a connection may take for a request's headers, and may stay open without
/// a request, before it is closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

const NAMES: ServerNames = ServerNames {
    server: "Prometheus reporter",
    keys: "metrics.reporter.<name>.max-connections, metrics.reporter.<name>.max-connections-per-peer",
};

/// A started Prometheus reporter.
#[derive(Debug)]
pub struct PrometheusExporter {
    name: String,
    address: SocketAddr,
    server: JoinHandle<()>,
}

impl PrometheusExporter {
    /// The reporter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where it serves.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The URL of its metrics.
    pub fn url(&self) -> String {
        format!("http://{}/metrics", self.address)
    }
}

impl Drop for PrometheusExporter {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn scrape(source: Arc<dyn MetricSource>) -> Response {
    match exposition::encode(source.samples()) {
        Ok(text) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("could not encode the metrics: {e}"),
        )
            .into_response(),
    }
}

/// Binds `config`'s first free port on `host` and serves `source` there on the current
/// tokio runtime.
pub async fn start_prometheus_exporter(
    config: &PrometheusReporterConfig,
    host: &str,
    source: Arc<dyn MetricSource>,
) -> Result<PrometheusExporter, MetricsError> {
    let mut last_error = String::from("the port list is empty");
    for port in config.ports.ports() {
        let listener = match TcpListener::bind((host, port)).await {
            Ok(l) => l,
            Err(e) => {
                last_error = e.to_string();
                continue;
            }
        };
        let address = listener.local_addr().map_err(|e| MetricsError::Bind {
            reporter: config.name.clone(),
            host: host.to_string(),
            range: config.ports.to_string(),
            reason: e.to_string(),
        })?;
        let handler = move || scrape(source.clone());
        let app = Router::new()
            .route("/metrics", get(handler.clone()))
            .fallback(get(handler));
        let limits = Limits::new(
            config.max_connections,
            config.max_connections_per_peer,
            HEADER_READ_TIMEOUT,
        );
        let server = tokio::spawn(serve(listener, app, Gate::new(limits)));
        return Ok(PrometheusExporter {
            name: config.name.clone(),
            address,
            server,
        });
    }
    Err(MetricsError::Bind {
        reporter: config.name.clone(),
        host: host.to_string(),
        range: config.ports.to_string(),
        reason: last_error,
    })
}

/// Accepts connections on `listener` for `app` through `gate`, until aborted.
async fn serve(listener: TcpListener, app: Router, gate: Arc<HttpGate>) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "Prometheus reporter: accept failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let Some((ticket, evicted)) = http_admission::admit(&gate, peer, NAMES) else {
            continue;
        };
        let service = Admitting::new(TowerToHyperService::new(app.clone()), gate.clone(), ticket, NAMES);
        let connection = http.serve_connection(TokioIo::new(stream), service);
        tokio::spawn(async move {
            tokio::select! {
                served = connection => if let Err(e) = served {
                    tracing::debug!(peer = %peer, error = %e, "Prometheus reporter: connection ended with an error");
                },
                () = evicted.notified() => {
                    tracing::debug!(peer = %peer, "Prometheus reporter: closing a connection without a request");
                }
            }
        });
    }
}

/// Starts every reporter of `configs`; one that cannot bind is logged (to the tracing
/// log and stderr) and left out, as Flink leaves out a reporter that fails to start.
pub async fn start_prometheus_exporters(
    configs: &[PrometheusReporterConfig],
    host: &str,
    source: Arc<dyn MetricSource>,
) -> Vec<PrometheusExporter> {
    let mut started = Vec::new();
    for config in configs {
        match start_prometheus_exporter(config, host, source.clone()).await {
            Ok(exporter) => started.push(exporter),
            Err(e) => {
                tracing::error!("{e}; the process runs without this reporter");
                eprintln!("error: {e}; the process runs without this reporter");
            }
        }
    }
    started
}

/// The start-up line's fields of started reporters: ` metrics.<name>=<url>` each.
pub fn start_line_fields(exporters: &[PrometheusExporter]) -> String {
    exporters
        .iter()
        .map(|e| format!(" metrics.{}={}", e.name(), e.url()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reporter_config::PortRange;
    use crate::sample::{MetricSample, Scope};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    struct Fixed;

    impl MetricSource for Fixed {
        fn samples(&self) -> Vec<MetricSample> {
            vec![MetricSample {
                scope: Scope::JobManager,
                name: "numRunningJobs".into(),
                labels: vec![("host", "127.0.0.1".into())],
                value: 3.0,
            }]
        }
    }

    async fn get(address: SocketAddr, path: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    }

    fn config(ports: &str) -> PrometheusReporterConfig {
        PrometheusReporterConfig {
            name: "prom".into(),
            ports: PortRange::parse(ports).unwrap(),
            max_connections: 2,
            max_connections_per_peer: 2,
        }
    }

    #[tokio::test]
    async fn a_scrape_returns_the_sources_samples_as_prometheus_text() {
        let exporter = start_prometheus_exporter(&config("0"), "127.0.0.1", Arc::new(Fixed))
            .await
            .unwrap();
        assert_eq!(exporter.url(), format!("http://{}/metrics", exporter.address()));
        for path in ["/metrics", "/"] {
            let response = get(exporter.address(), path).await;
            assert!(response.starts_with("HTTP/1.1 200"), "{response}");
            assert!(
                response.contains("content-type: text/plain; version=0.0.4"),
                "{response}"
            );
            assert!(
                response.contains("flink_jobmanager_numRunningJobs{host=\"127.0.0.1\"} 3"),
                "{response}"
            );
        }
    }

    #[tokio::test]
    async fn the_next_free_port_of_the_range_is_taken() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let Some(next) = port.checked_add(1) else {
            return;
        };
        let range = format!("{port}-{next}");
        match start_prometheus_exporter(&config(&range), "127.0.0.1", Arc::new(Fixed)).await {
            Ok(exporter) => assert_eq!(exporter.address().port(), next),
            // The neighbouring port may be in use by another process: then no port of
            // the range is free, and the error says which range.
            Err(MetricsError::Bind { range: r, .. }) => assert_eq!(r, range),
            Err(e) => panic!("unexpected error {e}"),
        }
    }

    #[tokio::test]
    async fn a_reporter_without_a_free_port_is_left_out() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port().to_string();
        let started = start_prometheus_exporters(&[config(&port), config("0")], "127.0.0.1", Arc::new(Fixed)).await;
        assert_eq!(started.len(), 1);
        assert_ne!(started[0].address().port().to_string(), port);
    }
}
