//! Serving a router on a socket: plain HTTP/1.1 or HTTPS (rustls), with client
//! certificate authentication when the TLS configuration asks for it, bounds on
//! connections (`weir_metrics::http_admission`) and a timeout for each request's
//! headers (and for the TLS handshake).
//!
//! Invariants: at most [`RestServerOptions::max_connections`] connections that sent a
//! request are served at once, and as many that have not yet; a new connection while
//! the latter are full closes the oldest of them (so slow connections cannot lock
//! users out), one while the former are full is closed at once, and a burst of either
//! logs one warning; one address has at most
//! [`RestServerOptions::max_connections_per_peer`] connections; a connection that does
//! not complete its TLS handshake, or a request's headers, within
//! [`RestServerOptions::header_read_timeout`] is closed; on shutdown no connection is
//! accepted any more and the open ones are finished gracefully.

use axum::http::HeaderValue;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;
use weir_core::admission::{Gate, Limits};
use weir_metrics::http_admission::{self, Admitting, ServerNames};

const NAMES: ServerNames = ServerNames {
    server: "REST endpoint",
    keys: "rest.server.max-connections, rest.server.max-connections-per-peer, rest.server.header-read-timeout",
};

/// How the REST endpoint serves: TLS, CORS and connection bounds.
#[derive(Debug, Clone)]
pub struct RestServerOptions {
    /// HTTPS with this configuration (`security.ssl.rest.*`); `None`: plain HTTP.
    pub tls: Option<Arc<ServerConfig>>,
    /// The `Access-Control-Allow-Origin` of every response
    /// (`web.access-control-allow-origin`); `None`: no such header.
    pub allow_origin: Option<HeaderValue>,
    /// Connections served at once once they sent a request, and again as many that
    /// have not yet (`rest.server.max-connections`).
    pub max_connections: usize,
    /// Connections served at once for one address
    /// (`rest.server.max-connections-per-peer`).
    pub max_connections_per_peer: usize,
    /// How long a connection may take for its TLS handshake and for each request's
    /// headers (`rest.server.header-read-timeout`).
    pub header_read_timeout: Duration,
}

impl Default for RestServerOptions {
    fn default() -> Self {
        Self {
            tls: None,
            allow_origin: None,
            max_connections: 512,
            max_connections_per_peer: 128,
            header_read_timeout: Duration::from_secs(30),
        }
    }
}

/// Serves `app` on `listener` until `signal` completes, then stops accepting and
/// returns once the open connections are done.
pub async fn serve_app<F>(listener: TcpListener, app: Router, options: RestServerOptions, signal: F) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let gate = Gate::new(Limits::new(
        options.max_connections,
        options.max_connections_per_peer,
        options.header_read_timeout,
    ));
    let acceptor = options.tls.clone().map(TlsAcceptor::from);
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout);
    tokio::pin!(signal);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "REST endpoint: accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = &mut signal => break,
        };
        let Some((ticket, evicted)) = http_admission::admit(&gate, peer, NAMES) else {
            continue;
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(peer = %peer, error = %e, "REST endpoint: cannot set TCP_NODELAY");
        }
        let service = Admitting::new(TowerToHyperService::new(app.clone()), gate.clone(), ticket, NAMES);
        let http = http.clone();
        let watcher = graceful.watcher();
        let acceptor = acceptor.clone();
        let handshake_timeout = options.header_read_timeout;
        let connection = async move {
            match acceptor {
                None => {
                    watcher
                        .watch(http.serve_connection(TokioIo::new(stream), service))
                        .await
                }
                Some(acceptor) => match tokio::time::timeout(handshake_timeout, acceptor.accept(stream)).await {
                    Ok(Ok(tls)) => watcher.watch(http.serve_connection(TokioIo::new(tls), service)).await,
                    Ok(Err(e)) => {
                        tracing::debug!(peer = %peer, error = %e, "REST endpoint: TLS handshake failed");
                        Ok(())
                    }
                    Err(_) => {
                        tracing::debug!(peer = %peer, "REST endpoint: no TLS handshake in time");
                        Ok(())
                    }
                },
            }
        };
        tokio::spawn(async move {
            tokio::select! {
                served = connection => if let Err(e) = served {
                    tracing::debug!(peer = %peer, error = %e, "REST endpoint: connection ended with an error");
                },
                () = evicted.notified() => {
                    tracing::debug!(peer = %peer, "REST endpoint: closing a connection without a request");
                }
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
