//! The consumer side: [`InputGate`] reads one subpartition per input channel.
//!
//! Owns the gate's [`ReceiverCredits`] and its queue of channels with something to
//! deliver (each channel at most once, FIFO, so delivery is round-robin and fair).
//! A channel is pushed by whoever makes it available (the producer adding to an empty
//! or credit-less queue, a credit announcement, the consumer when more is left).
//!
//! Invariants:
//! - A data buffer leaves a subpartition only against sender credit; the receiver
//!   accounts it as in use until the consumer drops the [`Buffer`](super::Buffer),
//!   which returns the credit (`CreditReturn`); events need no credit and keep
//!   their order.
//! - Lock order is subpartition → gate, never the reverse. Everything that couples a
//!   subpartition's [`SenderCredit`](super::SenderCredit) with the gate's
//!   [`ReceiverCredits`] for the same channel (taking a buffer, announcing backlog)
//!   happens with the subpartition locked, so the receiver sees one channel's events
//!   in the sender's order, as over a TCP connection. Grants to other channels (a
//!   floating buffer handed on) are carried out after the gate lock is released.
//! - After every channel delivered EndOfPartition the gate is finished and delivers
//!   nothing more. Dropping the gate releases every subpartition: their queues are
//!   dropped and their producers get [`NetworkError::ConsumerReleased`].

use super::buffer::{lock, wait_slice, BufferOrEvent};
use super::cancel::CancelToken;
use super::config::NetworkConfig;
use super::credit::{CreditError, ReceiverCredits, ReceiverDecision};
use super::error::NetworkError;
use super::subpartition::{Listener, Subpartition, SubpartitionState, Taken};
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use weir_core::Event;

/// State shared by a gate, the subpartitions it reads and the buffers it delivered.
pub(crate) struct GateShared {
    state: Mutex<GateState>,
    cond: Condvar,
    subpartitions: Vec<Arc<Subpartition>>,
}

struct GateState {
    available: VecDeque<usize>,
    credits: ReceiverCredits,
    waiters: usize,
}

fn protocol(e: CreditError) -> NetworkError {
    NetworkError::Protocol(e.to_string())
}

impl GateShared {
    /// Pushes `channel` into the queue of available channels (its subpartition marked
    /// itself `in_gate_queue`).
    pub(crate) fn enqueue_channel(&self, channel: usize) {
        let mut st = lock(&self.state);
        st.available.push_back(channel);
        if st.waiters > 0 {
            self.cond.notify_one();
        }
    }

    /// The sender of `channel` announced `backlog` without credit; returns the credit
    /// granted to that same channel. Called with the channel's subpartition locked
    /// (which is why the grant is returned instead of applied).
    pub(crate) fn grant_for_backlog(&self, channel: usize, backlog: usize) -> usize {
        match lock(&self.state).credits.on_backlog_announced(channel, backlog) {
            Ok(ReceiverDecision::Grant { channel: c, credit }) if c == channel => credit,
            Ok(_) => 0,
            Err(e) => {
                tracing::error!(error = %e, "credit-based flow control violated");
                0
            }
        }
    }

    fn on_buffer_recycled(&self, channel: usize) {
        let decision = lock(&self.state).credits.on_buffer_recycled(channel);
        self.apply_logged(decision);
    }

    fn apply_logged(&self, decision: Result<ReceiverDecision, CreditError>) {
        match decision {
            Ok(d) => self.apply(d),
            Err(e) => tracing::error!(error = %e, "credit-based flow control violated"),
        }
    }

    /// Called by [`Subpartition::take`] with the subpartition of `channel` locked:
    /// accounts a received buffer (applying the channel's own grant at once) and puts
    /// the channel back into the queue when it has more to deliver.
    pub(crate) fn after_take(
        &self,
        sub: &mut SubpartitionState,
        channel: usize,
        received_backlog: Option<usize>,
    ) -> Result<(), CreditError> {
        if received_backlog.is_none() && !sub.is_available() {
            return Ok(());
        }
        let mut st = lock(&self.state);
        if let Some(backlog) = received_backlog {
            let decision = st.credits.on_buffer_received(channel, backlog)?;
            if let ReceiverDecision::Grant { channel: c, credit } = decision {
                if c == channel {
                    sub.sender.on_credit_announced(credit);
                }
            }
        }
        if sub.is_available() {
            sub.in_gate_queue = true;
            st.available.push_back(channel);
        }
        Ok(())
    }

    /// Delivers a grant to its sender and queues the channel if that made it available.
    fn apply(&self, decision: ReceiverDecision) {
        let ReceiverDecision::Grant { channel, credit } = decision else {
            return;
        };
        let Some(sub) = self.subpartitions.get(channel) else {
            return;
        };
        let notify = {
            let mut st = lock(&sub.state);
            if st.consumer_released {
                return;
            }
            st.sender.on_credit_announced(credit);
            st.mark_queued_if_available()
        };
        if notify {
            self.enqueue_channel(channel);
        }
    }
}

/// Returns a delivered buffer's credit to its gate when the buffer is dropped.
pub(crate) struct CreditReturn {
    gate: Arc<GateShared>,
    channel: usize,
}

impl CreditReturn {
    pub(crate) fn release(self) {
        self.gate.on_buffer_recycled(self.channel);
    }
}

/// Reads the subpartitions of one consumed data set, one input channel each; owned by
/// the consuming task's thread.
pub struct InputGate {
    shared: Arc<GateShared>,
    ended: Vec<bool>,
    num_ended: usize,
    cancel: CancelToken,
}

impl fmt::Debug for InputGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputGate")
            .field("channels", &self.ended.len())
            .field("ended", &self.num_ended)
            .finish()
    }
}

impl InputGate {
    /// Connects to `subpartitions` (channel `i` reads `subpartitions[i]`), giving each
    /// its exclusive credit and telling the gate about backlog queued so far.
    pub(crate) fn connect(
        subpartitions: Vec<Arc<Subpartition>>,
        config: &NetworkConfig,
        cancel: CancelToken,
    ) -> Result<Self, NetworkError> {
        config.validate()?;
        let n = subpartitions.len();
        if n == 0 {
            return Err(NetworkError::InvalidArgument(
                "an input gate needs at least one channel".into(),
            ));
        }
        // Claim every subpartition first so that a failure leaves none connected.
        for (i, sub) in subpartitions.iter().enumerate() {
            let mut st = lock(&sub.state);
            if st.connected {
                drop(st);
                for earlier in &subpartitions[..i] {
                    lock(&earlier.state).connected = false;
                }
                return Err(NetworkError::AlreadyConnected {
                    partition: sub.partition,
                    subpartition: sub.index,
                });
            }
            st.connected = true;
        }
        let credits = ReceiverCredits::new(n, config.buffers_per_channel, config.floating_buffers_per_gate);
        let initial = credits.initial_credit();
        let shared = Arc::new(GateShared {
            state: Mutex::new(GateState {
                available: VecDeque::with_capacity(n),
                credits,
                waiters: 0,
            }),
            cond: Condvar::new(),
            subpartitions,
        });
        for (channel, sub) in shared.subpartitions.iter().enumerate() {
            let notify = {
                let mut st = lock(&sub.state);
                st.listener = Some(Listener {
                    gate: Arc::downgrade(&shared),
                    channel,
                });
                st.sender.on_credit_announced(initial);
                let backlog = st.sender.backlog();
                if backlog > 0 {
                    st.announce_backlog(backlog);
                }
                st.mark_queued_if_available()
            };
            if notify {
                shared.enqueue_channel(channel);
            }
        }
        Ok(Self {
            shared,
            ended: vec![false; n],
            num_ended: 0,
            cancel,
        })
    }

    /// A description of the gate's flow-control state, for diagnosing stalls.
    pub fn debug_state(&self) -> String {
        let (available, credits) = {
            let st = lock(&self.shared.state);
            (st.available.clone(), st.credits.clone())
        };
        let mut out = format!("available channels {available:?}; {credits:?}");
        for (i, sub) in self.shared.subpartitions.iter().enumerate() {
            let st = lock(&sub.state);
            out.push_str(&format!(
                "\n  channel {i}: queue {} (events {}), credit {}, backlog {}, queued {}, available {}, ended {}",
                st.queue.len(),
                st.queued_events,
                st.sender.credit(),
                st.sender.backlog(),
                st.in_gate_queue,
                st.is_available(),
                self.ended.get(i).copied().unwrap_or(false),
            ));
        }
        out
    }

    /// Number of input channels.
    pub fn num_channels(&self) -> usize {
        self.ended.len()
    }

    /// True once every channel delivered EndOfPartition.
    pub fn is_finished(&self) -> bool {
        self.num_ended == self.ended.len()
    }

    /// True once `channel` delivered EndOfPartition.
    pub fn is_channel_finished(&self, channel: usize) -> bool {
        self.ended.get(channel).copied().unwrap_or(false)
    }

    /// Floating buffers of this gate not held by any channel.
    pub fn floating_buffers_available(&self) -> usize {
        lock(&self.shared.state).credits.floating_available()
    }

    /// The next buffer or event from any channel that has one, with its channel index.
    ///
    /// Waits up to `timeout` (`None`: until something arrives; `Some(ZERO)`: not at
    /// all) and returns `Ok(None)` on timeout. Channels are served round-robin. Once
    /// every channel has delivered EndOfPartition it returns `Ok(None)` at once and
    /// [`is_finished`](Self::is_finished) is true. A wait returns
    /// [`NetworkError::Cancelled`] within ~20 ms of the gate's token being cancelled; a
    /// producer that vanished without EndOfPartition gives
    /// [`NetworkError::ProducerReleased`].
    pub fn poll_next(&mut self, timeout: Option<Duration>) -> Result<Option<(usize, BufferOrEvent)>, NetworkError> {
        // Set on the first wait: `Some(None)` when the timeout is too far to represent.
        let mut deadline: Option<Option<Instant>> = None;
        loop {
            if self.is_finished() {
                return Ok(None);
            }
            let channel = {
                let mut st = lock(&self.shared.state);
                loop {
                    if let Some(c) = st.available.pop_front() {
                        break c;
                    }
                    if self.cancel.is_cancelled() {
                        return Err(NetworkError::Cancelled);
                    }
                    let wait = match timeout {
                        None => Duration::MAX,
                        Some(t) => {
                            let now = Instant::now();
                            match *deadline.get_or_insert_with(|| now.checked_add(t)) {
                                None => Duration::MAX,
                                Some(end) if now >= end => return Ok(None),
                                Some(end) => end - now,
                            }
                        }
                    };
                    st.waiters += 1;
                    st = wait_slice(&self.shared.cond, st, wait);
                    st.waiters -= 1;
                }
            };
            if let Some(item) = self.take_from(channel)? {
                return Ok(Some(item));
            }
        }
    }

    /// Takes one element from `channel` and does the credit bookkeeping.
    fn take_from(&mut self, channel: usize) -> Result<Option<(usize, BufferOrEvent)>, NetworkError> {
        let Some(sub) = self.shared.subpartitions.get(channel) else {
            return Ok(None);
        };
        let taken = sub.take(&self.shared, channel).map_err(protocol)?;
        match taken {
            Taken::Item(BufferOrEvent::Buffer(mut buffer)) => {
                buffer.attach_credit(CreditReturn {
                    gate: self.shared.clone(),
                    channel,
                });
                Ok(Some((channel, BufferOrEvent::Buffer(buffer))))
            }
            Taken::Item(BufferOrEvent::Event(event)) => {
                if event == Event::EndOfPartition {
                    self.end_channel(channel);
                }
                Ok(Some((channel, BufferOrEvent::Event(event))))
            }
            Taken::Nothing => Ok(None),
            Taken::ProducerGone => Err(NetworkError::ProducerReleased { channel }),
        }
    }

    fn end_channel(&mut self, channel: usize) {
        if let Some(ended) = self.ended.get_mut(channel) {
            if !*ended {
                *ended = true;
                self.num_ended += 1;
            }
        }
        let decisions = lock(&self.shared.state).credits.on_channel_released(channel);
        match decisions {
            Ok(ds) => ds.into_iter().for_each(|d| self.shared.apply(d)),
            Err(e) => tracing::error!(error = %e, "credit-based flow control violated"),
        }
    }
}

impl Drop for InputGate {
    fn drop(&mut self) {
        for sub in &self.shared.subpartitions {
            let dropped = {
                let mut st = lock(&sub.state);
                st.consumer_released = true;
                st.listener = None;
                st.in_gate_queue = false;
                st.queued_events = 0;
                st.sender.reset();
                if st.producer_waiting {
                    sub.space.notify_all();
                }
                std::mem::take(&mut st.queue)
            };
            // Recycled outside the subpartition lock.
            drop(dropped);
        }
    }
}
