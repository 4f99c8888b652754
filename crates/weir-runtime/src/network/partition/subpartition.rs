//! The state one subpartition shares with the input channel that reads it
//! (`Subpartition`): the in-process "local channel".
//!
//! Owns the subpartition's queue of finished buffers and events (a `ChannelQueue`),
//! its [`SenderCredit`], and the link to the consuming gate. The producer appends; the
//! consumer takes from the front, buffers only against credit, events always. A buffer
//! moves from producer to consumer without a copy. A priority event (an unaligned
//! checkpoint's barrier) is queued ahead of the queued buffers and events and needs no
//! credit either; its consumer is told at once and serves the channel first.
//!
//! Invariants:
//! - `sender.backlog()` equals the number of buffers in `queue`; at most
//!   [`MAX_QUEUED_EVENTS`] events (priority events included) are queued (a producer
//!   blocks beyond), and buffers are bounded by the producer's local pool, so the
//!   queue is bounded.
//! - `in_gate_queue` is true exactly while the channel index is (or is about to be) in
//!   the gate's queue of available channels; whoever sets it pushes the index. It is
//!   set only when the subpartition is available, so a channel is queued at most once.
//! - Nothing follows EndOfPartition.
//!
//! - A subpartition read by a remote consumer has a `Listener::Remote`: the
//!   connection of the data server that serves it takes its elements
//!   (`Subpartition::take_for_remote`) instead of a gate; then `in_gate_queue` means
//!   "queued at that connection's writer", a backlog announcement waits in
//!   `announce_pending` for the writer, and `event_credit` bounds the events in flight
//!   to the receiver (local channels have no such bound: `None`).
//!
//! Lock order: a subpartition lock may be held while taking the gate lock (or the lock
//! of a server connection's queue), never the other way round.

use crate::network::buffer::{lock, BufferOrEvent, PriorityEvent};
use crate::network::channel_queue::ChannelQueue;
use crate::network::credit::{CreditError, SenderCredit, SenderDecision};
use crate::network::partition::availability::BufferAvailabilityListener;
use crate::network::Buffer;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, Weak};
use weir_core::{CheckpointBarrier, CheckpointId, Event};

/// Most events one subpartition queues before its producer blocks.
pub const MAX_QUEUED_EVENTS: usize = 256;

/// One subpartition of a result partition together with its local input channel.
pub(crate) struct Subpartition {
    /// Process-local number of the result partition.
    pub(crate) partition: u64,
    /// Index of the subpartition in its partition.
    pub(crate) index: usize,
    pub(crate) state: Mutex<SubpartitionState>,
    /// Signalled when queued events are taken or the consumer goes away.
    pub(crate) space: Condvar,
}

/// What a subpartition needs of the in-process input gate that consumes it. The gate
/// implements it, so that subpartitions do not depend on the gate (as Flink's
/// `BufferAvailabilityListener` links a subpartition's view to its reader).
pub(crate) trait ConsumerGate: Send + Sync {
    /// Queues `channel` as available (the subpartition marked itself `in_gate_queue`).
    fn enqueue_channel(&self, channel: usize);
    /// `channel` got a priority event: serve it first. `queued`: the channel is marked
    /// queued already; it is moved to the front when it is in the queue.
    fn enqueue_priority_channel(&self, channel: usize, queued: bool);
    /// The sender of `channel` announced `backlog` without credit; returns the credit
    /// granted to that same channel. Called with the subpartition locked (which is why
    /// the grant is returned instead of applied).
    fn grant_for_backlog(&self, channel: usize, backlog: usize) -> usize;
    /// Called by [`Subpartition::take`] with the subpartition of `channel` locked:
    /// accounts a received buffer (applying the channel's own grant at once) and puts
    /// the channel back into the queue when it has more to deliver.
    fn after_take(
        &self,
        sub: &mut SubpartitionState,
        channel: usize,
        received_backlog: Option<usize>,
    ) -> Result<(), CreditError>;
}

/// Who consumes the subpartition: an in-process gate (and the channel index there) or
/// a data server connection serving a remote consumer (and the channel id on it).
pub(crate) enum Listener {
    /// An in-process input gate.
    Gate {
        gate: Weak<dyn ConsumerGate>,
        channel: usize,
    },
    /// A connection of this process's data server.
    Remote {
        conn: Weak<dyn BufferAvailabilityListener>,
        channel: u64,
    },
}

/// Whom to tell that a subpartition became available (after unlocking it).
pub(crate) enum Notify {
    /// Push the channel into the gate's queue of available channels.
    Gate(Arc<dyn ConsumerGate>, usize),
    /// Queue the channel at the server connection's writer.
    Remote(Arc<dyn BufferAvailabilityListener>, u64),
    /// A priority event was queued: put the channel first in the gate's queue
    /// (`queued`: it is marked queued already, move it to the front if it is there).
    GatePriority(Arc<dyn ConsumerGate>, usize, bool),
    /// The same at a server connection's writer.
    RemotePriority(Arc<dyn BufferAvailabilityListener>, u64, bool),
}

impl Notify {
    /// Delivers the notification.
    pub(crate) fn notify(self) {
        match self {
            Notify::Gate(gate, channel) => gate.enqueue_channel(channel),
            Notify::Remote(conn, channel) => conn.notify_data_available(channel),
            Notify::GatePriority(gate, channel, queued) => gate.enqueue_priority_channel(channel, queued),
            Notify::RemotePriority(conn, channel, queued) => conn.notify_priority_event(channel, queued),
        }
    }
}

pub(crate) struct SubpartitionState {
    pub(crate) queue: ChannelQueue<BufferOrEvent>,
    pub(crate) sender: SenderCredit,
    pub(crate) listener: Option<Listener>,
    pub(crate) in_gate_queue: bool,
    /// An input gate claimed this subpartition (it stays claimed).
    pub(crate) connected: bool,
    pub(crate) end_of_partition: bool,
    pub(crate) producer_released: bool,
    /// Why the producer went away before EndOfPartition, when it knows (a blocking
    /// partition's replay that could not read its data): the consumer fails with it
    /// instead of ending as cancelled.
    pub(crate) producer_failure: Option<crate::network::NetworkError>,
    pub(crate) consumer_released: bool,
    pub(crate) failure_reported: bool,
    pub(crate) producer_waiting: bool,
    /// Remote consumer only: the sender ran out of credit with a backlog, and the
    /// connection writer must announce it.
    pub(crate) announce_pending: bool,
    /// Remote consumer only: events the receiver accepts before it returns event credit.
    pub(crate) event_credit: Option<usize>,
}

/// What a data server connection took from a subpartition for its remote consumer.
pub(crate) enum RemoteTaken {
    /// A data buffer (it consumed one credit) and the backlog left behind it.
    Buffer { buffer: Buffer, backlog: usize },
    /// An event (it consumed one event credit), whether it is a priority event, and
    /// the backlog behind it.
    Event {
        event: Event,
        priority: bool,
        backlog: usize,
    },
    /// No credit for the queued buffers: announce this backlog.
    Backlog(usize),
    /// The producer went away before EndOfPartition.
    ProducerGone,
    /// The producer failed before EndOfPartition, for this reason.
    Failed(crate::network::NetworkError),
    /// Nothing to send now.
    Nothing,
}

/// What the consumer found at the front of a subpartition.
pub(crate) enum Taken {
    /// A buffer or an event.
    Item(BufferOrEvent),
    /// Nothing deliverable now.
    Nothing,
    /// The producer went away before EndOfPartition.
    ProducerGone,
    /// The channel failed (remote channels: connection lost, producer failed, ...).
    Failed(crate::network::NetworkError),
}

impl Subpartition {
    pub(crate) fn new(partition: u64, index: usize) -> Arc<Self> {
        Arc::new(Self {
            partition,
            index,
            state: Mutex::new(SubpartitionState {
                queue: ChannelQueue::new(),
                sender: SenderCredit::new(),
                listener: None,
                in_gate_queue: false,
                connected: false,
                end_of_partition: false,
                producer_released: false,
                producer_failure: None,
                consumer_released: false,
                failure_reported: false,
                producer_waiting: false,
                announce_pending: false,
                event_credit: None,
            }),
            space: Condvar::new(),
        })
    }

    /// Takes the next deliverable element for `channel` of `gate` (consumer side).
    ///
    /// The receiver's accounting of a taken buffer and the re-queueing of the channel
    /// happen while this subpartition is still locked, so the gate sees buffers and
    /// backlog announcements of one subpartition in the order the sender produced them
    /// (as a TCP connection would deliver them).
    pub(crate) fn take<G: ConsumerGate + ?Sized>(&self, gate: &G, channel: usize) -> Result<Taken, CreditError> {
        let mut st = lock(&self.state);
        st.in_gate_queue = false;
        let mut received_backlog = None;
        let taken = match st.queue.front() {
            Some(BufferOrEvent::Event(_) | BufferOrEvent::Priority(_)) => {
                if st.producer_waiting {
                    self.space.notify_all();
                }
                st.queue.pop_front().map_or(Taken::Nothing, Taken::Item)
            }
            Some(BufferOrEvent::Buffer(_)) if st.sender.credit() > 0 => {
                received_backlog = Some(st.sender.on_buffer_sent()?);
                st.queue.pop_front().map_or(Taken::Nothing, Taken::Item)
            }
            Some(BufferOrEvent::Buffer(_)) => Taken::Nothing,
            None if st.producer_released && !st.end_of_partition && !st.failure_reported => {
                st.failure_reported = true;
                st.producer_failure.take().map_or(Taken::ProducerGone, Taken::Failed)
            }
            None => Taken::Nothing,
        };
        let accounted = gate.after_take(&mut st, channel, received_backlog);
        drop(st);
        accounted?;
        Ok(taken)
    }

    /// For its in-process consumer: promotes the barrier of `checkpoint` queued in band
    /// (its checkpoint switched to unaligned at the consumer) to a priority event,
    /// marked unaligned and carrying the bytes of the buffers queued ahead of it, which
    /// it overtakes (they are the consumer's input channel state). False when the barrier
    /// is not queued here.
    pub(crate) fn promote_barrier(&self, checkpoint: CheckpointId) -> bool {
        let notify = {
            let mut st = lock(&self.state);
            if !promote_barrier_in(&mut st.queue, checkpoint) {
                return false;
            }
            st.claim_priority_notification()
        };
        if let Some(notify) = notify {
            notify.notify();
        }
        true
    }

    /// Records why the producer is about to go away before EndOfPartition: once the
    /// consumer drained what is queued it fails with `cause` (call before the
    /// producer's writer is dropped).
    pub(crate) fn set_producer_failure(&self, cause: crate::network::NetworkError) {
        lock(&self.state).producer_failure = Some(cause);
    }

    /// Claims the subpartition for one consumer; false if it was claimed before.
    pub(crate) fn try_claim(&self) -> bool {
        let mut st = lock(&self.state);
        !std::mem::replace(&mut st.connected, true)
    }

    /// Makes a data server connection the consumer (the subpartition was claimed with
    /// [`try_claim`](Self::try_claim)): `credit` initial credits, `event_credit` events
    /// in flight at most. Returns whether the connection must be told the channel is
    /// available.
    pub(crate) fn attach_remote(
        &self,
        conn: Weak<dyn BufferAvailabilityListener>,
        channel: u64,
        credit: usize,
        event_credit: usize,
    ) -> bool {
        let mut st = lock(&self.state);
        st.listener = Some(Listener::Remote { conn, channel });
        st.sender.on_credit_announced(credit);
        st.event_credit = Some(event_credit);
        // Whatever was queued before the consumer came was never announced to it.
        st.announce_pending = st.sender.backlog() > 0;
        st.mark_queued_if_available()
    }

    /// The remote consumer announced `credit` buffers and `events` more events; returns
    /// whether the connection must be told the channel is available.
    pub(crate) fn add_remote_credit(&self, credit: usize, events: usize) -> bool {
        let mut st = lock(&self.state);
        if st.consumer_released {
            return false;
        }
        st.sender.on_credit_announced(credit);
        if let Some(c) = st.event_credit.as_mut() {
            *c = c.saturating_add(events);
        }
        st.mark_queued_if_available()
    }

    /// Takes the next element a data server connection may send to its remote
    /// consumer: events against event credit, buffers against credit, otherwise a
    /// pending backlog announcement. The second value is true when the subpartition is
    /// still available and was marked queued: the caller re-queues the channel.
    pub(crate) fn take_for_remote(&self) -> Result<(RemoteTaken, bool), CreditError> {
        let mut st = lock(&self.state);
        st.in_gate_queue = false;
        if st.consumer_released {
            return Ok((RemoteTaken::Nothing, false));
        }
        let taken = match st.queue.front() {
            Some(BufferOrEvent::Event(_) | BufferOrEvent::Priority(_)) if st.event_credit != Some(0) => {
                if let Some(c) = st.event_credit.as_mut() {
                    *c -= 1;
                }
                if st.producer_waiting {
                    self.space.notify_all();
                }
                let backlog = st.sender.backlog();
                match st.queue.pop_front() {
                    Some(BufferOrEvent::Event(event)) => RemoteTaken::Event {
                        event,
                        priority: false,
                        backlog,
                    },
                    Some(BufferOrEvent::Priority(p)) => RemoteTaken::Event {
                        event: p.event,
                        priority: true,
                        backlog,
                    },
                    _ => RemoteTaken::Nothing,
                }
            }
            Some(BufferOrEvent::Buffer(_)) if st.sender.credit() > 0 => {
                let backlog = st.sender.on_buffer_sent()?;
                // The buffer carries the backlog.
                st.announce_pending = false;
                match st.queue.pop_front() {
                    Some(BufferOrEvent::Buffer(buffer)) => RemoteTaken::Buffer { buffer, backlog },
                    _ => RemoteTaken::Nothing,
                }
            }
            Some(BufferOrEvent::Buffer(_)) if st.announce_pending => {
                st.announce_pending = false;
                RemoteTaken::Backlog(st.sender.backlog())
            }
            Some(_) => RemoteTaken::Nothing,
            None if st.producer_released && !st.end_of_partition && !st.failure_reported => {
                st.failure_reported = true;
                st.producer_failure
                    .take()
                    .map_or(RemoteTaken::ProducerGone, RemoteTaken::Failed)
            }
            None => RemoteTaken::Nothing,
        };
        let requeue = st.mark_queued_if_available();
        Ok((taken, requeue))
    }

    /// The consumer went away (gate dropped, remote request cancelled, connection
    /// closed): the queue is dropped and the producer gets
    /// [`NetworkError::ConsumerReleased`](crate::network::NetworkError::ConsumerReleased) from
    /// now on.
    pub(crate) fn release_consumer(&self) {
        let dropped = {
            let mut st = lock(&self.state);
            st.consumer_released = true;
            st.listener = None;
            st.in_gate_queue = false;
            st.announce_pending = false;
            st.sender.reset();
            if st.producer_waiting {
                self.space.notify_all();
            }
            st.queue.take_all()
        };
        // Recycled outside the subpartition lock.
        drop(dropped);
    }
}

/// Promotes the in-band barrier of `checkpoint` in `queue` to a priority event, marked
/// unaligned, with the bytes of the buffers ahead of it; false when there is none.
pub(crate) fn promote_barrier_in(queue: &mut ChannelQueue<BufferOrEvent>, checkpoint: CheckpointId) -> bool {
    let found = queue
        .take_with_overtaken(|e| matches!(e, BufferOrEvent::Event(Event::CheckpointBarrier(b)) if b.id == checkpoint));
    let Some((BufferOrEvent::Event(Event::CheckpointBarrier(barrier)), overtaken)) = found else {
        return false;
    };
    queue.push(BufferOrEvent::Priority(PriorityEvent {
        event: Event::CheckpointBarrier(CheckpointBarrier {
            options: barrier.options.as_unaligned(),
            ..barrier
        }),
        overtaken,
    }));
    true
}

impl SubpartitionState {
    /// True when the consumer can take something now.
    pub(crate) fn is_available(&self) -> bool {
        match self.queue.front() {
            Some(BufferOrEvent::Event(_) | BufferOrEvent::Priority(_)) => self.event_credit != Some(0),
            Some(BufferOrEvent::Buffer(_)) => self.sender.credit() > 0 || self.announce_pending,
            None => self.producer_released && !self.end_of_partition && !self.failure_reported,
        }
    }

    /// When the subpartition is available, connected and not yet queued at its
    /// consumer: marks it queued and returns whom to notify (after unlocking).
    pub(crate) fn claim_notification(&mut self) -> Option<Notify> {
        if self.in_gate_queue || self.consumer_released || !self.is_available() {
            return None;
        }
        let notify = match self.listener.as_ref()? {
            Listener::Gate { gate, channel } => Notify::Gate(gate.upgrade()?, *channel),
            Listener::Remote { conn, channel } => Notify::Remote(conn.upgrade()?, *channel),
        };
        self.in_gate_queue = true;
        Some(notify)
    }

    /// A priority event was queued: returns whom to tell to serve this channel first
    /// (after unlocking), marking it queued if it was not. A channel queued already is
    /// moved to the front of its consumer's queue.
    pub(crate) fn claim_priority_notification(&mut self) -> Option<Notify> {
        if self.consumer_released || !self.is_available() && !self.in_gate_queue {
            return None;
        }
        let queued = self.in_gate_queue;
        let notify = match self.listener.as_ref()? {
            Listener::Gate { gate, channel } => Notify::GatePriority(gate.upgrade()?, *channel, queued),
            Listener::Remote { conn, channel } => Notify::RemotePriority(conn.upgrade()?, *channel, queued),
        };
        self.in_gate_queue = true;
        Some(notify)
    }

    /// For the gate itself: marks the subpartition queued if it is available and not
    /// queued yet; the caller pushes the channel after unlocking.
    pub(crate) fn mark_queued_if_available(&mut self) -> bool {
        if self.in_gate_queue || self.consumer_released || self.listener.is_none() || !self.is_available() {
            return false;
        }
        self.in_gate_queue = true;
        true
    }

    /// A data buffer was queued: updates the sender's backlog and, when it has no
    /// credit, announces the backlog to the gate while this subpartition is still
    /// locked (so the gate never sees a backlog larger than the real one) and takes
    /// any floating credit granted at once.
    pub(crate) fn on_buffer_enqueued(&mut self) {
        if let SenderDecision::AnnounceBacklog(backlog) = self.sender.on_buffer_enqueued() {
            self.announce_backlog(backlog);
        }
    }

    /// Tells the gate the current backlog (subpartition locked, lock order
    /// subpartition → gate) and applies the credit it grants.
    /// For a remote consumer the announcement is left to the connection writer
    /// (`announce_pending`), which sends the backlog current at that time.
    pub(crate) fn announce_backlog(&mut self, backlog: usize) {
        let granted = match self.listener.as_ref() {
            None => return,
            Some(Listener::Remote { .. }) => {
                self.announce_pending = true;
                return;
            }
            Some(Listener::Gate { gate, channel }) => match gate.upgrade() {
                Some(gate) => gate.grant_for_backlog(*channel, backlog),
                None => return,
            },
        };
        self.sender.on_credit_announced(granted);
    }
}

/// A consumer's reference to one subpartition (an in-process "local" channel).
#[derive(Clone)]
pub struct SubpartitionHandle {
    pub(crate) inner: Arc<Subpartition>,
}

impl SubpartitionHandle {
    /// Process-local number of the result partition.
    pub fn partition_number(&self) -> u64 {
        self.inner.partition
    }

    /// Index of the subpartition in its partition.
    pub fn subpartition_index(&self) -> usize {
        self.inner.index
    }
}

impl fmt::Debug for SubpartitionHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SubpartitionHandle({}:{})", self.inner.partition, self.inner.index)
    }
}
