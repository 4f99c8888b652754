//! The remote input channels of input gates ([`RemoteInputChannel`]): a channel reads
//! one subpartition of another process through a [`ClientConnShared`].
//!
//! The connection's reader thread hands the channel every received element: a data
//! buffer is copied into a receive buffer of the channel's gate, accounted in the
//! gate's [`ReceiverCredits`](crate::network::ReceiverCredits) and queued at the
//! channel; a priority event is queued ahead of the channel's buffers, carrying a copy
//! of the bytes of those it overtook, and its channel goes to the front of the gate's
//! queue. The channel reaches its gate through [`RemoteGate`], so it does not depend on
//! the gate's type.
//!
//! Invariants: a remote channel's receive queue holds at most its credit in buffers and
//! [`EVENT_WINDOW`](crate::network::transport::EVENT_WINDOW) events; sequence numbers arrive without gaps (a gap fails the
//! channel). Lock order: remote channel → gate; the connection state is a leaf.

use super::connection::{skip, ChannelReceiver, ClientConnShared, ConnectionLease, RequestedSubpartition};
use crate::network::buffer::{lock, Buffer, BufferOrEvent, PriorityEvent};
use crate::network::channel_queue::ChannelQueue;
use crate::network::credit::{CreditError, ReceiverDecision};
use crate::network::error::NetworkError;
use crate::network::partition::subpartition::{promote_barrier_in, ConsumerGate, Taken};
use crate::network::transport::protocol::ErrorCode;
use crate::network::transport::PartitionId;
use std::io::Read;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;
use weir_core::{CheckpointId, Event};

/// What a remote channel needs of the input gate it feeds, beyond what a subpartition
/// needs ([`ConsumerGate`]). The gate implements it.
pub(crate) trait RemoteGate: ConsumerGate {
    /// A data buffer arrived on remote `channel` with the sender's `backlog`.
    fn on_remote_buffer(&self, channel: usize, backlog: usize) -> Result<ReceiverDecision, CreditError>;
    /// The sender of remote `channel` announced `backlog` without credit.
    fn on_remote_backlog(&self, channel: usize, backlog: usize) -> Result<ReceiverDecision, CreditError>;
    /// A free receive buffer for a remote channel (credit guarantees one exists).
    fn receive_buffer(&self) -> Option<Buffer>;
    /// Delivers a grant to its sender and queues the channel if that made it available.
    fn apply(&self, decision: ReceiverDecision);
    /// A remote request was answered: wakes the gate's creator.
    fn signal_setup(&self);
    /// The current setup version (bumped by [`RemoteGate::signal_setup`]).
    fn setup_version(&self) -> u64;
    /// Waits (one slice, at most `max`) while the setup version is `version`.
    fn wait_setup(&self, version: u64, max: Duration);
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
    requested: RequestedSubpartition,
    gate: Weak<dyn RemoteGate>,
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
    pub(crate) fn new(source: RemoteSource, gate: Weak<dyn RemoteGate>, index: usize, initial_credit: usize) -> Self {
        let conn = source.lease.connection().clone();
        Self {
            id: conn.next_channel_id(),
            conn,
            lease: Mutex::new(Some(source.lease)),
            requested: RequestedSubpartition {
                partition: source.partition,
                subpartition: source.subpartition,
                initial_credit: u32::try_from(initial_credit).unwrap_or(u32::MAX),
            },
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
        let registered = self.conn.register(self.id, self.clone());
        drop(lock(&self.lease).take());
        registered
    }

    /// The state of the partition request.
    pub(crate) fn request_state(&self) -> RequestState {
        self.state().request.clone()
    }

    /// Re-sends a request that found no partition.
    pub(crate) fn resend(&self) {
        let mut st = self.state();
        if st.request != RequestState::NotFound {
            return;
        }
        st.request = RequestState::Sent;
        drop(st);
        self.conn.resend_request(self.id);
    }

    /// The partition requested.
    pub(crate) fn partition(&self) -> &PartitionId {
        &self.requested.partition
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
            self.conn.address(),
            self.id,
            self.requested.partition,
            self.requested.subpartition,
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
    pub(crate) fn take<G: RemoteGate + ?Sized>(&self, gate: &G) -> Taken {
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

    /// Pushes a received element and queues the channel at its gate.
    fn push(&self, gate: &dyn RemoteGate, item: BufferOrEvent) {
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
    /// [`Subpartition::promote_barrier`](crate::network::partition::subpartition::Subpartition::promote_barrier)),
    /// and makes the gate serve the channel first. False when it is not in the receive
    /// queue (not received yet, or taken).
    pub(crate) fn promote_barrier<G: RemoteGate + ?Sized>(&self, gate: &G, checkpoint: CheckpointId) -> bool {
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
    fn push_priority(&self, gate: &dyn RemoteGate, event: Event) {
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

    /// The error of a request the server never found the partition for.
    pub(crate) fn partition_not_found(&self, timeout: Duration) -> NetworkError {
        NetworkError::PartitionNotFound {
            partition: self.requested.partition.clone(),
            subpartition: self.requested.subpartition,
            address: self.conn.address().to_owned(),
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

impl ChannelReceiver for RemoteInputChannel {
    fn requested(&self) -> RequestedSubpartition {
        self.requested.clone()
    }

    fn fail(&self, err: NetworkError) {
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

    fn receive_data(&self, input: &mut dyn Read, sequence: u64, backlog: usize, size: usize) -> std::io::Result<()> {
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
        self.push(&*gate, BufferOrEvent::Buffer(buffer));
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
            return self.push_priority(&*gate, event);
        }
        if event == Event::EndOfPartition {
            self.state().ended = true;
            self.conn.remove(self.id);
        }
        self.push(&*gate, BufferOrEvent::Event(event));
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
            ErrorCode::PartitionGone => self.fail(NetworkError::PartitionGone {
                partition: self.requested.partition.clone(),
                subpartition: self.requested.subpartition,
                address: self.conn.address().to_owned(),
                reason: message,
            }),
            ErrorCode::ProducerFailed | ErrorCode::PartitionReleased => {
                tracing::debug!(address = %self.conn.address(), channel = self.index, message, "remote producer gone");
                self.fail(NetworkError::ProducerReleased { channel: self.index });
            }
            _ => self.fail(NetworkError::Remote {
                address: self.conn.address().to_owned(),
                message,
            }),
        }
    }
}
