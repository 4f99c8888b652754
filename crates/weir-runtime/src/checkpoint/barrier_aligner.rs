//! Checkpoint barrier alignment across the input channels of one task (Flink's
//! `SingleCheckpointBarrierHandler` for aligned checkpoints and
//! `CheckpointBarrierTracker` for at-least-once), as a pure state machine: events in,
//! decisions out, no I/O. The input processors carry out the decisions (blocking a
//! gate's channel) and the task loop takes the outcomes (snapshot or decline).
//!
//! Channels are numbered across all of the task's gates (the second input's channels
//! after the first's). The protocol:
//! - A barrier of a checkpoint newer than the one being aligned starts a new
//!   alignment; an alignment still in progress is aborted first (its checkpoint is
//!   subsumed, Flink's `CHECKPOINT_DECLINED_SUBSUMED`).
//! - With exactly-once (aligned) barriers, a channel that delivered the current
//!   barrier is blocked until the alignment ends; with at-least-once barriers nothing
//!   is blocked.
//! - When every channel that has not ended delivered the current barrier, the
//!   checkpoint is aligned: the task snapshots it, and every channel is released.
//! - A channel that ends (EndOfPartition) counts as aligned for the current and every
//!   later checkpoint.
//! - A barrier of a checkpoint older than or equal to the newest one seen is ignored.
//!
//! Invariants (checked by the exhaustive test below): outcomes name strictly increasing
//! checkpoint ids; a checkpoint is aligned at most once and only after every live
//! channel delivered its barrier; no channel stays blocked once an outcome was emitted;
//! blocked channels are exactly the channels that delivered the barrier being aligned.

use std::collections::VecDeque;
use weir_core::{CheckpointBarrier, CheckpointId};

/// What the task must do about a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierOutcome {
    /// Every live channel delivered the barrier: snapshot now, before any further input.
    Aligned(CheckpointBarrier),
    /// The alignment was given up (a newer checkpoint's barrier came first): decline it.
    Aborted(CheckpointId),
}

/// What the input processor must do right away for a delivered barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelAction {
    /// Nothing.
    None,
    /// Hold the channel back until the alignment ends.
    Block,
}

/// Alignment of checkpoint barriers over `n` channels.
#[derive(Debug, Clone)]
pub struct BarrierAligner {
    ended: Vec<bool>,
    received: Vec<bool>,
    current: Option<CheckpointBarrier>,
    latest_seen: CheckpointId,
    outcomes: VecDeque<BarrierOutcome>,
    releases: u64,
    started_at: Option<std::time::Instant>,
    last_alignment: std::time::Duration,
}

impl BarrierAligner {
    /// An aligner for `channels` input channels, none ended.
    pub fn new(channels: usize) -> Self {
        Self {
            ended: vec![false; channels],
            received: vec![false; channels],
            current: None,
            latest_seen: 0,
            outcomes: VecDeque::new(),
            releases: 0,
            started_at: None,
            last_alignment: std::time::Duration::ZERO,
        }
    }

    /// Number of channels.
    pub fn num_channels(&self) -> usize {
        self.ended.len()
    }

    /// Channel `channel` delivered `barrier`.
    pub fn on_barrier(&mut self, channel: usize, barrier: CheckpointBarrier) -> ChannelAction {
        if channel >= self.ended.len()
            || self.ended[channel]
            || barrier.id <= self.latest_seen && self.current.map(|c| c.id) != Some(barrier.id)
        {
            return ChannelAction::None;
        }
        if self.current.map(|c| c.id) != Some(barrier.id) {
            if let Some(old) = self.current.take() {
                self.outcomes.push_back(BarrierOutcome::Aborted(old.id));
                self.release();
            }
            self.current = Some(barrier);
            self.latest_seen = barrier.id;
            self.started_at = Some(std::time::Instant::now());
        }
        self.received[channel] = true;
        let action = if barrier.options.needs_alignment() {
            ChannelAction::Block
        } else {
            ChannelAction::None
        };
        if self.try_complete() {
            return ChannelAction::None;
        }
        action
    }

    /// Channel `channel` ended: it counts as aligned from now on.
    pub fn on_end_of_partition(&mut self, channel: usize) {
        if let Some(e) = self.ended.get_mut(channel) {
            *e = true;
            self.try_complete();
        }
    }

    fn try_complete(&mut self) -> bool {
        let Some(barrier) = self.current else { return false };
        if (0..self.ended.len()).all(|c| self.ended[c] || self.received[c]) {
            self.current = None;
            self.outcomes.push_back(BarrierOutcome::Aligned(barrier));
            if let Some(at) = self.started_at.take() {
                self.last_alignment = at.elapsed();
            }
            self.release();
            return true;
        }
        false
    }

    fn release(&mut self) {
        self.received.iter_mut().for_each(|r| *r = false);
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

    /// Bumped whenever every channel is released; a processor that saw an older value
    /// unblocks its gate.
    pub fn releases(&self) -> u64 {
        self.releases
    }

    /// True while `channel` must stay blocked (it delivered the barrier being aligned).
    pub fn is_blocked(&self, channel: usize) -> bool {
        self.current.is_some_and(|b| b.options.needs_alignment())
            && self.received.get(channel).copied().unwrap_or(false)
    }

    /// The checkpoint being aligned, if any.
    pub fn current(&self) -> Option<CheckpointId> {
        self.current.map(|b| b.id)
    }

    /// How long the last completed alignment took (first barrier to last).
    pub fn last_alignment_duration(&self) -> std::time::Duration {
        self.last_alignment
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_core::{CheckpointOptions, CheckpointingMode};

    fn barrier(id: u64, mode: CheckpointingMode) -> CheckpointBarrier {
        CheckpointBarrier {
            id,
            timestamp: id as i64,
            options: CheckpointOptions::checkpoint(mode),
        }
    }

    fn outcomes(a: &mut BarrierAligner) -> Vec<BarrierOutcome> {
        std::iter::from_fn(|| a.take_outcome()).collect()
    }

    #[test]
    fn exactly_once_blocks_early_channels_until_the_last_barrier_arrives() {
        let mut a = BarrierAligner::new(3);
        let b = barrier(1, CheckpointingMode::ExactlyOnce);
        assert_eq!(a.on_barrier(0, b), ChannelAction::Block);
        assert_eq!(a.on_barrier(2, b), ChannelAction::Block);
        assert!(a.is_blocked(0) && a.is_blocked(2) && !a.is_blocked(1));
        assert!(!a.has_outcome());
        let before = a.releases();
        assert_eq!(a.on_barrier(1, b), ChannelAction::None);
        assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b)]);
        assert!(a.releases() > before);
        assert!((0..3).all(|c| !a.is_blocked(c)));
    }

    #[test]
    fn at_least_once_never_blocks_and_aligns_on_the_last_barrier() {
        let mut a = BarrierAligner::new(2);
        let b = barrier(4, CheckpointingMode::AtLeastOnce);
        assert_eq!(a.on_barrier(1, b), ChannelAction::None);
        assert!(!a.is_blocked(1));
        a.on_barrier(0, b);
        assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b)]);
    }

    #[test]
    fn an_ended_channel_counts_as_aligned() {
        let mut a = BarrierAligner::new(2);
        let b = barrier(1, CheckpointingMode::ExactlyOnce);
        a.on_barrier(0, b);
        a.on_end_of_partition(1);
        assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b)]);
        let b2 = barrier(2, CheckpointingMode::ExactlyOnce);
        assert_eq!(a.on_barrier(0, b2), ChannelAction::None);
        assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b2)]);
    }

    #[test]
    fn a_newer_barrier_aborts_the_alignment_in_progress_and_late_old_barriers_are_ignored() {
        let mut a = BarrierAligner::new(2);
        let (b1, b2) = (
            barrier(1, CheckpointingMode::ExactlyOnce),
            barrier(2, CheckpointingMode::ExactlyOnce),
        );
        a.on_barrier(0, b1);
        a.on_barrier(1, b2);
        assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aborted(1)]);
        assert!(a.is_blocked(1) && !a.is_blocked(0));
        assert_eq!(a.on_barrier(0, b1), ChannelAction::None);
        assert!(!a.has_outcome());
        a.on_barrier(0, b2);
        assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b2)]);
        assert_eq!(
            a.on_barrier(1, b2),
            ChannelAction::None,
            "a repeated barrier of a finished checkpoint is ignored"
        );
        assert!(!a.has_outcome());
    }

    #[test]
    fn a_single_channel_aligns_at_once() {
        let mut a = BarrierAligner::new(1);
        let b = barrier(9, CheckpointingMode::ExactlyOnce);
        assert_eq!(a.on_barrier(0, b), ChannelAction::None);
        assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b)]);
    }

    /// Every sequence of up to 6 events over 3 channels (barriers 1..=3 in both modes,
    /// ends), checked against the invariants of the module doc.
    #[test]
    fn every_event_sequence_over_three_channels_keeps_the_invariants() {
        #[derive(Clone, Copy, Debug)]
        enum Ev {
            Barrier(usize, u64),
            End(usize),
        }
        let mut events = Vec::new();
        for c in 0..3 {
            for id in 1..=3 {
                events.push(Ev::Barrier(c, id));
            }
            events.push(Ev::End(c));
        }
        for mode in [CheckpointingMode::ExactlyOnce, CheckpointingMode::AtLeastOnce] {
            let mut stack: Vec<Vec<Ev>> = vec![vec![]];
            let mut explored = 0usize;
            while let Some(seq) = stack.pop() {
                explored += 1;
                let mut a = BarrierAligner::new(3);
                let mut delivered: [Option<u64>; 3] = [None; 3];
                let mut ended = [false; 3];
                let mut last_outcome_id = 0u64;
                let mut aligned = std::collections::BTreeSet::new();
                for ev in &seq {
                    match *ev {
                        Ev::Barrier(c, id) => {
                            let action = a.on_barrier(c, barrier(id, mode));
                            if !ended[c] {
                                delivered[c] = Some(delivered[c].map_or(id, |d| d.max(id)));
                            }
                            if action == ChannelAction::Block {
                                assert_eq!(mode, CheckpointingMode::ExactlyOnce, "{seq:?}");
                            }
                        }
                        Ev::End(c) => {
                            ended[c] = true;
                            a.on_end_of_partition(c);
                        }
                    }
                    while let Some(o) = a.take_outcome() {
                        let id = match o {
                            BarrierOutcome::Aligned(b) => {
                                assert!(aligned.insert(b.id), "aligned twice: {seq:?}");
                                for (e, d) in ended.iter().zip(&delivered) {
                                    assert!(*e || d.is_some_and(|d| d >= b.id), "{seq:?}");
                                }
                                b.id
                            }
                            BarrierOutcome::Aborted(id) => id,
                        };
                        assert!(id > last_outcome_id, "outcome ids must grow: {seq:?}");
                        last_outcome_id = id;
                        assert!((0..3).all(|c| !a.is_blocked(c)) || a.current().is_some(), "{seq:?}");
                    }
                    for (c, d) in delivered.iter().enumerate() {
                        if a.is_blocked(c) {
                            assert_eq!(mode, CheckpointingMode::ExactlyOnce);
                            assert_eq!(*d, a.current(), "{seq:?}");
                        }
                    }
                }
                if seq.len() < 6 {
                    for ev in &events {
                        let mut next = seq.clone();
                        next.push(*ev);
                        stack.push(next);
                    }
                }
            }
            assert!(explored > 1_000_000);
        }
    }
}
