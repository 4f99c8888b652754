//! Credit-based flow control as pure state machines: [`SenderCredit`] (one per
//! subpartition, on the producer's side) and [`ReceiverCredits`] (one per input gate,
//! on the consumer's side).
//!
//! The machines only count; they own no buffers and take no locks, so the in-process
//! channels and a TCP transport can drive them the same way: feed an event in, carry
//! out the returned decision (deliver a [`ReceiverDecision::Grant`] to the sender's
//! [`SenderCredit::on_credit_announced`], a [`SenderDecision::AnnounceBacklog`] to the
//! receiver's [`ReceiverCredits::on_backlog_announced`]).
//!
//! The protocol (Flink's, flink-facts §5):
//! - each channel starts with `exclusive` credits (its exclusive buffers);
//! - the sender hands over a data buffer only while its credit is positive, and each
//!   buffer costs one credit and carries the subpartition's remaining backlog; events
//!   need no credit;
//! - with the backlog the receiver wants `backlog + exclusive` free buffers for the
//!   channel and grants floating buffers from the gate's shared pool towards that
//!   target; channels that cannot be served wait in FIFO order for floating buffers;
//! - when the consumer is done with a buffer its credit comes back: a floating buffer
//!   the channel no longer needs goes back to the gate (or to the first waiting
//!   channel), any other buffer is announced to the sender again as one new credit;
//! - a sender at zero credit announces its backlog once so that a channel without
//!   credit still gets floating buffers.
//!
//! Priority events (the barriers of unaligned checkpoints, which overtake the queued
//! buffers, see `channel_queue`) are events: they need no credit and are not part of
//! the backlog, so overtaking changes neither machine — the buffers overtaken stay
//! queued, counted in the backlog, and are still sent one credit each. The machines
//! therefore need no priority state, and their exhaustive test no priority action.
//!
//! Invariants (checked exhaustively in the tests): counts never go negative (every
//! decrement is checked and reported as a [`CreditError`]); no buffer is sent without
//! credit; for a live channel `exclusive + floating == in_use + announced`; the
//! floating buffers of the gate are conserved (`available + Σ held == total`); once
//! every queued buffer is consumed and recycled all floating buffers are back in the
//! gate; a released channel keeps no floating buffer it is not using.

use std::collections::VecDeque;
use thiserror::Error;

/// A violation of the credit protocol: a bug in whoever drives the machines.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CreditError {
    /// A buffer was sent (or received) on a channel without credit.
    #[error("channel {channel}: buffer without credit")]
    NoCredit {
        /// The channel.
        channel: usize,
    },
    /// The sender tried to send a buffer while its backlog was empty.
    #[error("buffer sent with an empty backlog")]
    NoBacklog,
    /// A buffer was recycled that the channel never received.
    #[error("channel {channel}: recycled more buffers than received")]
    NothingInUse {
        /// The channel.
        channel: usize,
    },
    /// A channel index outside the gate.
    #[error("no input channel {channel}")]
    UnknownChannel {
        /// The channel.
        channel: usize,
    },
    /// A buffer arrived on a channel that was already released.
    #[error("channel {channel}: buffer after release")]
    Released {
        /// The channel.
        channel: usize,
    },
}

/// What the sender must do after a buffer was enqueued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderDecision {
    /// Nothing to tell the receiver.
    Nothing,
    /// The sender has no credit: tell the receiver the current backlog so it can grant
    /// floating buffers.
    AnnounceBacklog(usize),
}

/// Sender side of one channel: the credit the receiver announced and the backlog of
/// data buffers queued in the subpartition.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct SenderCredit {
    credit: usize,
    backlog: usize,
    backlog_announced: bool,
}

impl SenderCredit {
    /// No credit, no backlog.
    pub fn new() -> Self {
        Self::default()
    }

    /// Credit currently available.
    #[inline]
    pub fn credit(&self) -> usize {
        self.credit
    }

    /// Data buffers queued and not yet sent.
    #[inline]
    pub fn backlog(&self) -> usize {
        self.backlog
    }

    /// The receiver announced `n` more credits.
    #[inline]
    pub fn on_credit_announced(&mut self, n: usize) {
        self.credit = self.credit.saturating_add(n);
    }

    /// A finished data buffer was queued.
    #[inline]
    pub fn on_buffer_enqueued(&mut self) -> SenderDecision {
        self.backlog += 1;
        if self.credit == 0 && !self.backlog_announced {
            self.backlog_announced = true;
            SenderDecision::AnnounceBacklog(self.backlog)
        } else {
            SenderDecision::Nothing
        }
    }

    /// True when a data buffer is queued and there is credit to send it.
    #[inline]
    pub fn can_send_buffer(&self) -> bool {
        self.credit > 0 && self.backlog > 0
    }

    /// A data buffer was sent: consumes one credit and returns the backlog left, which
    /// travels with the buffer.
    #[inline]
    pub fn on_buffer_sent(&mut self) -> Result<usize, CreditError> {
        if self.backlog == 0 {
            return Err(CreditError::NoBacklog);
        }
        if self.credit == 0 {
            return Err(CreditError::NoCredit { channel: 0 });
        }
        self.credit -= 1;
        self.backlog -= 1;
        // The buffer carries the fresh backlog, so a later zero-credit enqueue must
        // announce again.
        self.backlog_announced = false;
        Ok(self.backlog)
    }

    /// The queue was dropped (the consumer released it): no backlog, no credit.
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// What the receiver must tell a sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiverDecision {
    /// Nothing to announce.
    Nothing,
    /// Announce `credit` new credits to the sender of `channel`.
    Grant {
        /// The channel whose sender gets the credit.
        channel: usize,
        /// Number of new credits.
        credit: usize,
    },
}

/// Receiver-side accounting of one channel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ChannelCredit {
    /// Floating buffers the channel holds (free or in use).
    pub floating: usize,
    /// Buffers received and not yet recycled.
    pub in_use: usize,
    /// Credits announced to the sender and not yet used.
    pub announced: usize,
    /// The sender's backlog as last reported.
    pub backlog: usize,
    /// Queued in the gate's list of channels waiting for floating buffers.
    pub waiting: bool,
    /// The channel ended (EndOfPartition) or was released: it gets no more credit.
    pub released: bool,
}

/// Receiver side of one input gate: exclusive credits per channel plus the gate's
/// floating buffers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReceiverCredits {
    exclusive: usize,
    floating_total: usize,
    floating_available: usize,
    channels: Vec<ChannelCredit>,
    waiting: VecDeque<usize>,
}

impl ReceiverCredits {
    /// A gate of `num_channels` channels, each with `exclusive` initial credits, and
    /// `floating` floating buffers. The initial credits count as announced: the driver
    /// gives each sender [`initial_credit`](Self::initial_credit) when it connects.
    pub fn new(num_channels: usize, exclusive: usize, floating: usize) -> Self {
        let channel = ChannelCredit {
            announced: exclusive,
            ..ChannelCredit::default()
        };
        Self {
            exclusive,
            floating_total: floating,
            floating_available: floating,
            channels: vec![channel; num_channels],
            waiting: VecDeque::new(),
        }
    }

    /// The credit each sender starts with (its exclusive buffers).
    pub fn initial_credit(&self) -> usize {
        self.exclusive
    }

    /// Number of channels.
    pub fn num_channels(&self) -> usize {
        self.channels.len()
    }

    /// Floating buffers in the gate, not held by any channel.
    pub fn floating_available(&self) -> usize {
        self.floating_available
    }

    /// Floating buffers of the gate in total.
    pub fn floating_total(&self) -> usize {
        self.floating_total
    }

    /// The accounting of `channel`.
    pub fn channel(&self, channel: usize) -> Option<&ChannelCredit> {
        self.channels.get(channel)
    }

    fn get(&mut self, channel: usize) -> Result<&mut ChannelCredit, CreditError> {
        self.channels
            .get_mut(channel)
            .ok_or(CreditError::UnknownChannel { channel })
    }

    /// Free buffers the channel still lacks to hold its backlog plus its exclusive
    /// share (Flink's `backlog + initialCredit` target).
    fn need(exclusive: usize, ch: &ChannelCredit) -> usize {
        if ch.released {
            0
        } else {
            (ch.backlog + exclusive).saturating_sub(ch.announced)
        }
    }

    /// A data buffer arrived on `channel` with the sender's remaining `backlog`.
    pub fn on_buffer_received(&mut self, channel: usize, backlog: usize) -> Result<ReceiverDecision, CreditError> {
        let ch = self.get(channel)?;
        if ch.released {
            return Err(CreditError::Released { channel });
        }
        if ch.announced == 0 {
            return Err(CreditError::NoCredit { channel });
        }
        ch.announced -= 1;
        ch.in_use += 1;
        ch.backlog = backlog;
        Ok(self.grant_floating(channel))
    }

    /// The sender of `channel` announced its backlog without sending a buffer.
    pub fn on_backlog_announced(&mut self, channel: usize, backlog: usize) -> Result<ReceiverDecision, CreditError> {
        let ch = self.get(channel)?;
        if ch.released {
            return Ok(ReceiverDecision::Nothing);
        }
        ch.backlog = backlog;
        Ok(self.grant_floating(channel))
    }

    /// The consumer is done with a buffer of `channel`.
    pub fn on_buffer_recycled(&mut self, channel: usize) -> Result<ReceiverDecision, CreditError> {
        let exclusive = self.exclusive;
        let ch = self.get(channel)?;
        if ch.in_use == 0 {
            return Err(CreditError::NothingInUse { channel });
        }
        ch.in_use -= 1;
        if ch.released {
            if ch.floating > 0 {
                ch.floating -= 1;
                return Ok(self.return_floating());
            }
            return Ok(ReceiverDecision::Nothing);
        }
        if ch.floating > 0 && ch.announced >= ch.backlog + exclusive {
            // The channel has enough without this one: the floating buffer goes back.
            ch.floating -= 1;
            return Ok(self.return_floating());
        }
        ch.announced += 1;
        Ok(ReceiverDecision::Grant { channel, credit: 1 })
    }

    /// `channel` ended or its consumer released it: its unused credit is void and its
    /// free floating buffers go back to the gate (to waiting channels first).
    pub fn on_channel_released(&mut self, channel: usize) -> Result<Vec<ReceiverDecision>, CreditError> {
        let ch = self.get(channel)?;
        if ch.released {
            return Ok(Vec::new());
        }
        ch.released = true;
        let was_waiting = std::mem::take(&mut ch.waiting);
        ch.backlog = 0;
        let free_floating = ch.floating.min(ch.announced);
        ch.floating -= free_floating;
        ch.announced = 0;
        if was_waiting {
            self.waiting.retain(|&w| w != channel);
        }
        let mut out = Vec::new();
        for _ in 0..free_floating {
            let d = self.return_floating();
            if d != ReceiverDecision::Nothing {
                out.push(d);
            }
        }
        Ok(out)
    }

    /// Grants `channel` floating buffers towards its target; queues it as waiting when
    /// the gate has too few.
    fn grant_floating(&mut self, channel: usize) -> ReceiverDecision {
        let exclusive = self.exclusive;
        let available = self.floating_available;
        let Some(ch) = self.channels.get_mut(channel) else {
            return ReceiverDecision::Nothing;
        };
        let need = Self::need(exclusive, ch);
        let give = need.min(available);
        ch.floating += give;
        ch.announced += give;
        let enqueue = need > give && !ch.waiting;
        if enqueue {
            ch.waiting = true;
        }
        self.floating_available -= give;
        if enqueue {
            self.waiting.push_back(channel);
        }
        if give > 0 {
            ReceiverDecision::Grant { channel, credit: give }
        } else {
            ReceiverDecision::Nothing
        }
    }

    /// One floating buffer came back: give it to the first waiting channel that still
    /// needs one, otherwise to the gate.
    fn return_floating(&mut self) -> ReceiverDecision {
        let exclusive = self.exclusive;
        while let Some(w) = self.waiting.pop_front() {
            let Some(ch) = self.channels.get_mut(w) else {
                continue;
            };
            ch.waiting = false;
            let need = Self::need(exclusive, ch);
            if need == 0 {
                continue;
            }
            ch.floating += 1;
            ch.announced += 1;
            if need > 1 {
                ch.waiting = true;
                self.waiting.push_front(w);
            }
            return ReceiverDecision::Grant { channel: w, credit: 1 };
        }
        self.floating_available += 1;
        ReceiverDecision::Nothing
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn sender_sends_only_against_credit_and_reports_backlog() {
        let mut s = SenderCredit::new();
        assert_eq!(s.on_buffer_enqueued(), SenderDecision::AnnounceBacklog(1));
        // Announced once until a buffer carries the backlog.
        assert_eq!(s.on_buffer_enqueued(), SenderDecision::Nothing);
        assert!(!s.can_send_buffer());
        assert_eq!(s.on_buffer_sent(), Err(CreditError::NoCredit { channel: 0 }));
        s.on_credit_announced(1);
        assert!(s.can_send_buffer());
        assert_eq!(s.on_buffer_sent(), Ok(1));
        assert!(!s.can_send_buffer());
        assert_eq!(s.on_buffer_enqueued(), SenderDecision::AnnounceBacklog(2));
        s.on_credit_announced(5);
        assert_eq!(s.on_buffer_sent(), Ok(1));
        assert_eq!(s.on_buffer_sent(), Ok(0));
        assert_eq!(s.on_buffer_sent(), Err(CreditError::NoBacklog));
        assert_eq!(s.credit(), 3);
    }

    #[test]
    fn receiver_grants_floating_for_backlog_and_takes_it_back_when_drained() {
        let mut r = ReceiverCredits::new(2, 2, 8);
        assert_eq!(
            r.on_buffer_received(0, 5),
            Ok(ReceiverDecision::Grant { channel: 0, credit: 6 })
        );
        assert_eq!(r.floating_available(), 2);
        // Channel 1 wants 3 but only 2 are left: it waits for the third.
        assert_eq!(
            r.on_buffer_received(1, 3),
            Ok(ReceiverDecision::Grant { channel: 1, credit: 2 })
        );
        assert_eq!(r.floating_available(), 0);
        // Channel 0's sender drains its backlog.
        for b in (0..5).rev() {
            assert_eq!(r.on_buffer_received(0, b), Ok(ReceiverDecision::Nothing));
        }
        // Recycling channel 0's six buffers: each floating buffer returns; the first two
        // go to waiting channel 1, which still lacks two.
        assert_eq!(
            r.on_buffer_recycled(0),
            Ok(ReceiverDecision::Grant { channel: 1, credit: 1 })
        );
        assert_eq!(
            r.on_buffer_recycled(0),
            Ok(ReceiverDecision::Grant { channel: 1, credit: 1 })
        );
        for _ in 0..4 {
            assert_eq!(r.on_buffer_recycled(0), Ok(ReceiverDecision::Nothing));
        }
        assert_eq!(
            r.channel(0).map(|c| (c.floating, c.announced, c.in_use)),
            Some((0, 2, 0))
        );
        assert_eq!(
            r.channel(1).map(|c| (c.floating, c.announced, c.waiting)),
            Some((4, 5, false))
        );
        assert_eq!(r.floating_available(), 4);
    }

    #[test]
    fn exclusive_credit_returns_to_its_channel() {
        let mut r = ReceiverCredits::new(1, 2, 0);
        assert_eq!(r.on_buffer_received(0, 0), Ok(ReceiverDecision::Nothing));
        assert_eq!(r.on_buffer_received(0, 0), Ok(ReceiverDecision::Nothing));
        assert_eq!(r.on_buffer_received(0, 0), Err(CreditError::NoCredit { channel: 0 }));
        assert_eq!(
            r.on_buffer_recycled(0),
            Ok(ReceiverDecision::Grant { channel: 0, credit: 1 })
        );
        assert_eq!(
            r.on_buffer_recycled(0),
            Ok(ReceiverDecision::Grant { channel: 0, credit: 1 })
        );
        assert_eq!(r.on_buffer_recycled(0), Err(CreditError::NothingInUse { channel: 0 }));
    }

    #[test]
    fn released_channel_returns_its_floating_buffers() {
        let mut r = ReceiverCredits::new(2, 1, 2);
        assert_eq!(
            r.on_backlog_announced(0, 3),
            Ok(ReceiverDecision::Grant { channel: 0, credit: 2 })
        );
        assert_eq!(r.on_backlog_announced(1, 1), Ok(ReceiverDecision::Nothing));
        assert_eq!(r.on_buffer_received(0, 2), Ok(ReceiverDecision::Nothing));
        // Release: 2 unused announced credits, one of which is floating and free...
        let d = r.on_channel_released(0);
        assert_eq!(d, Ok(vec![ReceiverDecision::Grant { channel: 1, credit: 1 }]));
        // ...and the floating buffer in use goes back when recycled.
        assert_eq!(r.on_buffer_recycled(0), Ok(ReceiverDecision::Nothing));
        assert_eq!(r.floating_available(), 1);
        assert_eq!(r.on_buffer_received(0, 0), Err(CreditError::Released { channel: 0 }));
    }

    // ----- exhaustive exploration of the coupled sender/receiver machines -----

    #[derive(Clone, PartialEq, Eq, Hash, Debug)]
    struct Model {
        recv: ReceiverCredits,
        send: Vec<SenderCredit>,
        released: Vec<bool>,
    }

    #[derive(Clone, Copy, Debug)]
    enum Action {
        Enqueue(usize),
        Send(usize),
        Recycle(usize),
        Release(usize),
    }

    impl Model {
        fn new(n: usize, e: usize, f: usize) -> Self {
            let recv = ReceiverCredits::new(n, e, f);
            let mut send = vec![SenderCredit::new(); n];
            for s in &mut send {
                s.on_credit_announced(recv.initial_credit());
            }
            Self {
                recv,
                send,
                released: vec![false; n],
            }
        }

        fn apply_grant(&mut self, d: ReceiverDecision) {
            if let ReceiverDecision::Grant { channel, credit } = d {
                assert!(credit > 0, "empty grant");
                assert!(!self.released[channel], "grant to a released channel");
                self.send[channel].on_credit_announced(credit);
            }
        }

        fn enabled(&self, max_backlog: usize) -> Vec<Action> {
            let mut out = Vec::new();
            for c in 0..self.send.len() {
                if !self.released[c] && self.send[c].backlog() < max_backlog {
                    out.push(Action::Enqueue(c));
                }
                if !self.released[c] && self.send[c].can_send_buffer() {
                    out.push(Action::Send(c));
                }
                if self.recv.channel(c).is_some_and(|ch| ch.in_use > 0) {
                    out.push(Action::Recycle(c));
                }
                if !self.released[c] && self.send[c].backlog() == 0 {
                    out.push(Action::Release(c));
                }
            }
            out
        }

        fn step(&mut self, a: Action) {
            match a {
                Action::Enqueue(c) => {
                    if let SenderDecision::AnnounceBacklog(b) = self.send[c].on_buffer_enqueued() {
                        let d = self.recv.on_backlog_announced(c, b).unwrap();
                        self.apply_grant(d);
                    }
                }
                Action::Send(c) => {
                    let backlog = self.send[c].on_buffer_sent().unwrap();
                    let d = self.recv.on_buffer_received(c, backlog).unwrap();
                    self.apply_grant(d);
                }
                Action::Recycle(c) => {
                    let d = self.recv.on_buffer_recycled(c).unwrap();
                    self.apply_grant(d);
                }
                Action::Release(c) => {
                    self.released[c] = true;
                    for d in self.recv.on_channel_released(c).unwrap() {
                        self.apply_grant(d);
                    }
                }
            }
        }

        fn check(&self, e: usize) {
            let mut floating_held = 0;
            for (c, ch) in self.recv.channels.iter().enumerate() {
                floating_held += ch.floating;
                if self.released[c] {
                    assert!(
                        ch.floating <= ch.in_use,
                        "released channel {c} hoards floating: {self:?}"
                    );
                    assert_eq!(ch.announced, 0);
                    continue;
                }
                assert_eq!(e + ch.floating, ch.in_use + ch.announced, "channel {c} leaks: {self:?}");
                assert_eq!(
                    self.send[c].credit(),
                    ch.announced,
                    "credit out of sync on {c}: {self:?}"
                );
                assert!(ch.backlog <= self.send[c].backlog(), "receiver overestimates backlog");
                if ch.floating > 0 {
                    assert!(
                        ch.announced <= ch.backlog + e,
                        "channel {c} holds surplus floating: {self:?}"
                    );
                }
                assert_eq!(ch.waiting, self.recv.waiting.contains(&c));
            }
            assert_eq!(
                self.recv.floating_available + floating_held,
                self.recv.floating_total,
                "floating leak"
            );
            let consumer_idle = self.recv.channels.iter().all(|ch| ch.in_use == 0);
            if consumer_idle {
                let has_backlog: Vec<usize> = (0..self.send.len())
                    .filter(|&c| !self.released[c] && self.send[c].backlog() > 0)
                    .collect();
                if e > 0 {
                    // No channel with data stalls while the consumer holds nothing.
                    for &c in &has_backlog {
                        assert!(self.send[c].credit() > 0, "channel {c} stalled: {self:?}");
                    }
                } else if !has_backlog.is_empty() {
                    // Without exclusive buffers at least one channel makes progress.
                    assert!(
                        has_backlog.iter().any(|&c| self.send[c].credit() > 0),
                        "gate deadlocked: {self:?}"
                    );
                }
            }
        }

        /// Consumes everything: sends and recycles until nothing is left.
        fn drain(mut self) -> Self {
            for _ in 0..10_000 {
                let mut progressed = false;
                for c in 0..self.send.len() {
                    while !self.released[c] && self.send[c].can_send_buffer() {
                        self.step(Action::Send(c));
                        progressed = true;
                    }
                    while self.recv.channel(c).is_some_and(|ch| ch.in_use > 0) {
                        self.step(Action::Recycle(c));
                        progressed = true;
                    }
                }
                if !progressed {
                    break;
                }
            }
            self
        }
    }

    fn explore(n: usize, e: usize, f: usize, max_backlog: usize) -> usize {
        let start = Model::new(n, e, f);
        let mut seen = HashSet::new();
        let mut stack = vec![start.clone()];
        seen.insert(start);
        while let Some(m) = stack.pop() {
            m.check(e);
            // Draining from any state delivers everything and returns all floating buffers.
            let drained = m.clone().drain();
            drained.check(e);
            for c in 0..n {
                assert_eq!(
                    drained.send[c].backlog() * usize::from(!drained.released[c]),
                    0,
                    "undelivered: {drained:?}"
                );
                let ch = drained.recv.channel(c).unwrap();
                assert_eq!(ch.in_use, 0);
                assert_eq!(ch.floating, 0, "floating not returned to the gate: {drained:?}");
            }
            assert_eq!(drained.recv.floating_available(), f);
            for a in m.enabled(max_backlog) {
                let mut next = m.clone();
                next.step(a);
                if seen.insert(next.clone()) {
                    stack.push(next);
                }
            }
        }
        seen.len()
    }

    #[test]
    fn credit_machines_keep_their_invariants_in_every_reachable_state() {
        let mut states = 0;
        for n in 1..=2 {
            for e in 0..=2 {
                for f in 0..=3 {
                    if e + f == 0 {
                        continue;
                    }
                    states += explore(n, e, f, 3);
                }
            }
        }
        for (e, f) in [(1, 1), (0, 2), (1, 0)] {
            states += explore(3, e, f, 2);
        }
        assert!(states > 10_000, "explored only {states} states");
    }
}
