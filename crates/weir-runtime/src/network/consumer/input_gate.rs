//! The consumer side: [`InputGate`] reads one subpartition per input channel.
//!
//! Owns the gate's [`ReceiverCredits`] and its queue of channels with something to
//! deliver (each channel at most once, FIFO, so delivery is round-robin and fair).
//! A channel is pushed by whoever makes it available (the producer adding to an empty
//! or credit-less queue, a credit announcement, the consumer when more is left). A
//! channel that got a priority event (an unaligned checkpoint's barrier) goes to the
//! front of the queue, so the barrier is delivered before the buffers of every channel
//! (Flink's prioritized input channels); a channel held back by alignment stays parked
//! until it is released.
//!
//! Invariants:
//! - A data buffer leaves a subpartition only against sender credit; the receiver
//!   accounts it as in use until the consumer drops the [`Buffer`],
//!   which returns the credit (`CreditReturn`); events need no credit and keep
//!   their order.
//! - Lock order is subpartition → gate, never the reverse. Everything that couples a
//!   subpartition's [`SenderCredit`](crate::network::SenderCredit) with the gate's
//!   [`ReceiverCredits`] for the same channel (taking a buffer, announcing backlog)
//!   happens with the subpartition locked, so the receiver sees one channel's events
//!   in the sender's order, as over a TCP connection. Grants to other channels (a
//!   floating buffer handed on) are carried out after the gate lock is released.
//! - After every channel delivered EndOfPartition the gate is finished and delivers
//!   nothing more. Dropping the gate releases every subpartition: their queues are
//!   dropped and their producers get [`NetworkError::ConsumerReleased`].
//! - A channel is local (an in-process `Subpartition`) or remote (a
//!   `RemoteInputChannel` fed by a TCP connection, see [`remote`](crate::network::transport)).
//!   A remote channel's buffers are accounted as received when they arrive (in the
//!   connection's reader thread) and live in the gate's receive pool, a fixed local
//!   pool of `remote channels × exclusive + floating` segments; its grants become
//!   AddCredit frames. Dropping the gate cancels the remote requests.
//! - A third kind, a stored channel, reads a finished blocking subpartition of this
//!   process in the consumer's thread (a `StoredSubpartitionReader` the gate owns):
//!   it is queued as available from the start and again after every element while it
//!   has more, needs no credit, and reads into buffers of the gate's small stored
//!   pool (or of no pool when the consumer holds them all).

use crate::network::buffer::{
    lock, wait_slice, Buffer, BufferOrEvent, BufferRecycler, CreditReturn, LocalBufferPool, PoolUsage,
};
use crate::network::cancel::CancelToken;
use crate::network::config::NetworkConfig;
use crate::network::credit::{CreditError, ReceiverCredits, ReceiverDecision};
use crate::network::error::NetworkError;
use crate::network::partition::stored_subpartition::{StoredElement, StoredSubpartitionReader};
use crate::network::partition::subpartition::{ConsumerGate, Listener, Subpartition, SubpartitionState, Taken};
use crate::network::transport::client::{self, RemoteGate, RemoteInputChannel, RemoteSource};
use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};
use weir_core::{CheckpointId, Event};

/// State shared by a gate, the channels it reads and the buffers it delivered.
pub(crate) struct GateShared {
    state: Mutex<GateState>,
    cond: Condvar,
    channels: Vec<GateChannel>,
    /// Receive buffers of the remote channels (`None` without remote channels).
    receive_pool: Option<LocalBufferPool>,
}

/// One input channel of a gate.
pub(crate) enum GateChannel {
    /// Reads an in-process subpartition.
    Local(Arc<Subpartition>),
    /// Reads a subpartition of another process.
    Remote(Arc<RemoteInputChannel>),
    /// Reads a finished blocking subpartition in the consumer's thread (its reader
    /// lives in the [`InputGate`]).
    Stored,
}

/// What a gate's channel is created from.
pub(crate) enum ChannelSource {
    /// An in-process subpartition.
    Local(Arc<Subpartition>),
    /// A subpartition behind a data connection.
    Remote(RemoteSource),
    /// A finished blocking subpartition.
    Stored(StoredSubpartitionReader),
}

/// The pools a gate's channels read into, beyond the producers' buffers of its local
/// channels.
#[derive(Default)]
pub(crate) struct GatePools {
    /// Receive buffers of the remote channels: `remote channels × exclusive +
    /// floating` segments (`None` without remote channels).
    pub(crate) receive: Option<LocalBufferPool>,
    /// Buffers the stored channels read into (`None` without stored channels).
    pub(crate) stored: Option<LocalBufferPool>,
}

/// A channel between taking its source apart and building the gate.
enum ChannelSlot {
    Local(Arc<Subpartition>),
    Remote(RemoteSource),
    Stored,
}

struct GateState {
    available: VecDeque<usize>,
    credits: ReceiverCredits,
    waiters: usize,
    /// Bumped whenever a remote request is answered (wakes the gate's creator).
    setup_version: u64,
}

fn protocol(e: CreditError) -> NetworkError {
    NetworkError::Protocol(e.to_string())
}

impl ConsumerGate for GateShared {
    fn enqueue_channel(&self, channel: usize) {
        let mut st = lock(&self.state);
        st.available.push_back(channel);
        if st.waiters > 0 {
            self.cond.notify_one();
        }
    }

    fn enqueue_priority_channel(&self, channel: usize, queued: bool) {
        let mut st = lock(&self.state);
        if queued {
            match st.available.iter().position(|&c| c == channel) {
                Some(at) => {
                    st.available.remove(at);
                }
                None => return,
            }
        }
        st.available.push_front(channel);
        if st.waiters > 0 {
            self.cond.notify_one();
        }
    }

    fn grant_for_backlog(&self, channel: usize, backlog: usize) -> usize {
        match lock(&self.state).credits.on_backlog_announced(channel, backlog) {
            Ok(ReceiverDecision::Grant { channel: c, credit }) if c == channel => credit,
            Ok(_) => 0,
            Err(e) => {
                tracing::error!(error = %e, "credit-based flow control violated");
                0
            }
        }
    }

    fn after_take(
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
}

impl RemoteGate for GateShared {
    fn on_remote_buffer(&self, channel: usize, backlog: usize) -> Result<ReceiverDecision, CreditError> {
        lock(&self.state).credits.on_buffer_received(channel, backlog)
    }

    fn on_remote_backlog(&self, channel: usize, backlog: usize) -> Result<ReceiverDecision, CreditError> {
        lock(&self.state).credits.on_backlog_announced(channel, backlog)
    }

    fn receive_buffer(&self) -> Option<Buffer> {
        self.receive_pool.as_ref()?.try_request_buffer(None)
    }

    fn signal_setup(&self) {
        lock(&self.state).setup_version += 1;
        self.cond.notify_all();
    }

    fn setup_version(&self) -> u64 {
        lock(&self.state).setup_version
    }

    fn wait_setup(&self, version: u64, max: Duration) {
        let st = lock(&self.state);
        if st.setup_version == version && !max.is_zero() {
            drop(wait_slice(&self.cond, st, max));
        }
    }

    fn apply(&self, decision: ReceiverDecision) {
        let ReceiverDecision::Grant { channel, credit } = decision else {
            return;
        };
        let sub = match self.channels.get(channel) {
            Some(GateChannel::Local(sub)) => sub,
            Some(GateChannel::Remote(rc)) => return rc.add_credit(credit),
            Some(GateChannel::Stored) | None => return,
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

impl GateShared {
    fn apply_logged(&self, decision: Result<ReceiverDecision, CreditError>) {
        match decision {
            Ok(d) => self.apply(d),
            Err(e) => tracing::error!(error = %e, "credit-based flow control violated"),
        }
    }

    /// The remote channels.
    pub(crate) fn remote_channels(&self) -> impl Iterator<Item = &Arc<RemoteInputChannel>> {
        self.channels.iter().filter_map(|c| match c {
            GateChannel::Remote(rc) => Some(rc),
            GateChannel::Local(_) | GateChannel::Stored => None,
        })
    }
}

impl BufferRecycler for GateShared {
    fn recycle(&self, channel: usize) {
        let decision = lock(&self.state).credits.on_buffer_recycled(channel);
        self.apply_logged(decision);
    }
}

/// Reads the subpartitions of one consumed data set, one input channel each; owned by
/// the consuming task's thread.
pub struct InputGate {
    shared: Arc<GateShared>,
    ended: Vec<bool>,
    num_ended: usize,
    cancel: CancelToken,
    /// Channels held back by checkpoint alignment: they deliver nothing until
    /// [`unblock_all`](Self::unblock_all).
    blocked: Vec<bool>,
    /// Blocked channels taken off the available queue, still marked queued, to be
    /// put back on unblock.
    parked: Vec<usize>,
    /// The readers of the [`GateChannel::Stored`] channels, by channel index.
    stored: Vec<Option<StoredSubpartitionReader>>,
    /// Buffers the stored channels read into (`None` without stored channels).
    stored_pool: Option<LocalBufferPool>,
    segment_size: usize,
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
    /// A test's view of whether a consumer is parked in [`poll_next`](Self::poll_next)
    /// waiting for a channel to become available (it holds the gate weakly).
    #[cfg(test)]
    pub(crate) fn parked_probe(&self) -> impl Fn() -> bool + Send + 'static {
        let shared = Arc::downgrade(&self.shared);
        move || shared.upgrade().is_some_and(|shared| lock(&shared.state).waiters > 0)
    }

    /// Connects to `subpartitions` (channel `i` reads `subpartitions[i]`), giving each
    /// its exclusive credit and telling the gate about backlog queued so far.
    pub(crate) fn connect(
        subpartitions: Vec<Arc<Subpartition>>,
        config: &NetworkConfig,
        cancel: CancelToken,
    ) -> Result<Self, NetworkError> {
        let sources = subpartitions.into_iter().map(ChannelSource::Local).collect();
        Self::build(sources, config, GatePools::default(), cancel)
    }

    /// A gate over local and remote channels (channel `i` from `sources[i]`). Local
    /// subpartitions are claimed and connected at once; remote channels register at
    /// their connection and send their partition request (see
    /// [`await_remote_requests`](Self::await_remote_requests)). `pools.receive` must
    /// hold `remote channels × exclusive + floating` buffers when there are remote
    /// channels. Stored channels are read in the consumer's thread into buffers of
    /// `pools.stored` (a buffer of no pool when it has none free).
    pub(crate) fn build(
        sources: Vec<ChannelSource>,
        config: &NetworkConfig,
        pools: GatePools,
        cancel: CancelToken,
    ) -> Result<Self, NetworkError> {
        config.validate()?;
        let n = sources.len();
        if n == 0 {
            return Err(NetworkError::InvalidArgument(
                "an input gate needs at least one channel".into(),
            ));
        }
        let locals: Vec<&Arc<Subpartition>> = sources
            .iter()
            .filter_map(|s| match s {
                ChannelSource::Local(sub) => Some(sub),
                ChannelSource::Remote(_) | ChannelSource::Stored(_) => None,
            })
            .collect();
        // Claim every subpartition first so that a failure leaves none connected.
        for (i, sub) in locals.iter().enumerate() {
            let mut st = lock(&sub.state);
            if st.connected {
                drop(st);
                for earlier in &locals[..i] {
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
        let mut stored: Vec<Option<StoredSubpartitionReader>> = (0..n).map(|_| None).collect();
        let mut available = VecDeque::with_capacity(n);
        let mut channels = Vec::with_capacity(n);
        for (i, source) in sources.into_iter().enumerate() {
            channels.push(match source {
                ChannelSource::Local(sub) => ChannelSlot::Local(sub),
                ChannelSource::Remote(r) => ChannelSlot::Remote(r),
                ChannelSource::Stored(reader) => {
                    if reader.has_more() {
                        available.push_back(i);
                    }
                    stored[i] = Some(reader);
                    ChannelSlot::Stored
                }
            });
        }
        let shared = Arc::new_cyclic(|weak: &Weak<GateShared>| GateShared {
            state: Mutex::new(GateState {
                available,
                credits,
                waiters: 0,
                setup_version: 0,
            }),
            cond: Condvar::new(),
            channels: channels
                .into_iter()
                .enumerate()
                .map(|(i, s)| match s {
                    ChannelSlot::Local(sub) => GateChannel::Local(sub),
                    ChannelSlot::Remote(r) => {
                        let gate: Weak<dyn RemoteGate> = weak.clone();
                        GateChannel::Remote(Arc::new(RemoteInputChannel::new(r, gate, i, initial)))
                    }
                    ChannelSlot::Stored => GateChannel::Stored,
                })
                .collect(),
            receive_pool: pools.receive,
        });
        for (channel, ch) in shared.channels.iter().enumerate() {
            let GateChannel::Local(sub) = ch else {
                continue;
            };
            let notify = {
                let mut st = lock(&sub.state);
                let gate: Weak<dyn ConsumerGate> = Arc::downgrade(&shared) as Weak<GateShared>;
                st.listener = Some(Listener::Gate { gate, channel });
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
        let gate = Self {
            shared,
            ended: vec![false; n],
            num_ended: 0,
            blocked: vec![false; n],
            parked: Vec::new(),
            stored,
            stored_pool: pools.stored,
            segment_size: config.segment_size,
            cancel,
        };
        // On failure the gate is dropped, which cancels what was requested.
        for rc in gate.shared.remote_channels() {
            rc.request()?;
        }
        Ok(gate)
    }

    /// Waits until every remote channel's request was accepted, re-sending requests
    /// for partitions not registered yet until `deadline` (then
    /// [`NetworkError::PartitionNotFound`]).
    pub(crate) fn await_remote_requests(
        &self,
        deadline: Instant,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<(), NetworkError> {
        let remotes: Vec<&Arc<RemoteInputChannel>> = self.shared.remote_channels().collect();
        client::await_requests(&*self.shared, &remotes, deadline, timeout, cancel)
    }

    /// Number of remote channels.
    pub fn num_remote_channels(&self) -> usize {
        self.shared.remote_channels().count()
    }

    /// A description of the gate's flow-control state, for diagnosing stalls.
    pub fn debug_state(&self) -> String {
        let (available, credits) = {
            let st = lock(&self.shared.state);
            (st.available.clone(), st.credits.clone())
        };
        let mut out = format!("available channels {available:?}; {credits:?}");
        for (i, ch) in self.shared.channels.iter().enumerate() {
            let sub = match ch {
                GateChannel::Local(sub) => sub,
                GateChannel::Stored => {
                    out.push_str(&format!(
                        "\n  channel {i}: {:?}, ended {}",
                        self.stored.get(i),
                        self.ended.get(i).copied().unwrap_or(false)
                    ));
                    continue;
                }
                GateChannel::Remote(rc) => {
                    out.push_str(&format!(
                        "\n  channel {i}: {}, ended {}",
                        rc.describe(),
                        self.ended.get(i).copied().unwrap_or(false)
                    ));
                    continue;
                }
            };
            let st = lock(&sub.state);
            out.push_str(&format!(
                "\n  channel {i}: queue {} (buffers {}, events {}, priority {}), credit {}, backlog {}, queued {}, available {}, ended {}",
                st.queue.len(),
                st.queue.buffers(),
                st.queue.events(),
                st.queue.priority_events(),
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

    /// True when `channel` reads a finished blocking subpartition in the consumer's
    /// thread.
    #[cfg(test)]
    pub(crate) fn is_channel_stored(&self, channel: usize) -> bool {
        matches!(self.shared.channels.get(channel), Some(GateChannel::Stored))
    }

    /// Holds `channel` back (checkpoint alignment): what it has or receives stays queued
    /// in its channel, under credit-based backpressure, until [`unblock_all`](Self::unblock_all).
    pub fn block_channel(&mut self, channel: usize) {
        if let Some(b) = self.blocked.get_mut(channel) {
            *b = true;
        }
    }

    /// True while `channel` is held back.
    pub fn is_channel_blocked(&self, channel: usize) -> bool {
        self.blocked.get(channel).copied().unwrap_or(false)
    }

    /// Releases every blocked channel; those with something queued are served first,
    /// in the order they became available.
    pub fn unblock_all(&mut self) {
        self.blocked.iter_mut().for_each(|b| *b = false);
        if self.parked.is_empty() {
            return;
        }
        let mut st = lock(&self.shared.state);
        for c in self.parked.drain(..).rev() {
            st.available.push_front(c);
        }
        if st.waiters > 0 {
            self.shared.cond.notify_all();
        }
    }

    /// Promotes the barrier of `checkpoint` that `channel` holds queued in band (in its
    /// subpartition, or a remote channel's receive queue) to a priority event: the
    /// checkpoint switched to unaligned (the aligned-checkpoint timeout), so the barrier
    /// overtakes the buffers ahead of it, whose bytes it carries (the channel's input
    /// channel state). False when the barrier is not there (not arrived yet, or still
    /// at a remote producer).
    pub fn promote_barrier(&self, channel: usize, checkpoint: CheckpointId) -> bool {
        match self.shared.channels.get(channel) {
            Some(GateChannel::Local(sub)) => sub.promote_barrier(checkpoint),
            Some(GateChannel::Remote(rc)) => rc.promote_barrier(&*self.shared, checkpoint),
            Some(GateChannel::Stored) | None => false,
        }
    }

    /// The usage of the receive buffers of the gate's remote channels (Flink's
    /// `inPoolUsage`); empty for a gate of local channels only, which read the
    /// producers' buffers.
    pub fn pool_usage(&self) -> PoolUsage {
        self.shared.receive_pool.as_ref().map(|p| p.usage()).unwrap_or_default()
    }

    /// The most receive buffers the gate's remote channels held at once.
    #[cfg(test)]
    pub(crate) fn receive_pool_peak(&self) -> usize {
        self.shared
            .receive_pool
            .as_ref()
            .map_or(0, LocalBufferPool::peak_buffers_in_use)
    }

    /// Floating buffers of this gate not held by any channel.
    pub fn floating_buffers_available(&self) -> usize {
        lock(&self.shared.state).credits.floating_available()
    }

    /// The next buffer or event from any channel that has one, with its channel index.
    /// A priority event comes before anything queued on any channel (unless its channel
    /// is blocked), with the data it overtook in a remote channel's receive queue.
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
                        if self.blocked.get(c).copied().unwrap_or(false) {
                            self.parked.push(c);
                            continue;
                        }
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
        let taken = match self.shared.channels.get(channel) {
            Some(GateChannel::Local(sub)) => sub.take(&*self.shared, channel).map_err(protocol)?,
            Some(GateChannel::Remote(rc)) => rc.take(&*self.shared),
            Some(GateChannel::Stored) => return self.take_stored(channel),
            None => return Ok(None),
        };
        match taken {
            Taken::Item(BufferOrEvent::Buffer(mut buffer)) => {
                buffer.attach_credit(CreditReturn {
                    recycler: self.shared.clone(),
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
            Taken::Item(priority @ BufferOrEvent::Priority(_)) => Ok(Some((channel, priority))),
            Taken::Nothing => Ok(None),
            Taken::ProducerGone => Err(NetworkError::ProducerReleased { channel }),
            Taken::Failed(e) => Err(e),
        }
    }

    /// Reads the next element of the stored channel `channel` and queues the channel
    /// again while it has more.
    fn take_stored(&mut self, channel: usize) -> Result<Option<(usize, BufferOrEvent)>, NetworkError> {
        let Some(reader) = self.stored.get_mut(channel).and_then(Option::as_mut) else {
            return Ok(None);
        };
        let (pool, segment_size) = (&self.stored_pool, self.segment_size);
        let element = reader.next_element(|| {
            Ok(pool
                .as_ref()
                .and_then(|p| p.try_request_buffer(None))
                .unwrap_or_else(|| Buffer::unpooled(segment_size)))
        })?;
        if reader.has_more() {
            lock(&self.shared.state).available.push_back(channel);
        }
        match element {
            Some(StoredElement::Buffer(buffer)) => Ok(Some((channel, BufferOrEvent::Buffer(buffer)))),
            Some(StoredElement::Event(event)) => {
                if event == Event::EndOfPartition {
                    self.end_channel(channel);
                }
                Ok(Some((channel, BufferOrEvent::Event(event))))
            }
            None => Err(NetworkError::ProducerReleased { channel }),
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
        for ch in &self.shared.channels {
            match ch {
                GateChannel::Local(sub) => sub.release_consumer(),
                GateChannel::Remote(rc) => rc.release(),
                GateChannel::Stored => {}
            }
        }
    }
}
