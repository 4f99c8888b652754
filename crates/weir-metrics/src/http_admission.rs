//! HTTP/1.1 connections under a [`Gate`] (`weir_core::admission`): the edge shared by
//! the Prometheus endpoint and the REST endpoint. A connection is pending from its
//! accept until its first request's headers have been read, then established.
//!
//! [`admit`] asks the gate for a new connection's place and signals the pending
//! connections it evicts; [`Admitting`] wraps a connection's service so that its first
//! request establishes it (answered `503` with `Connection: close` when the gate
//! refuses); the connection's task closes it when its [`Evicted`] signal fires.
//! Refusals and evictions are logged as one warning per burst, naming the server's keys.

use axum::body::Body;
use axum::http::{header, Request, Response, StatusCode};
use hyper::body::Incoming;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Notify;
use weir_core::admission::{Gate, Ticket, Warning};

/// Fires when the gate closes a pending connection to make room, or at its deadline.
pub type Evicted = Arc<Notify>;

/// The admission state of one HTTP server.
pub type HttpGate = Gate<Evicted>;

/// A connection's place.
pub type HttpTicket = Ticket<Evicted>;

/// What log lines call a server: its name and the keys that bound it.
#[derive(Debug, Clone, Copy)]
pub struct ServerNames {
    /// `"REST endpoint"`, `"Prometheus reporter"`.
    pub server: &'static str,
    /// The keys, for the warning (`rest.server.max-connections, …`).
    pub keys: &'static str,
}

/// Asks `gate` for the place of a connection from `peer` accepted now, signalling the
/// pending connections it evicts; the place and the connection's eviction signal, or
/// `None` when it is refused (then the caller drops the socket).
pub fn admit(gate: &Arc<HttpGate>, peer: SocketAddr, names: ServerNames) -> Option<(HttpTicket, Evicted)> {
    let evicted = Evicted::default();
    let decision = gate.admit(peer.ip(), Instant::now(), evicted.clone());
    for other in decision.close {
        other.notify_one();
    }
    if let Some(warning) = decision.warning {
        warn(gate, warning, names);
    }
    match decision.result {
        Ok(ticket) => Some((ticket, evicted)),
        Err(refusal) => {
            tracing::debug!(peer = %peer, "{} refused a connection: {refusal}", names.server);
            None
        }
    }
}

fn warn(gate: &HttpGate, warning: Warning, names: ServerNames) {
    let limits = gate.limits();
    tracing::warn!(
        max_connections = limits.max_connections,
        max_per_peer = limits.max_per_peer,
        refused = warning.refused,
        closed_before_a_request = warning.evicted,
        "{} at its connection limits ({}): refusing new connections and closing those without a request",
        names.server,
        names.keys
    );
}

/// A connection's service: the first request establishes the connection.
#[derive(Debug)]
pub struct Admitting<S> {
    inner: S,
    gate: Arc<HttpGate>,
    ticket: HttpTicket,
    names: ServerNames,
}

impl<S> Admitting<S> {
    /// `inner`, serving the connection that holds `ticket` of `gate`.
    pub fn new(inner: S, gate: Arc<HttpGate>, ticket: HttpTicket, names: ServerNames) -> Self {
        Self {
            inner,
            gate,
            ticket,
            names,
        }
    }
}

type Answer = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

impl<S> hyper::service::Service<Request<Incoming>> for Admitting<S>
where
    S: hyper::service::Service<Request<Incoming>, Response = Response<Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Answer;

    fn call(&self, request: Request<Incoming>) -> Answer {
        let decision = self.ticket.establish(Instant::now());
        if let Some(warning) = decision.warning {
            warn(&self.gate, warning, self.names);
        }
        match decision.result {
            Ok(()) => Box::pin(self.inner.call(request)),
            Err(refusal) => {
                tracing::debug!(
                    "{} closed a connection at its first request: {refusal}",
                    self.names.server
                );
                let body = format!("{} is at its connection limit: {refusal}\n", self.names.server);
                let answer = Response::builder()
                    .status(StatusCode::SERVICE_UNAVAILABLE)
                    .header(header::CONNECTION, "close")
                    .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
                    .body(Body::from(body))
                    .unwrap_or_default();
                Box::pin(std::future::ready(Ok(answer)))
            }
        }
    }
}

#[cfg(test)]
mod tests;
