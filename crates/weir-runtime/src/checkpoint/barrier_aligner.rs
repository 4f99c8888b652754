//! Checkpoint barrier handling across the input channels of one task (Flink's
//! `SingleCheckpointBarrierHandler` with its aligned, unaligned and
//! alternating-with-timeout controllers, and `CheckpointBarrierTracker` for
//! at-least-once), as a pure state machine: events and the current time in, decisions
//! out, no I/O. The input processors carry out the decisions (blocking a gate's
//! channel, recording a channel's records) and the task loop takes the outcomes
//! (snapshot, complete the channel state, decline).
//!
//! Channels are numbered across all of the task's gates (the second input's channels
//! after the first's). The protocol:
//! - A barrier of a checkpoint newer than the one in progress starts a new one; a
//!   checkpoint still in progress is aborted first (its checkpoint is subsumed,
//!   Flink's `CHECKPOINT_DECLINED_SUBSUMED`).
//! - Aligned (exactly-once, and every savepoint): a channel that delivered the current
//!   barrier is blocked until every barrier came; then the checkpoint is
//!   [`Aligned`](BarrierOutcome::Aligned) and every channel is released.
//!   At-least-once: the same without blocking.
//! - Unaligned: the first barrier makes the task snapshot at once
//!   ([`Unaligned`](BarrierOutcome::Unaligned)); nothing is blocked, and every channel
//!   that has neither delivered the barrier nor ended is *recording*: the records it
//!   delivers are processed and kept as its channel state. A channel stops recording
//!   when its barrier comes or it ends; when none records any more the channel state is
//!   complete ([`ChannelStateComplete`](BarrierOutcome::ChannelStateComplete)). An
//!   unaligned barrier travels as a priority event that overtook the channel's
//!   unprocessed data: every unaligned barrier that counts asks for that data to be
//!   persisted too ([`ChannelAction::PersistInFlight`]), and a checkpoint one of them
//!   belongs to is never simply aligned — with one live channel it is
//!   `Unaligned` and `ChannelStateComplete` at once.
//! - Aligned with a timeout: starts aligned; once alignment has lasted the barrier's
//!   aligned-checkpoint timeout ([`BarrierAligner::check_timeout`], also checked on
//!   every barrier) it switches to unaligned: the blocked channels are released, the
//!   task snapshots with the barrier turned unaligned, and the channels whose barrier
//!   has not come record as above. An unaligned barrier of the checkpoint (forwarded
//!   by an upstream task that switched) switches it at once.
//! - A channel that ends (EndOfPartition) counts as having delivered the current and
//!   every later barrier.
//! - A barrier of a checkpoint older than or equal to the newest one seen is ignored,
//!   and so is a second barrier of the checkpoint in progress on the same channel.
//! - A checkpoint triggered at the task itself (its upstream tasks have all finished,
//!   so no barrier will come; Flink's checkpoints after tasks finish) is taken once
//!   every channel has ended, before the task ends its input:
//!   [`BarrierAligner::trigger_at_end_of_input`]. It is aligned at the last
//!   EndOfPartition, after the checkpoint in progress, if any; a newer such trigger
//!   aborts an older one still waiting.
//!
//! Invariants (checked by the exhaustive test below): per checkpoint the outcomes are
//! one of `Aligned`, `Aborted`, `Unaligned` then `ChannelStateComplete`, or `Unaligned`
//! then `Aborted`, and checkpoints come in increasing id order; `Aligned` and
//! `ChannelStateComplete` only once every live channel delivered the barrier; never
//! `Aligned` for a checkpoint an unaligned barrier counted for; channels are blocked
//! only while an aligned checkpoint is in progress and exactly the ones that delivered
//! its barrier; channels record only while an unaligned checkpoint is in progress and
//! exactly the live ones whose barrier has not come; `PersistInFlight` exactly for the
//! unaligned barriers that count, after the checkpoint's `Unaligned`.

use std::collections::VecDeque;
use std::time::{Duration, Instant};
use weir_core::{CheckpointBarrier, CheckpointId};

/// What the task must do about a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierOutcome {
    /// Every live channel delivered the barrier: snapshot now, before any further
    /// input, forward the barrier and acknowledge.
    Aligned(CheckpointBarrier),
    /// Unaligned: snapshot now, before any further input, and forward this barrier
    /// (marked unaligned); acknowledge only once the channel state is complete.
    Unaligned(CheckpointBarrier),
    /// Every channel that recorded for this unaligned checkpoint delivered its barrier
    /// or ended: its channel state is complete, store it with the snapshot and
    /// acknowledge.
    ChannelStateComplete(CheckpointId),
    /// The checkpoint was given up (a newer checkpoint's barrier came first): decline
    /// it (and drop its snapshot if it was taken unaligned).
    Aborted(CheckpointId),
}

/// What the input processor must do right away for a delivered barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelAction {
    /// Nothing.
    None,
    /// Hold the channel back until the alignment ends.
    Block,
    /// The barrier is unaligned and overtook the channel's unprocessed data: add that
    /// data to the channel state of the barrier's checkpoint (which is unaligned).
    PersistInFlight,
}

/// Barrier handling over `n` channels.
#[derive(Debug, Clone)]
pub struct BarrierAligner {
    ended: Vec<bool>,
    received: Vec<bool>,
    current: Option<CheckpointBarrier>,
    /// The current checkpoint was snapshotted unaligned: channels record.
    unaligned: bool,
    latest_seen: CheckpointId,
    outcomes: VecDeque<BarrierOutcome>,
    releases: u64,
    started_at: Option<Instant>,
    last_alignment: Duration,
    /// A checkpoint triggered at the task, taken when every channel has ended.
    at_end_of_input: Option<CheckpointBarrier>,
}

/// What [`BarrierAligner::trigger_at_end_of_input`] did with a trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndOfInputTrigger {
    /// Taken at the last EndOfPartition (or at once, every channel having ended).
    Accepted,
    /// Not newer than a checkpoint already seen, or the input already ended: the task
    /// declines it.
    Refused,
}

impl BarrierAligner {
    /// An aligner for `channels` input channels, none ended.
    pub fn new(channels: usize) -> Self {
        Self {
            ended: vec![false; channels],
            received: vec![false; channels],
            current: None,
            unaligned: false,
            latest_seen: 0,
            outcomes: VecDeque::new(),
            releases: 0,
            started_at: None,
            last_alignment: Duration::ZERO,
            at_end_of_input: None,
        }
    }

    /// Checkpoint `barrier` was triggered at this task (every upstream task finished):
    /// it is [`Aligned`](BarrierOutcome::Aligned) once every channel has ended, so its
    /// snapshot holds everything the finished upstream tasks sent.
    pub fn trigger_at_end_of_input(&mut self, barrier: CheckpointBarrier) -> EndOfInputTrigger {
        if barrier.id <= self.latest_seen {
            return EndOfInputTrigger::Refused;
        }
        self.latest_seen = barrier.id;
        if let Some(old) = self.at_end_of_input.replace(barrier) {
            self.outcomes.push_back(BarrierOutcome::Aborted(old.id));
        }
        self.complete_at_end_of_input();
        EndOfInputTrigger::Accepted
    }

    fn complete_at_end_of_input(&mut self) {
        if self.current.is_none() && self.ended.iter().all(|e| *e) {
            if let Some(barrier) = self.at_end_of_input.take() {
                self.outcomes.push_back(BarrierOutcome::Aligned(barrier));
            }
        }
    }

    /// Number of channels.
    pub fn num_channels(&self) -> usize {
        self.ended.len()
    }

    /// Channel `channel` delivered `barrier` at `now`.
    pub fn on_barrier(&mut self, channel: usize, barrier: CheckpointBarrier, now: Instant) -> ChannelAction {
        if channel >= self.ended.len()
            || self.ended[channel]
            || barrier.id <= self.latest_seen && self.current.map(|c| c.id) != Some(barrier.id)
        {
            return ChannelAction::None;
        }
        if self.current.map(|c| c.id) == Some(barrier.id) && self.received[channel] {
            // A repeated barrier: it counted already.
            return ChannelAction::None;
        }
        if self.current.map(|c| c.id) != Some(barrier.id) {
            if let Some(old) = self.current.take() {
                self.outcomes.push_back(BarrierOutcome::Aborted(old.id));
                self.release();
            }
            self.current = Some(barrier);
            self.unaligned = false;
            self.latest_seen = barrier.id;
            self.started_at = Some(now);
        }
        self.received[channel] = true;
        if barrier.options.is_unaligned() {
            // It overtook data, so the checkpoint cannot be aligned.
            if !self.unaligned {
                self.go_unaligned(barrier);
            }
            self.try_complete(now);
            return ChannelAction::PersistInFlight;
        }
        if self.try_complete(now) || self.unaligned || self.check_timeout(now) {
            return ChannelAction::None;
        }
        if barrier.options.needs_alignment() {
            ChannelAction::Block
        } else {
            ChannelAction::None
        }
    }

    /// Channel `channel` ended at `now`: it counts as aligned from now on.
    pub fn on_end_of_partition(&mut self, channel: usize, now: Instant) {
        if let Some(e) = self.ended.get_mut(channel) {
            *e = true;
            self.try_complete(now);
            self.complete_at_end_of_input();
        }
    }

    /// Switches an aligned checkpoint whose alignment has lasted its aligned-checkpoint
    /// timeout at `now` to unaligned; true when it did.
    pub fn check_timeout(&mut self, now: Instant) -> bool {
        match self.alignment_deadline() {
            Some(deadline) if now >= deadline => {
                if let Some(barrier) = self.current {
                    self.go_unaligned(barrier);
                    return true;
                }
                false
            }
            _ => false,
        }
    }

    /// When the aligned checkpoint in progress switches to unaligned, if it may.
    pub fn alignment_deadline(&self) -> Option<Instant> {
        if self.unaligned {
            return None;
        }
        let timeout = self.current?.options.aligned_timeout()?;
        self.started_at?.checked_add(timeout)
    }

    /// Switches the checkpoint in progress to unaligned; the channels that delivered
    /// its barrier while it was aligned were blocked: they are released.
    fn go_unaligned(&mut self, barrier: CheckpointBarrier) {
        self.unaligned = true;
        self.releases += 1;
        self.outcomes.push_back(BarrierOutcome::Unaligned(CheckpointBarrier {
            options: barrier.options.as_unaligned(),
            ..barrier
        }));
    }

    fn try_complete(&mut self, now: Instant) -> bool {
        let Some(barrier) = self.current else { return false };
        if (0..self.ended.len()).all(|c| self.ended[c] || self.received[c]) {
            self.current = None;
            self.outcomes.push_back(if self.unaligned {
                BarrierOutcome::ChannelStateComplete(barrier.id)
            } else {
                BarrierOutcome::Aligned(barrier)
            });
            self.unaligned = false;
            if let Some(at) = self.started_at.take() {
                self.last_alignment = now.saturating_duration_since(at);
            }
            self.release();
            return true;
        }
        false
    }

    fn release(&mut self) {
        self.received.iter_mut().for_each(|r| *r = false);
        self.unaligned = false;
        self.releases += 1;
    }

    /// The next outcome for the task, oldest first.
    pub fn take_outcome(&mut self) -> Option<BarrierOutcome> {
        self.outcomes.pop_front()
    }

    /// True while outcomes wait for the task: input processing must stop.
    pub fn has_outcome(&self) -> bool {
        !self.outcomes.is_empty()
    }

    /// Bumped whenever the blocked channels are released; a processor that saw an
    /// older value unblocks its gate.
    pub fn releases(&self) -> u64 {
        self.releases
    }

    /// True while `channel` must stay blocked (it delivered the barrier being aligned).
    pub fn is_blocked(&self, channel: usize) -> bool {
        !self.unaligned
            && self.current.is_some_and(|b| b.options.needs_alignment())
            && self.received.get(channel).copied().unwrap_or(false)
    }

    /// The unaligned checkpoint whose channel state is being recorded, if any.
    pub fn recording_checkpoint(&self) -> Option<CheckpointId> {
        self.current.filter(|_| self.unaligned).map(|b| b.id)
    }

    /// True while the records `channel` delivers belong to the channel state of the
    /// unaligned checkpoint in progress (its barrier has not come, it has not ended).
    pub fn is_recording(&self, channel: usize) -> bool {
        self.recording_checkpoint().is_some()
            && !self.received.get(channel).copied().unwrap_or(true)
            && !self.ended.get(channel).copied().unwrap_or(true)
    }

    /// The checkpoint in progress, if any.
    pub fn current(&self) -> Option<CheckpointId> {
        self.current.map(|b| b.id)
    }

    /// How long the last completed checkpoint's barriers took to arrive (first to
    /// last).
    pub fn last_alignment_duration(&self) -> Duration {
        self.last_alignment
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod end_of_input_tests;
