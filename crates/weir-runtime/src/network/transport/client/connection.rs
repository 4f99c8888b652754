//! A client connection to another process's data server ([`ClientConnShared`], at most
//! one live per address), shared by every remote input channel of this process that
//! reads from that server.
//!
//! A reader thread reads frames and hands each to the channel it is for, through
//! [`ChannelReceiver`] (the connection does not know the channel type); a writer thread
//! sends partition requests, credit and cancels. Control to send is kept per channel in
//! `pending` (credit is summed, so the table never holds more entries than channels)
//! and `work` lists each channel with pending control once.
//!
//! A connection that serves no channel, is leased to no gate being built
//! ([`ConnectionLease`]) and receives nothing for `taskmanager.data.idle-timeout` is
//! closed by its reader (the client side of the data server's idle timeout), so that
//! neither end keeps threads for a connection nobody uses.
//!
//! Invariants: the reader never blocks except on the socket; a channel is in
//! `channels` from its registration until it received EndOfPartition or a final
//! error, was cancelled, or the connection failed; a failed or idle-closed connection
//! stays closed (the environment opens a new one for later gates) and has failed every
//! channel it had; a connection is only closed as idle under its state lock with no
//! channel and no lease, and a lease is only taken under that lock from an open one.
//! The connection state is a leaf lock: no channel is called with it held.

use super::super::protocol::{self, ControlFrame, ErrorCode, Frame, HELLO_LEN, KIND_DATA, KIND_PRIORITY_EVENT};
use super::super::stream::{self, Halves};
use super::super::{PartitionId, EVENT_WINDOW};
use crate::network::buffer::lock;
use crate::network::error::NetworkError;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, BufWriter, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

/// The subpartition a channel asks the data server for.
#[derive(Debug, Clone)]
pub(crate) struct RequestedSubpartition {
    /// The result partition.
    pub(crate) partition: PartitionId,
    /// The subpartition index in it.
    pub(crate) subpartition: u32,
    /// The channel's exclusive credit, announced with the request.
    pub(crate) initial_credit: u32,
}

/// What the connection delivers to a channel registered on it (the remote input
/// channel implements it). Called from the connection's reader thread without the
/// connection's lock held.
pub(crate) trait ChannelReceiver: Send + Sync {
    /// What to request from the server.
    fn requested(&self) -> RequestedSubpartition;
    /// A data buffer of `size` bytes follows on `input`: read it all (or skip it). An
    /// `Err` is a broken stream, which fails the connection.
    fn receive_data(&self, input: &mut dyn Read, sequence: u64, backlog: usize, size: usize) -> std::io::Result<()>;
    /// An event arrived (`priority`: ahead of the buffers queued before it).
    fn receive_event(&self, sequence: u64, bytes: &[u8], priority: bool);
    /// The server accepted the partition request.
    fn on_accepted(&self);
    /// The server announced a backlog without credit.
    fn on_backlog(&self, backlog: usize);
    /// The server answered the request or the channel with an error.
    fn on_error(&self, code: ErrorCode, message: String);
    /// The connection failed.
    fn fail(&self, err: NetworkError);
}

/// How long connecting to a data server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the data server may take to answer the hello.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Capacity of the reader's buffer.
const READ_BUFFER: usize = 256 * 1024;
/// Capacity of the writer's buffer (control frames only).
const WRITE_BUFFER: usize = 16 * 1024;
/// Largest encoded event accepted.
const MAX_EVENT_BYTES: usize = 4096;

/// A connection to one remote data server, shared by every remote channel of this
/// process that reads from it.
pub(crate) struct ClientConnShared {
    address: String,
    /// A handle on the socket for shutting it down.
    stream: TcpStream,
    state: Mutex<ClientConnState>,
    /// Wakes the writer.
    wake: Condvar,
    next_channel: AtomicU64,
    /// Partition requests the server answered "not registered" (each one is re-sent).
    not_found_answers: AtomicU64,
}

struct ClientConnState {
    channels: HashMap<u64, Arc<dyn ChannelReceiver>>,
    /// Leases held by gates that have not registered their channels yet.
    leases: usize,
    pending: HashMap<u64, PendingControl>,
    work: VecDeque<u64>,
    closed: Option<NetworkError>,
}

/// Control the writer still has to send for one channel.
#[derive(Debug, Default, Clone, Copy)]
struct PendingControl {
    request: bool,
    credit: u32,
    event_credit: u32,
    cancel: bool,
}

impl ClientConnShared {
    /// Connects to `address` (over TLS with `tls`), shakes hands and starts the
    /// connection's threads; the connection closes itself after `idle` without a
    /// channel, a lease or anything received.
    pub(crate) fn connect(
        address: &str,
        tls: Option<&Arc<rustls::ClientConfig>>,
        idle: Duration,
    ) -> Result<Arc<Self>, NetworkError> {
        let err = |reason: String| NetworkError::Connect {
            address: address.to_owned(),
            reason,
        };
        let addrs: Vec<SocketAddr> = address
            .to_socket_addrs()
            .map_err(|e| err(format!("cannot resolve the address: {e}")))?
            .collect();
        let mut last = None;
        let mut connected = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
                Ok(s) => {
                    connected = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let stream = connected
            .ok_or_else(|| err(last.map_or_else(|| "the address resolves to nothing".to_owned(), |e| e.to_string())))?;
        let Halves {
            reader: mut input,
            writer: mut output,
        } = stream
            .set_nodelay(true)
            .and_then(|()| stream::connect(&stream, tls, address, HANDSHAKE_TIMEOUT))
            .map_err(|e| err(format!("handshake failed: {e}")))?;
        output
            .write_all(&protocol::hello())
            .map_err(|e| err(format!("handshake failed: {e}")))?;
        let mut hello = [0u8; HELLO_LEN];
        input.read_exact(&mut hello).map_err(|e| {
            err(format!(
                "no handshake answer ({e}): not a Weir data server, or it rejected this client"
            ))
        })?;
        let (magic, version) = protocol::parse_hello(&hello);
        if magic != protocol::MAGIC {
            return Err(err(format!("bad magic {magic:#010x}: not a Weir data server")));
        }
        if version != protocol::PROTOCOL_VERSION {
            return Err(err(format!(
                "protocol version mismatch: this process speaks version {}, the data server {version}",
                protocol::PROTOCOL_VERSION
            )));
        }
        stream
            .set_read_timeout(Some(idle.max(Duration::from_millis(1))))
            .and_then(|()| stream.set_write_timeout(None))
            .map_err(|e| err(e.to_string()))?;
        let (reader, writer) = (input, output);
        let conn = Arc::new(Self {
            address: address.to_owned(),
            stream,
            state: Mutex::new(ClientConnState {
                channels: HashMap::new(),
                leases: 0,
                pending: HashMap::new(),
                work: VecDeque::new(),
                closed: None,
            }),
            wake: Condvar::new(),
            next_channel: AtomicU64::new(0),
            not_found_answers: AtomicU64::new(0),
        });
        let r = conn.clone();
        thread::Builder::new()
            .name(format!("weir-data-client-in-{address}"))
            .spawn(move || r.read_loop(reader, idle))
            .map_err(|e| err(format!("cannot start the reader thread: {e}")))?;
        let w = conn.clone();
        if let Err(e) = thread::Builder::new()
            .name(format!("weir-data-client-out-{address}"))
            .spawn(move || w.write_loop(writer))
        {
            conn.fail("no writer thread");
            return Err(err(format!("cannot start the writer thread: {e}")));
        }
        tracing::debug!(address, "data connection established");
        Ok(conn)
    }

    fn state(&self) -> MutexGuard<'_, ClientConnState> {
        lock(&self.state)
    }

    /// The remote address.
    pub(crate) fn address(&self) -> &str {
        &self.address
    }

    /// True once the connection failed, was shut down or closed as idle.
    pub(crate) fn is_closed(&self) -> bool {
        self.state().closed.is_some()
    }

    /// A lease keeping the connection from closing as idle until the gate that takes
    /// it registers its channel; `None` when the connection is closed.
    pub(crate) fn lease(self: &Arc<Self>) -> Option<ConnectionLease> {
        let mut st = self.state();
        if st.closed.is_some() {
            return None;
        }
        st.leases += 1;
        Some(ConnectionLease { conn: self.clone() })
    }

    /// Closes the connection when it serves no channel and is leased to no gate; true
    /// when it did.
    fn close_if_idle(&self, idle: Duration) -> bool {
        {
            let mut st = self.state();
            if st.closed.is_some() || !st.channels.is_empty() || st.leases > 0 {
                return false;
            }
            st.closed = Some(NetworkError::ConnectionLost {
                address: self.address.clone(),
                reason: format!(
                    "closed after {} ms without a channel (taskmanager.data.idle-timeout)",
                    idle.as_millis()
                ),
            });
            st.pending.clear();
            st.work.clear();
        }
        self.wake.notify_all();
        let _ = self.stream.shutdown(Shutdown::Both);
        tracing::debug!(address = %self.address, "closing an idle data connection");
        true
    }

    /// Channels currently registered.
    #[cfg(test)]
    pub(crate) fn num_channels(&self) -> usize {
        self.state().channels.len()
    }

    /// Partition requests the server answered "not registered" so far.
    #[cfg(test)]
    pub(crate) fn num_not_found_answers(&self) -> u64 {
        self.not_found_answers.load(Ordering::Relaxed)
    }

    fn schedule(st: &mut ClientConnState, id: u64) -> &mut PendingControl {
        let ClientConnState { pending, work, .. } = st;
        match pending.entry(id) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(v) => {
                work.push_back(id);
                v.insert(PendingControl::default())
            }
        }
    }

    /// A new channel id on this connection.
    pub(crate) fn next_channel_id(&self) -> u64 {
        self.next_channel.fetch_add(1, Ordering::Relaxed)
    }

    /// Registers channel `id` and queues its partition request.
    pub(crate) fn register(&self, id: u64, ch: Arc<dyn ChannelReceiver>) -> Result<(), NetworkError> {
        let mut st = self.state();
        if let Some(e) = &st.closed {
            return Err(e.clone());
        }
        st.channels.insert(id, ch);
        Self::schedule(&mut st, id).request = true;
        drop(st);
        self.wake.notify_one();
        Ok(())
    }

    /// Queues the partition request of channel `id` again.
    pub(crate) fn resend_request(&self, id: u64) {
        let mut st = self.state();
        if st.closed.is_some() || !st.channels.contains_key(&id) {
            return;
        }
        Self::schedule(&mut st, id).request = true;
        drop(st);
        self.wake.notify_one();
    }

    /// Queues `credit` buffers and `events` events of credit for channel `id`.
    pub(crate) fn add_credit(&self, id: u64, credit: usize, events: usize) {
        let mut st = self.state();
        if st.closed.is_some() || !st.channels.contains_key(&id) {
            return;
        }
        let p = Self::schedule(&mut st, id);
        p.credit = p.credit.saturating_add(u32::try_from(credit).unwrap_or(u32::MAX));
        p.event_credit = p.event_credit.saturating_add(u32::try_from(events).unwrap_or(u32::MAX));
        drop(st);
        self.wake.notify_one();
    }

    /// Unregisters `id` and, if the server still serves it, tells it to stop.
    pub(crate) fn cancel(&self, id: u64) {
        let mut st = self.state();
        if st.channels.remove(&id).is_none() || st.closed.is_some() {
            return;
        }
        *Self::schedule(&mut st, id) = PendingControl {
            cancel: true,
            ..PendingControl::default()
        };
        drop(st);
        self.wake.notify_one();
    }

    /// Unregisters channel `id` (it received EndOfPartition).
    pub(crate) fn remove(&self, id: u64) {
        self.state().channels.remove(&id);
    }

    fn channel(&self, id: u64) -> Option<Arc<dyn ChannelReceiver>> {
        self.state().channels.get(&id).cloned()
    }

    /// Fails the connection: every channel on it fails with
    /// [`NetworkError::ConnectionLost`], the socket is shut down, the threads end.
    pub(crate) fn fail(&self, reason: &str) {
        let err = NetworkError::ConnectionLost {
            address: self.address.clone(),
            reason: reason.to_owned(),
        };
        let channels: Vec<_> = {
            let mut st = self.state();
            if st.closed.is_some() {
                return;
            }
            st.closed = Some(err.clone());
            st.pending.clear();
            st.work.clear();
            st.channels.drain().map(|(_, c)| c).collect()
        };
        self.wake.notify_all();
        let _ = self.stream.shutdown(Shutdown::Both);
        if channels.is_empty() {
            tracing::debug!(address = %self.address, reason, "data connection closed");
        } else {
            tracing::warn!(address = %self.address, reason, channels = channels.len(), "data connection lost");
        }
        for ch in channels {
            ch.fail(err.clone());
        }
    }

    /// Reads frames until the connection fails or closes as idle. The socket's read
    /// timeout is the idle timeout: a timeout between frames closes a connection
    /// without channels or leases; one inside a frame fails the connection.
    fn read_loop(self: Arc<Self>, stream: Box<dyn Read + Send>, idle: Duration) {
        let mut input = BufReader::with_capacity(READ_BUFFER, stream);
        let mut scratch = Vec::new();
        let reason = loop {
            match input.fill_buf() {
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if self.close_if_idle(idle) {
                        return;
                    }
                    continue;
                }
                Err(e) => break format!("read failed: {e}"),
            }
            let step = match protocol::read_frame(&mut input, &mut scratch) {
                Ok(None) => Err("the data server closed the connection".to_owned()),
                Ok(Some(Frame::Buffer(h))) => self.on_buffer(&mut input, h, &mut scratch),
                Ok(Some(Frame::Control(f))) => self.on_control(f),
                Err(e) => Err(e.to_string()),
            };
            if let Err(reason) = step {
                break reason;
            }
        };
        self.fail(&reason);
    }

    fn on_buffer<R: Read>(
        &self,
        input: &mut R,
        h: protocol::BufferHeader,
        scratch: &mut Vec<u8>,
    ) -> Result<(), String> {
        let ch = self.channel(h.channel);
        if h.kind == KIND_DATA {
            return match ch {
                Some(ch) => ch
                    .receive_data(input, h.sequence, h.backlog as usize, h.size)
                    .map_err(|e| format!("reading a buffer: {e}")),
                // Cancelled here already: drop the bytes.
                None => skip(input, h.size).map_err(|e| format!("reading a buffer: {e}")),
            };
        }
        if h.size > MAX_EVENT_BYTES {
            return Err(format!("event of {} bytes", h.size));
        }
        scratch.clear();
        scratch.resize(h.size, 0);
        input
            .read_exact(scratch)
            .map_err(|e| format!("reading an event: {e}"))?;
        if let Some(ch) = ch {
            ch.receive_event(h.sequence, scratch, h.kind == KIND_PRIORITY_EVENT);
        }
        Ok(())
    }

    fn on_control(&self, frame: ControlFrame) -> Result<(), String> {
        match frame {
            ControlFrame::PartitionRequestAccepted { channel } => {
                if let Some(ch) = self.channel(channel) {
                    ch.on_accepted();
                }
            }
            ControlFrame::BacklogAnnouncement { channel, backlog } => {
                if let Some(ch) = self.channel(channel) {
                    ch.on_backlog(backlog as usize);
                }
            }
            ControlFrame::ErrorResponse {
                channel: Some(channel),
                code,
                message,
            } => {
                let ch = if code == ErrorCode::PartitionNotFound {
                    self.not_found_answers.fetch_add(1, Ordering::Relaxed);
                    self.channel(channel)
                } else {
                    // The server dropped the channel.
                    self.state().channels.remove(&channel)
                };
                if let Some(ch) = ch {
                    ch.on_error(code, message);
                }
            }
            ControlFrame::ErrorResponse {
                channel: None, message, ..
            } => return Err(format!("the data server closed the connection: {message}")),
            other => return Err(format!("unexpected frame from the data server: {other:?}")),
        }
        Ok(())
    }

    fn write_loop(self: Arc<Self>, stream: Box<dyn Write + Send>) {
        let mut out = BufWriter::with_capacity(WRITE_BUFFER, stream);
        let mut dirty = false;
        loop {
            let next = {
                let mut st = self.state();
                if st.closed.is_some() {
                    return;
                }
                match st.work.pop_front() {
                    Some(id) => {
                        let p = st.pending.remove(&id).unwrap_or_default();
                        Some((id, p, st.channels.get(&id).cloned()))
                    }
                    None => None,
                }
            };
            let Some((id, p, ch)) = next else {
                if dirty {
                    dirty = false;
                    if let Err(e) = out.flush() {
                        self.fail(&format!("write failed: {e}"));
                        return;
                    }
                    continue;
                }
                let mut st = self.state();
                while st.closed.is_none() && st.work.is_empty() {
                    st = match self.wake.wait(st) {
                        Ok(g) => g,
                        Err(p) => p.into_inner(),
                    };
                }
                continue;
            };
            dirty = true;
            if let Err(e) = Self::write_pending(&mut out, id, p, ch.as_deref()) {
                self.fail(&format!("write failed: {e}"));
                return;
            }
        }
    }

    fn write_pending<W: Write>(
        out: &mut W,
        id: u64,
        p: PendingControl,
        ch: Option<&dyn ChannelReceiver>,
    ) -> std::io::Result<()> {
        if p.request {
            if let Some(ch) = ch {
                let requested = ch.requested();
                protocol::write_control(
                    out,
                    &ControlFrame::PartitionRequest {
                        channel: id,
                        partition: requested.partition,
                        subpartition: requested.subpartition,
                        credit: requested.initial_credit,
                        event_credit: EVENT_WINDOW as u32,
                    },
                )?;
            }
        }
        if p.credit > 0 || p.event_credit > 0 {
            protocol::write_control(
                out,
                &ControlFrame::AddCredit {
                    channel: id,
                    credit: p.credit,
                    event_credit: p.event_credit,
                },
            )?;
        }
        if p.cancel {
            protocol::write_control(out, &ControlFrame::CancelPartitionRequest { channel: id })?;
        }
        Ok(())
    }
}

/// Reads and drops `n` bytes of `input`.
pub(crate) fn skip<R: Read + ?Sized>(input: &mut R, n: usize) -> std::io::Result<()> {
    let copied = std::io::copy(&mut input.take(n as u64), &mut std::io::sink())?;
    if copied == n as u64 {
        Ok(())
    } else {
        Err(std::io::ErrorKind::UnexpectedEof.into())
    }
}

/// A gate's hold on a connection from when the gate is planned until its channel
/// registered (or the gate was dropped): the connection does not close as idle
/// meanwhile.
pub(crate) struct ConnectionLease {
    conn: Arc<ClientConnShared>,
}

impl ConnectionLease {
    /// The leased connection.
    pub(crate) fn connection(&self) -> &Arc<ClientConnShared> {
        &self.conn
    }
}

impl Drop for ConnectionLease {
    fn drop(&mut self) {
        let mut st = self.conn.state();
        st.leases = st.leases.saturating_sub(1);
    }
}
