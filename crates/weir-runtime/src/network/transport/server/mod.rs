//! The producer side of remote channels: the data server of one process
//! ([`DataServer`]) and its connections ([`ServerConnShared`]).
//!
//! One accept thread per server, admitting connections through a
//! [`Gate`] (this file): `taskmanager.data.max-connections` established ones, as many in
//! their handshake (the oldest of which is closed when a new one needs its place, so
//! connections that never say hello cannot keep TaskManagers out), and
//! `taskmanager.data.max-connections-per-peer` from one address; per connection a
//! reader thread that shakes hands ([`handshake`]) and then reads requests, credit and
//! cancels ([`requests`]), and a
//! writer thread (control frames first, then the channels that have something to send,
//! round-robin: [`writer`]). The connection's shared state is [`connection`]. A
//! requested subpartition gets a [`Listener::Remote`](crate::network::partition::subpartition::Listener)
//! so that producers and credit announcements queue its channel at the writer, exactly
//! as they queue a local channel at its gate; a channel with a priority event goes to
//! the front of the writer's queue and its event is sent as kind 2 (priority event).
//!
//! Invariants: a connection holds a [`Ticket`] of the gate from its accept until it
//! closes, pending until its hello and then established; it is in `conns` from its
//! handshake until it closes and frees its place before it leaves `conns`; the
//! invariants of one connection are in [`connection`].

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
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};
use weir_core::admission::{Gate, Limits, Ticket, Warning};

/// What closes a connection still in its handshake: a handle on its socket.
type Closer = TcpStream;

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
    /// The bounds on connections, counted from accept to close.
    gate: Arc<Gate<Closer>>,
    handshake_timeout: Duration,
    idle_timeout: Duration,
}

impl DataServer {
    /// Binds `bind` and starts accepting connections, with the TLS, connection limits
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
        let handshake_timeout = Duration::from_millis(config.data_handshake_timeout_ms.max(1));
        let limits = Limits::new(
            config.data_max_connections,
            config.data_max_connections_per_peer,
            handshake_timeout,
        );
        let shared = Arc::new(ServerShared {
            registry,
            conns: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(0),
            shutdown: AtomicBool::new(false),
            tls: config.tls.as_ref().map(|t| t.server.clone()),
            gate: Gate::new(limits),
            handshake_timeout,
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
                Ok(stream) => self.admit(stream),
                Err(e) => {
                    tracing::warn!(error = %e, "data server accept failed");
                    thread::sleep(Duration::from_millis(10));
                }
            }
        }
        tracing::debug!("data server stopped accepting");
    }

    /// Gives `stream` a place and a thread, or closes it; closes the connections in
    /// their handshake that the gate evicted for it.
    fn admit(self: &Arc<Self>, stream: TcpStream) {
        let address = match stream.peer_addr() {
            Ok(address) => address,
            Err(e) => {
                tracing::debug!(error = %e, "data server: a connection closed before it was admitted");
                return;
            }
        };
        let closer = match stream.try_clone() {
            Ok(closer) => closer,
            Err(e) => {
                tracing::warn!(peer = %address, error = %e, "data server: cannot admit a connection");
                return;
            }
        };
        let decision = self.gate.admit(address.ip(), Instant::now(), closer);
        for evicted in decision.close {
            if let Err(e) = evicted.shutdown(Shutdown::Both) {
                tracing::debug!(error = %e, "data server: closing a connection in its handshake");
            }
        }
        if let Some(warning) = decision.warning {
            self.warn(warning);
        }
        let ticket = match decision.result {
            Ok(ticket) => ticket,
            Err(refusal) => {
                tracing::debug!(peer = %address, "data server refused a connection: {refusal}");
                return;
            }
        };
        let me = self.clone();
        let peer = address.to_string();
        let spawned = thread::Builder::new()
            .name(format!("weir-data-in-{peer}"))
            .spawn(move || me.serve(stream, peer, ticket));
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start a data connection thread");
        }
    }

    fn warn(&self, warning: Warning) {
        let limits = self.gate.limits();
        tracing::warn!(
            max_connections = limits.max_connections,
            max_per_peer = limits.max_per_peer,
            refused = warning.refused,
            closed_in_handshake = warning.evicted,
            "data server at its connection limits (taskmanager.data.max-connections, \
             taskmanager.data.max-connections-per-peer, taskmanager.data.handshake-timeout): \
             refusing new connections and closing those that have not said hello"
        );
    }

    /// Runs one connection: handshake, writer thread, then the read loop. `ticket`
    /// holds the connection's place until it ends (freed before the connection leaves
    /// `conns`, so a place is free once it is gone from there).
    fn serve(self: Arc<Self>, stream: TcpStream, peer: String, ticket: Ticket<Closer>) {
        let tls = self.tls.as_ref();
        let establish = || {
            let established = ticket.establish(Instant::now());
            if let Some(warning) = established.warning {
                self.warn(warning);
            }
            match established.result {
                Ok(()) => true,
                Err(refusal) => {
                    tracing::debug!(peer = %peer, "data server closed a connection after its hello: {refusal}");
                    false
                }
            }
        };
        let Some(halves) = handshake::shake_hands(
            &stream,
            tls,
            self.handshake_timeout,
            self.idle_timeout,
            &peer,
            establish,
        ) else {
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
        drop(ticket);
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
