//! The producer side of remote channels: the data server of one process
//! ([`DataServer`]) and its connections ([`ServerConnShared`]).
//!
//! One accept thread per server, admitting at most `taskmanager.data.max-connections`
//! connections (this file); per connection a reader thread that shakes hands
//! ([`handshake`]) and then reads requests, credit and cancels ([`requests`]), and a
//! writer thread (control frames first, then the channels that have something to send,
//! round-robin: [`writer`]). The connection's shared state is [`connection`]. A
//! requested subpartition gets a [`Listener::Remote`](crate::network::partition::subpartition::Listener)
//! so that producers and credit announcements queue its channel at the writer, exactly
//! as they queue a local channel at its gate; a channel with a priority event goes to
//! the front of the writer's queue and its event is sent as kind 2 (priority event).
//!
//! Invariants: a connection is in `conns` from its handshake until it closes, and holds
//! its place under the connection limit until it leaves `conns`; the invariants of one
//! connection are in [`connection`].

mod connection;
mod handshake;
mod requests;
mod writer;

pub(crate) use connection::ServerConnShared;

use super::stream::Halves;
use crate::network::buffer::lock;
use crate::network::config::NetworkConfig;
use crate::network::error::NetworkError;
use crate::network::partition::registry::PartitionRegistry;
use requests::Closed;
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use weir_core::admission::{Admitted, ConnectionLimit};

/// The data server of one process.
pub(crate) struct DataServer {
    shared: Arc<ServerShared>,
    local_addr: SocketAddr,
}

/// State shared by the accept thread and the connections.
pub(crate) struct ServerShared {
    registry: Arc<PartitionRegistry>,
    conns: Mutex<HashMap<u64, Arc<ServerConnShared>>>,
    next_conn: AtomicU64,
    shutdown: AtomicBool,
    /// TLS for every connection (`None`: plain TCP).
    tls: Option<Arc<rustls::ServerConfig>>,
    /// The bound on open connections, counted from accept to close.
    limit: ConnectionLimit,
    handshake_timeout: Duration,
    idle_timeout: Duration,
}

impl DataServer {
    /// Binds `bind` and starts accepting connections, with the TLS, connection limit
    /// and timeouts of `config`.
    pub(crate) fn start(
        bind: &str,
        registry: Arc<PartitionRegistry>,
        config: &NetworkConfig,
    ) -> Result<Self, NetworkError> {
        let bind_err = |e: std::io::Error| NetworkError::Bind {
            address: bind.to_owned(),
            reason: e.to_string(),
        };
        let listener = TcpListener::bind(bind).map_err(bind_err)?;
        let local_addr = listener.local_addr().map_err(bind_err)?;
        let shared = Arc::new(ServerShared {
            registry,
            conns: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(0),
            shutdown: AtomicBool::new(false),
            tls: config.tls.as_ref().map(|t| t.server.clone()),
            limit: ConnectionLimit::new(config.data_max_connections),
            handshake_timeout: Duration::from_millis(config.data_handshake_timeout_ms.max(1)),
            idle_timeout: Duration::from_millis(config.data_idle_timeout_ms.max(1)),
        });
        let accept = shared.clone();
        thread::Builder::new()
            .name(format!("weir-data-server-{}", local_addr.port()))
            .spawn(move || accept.accept_loop(listener))
            .map_err(bind_err)?;
        tracing::debug!(address = %local_addr, "data server started");
        Ok(Self { shared, local_addr })
    }

    /// The address the server listens on.
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Live connections.
    pub(crate) fn num_connections(&self) -> usize {
        lock(&self.shared.conns).len()
    }

    /// Fails and removes every channel reading a partition of `job_id`: the remote
    /// consumers get a PartitionReleased error, the producers `ConsumerReleased`.
    pub(crate) fn release_job(&self, job_id: &str, below_attempt: u32) {
        let conns: Vec<_> = lock(&self.shared.conns).values().cloned().collect();
        for conn in conns {
            conn.release_job(job_id, below_attempt);
        }
    }

    /// Stops accepting and closes every connection.
    pub(crate) fn shutdown(&self) {
        if self.shared.shutdown.swap(true, Ordering::AcqRel) {
            return;
        }
        // Wake the accept thread with a connection of our own.
        let mut wake = self.local_addr;
        if wake.ip().is_unspecified() {
            let ip = if wake.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            };
            wake.set_ip(ip);
        }
        let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(1));
        let conns: Vec<_> = lock(&self.shared.conns).drain().map(|(_, c)| c).collect();
        for conn in conns {
            conn.close("the data server shut down");
        }
    }
}

impl ServerShared {
    fn accept_loop(self: Arc<Self>, listener: TcpListener) {
        for stream in listener.incoming() {
            if self.shutdown.load(Ordering::Acquire) {
                break;
            }
            match stream {
                Ok(stream) => {
                    let admitted = match self.limit.try_admit(Instant::now()) {
                        Ok(admitted) => admitted,
                        Err(refused) => {
                            if let Some(refused) = refused.warn {
                                tracing::warn!(
                                    limit = self.limit.limit(),
                                    refused,
                                    "data server at its connection limit (taskmanager.data.max-connections): closing new connections"
                                );
                            }
                            drop(stream);
                            continue;
                        }
                    };
                    let me = self.clone();
                    let peer = stream
                        .peer_addr()
                        .map_or_else(|_| "unknown peer".to_owned(), |a| a.to_string());
                    let spawned = thread::Builder::new()
                        .name(format!("weir-data-in-{peer}"))
                        .spawn(move || me.serve(stream, peer, admitted));
                    if let Err(e) = spawned {
                        tracing::warn!(error = %e, "cannot start a data connection thread");
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "data server accept failed");
                    thread::sleep(Duration::from_millis(10));
                }
            }
        }
        tracing::debug!("data server stopped accepting");
    }

    /// Runs one connection: handshake, writer thread, then the read loop. `admitted`
    /// holds the connection's place under the limit until it ends (freed before the
    /// connection leaves `conns`, so a place is free once it is gone from there).
    fn serve(self: Arc<Self>, stream: TcpStream, peer: String, admitted: Admitted) {
        let tls = self.tls.as_ref();
        let Some(halves) = handshake::shake_hands(&stream, tls, self.handshake_timeout, self.idle_timeout, &peer)
        else {
            return;
        };
        let Some(conn) = self.register(stream, halves, &peer) else {
            return;
        };
        let reason = conn.read_loop(&self.registry, self.idle_timeout);
        match &reason {
            Ok(Closed::ByPeer) => tracing::debug!(peer = %peer, "data connection closed by the peer"),
            Ok(Closed::Idle) => tracing::debug!(peer = %peer, "closing an idle data connection"),
            Err(e) => tracing::warn!(peer = %peer, error = %e, "closing data connection"),
        }
        drop(admitted);
        lock(&self.conns).remove(&conn.id);
        conn.close(match &reason {
            Ok(Closed::ByPeer) => "closed by the peer",
            Ok(Closed::Idle) => "idle",
            Err(e) => e,
        });
    }

    /// Makes a connection that shook hands live: in `conns`, with its writer thread.
    fn register(&self, stream: TcpStream, halves: Halves, peer: &str) -> Option<Arc<ServerConnShared>> {
        let Halves { reader, writer } = halves;
        let conn = Arc::new(ServerConnShared::new(
            self.next_conn.fetch_add(1, Ordering::Relaxed),
            peer,
            stream,
            reader,
        ));
        {
            let mut conns = lock(&self.conns);
            if self.shutdown.load(Ordering::Acquire) {
                drop(conns);
                conn.close("the data server shut down");
                return None;
            }
            conns.insert(conn.id, conn.clone());
        }
        let conn_for_writer = conn.clone();
        let spawned = thread::Builder::new()
            .name(format!("weir-data-out-{peer}"))
            .spawn(move || conn_for_writer.write_loop(writer));
        if let Err(e) = spawned {
            tracing::warn!(peer = %peer, error = %e, "cannot start a data connection writer");
            lock(&self.conns).remove(&conn.id);
            conn.close("no writer thread");
            return None;
        }
        tracing::debug!(peer = %peer, "data connection accepted");
        Some(conn)
    }
}
