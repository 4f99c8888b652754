//! The consumer side of remote channels: client connections to other processes' data
//! servers ([`ClientConnShared`], at most one live per address) and the remote input
//! channels of input gates ([`RemoteInputChannel`]).
//!
//! Per connection a reader thread copies every received data buffer into a receive
//! buffer of the channel's gate, accounts it in the gate's
//! [`ReceiverCredits`](crate::network::ReceiverCredits) and queues it at the channel;
//! a priority event is queued ahead of the channel's buffers, carrying a copy of the
//! bytes of those it overtook, and its channel goes to the front of the gate's queue;
//! a writer thread sends partition requests, credit and cancels. Control to send is
//! kept per channel in `pending` (credit is summed, so the table never holds more
//! entries than channels) and `work` lists each channel with pending control once.
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
//! channel and no lease, and a lease is only taken under that lock from an open one. A remote channel's receive queue holds at most its credit in buffers and
//! [`EVENT_WINDOW`] events. Lock order: remote channel → gate; the connection state is
//! a leaf.

use super::protocol::{self, ControlFrame, ErrorCode, Frame, HELLO_LEN, KIND_DATA, KIND_PRIORITY_EVENT};
use super::transport::{self, Halves};
use super::{PartitionId, EVENT_WINDOW};
use crate::network::buffer::{lock, BufferOrEvent, PriorityEvent};
use crate::network::cancel::CancelToken;
use crate::network::channel_queue::ChannelQueue;
use crate::network::credit::CreditError;
use crate::network::error::NetworkError;
use crate::network::input_gate::GateShared;
use crate::network::subpartition::{promote_barrier_in, Taken};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, BufWriter, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread;
use std::time::{Duration, Instant};
use weir_core::{CheckpointId, Event};

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
/// First and longest wait before re-sending a request that found no partition.
const INITIAL_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_millis(500);
/// How long after the partition request deadline an unanswered request is given up.
const ANSWER_GRACE: Duration = Duration::from_secs(10);

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
}

struct ClientConnState {
    channels: HashMap<u64, Arc<RemoteInputChannel>>,
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
            .and_then(|()| transport::connect(&stream, tls, address, HANDSHAKE_TIMEOUT))
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

    /// Registers `ch` and queues its partition request.
    fn register(&self, ch: &Arc<RemoteInputChannel>) -> Result<(), NetworkError> {
        let mut st = self.state();
        if let Some(e) = &st.closed {
            return Err(e.clone());
        }
        st.channels.insert(ch.id, ch.clone());
        Self::schedule(&mut st, ch.id).request = true;
        drop(st);
        self.wake.notify_one();
        Ok(())
    }

    fn resend_request(&self, id: u64) {
        let mut st = self.state();
        if st.closed.is_some() || !st.channels.contains_key(&id) {
            return;
        }
        Self::schedule(&mut st, id).request = true;
        drop(st);
        self.wake.notify_one();
    }

    fn add_credit(&self, id: u64, credit: usize, events: usize) {
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
    fn cancel(&self, id: u64) {
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

    fn remove(&self, id: u64) {
        self.state().channels.remove(&id);
    }

    fn channel(&self, id: u64) -> Option<Arc<RemoteInputChannel>> {
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
        ch: Option<&RemoteInputChannel>,
    ) -> std::io::Result<()> {
        if p.request {
            if let Some(ch) = ch {
                protocol::write_control(
                    out,
                    &ControlFrame::PartitionRequest {
                        channel: id,
                        partition: ch.partition.clone(),
                        subpartition: ch.subpartition,
                        credit: ch.initial_credit,
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

fn skip<R: Read>(input: &mut R, n: usize) -> std::io::Result<()> {
    let copied = std::io::copy(&mut input.take(n as u64), &mut std::io::sink())?;
    if copied == n as u64 {
        Ok(())
    } else {
        Err(std::io::ErrorKind::UnexpectedEof.into())
    }
}

/// Where a remote channel's partition request stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RequestState {
    /// Sent, no answer yet.
    Sent,
    /// The server serves the channel.
    Accepted,
    /// The partition was not registered: to be re-sent after a backoff.
    NotFound,
    /// Failed for good.
    Failed(NetworkError),
}

/// A gate's hold on a connection from when the gate is planned until its channel
/// registered (or the gate was dropped): the connection does not close as idle
/// meanwhile.
pub(crate) struct ConnectionLease {
    conn: Arc<ClientConnShared>,
}

impl Drop for ConnectionLease {
    fn drop(&mut self) {
        let mut st = self.conn.state();
        st.leases = st.leases.saturating_sub(1);
    }
}

/// What a gate needs to create a remote channel.
pub(crate) struct RemoteSource {
    pub(crate) lease: ConnectionLease,
    pub(crate) partition: PartitionId,
    pub(crate) subpartition: u32,
}

/// An input channel reading a subpartition of another process.
pub(crate) struct RemoteInputChannel {
    conn: Arc<ClientConnShared>,
    /// Held until the channel registered at the connection.
    lease: Mutex<Option<ConnectionLease>>,
    id: u64,
    partition: PartitionId,
    subpartition: u32,
    initial_credit: u32,
    gate: Weak<GateShared>,
    index: usize,
    state: Mutex<RemoteChannelState>,
}

struct RemoteChannelState {
    queue: ChannelQueue<BufferOrEvent>,
    in_gate_queue: bool,
    request: RequestState,
    next_sequence: u64,
    /// EndOfPartition was received: nothing more comes.
    ended: bool,
    failure: Option<NetworkError>,
    failure_reported: bool,
    /// The consumer went away.
    released: bool,
}

impl RemoteChannelState {
    fn is_available(&self) -> bool {
        !self.queue.is_empty() || (self.failure.is_some() && !self.failure_reported)
    }

    /// Marks the channel queued at its gate if it has something and is not queued yet.
    fn claim(&mut self) -> bool {
        if self.in_gate_queue || self.released || !self.is_available() {
            return false;
        }
        self.in_gate_queue = true;
        true
    }
}

impl RemoteInputChannel {
    /// Channel `index` of the gate behind `gate`, with `initial_credit` exclusive credits.
    pub(crate) fn new(source: RemoteSource, gate: Weak<GateShared>, index: usize, initial_credit: usize) -> Self {
        Self {
            id: source.lease.conn.next_channel.fetch_add(1, Ordering::Relaxed),
            conn: source.lease.conn.clone(),
            lease: Mutex::new(Some(source.lease)),
            partition: source.partition,
            subpartition: source.subpartition,
            initial_credit: u32::try_from(initial_credit).unwrap_or(u32::MAX),
            gate,
            index,
            state: Mutex::new(RemoteChannelState {
                queue: ChannelQueue::new(),
                in_gate_queue: false,
                request: RequestState::Sent,
                next_sequence: 0,
                ended: false,
                failure: None,
                failure_reported: false,
                released: false,
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, RemoteChannelState> {
        lock(&self.state)
    }

    /// Registers at the connection and sends the partition request.
    pub(crate) fn request(self: &Arc<Self>) -> Result<(), NetworkError> {
        let registered = self.conn.register(self);
        drop(lock(&self.lease).take());
        registered
    }

    /// The state of the partition request.
    pub(crate) fn request_state(&self) -> RequestState {
        self.state().request.clone()
    }

    fn resend(&self) {
        let mut st = self.state();
        if st.request != RequestState::NotFound {
            return;
        }
        st.request = RequestState::Sent;
        drop(st);
        self.conn.resend_request(self.id);
    }

    /// The address of the data server.
    pub(crate) fn address(&self) -> &str {
        self.conn.address()
    }

    /// One line for [`InputGate::debug_state`](crate::network::InputGate::debug_state).
    pub(crate) fn describe(&self) -> String {
        let st = self.state();
        format!(
            "remote {} channel {} ({} sub {}): queue {} (buffers {}, priority events {}), request {:?}, next seq {}, \
             ended {}, failure {:?}, queued {}",
            self.conn.address,
            self.id,
            self.partition,
            self.subpartition,
            st.queue.len(),
            st.queue.buffers(),
            st.queue.priority_events(),
            st.request,
            st.next_sequence,
            st.ended,
            st.failure,
            st.in_gate_queue
        )
    }

    /// Takes the next element for the consumer (called by the gate).
    pub(crate) fn take(&self, gate: &GateShared) -> Taken {
        let (taken, requeue) = {
            let mut st = self.state();
            st.in_gate_queue = false;
            let taken = match st.queue.pop_front() {
                Some(item) => Taken::Item(item),
                None => match st.failure.clone() {
                    Some(e) if !st.failure_reported => {
                        st.failure_reported = true;
                        Taken::Failed(e)
                    }
                    _ => Taken::Nothing,
                },
            };
            (taken, st.claim())
        };
        if requeue {
            gate.enqueue_channel(self.index);
        }
        let event_taken = match &taken {
            Taken::Item(BufferOrEvent::Event(e)) => *e != Event::EndOfPartition,
            Taken::Item(BufferOrEvent::Priority(_)) => true,
            _ => false,
        };
        if event_taken {
            // The event window moves on.
            self.conn.add_credit(self.id, 0, 1);
        }
        taken
    }

    /// The gate granted `credit` buffers: announce them to the sender.
    pub(crate) fn add_credit(&self, credit: usize) {
        let live = {
            let st = self.state();
            !st.released && !st.ended && st.failure.is_none()
        };
        if live {
            self.conn.add_credit(self.id, credit, 0);
        }
    }

    /// The consumer went away: drops what was received and cancels the request.
    pub(crate) fn release(&self) {
        let dropped = {
            let mut st = self.state();
            st.released = true;
            st.in_gate_queue = false;
            st.queue.take_all()
        };
        drop(dropped);
        self.conn.cancel(self.id);
    }

    /// Fails the channel (delivered to the consumer after what was received before).
    pub(crate) fn fail(&self, err: NetworkError) {
        let (notify, setup) = {
            let mut st = self.state();
            if st.ended || st.released || st.failure.is_some() {
                return;
            }
            st.failure = Some(err.clone());
            let setup = matches!(st.request, RequestState::Sent | RequestState::NotFound);
            if setup {
                st.request = RequestState::Failed(err);
            }
            (st.claim(), setup)
        };
        if let Some(gate) = self.gate.upgrade() {
            if notify {
                gate.enqueue_channel(self.index);
            }
            if setup {
                gate.signal_setup();
            }
        }
    }

    /// Pushes a received element and queues the channel at its gate.
    fn push(&self, gate: &GateShared, item: BufferOrEvent) {
        let mut st = self.state();
        if st.released {
            drop(st);
            drop(item);
            return;
        }
        st.queue.push(item);
        let notify = st.claim();
        drop(st);
        if notify {
            gate.enqueue_channel(self.index);
        }
    }

    /// Promotes the barrier of `checkpoint` received in band to a priority event (see
    /// [`Subpartition::promote_barrier`](crate::network::subpartition::Subpartition::promote_barrier)),
    /// and makes the gate serve the channel first. False when it is not in the receive
    /// queue (not received yet, or taken).
    pub(crate) fn promote_barrier(&self, gate: &GateShared, checkpoint: CheckpointId) -> bool {
        let mut st = self.state();
        if st.released || !promote_barrier_in(&mut st.queue, checkpoint) {
            return false;
        }
        let queued = st.in_gate_queue;
        st.in_gate_queue = true;
        drop(st);
        gate.enqueue_priority_channel(self.index, queued);
        true
    }

    /// Queues a received priority event ahead of the buffers received before it, with
    /// a copy of their bytes (the data it overtook), and makes the gate serve the
    /// channel first.
    fn push_priority(&self, gate: &GateShared, event: Event) {
        let mut st = self.state();
        if st.released {
            return;
        }
        let overtaken = st.queue.overtaken();
        st.queue
            .push(BufferOrEvent::Priority(PriorityEvent { event, overtaken }));
        let queued = st.in_gate_queue;
        st.in_gate_queue = true;
        drop(st);
        gate.enqueue_priority_channel(self.index, queued);
    }

    /// Checks that the next BufferResponse may be accepted: `Ok(false)` to drop it.
    fn check_sequence(&self, sequence: u64) -> bool {
        let mut st = self.state();
        if st.released || st.ended || st.failure.is_some() {
            return false;
        }
        if sequence != st.next_sequence {
            let expected = st.next_sequence;
            drop(st);
            self.fail(NetworkError::Protocol(format!(
                "channel {}: buffer sequence number {sequence}, expected {expected}",
                self.index
            )));
            return false;
        }
        st.next_sequence += 1;
        true
    }

    /// A data buffer of `size` bytes arrives on the stream: account it, copy it into a
    /// receive buffer and queue it. An `Err` is a broken stream (the connection fails).
    fn receive_data<R: Read>(&self, input: &mut R, sequence: u64, backlog: usize, size: usize) -> std::io::Result<()> {
        let Some(gate) = self.gate.upgrade() else {
            return skip(input, size);
        };
        if !self.check_sequence(sequence) {
            return skip(input, size);
        }
        let protocol_error = |e: CreditError| NetworkError::Protocol(e.to_string());
        let decision = match gate.on_remote_buffer(self.index, backlog) {
            Ok(d) => d,
            Err(e) => {
                self.fail(protocol_error(e));
                return skip(input, size);
            }
        };
        let Some(mut buffer) = gate.receive_buffer() else {
            self.fail(NetworkError::Protocol(format!(
                "channel {}: a buffer arrived while every receive buffer is in use",
                self.index
            )));
            return skip(input, size);
        };
        if size > buffer.capacity() {
            self.fail(NetworkError::Protocol(format!(
                "channel {}: a buffer of {size} bytes exceeds the segment size of {} bytes \
                 (every TaskManager must use the same taskmanager.memory.segment-size)",
                self.index,
                buffer.capacity()
            )));
            return skip(input, size);
        }
        buffer.read_exact_from(input, size)?;
        self.push(&gate, BufferOrEvent::Buffer(buffer));
        gate.apply(decision);
        Ok(())
    }

    fn receive_event(&self, sequence: u64, bytes: &[u8], priority: bool) {
        let Some(gate) = self.gate.upgrade() else {
            return;
        };
        if !self.check_sequence(sequence) {
            return;
        }
        let event: Event = match weir_core::codec::decode(bytes) {
            Ok(e) => e,
            Err(e) => {
                self.fail(NetworkError::Corrupt(format!("channel {}: bad event: {e}", self.index)));
                return;
            }
        };
        if priority {
            if event == Event::EndOfPartition {
                self.fail(NetworkError::Protocol(format!(
                    "channel {}: EndOfPartition sent as a priority event",
                    self.index
                )));
                return;
            }
            return self.push_priority(&gate, event);
        }
        if event == Event::EndOfPartition {
            self.state().ended = true;
            self.conn.remove(self.id);
        }
        self.push(&gate, BufferOrEvent::Event(event));
    }

    fn on_accepted(&self) {
        let mut st = self.state();
        if st.request != RequestState::Sent {
            return;
        }
        st.request = RequestState::Accepted;
        drop(st);
        if let Some(gate) = self.gate.upgrade() {
            gate.signal_setup();
        }
    }

    fn on_backlog(&self, backlog: usize) {
        let Some(gate) = self.gate.upgrade() else {
            return;
        };
        {
            let st = self.state();
            if st.released || st.ended || st.failure.is_some() {
                return;
            }
        }
        match gate.on_remote_backlog(self.index, backlog) {
            Ok(d) => gate.apply(d),
            Err(e) => self.fail(NetworkError::Protocol(e.to_string())),
        }
    }

    fn on_error(&self, code: ErrorCode, message: String) {
        match code {
            ErrorCode::PartitionNotFound => {
                let mut st = self.state();
                if st.request == RequestState::Sent {
                    st.request = RequestState::NotFound;
                    drop(st);
                    if let Some(gate) = self.gate.upgrade() {
                        gate.signal_setup();
                    }
                } else {
                    drop(st);
                    self.fail(NetworkError::Protocol(format!(
                        "PartitionNotFound for a channel that is served: {message}"
                    )));
                }
            }
            ErrorCode::ProducerFailed | ErrorCode::PartitionReleased => {
                tracing::debug!(address = %self.conn.address, channel = self.index, message, "remote producer gone");
                self.fail(NetworkError::ProducerReleased { channel: self.index });
            }
            _ => self.fail(NetworkError::Remote {
                address: self.conn.address.clone(),
                message,
            }),
        }
    }

    fn partition_not_found(&self, timeout: Duration) -> NetworkError {
        NetworkError::PartitionNotFound {
            partition: self.partition.to_string(),
            subpartition: self.subpartition,
            address: self.conn.address.clone(),
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

/// Waits until the server of every remote channel of `gate` accepted its request.
/// A request that found no partition is re-sent with exponential backoff; one that
/// finds none at or after `deadline` fails with [`NetworkError::PartitionNotFound`]
/// (so a zero timeout still asks once). A request the server does not answer within
/// [`ANSWER_GRACE`] after the deadline fails the same way.
pub(crate) fn await_requests(
    gate: &GateShared,
    deadline: Instant,
    timeout: Duration,
    cancel: &CancelToken,
) -> Result<(), NetworkError> {
    let remotes: Vec<&Arc<RemoteInputChannel>> = gate.remote_channels().collect();
    // Per channel: when to re-send, and the next backoff.
    let mut retry: Vec<(Option<Instant>, Duration)> = vec![(None, INITIAL_BACKOFF); remotes.len()];
    loop {
        let version = gate.setup_version();
        let now = Instant::now();
        let mut wake = deadline.max(now) + ANSWER_GRACE;
        let mut pending = false;
        for (rc, (at, backoff)) in remotes.iter().zip(retry.iter_mut()) {
            match rc.request_state() {
                RequestState::Accepted => {}
                RequestState::Failed(e) => return Err(e),
                RequestState::Sent => {
                    pending = true;
                    if now >= deadline + ANSWER_GRACE {
                        tracing::warn!(address = rc.address(), partition = %rc.partition, "partition request not answered");
                        return Err(rc.partition_not_found(timeout));
                    }
                }
                RequestState::NotFound => {
                    pending = true;
                    if now >= deadline {
                        tracing::warn!(address = rc.address(), partition = %rc.partition, "partition not found");
                        return Err(rc.partition_not_found(timeout));
                    }
                    match *at {
                        None => {
                            // The last attempt goes out at the deadline.
                            let when = (now + *backoff).min(deadline);
                            *at = Some(when);
                            *backoff = (*backoff * 2).min(MAX_BACKOFF);
                            wake = wake.min(when);
                        }
                        Some(when) if now >= when => {
                            *at = None;
                            rc.resend();
                        }
                        Some(when) => wake = wake.min(when),
                    }
                }
            }
        }
        if !pending {
            return Ok(());
        }
        if cancel.is_cancelled() {
            return Err(NetworkError::Cancelled);
        }
        gate.wait_setup(version, wake.saturating_duration_since(now));
    }
}
