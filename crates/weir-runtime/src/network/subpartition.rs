//! The state one subpartition shares with the input channel that reads it
//! (`Subpartition`): the in-process "local channel".
//!
//! Owns the subpartition's queue of finished buffers and events, its
//! [`SenderCredit`], and the link to the consuming gate. The producer appends; the
//! consumer takes from the front, buffers only against credit, events always. A buffer
//! moves from producer to consumer without a copy.
//!
//! Invariants:
//! - `sender.backlog()` equals the number of buffers in `queue`; `queued_events` the
//!   number of events; at most [`MAX_QUEUED_EVENTS`] events are queued (a producer
//!   blocks beyond), and buffers are bounded by the producer's local pool, so the
//!   queue is bounded.
//! - `in_gate_queue` is true exactly while the channel index is (or is about to be) in
//!   the gate's queue of available channels; whoever sets it pushes the index. It is
//!   set only when the subpartition is available, so a channel is queued at most once.
//! - Nothing follows EndOfPartition.
//!
//! Lock order: a subpartition lock may be held while taking the gate lock, never the
//! other way round.

use super::buffer::{lock, BufferOrEvent};
use super::credit::{CreditError, SenderCredit, SenderDecision};
use super::input_gate::GateShared;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, Weak};

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

/// The consuming gate and the channel index this subpartition has there.
pub(crate) struct Listener {
    pub(crate) gate: Weak<GateShared>,
    pub(crate) channel: usize,
}

pub(crate) struct SubpartitionState {
    pub(crate) queue: VecDeque<BufferOrEvent>,
    pub(crate) queued_events: usize,
    pub(crate) sender: SenderCredit,
    pub(crate) listener: Option<Listener>,
    pub(crate) in_gate_queue: bool,
    /// An input gate claimed this subpartition (it stays claimed).
    pub(crate) connected: bool,
    pub(crate) end_of_partition: bool,
    pub(crate) producer_released: bool,
    pub(crate) consumer_released: bool,
    pub(crate) failure_reported: bool,
    pub(crate) producer_waiting: bool,
}

/// What the consumer found at the front of a subpartition.
pub(crate) enum Taken {
    /// A buffer or an event.
    Item(BufferOrEvent),
    /// Nothing deliverable now.
    Nothing,
    /// The producer went away before EndOfPartition.
    ProducerGone,
}

impl Subpartition {
    pub(crate) fn new(partition: u64, index: usize) -> Arc<Self> {
        Arc::new(Self {
            partition,
            index,
            state: Mutex::new(SubpartitionState {
                queue: VecDeque::new(),
                queued_events: 0,
                sender: SenderCredit::new(),
                listener: None,
                in_gate_queue: false,
                connected: false,
                end_of_partition: false,
                producer_released: false,
                consumer_released: false,
                failure_reported: false,
                producer_waiting: false,
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
    pub(crate) fn take(&self, gate: &GateShared, channel: usize) -> Result<Taken, CreditError> {
        let mut st = lock(&self.state);
        st.in_gate_queue = false;
        let mut received_backlog = None;
        let taken = match st.queue.front() {
            Some(BufferOrEvent::Event(_)) => {
                st.queued_events -= 1;
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
                Taken::ProducerGone
            }
            None => Taken::Nothing,
        };
        let accounted = gate.after_take(&mut st, channel, received_backlog);
        drop(st);
        accounted?;
        Ok(taken)
    }
}

impl SubpartitionState {
    /// True when the consumer can take something now.
    pub(crate) fn is_available(&self) -> bool {
        match self.queue.front() {
            Some(BufferOrEvent::Event(_)) => true,
            Some(BufferOrEvent::Buffer(_)) => self.sender.credit() > 0,
            None => self.producer_released && !self.end_of_partition && !self.failure_reported,
        }
    }

    /// When the subpartition is available, connected and not yet queued at its gate:
    /// marks it queued and returns the gate and channel to push (after unlocking).
    pub(crate) fn claim_notification(&mut self) -> Option<(Arc<GateShared>, usize)> {
        if self.in_gate_queue || self.consumer_released || !self.is_available() {
            return None;
        }
        let listener = self.listener.as_ref()?;
        let gate = listener.gate.upgrade()?;
        self.in_gate_queue = true;
        Some((gate, listener.channel))
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
    pub(crate) fn announce_backlog(&mut self, backlog: usize) {
        let Some(listener) = self.listener.as_ref() else {
            return;
        };
        let Some(gate) = listener.gate.upgrade() else {
            return;
        };
        let granted = gate.grant_for_backlog(listener.channel, backlog);
        self.sender.on_credit_announced(granted);
    }
}
