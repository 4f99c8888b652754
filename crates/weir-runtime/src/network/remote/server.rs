//! The producer side of remote channels: the data server of one process
//! ([`DataServer`]) and its connections ([`ServerConnShared`]).
//!
//! One accept thread per server; per connection a reader thread (handshake, then
//! requests, credit and cancels) and a writer thread (control frames first, then the
//! channels that have something to send, round-robin). A requested subpartition gets a
//! [`Listener::Remote`](crate::network::subpartition::Listener) so that producers and
//! credit announcements queue its channel at the writer, exactly as they queue a local
//! channel at its gate; a channel with a priority event goes to the front of the
//! writer's queue and its event is sent as kind 2 (priority event).
//!
//! Invariants: a channel id is in `available` at most once (the subpartition's
//! `in_gate_queue` flag); `control` holds at most [`MAX_CONTROL_QUEUE`] frames pushed
//! by the reader (which waits for space); a channel is in `channels` from its accepted
//! request until EndOfPartition or a failure was written, or until the client cancels
//! it — then its subpartition is released as consumer; closing the connection releases
//! every channel still in `channels`. Lock order: subpartition → connection state.

use super::protocol::{
    self, ControlFrame, ErrorCode, Frame, WireError, HELLO_LEN, KIND_DATA, KIND_EVENT, KIND_PRIORITY_EVENT,
};
use super::transport::{self, Halves};
use super::{Lookup, PartitionId, PartitionRegistry, MAX_CONTROL_QUEUE};
use crate::network::buffer::lock;
use crate::network::config::NetworkConfig;
use crate::network::error::NetworkError;
use crate::network::subpartition::{RemoteTaken, Subpartition};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, BufWriter, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};
use weir_core::admission::{Admitted, ConnectionLimit};
use weir_core::Event;

/// Capacity of a connection's read and write buffers.
const IO_BUFFER: usize = 256 * 1024;

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
        let Some(conn) = self.handshake(stream, &peer) else {
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

    fn handshake(&self, stream: TcpStream, peer: &str) -> Option<Arc<ServerConnShared>> {
        let log_failure = |e: &std::io::Error| {
            if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
                tracing::debug!(peer = %peer, "data connection sent no hello in time");
            } else {
                tracing::warn!(peer = %peer, error = %e, "data connection closed during the handshake");
            }
        };
        let Halves { mut reader, mut writer } =
            match transport::accept(&stream, self.tls.as_ref(), self.handshake_timeout) {
                Ok(halves) => halves,
                Err(e) => {
                    log_failure(&e);
                    return None;
                }
            };
        let mut hello = [0u8; HELLO_LEN];
        if let Err(e) = reader.read_exact(&mut hello) {
            log_failure(&e);
            return None;
        }
        let (magic, version) = protocol::parse_hello(&hello);
        if magic != protocol::MAGIC {
            tracing::warn!(
                peer = %peer,
                magic = format_args!("{magic:#010x}"),
                "rejecting data connection: bad magic (not a Weir data client)"
            );
            return None;
        }
        if let Err(e) = writer.write_all(&protocol::hello()) {
            tracing::warn!(peer = %peer, error = %e, "data connection closed during the handshake");
            return None;
        }
        if version != protocol::PROTOCOL_VERSION {
            let message = format!(
                "protocol version mismatch: the data server speaks version {}, the client {version}",
                protocol::PROTOCOL_VERSION
            );
            tracing::warn!(peer = %peer, "rejecting data connection: {message}");
            let _ = protocol::write_control(
                &mut writer,
                &ControlFrame::ErrorResponse {
                    channel: None,
                    code: ErrorCode::VersionMismatch,
                    message,
                },
            );
            return None;
        }
        let prepared = stream
            .set_read_timeout(Some(self.idle_timeout))
            .and_then(|()| stream.set_write_timeout(None))
            .and_then(|()| stream.set_nodelay(true));
        if let Err(e) = prepared {
            tracing::warn!(peer = %peer, error = %e, "cannot set up a data connection");
            return None;
        }
        let conn = Arc::new(ServerConnShared {
            id: self.next_conn.fetch_add(1, Ordering::Relaxed),
            peer: peer.to_owned(),
            stream,
            reader: Mutex::new(Some(reader)),
            state: Mutex::new(ServerConnState {
                channels: HashMap::new(),
                available: VecDeque::new(),
                control: VecDeque::new(),
                closed: false,
            }),
            wake: Condvar::new(),
            space: Condvar::new(),
        });
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

/// One requested channel on a server connection.
struct ServerChannel {
    id: u64,
    partition: PartitionId,
    sub: Arc<Subpartition>,
    /// Sequence number of the next BufferResponse (touched by the writer only).
    next_sequence: AtomicU64,
}

/// One accepted connection of the data server.
pub(crate) struct ServerConnShared {
    id: u64,
    peer: String,
    /// A handle on the socket for shutting it down.
    stream: TcpStream,
    /// The reading half, taken by the read loop.
    reader: Mutex<Option<Box<dyn Read + Send>>>,
    state: Mutex<ServerConnState>,
    /// Wakes the writer.
    wake: Condvar,
    /// Wakes the reader waiting for control queue space.
    space: Condvar,
}

struct ServerConnState {
    channels: HashMap<u64, Arc<ServerChannel>>,
    available: VecDeque<u64>,
    control: VecDeque<ControlFrame>,
    closed: bool,
}

/// How a connection ended without a protocol error.
enum Closed {
    /// The peer closed it.
    ByPeer,
    /// It served no channel and stayed silent for the idle timeout.
    Idle,
}

enum Work {
    Control(ControlFrame),
    Channel(Arc<ServerChannel>),
}

impl ServerConnShared {
    fn state(&self) -> MutexGuard<'_, ServerConnState> {
        lock(&self.state)
    }

    /// Queues `channel` at the writer (its subpartition marked itself queued).
    pub(crate) fn enqueue_channel(&self, channel: u64) {
        let mut st = self.state();
        if st.closed {
            return;
        }
        st.available.push_back(channel);
        drop(st);
        self.wake.notify_one();
    }

    /// `channel` got a priority event: serve it first. `queued`: it is marked queued
    /// already; it is moved to the front when it is in the queue.
    pub(crate) fn enqueue_priority_channel(&self, channel: u64, queued: bool) {
        let mut st = self.state();
        if st.closed {
            return;
        }
        if queued {
            match st.available.iter().position(|&c| c == channel) {
                Some(at) => {
                    st.available.remove(at);
                }
                None => return,
            }
        }
        st.available.push_front(channel);
        drop(st);
        self.wake.notify_one();
    }

    /// Queues a control frame; with `wait`, waits while the control queue is full.
    fn push_control(&self, frame: ControlFrame, wait: bool) {
        let mut st = self.state();
        while wait && !st.closed && st.control.len() >= MAX_CONTROL_QUEUE {
            st = match self.space.wait(st) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
        if st.closed {
            return;
        }
        st.control.push_back(frame);
        drop(st);
        self.wake.notify_one();
    }

    fn remove_channel(&self, id: u64) -> Option<Arc<ServerChannel>> {
        self.state().channels.remove(&id)
    }

    /// Closes the connection: the writer stops, the socket is shut down, and every
    /// channel still served is released as consumer.
    pub(crate) fn close(&self, reason: &str) {
        let channels: Vec<_> = {
            let mut st = self.state();
            if st.closed {
                return;
            }
            st.closed = true;
            st.available.clear();
            st.control.clear();
            st.channels.drain().map(|(_, c)| c).collect()
        };
        self.wake.notify_all();
        self.space.notify_all();
        let _ = self.stream.shutdown(Shutdown::Both);
        if !channels.is_empty() {
            tracing::debug!(peer = %self.peer, channels = channels.len(), reason, "releasing remotely read subpartitions");
        }
        for ch in channels {
            ch.sub.release_consumer();
        }
    }

    fn release_job(&self, job_id: &str, below_attempt: u32) {
        let released: Vec<_> = {
            let mut st = self.state();
            let ids: Vec<u64> = st
                .channels
                .values()
                .filter(|c| c.partition.job_id == job_id && c.partition.attempt < below_attempt)
                .map(|c| c.id)
                .collect();
            let released: Vec<_> = ids.iter().filter_map(|id| st.channels.remove(id)).collect();
            if !st.closed {
                for ch in &released {
                    st.control.push_back(ControlFrame::ErrorResponse {
                        channel: Some(ch.id),
                        code: ErrorCode::PartitionReleased,
                        message: format!("partition {} was released", ch.partition),
                    });
                }
            }
            released
        };
        if released.is_empty() {
            return;
        }
        self.wake.notify_one();
        for ch in released {
            ch.sub.release_consumer();
        }
    }

    /// Reads requests until the peer closes or the connection idles (`Ok`), or the
    /// peer misbehaves (`Err` with the reason). The socket's read timeout is `idle`:
    /// a timeout between frames closes a connection that serves no channel; one
    /// inside a frame is an error.
    fn read_loop(self: &Arc<Self>, registry: &PartitionRegistry, idle: Duration) -> Result<Closed, String> {
        let Some(stream) = lock(&self.reader).take() else {
            return Err("no reading end".into());
        };
        let mut input = BufReader::with_capacity(64 * 1024, stream);
        let mut scratch = Vec::new();
        loop {
            match input.fill_buf() {
                Ok([]) => return Ok(Closed::ByPeer),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if self.state().channels.is_empty() {
                        tracing::debug!(peer = %self.peer, idle_ms = idle.as_millis() as u64, "data connection idle");
                        return Ok(Closed::Idle);
                    }
                    continue;
                }
                Err(_) if self.state().closed => return Ok(Closed::ByPeer),
                Err(e) => return Err(format!("read failed: {e}")),
            }
            let frame = match protocol::read_frame(&mut input, &mut scratch) {
                Ok(Some(Frame::Control(frame))) => frame,
                Ok(Some(Frame::Buffer(_))) => return Err("a client sent a BufferResponse".into()),
                Ok(None) => return Ok(Closed::ByPeer),
                Err(WireError::Io(e)) if self.state().closed => {
                    tracing::debug!(peer = %self.peer, error = %e, "data connection closed");
                    return Ok(Closed::ByPeer);
                }
                Err(e) => return Err(e.to_string()),
            };
            match frame {
                ControlFrame::PartitionRequest {
                    channel,
                    partition,
                    subpartition,
                    credit,
                    event_credit,
                } => self.on_partition_request(registry, channel, partition, subpartition, credit, event_credit)?,
                ControlFrame::AddCredit {
                    channel,
                    credit,
                    event_credit,
                } => {
                    let ch = self.state().channels.get(&channel).cloned();
                    // Credit for a channel that ended or was cancelled is stale, not an error.
                    if let Some(ch) = ch {
                        if ch.sub.add_remote_credit(credit as usize, event_credit as usize) {
                            self.enqueue_channel(channel);
                        }
                    }
                }
                ControlFrame::CancelPartitionRequest { channel } => {
                    if let Some(ch) = self.remove_channel(channel) {
                        ch.sub.release_consumer();
                    }
                }
                other => return Err(format!("unexpected frame from a client: {other:?}")),
            }
        }
    }

    fn on_partition_request(
        self: &Arc<Self>,
        registry: &PartitionRegistry,
        channel: u64,
        partition: PartitionId,
        subpartition: u32,
        credit: u32,
        event_credit: u32,
    ) -> Result<(), String> {
        if channel == protocol::CONNECTION_WIDE || self.state().channels.contains_key(&channel) {
            return Err(format!("partition request on channel {channel}, which is in use"));
        }
        let error = |code, message| ControlFrame::ErrorResponse {
            channel: Some(channel),
            code,
            message,
        };
        let sub = match registry.lookup(&partition, subpartition) {
            Lookup::Found(sub) => sub,
            Lookup::NotFound => {
                let message = format!("partition {partition} is not registered");
                self.push_control(error(ErrorCode::PartitionNotFound, message), true);
                return Ok(());
            }
            Lookup::NoSuchSubpartition(n) => {
                let message = format!("partition {partition} has {n} subpartitions; {subpartition} requested");
                self.push_control(error(ErrorCode::InvalidRequest, message), true);
                return Ok(());
            }
            Lookup::Failed(reason) => {
                let message = format!("partition {partition}: {reason}");
                self.push_control(error(ErrorCode::InvalidRequest, message), true);
                return Ok(());
            }
        };
        if !sub.try_claim() {
            let message = format!("subpartition {subpartition} of partition {partition} is consumed already");
            self.push_control(error(ErrorCode::AlreadyConsumed, message), true);
            return Ok(());
        }
        tracing::debug!(peer = %self.peer, channel, partition = %partition, subpartition, "serving a remote channel");
        let ch = Arc::new(ServerChannel {
            id: channel,
            partition,
            sub: sub.clone(),
            next_sequence: AtomicU64::new(0),
        });
        // Registered and accepted before the subpartition can queue the channel, so the
        // acceptance precedes the channel's data and the writer finds the channel.
        {
            let mut st = self.state();
            if st.closed {
                drop(st);
                sub.release_consumer();
                return Ok(());
            }
            st.channels.insert(channel, ch);
        }
        self.push_control(ControlFrame::PartitionRequestAccepted { channel }, true);
        if sub.attach_remote(Arc::downgrade(self), channel, credit as usize, event_credit as usize) {
            self.enqueue_channel(channel);
        }
        Ok(())
    }

    /// Sends control frames and channel data until the connection closes.
    fn write_loop(self: Arc<Self>, stream: Box<dyn Write + Send>) {
        let mut out = BufWriter::with_capacity(IO_BUFFER, stream);
        let mut dirty = false;
        let result = loop {
            let work = {
                let mut st = self.state();
                if st.closed {
                    break Ok(());
                }
                self.next_work(&mut st)
            };
            let Some(work) = work else {
                if dirty {
                    dirty = false;
                    if let Err(e) = out.flush() {
                        break Err(e);
                    }
                    continue;
                }
                let mut st = self.state();
                while !st.closed && st.control.is_empty() && st.available.is_empty() {
                    st = match self.wake.wait(st) {
                        Ok(g) => g,
                        Err(p) => p.into_inner(),
                    };
                }
                continue;
            };
            dirty = true;
            let written = match work {
                Work::Control(frame) => protocol::write_control(&mut out, &frame).map(|()| false),
                Work::Channel(ch) => self.send_from(&ch, &mut out),
            };
            match written {
                // A priority event leaves at once, not when the writer runs out of work.
                Ok(true) => {
                    dirty = false;
                    if let Err(e) = out.flush() {
                        break Err(e);
                    }
                }
                Ok(false) => {}
                Err(e) => break Err(e),
            }
        };
        if let Err(e) = result {
            if !self.state().closed {
                tracing::warn!(peer = %self.peer, error = %e, "data connection write failed");
            }
            // The reader sees the shut-down socket and closes the connection.
            let _ = self.stream.shutdown(Shutdown::Both);
        }
    }

    fn next_work(&self, st: &mut ServerConnState) -> Option<Work> {
        if let Some(frame) = st.control.pop_front() {
            self.space.notify_one();
            return Some(Work::Control(frame));
        }
        while let Some(id) = st.available.pop_front() {
            if let Some(ch) = st.channels.get(&id) {
                return Some(Work::Channel(ch.clone()));
            }
        }
        None
    }

    /// Takes one element from `ch`'s subpartition and writes it; true when it was a
    /// priority event (to be flushed at once).
    fn send_from<W: Write>(&self, ch: &ServerChannel, out: &mut W) -> std::io::Result<bool> {
        let (taken, requeue) = match ch.sub.take_for_remote() {
            Ok(t) => t,
            Err(e) => {
                tracing::error!(error = %e, "credit-based flow control violated");
                (RemoteTaken::Nothing, false)
            }
        };
        if requeue {
            self.enqueue_channel(ch.id);
        }
        match taken {
            RemoteTaken::Buffer { buffer, backlog } => {
                let seq = ch.next_sequence.fetch_add(1, Ordering::Relaxed);
                protocol::write_buffer(out, ch.id, seq, backlog, KIND_DATA, &buffer).map(|()| false)
                // The buffer returns to the producer's pool here.
            }
            RemoteTaken::Event {
                event,
                priority,
                backlog,
            } => {
                let bytes = weir_core::codec::encode(&event)
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
                let seq = ch.next_sequence.fetch_add(1, Ordering::Relaxed);
                let kind = if priority { KIND_PRIORITY_EVENT } else { KIND_EVENT };
                protocol::write_buffer(out, ch.id, seq, backlog, kind, &bytes)?;
                if event == Event::EndOfPartition {
                    self.remove_channel(ch.id);
                }
                Ok(priority)
            }
            RemoteTaken::Backlog(backlog) => protocol::write_control(
                out,
                &ControlFrame::BacklogAnnouncement {
                    channel: ch.id,
                    backlog: u32::try_from(backlog).unwrap_or(u32::MAX),
                },
            )
            .map(|()| false),
            RemoteTaken::ProducerGone => {
                self.remove_channel(ch.id);
                protocol::write_control(
                    out,
                    &ControlFrame::ErrorResponse {
                        channel: Some(ch.id),
                        code: ErrorCode::ProducerFailed,
                        message: format!(
                            "the producer of partition {} released it before EndOfPartition",
                            ch.partition
                        ),
                    },
                )
                .map(|()| false)
            }
            RemoteTaken::Nothing => Ok(false),
        }
    }
}
