//! Timers of a keyed operator (Flink's `InternalTimerService`): event-time and
//! processing-time timers, each deduplicated per (key, namespace, time).
//!
//! Event-time timers fire in timestamp order when the watermark reaches them: a timer
//! at `t` fires once the watermark is `>= t`; the MAX watermark at the end of bounded
//! input fires every one. Processing-time timers fire in timestamp order once the
//! task's processing time is `>= t`. Ties fire in registration order, so a run is
//! deterministic.
//!
//! The queue of each domain and its invariants: the `timer_queue` module.

use crate::error::StateError;
use crate::heap::KeyGroupSnapshot;
pub use crate::timer_queue::Timer;
use crate::timer_queue::TimerQueue;
use crate::Key;
use std::collections::BTreeMap;
use weir_core::key_group::assign_to_key_group;
use weir_core::key_hash::key_hash;
use weir_core::{codec, KeyGroupRange};

/// Which clock a timer follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeDomain {
    /// The watermark.
    EventTime,
    /// The task's wall clock.
    ProcessingTime,
}

/// Event-time and processing-time timers of one operator subtask.
#[derive(Debug)]
pub struct TimerService<K: Ord, N: Ord> {
    event: TimerQueue<K, N>,
    processing: TimerQueue<K, N>,
    watermark: i64,
}

impl<K: Key + Ord, N: Key + Ord> Default for TimerService<K, N> {
    fn default() -> Self {
        Self {
            event: TimerQueue::new(),
            processing: TimerQueue::new(),
            watermark: i64::MIN,
        }
    }
}

impl<K: Key + Ord, N: Key + Ord> TimerService<K, N> {
    /// An empty timer service at the minimum watermark.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current event-time watermark.
    pub fn current_watermark(&self) -> i64 {
        self.watermark
    }

    /// Registers an event-time timer; a second registration of the same (key,
    /// namespace, time) is a no-op.
    pub fn register_event_time_timer(&mut self, key: K, namespace: N, timestamp: i64) {
        self.event.register(key, namespace, timestamp);
    }

    /// Removes an event-time timer if registered.
    pub fn delete_event_time_timer(&mut self, key: &K, namespace: &N, timestamp: i64) {
        self.event.delete(key, namespace, timestamp);
    }

    /// Advances the watermark and removes the next due event-time timer, if any; call
    /// until `None` (firing a timer may register new ones that are due too).
    pub fn advance_and_pop(&mut self, watermark: i64) -> Option<Timer<K, N>> {
        self.watermark = self.watermark.max(watermark);
        self.event.pop_due(self.watermark)
    }

    /// Removes every event-time timer and returns them in firing order (time, then
    /// registration), leaving the watermark as it is: for an operator that takes over
    /// restored timers into a structure of its own.
    pub fn drain_event_time_timers(&mut self) -> Vec<Timer<K, N>> {
        std::iter::from_fn(|| self.event.pop_due(i64::MAX)).collect()
    }

    /// Registers a processing-time timer; true if it was not registered yet (the
    /// caller then asks the task for a wake-up at `timestamp`).
    pub fn register_processing_time_timer(&mut self, key: K, namespace: N, timestamp: i64) -> bool {
        self.processing.register(key, namespace, timestamp)
    }

    /// Removes a processing-time timer if registered.
    pub fn delete_processing_time_timer(&mut self, key: &K, namespace: &N, timestamp: i64) {
        self.processing.delete(key, namespace, timestamp);
    }

    /// Removes the next processing-time timer due at `now`, if any; call until `None`.
    pub fn pop_processing_time_timer(&mut self, now: i64) -> Option<Timer<K, N>> {
        self.processing.pop_due(now)
    }

    /// The (key, namespace) of the timer of `domain` that pops next, if it is one of
    /// the timers firing now (the rest of a timestamp being fired), for prefetching
    /// its state. Only a hint: it may be a timer deleted since it was registered.
    pub fn peek_firing(&self, domain: TimeDomain) -> Option<(&K, &N)> {
        match domain {
            TimeDomain::EventTime => self.event.peek_firing(),
            TimeDomain::ProcessingTime => self.processing.peek_firing(),
        }
    }

    /// The earliest processing-time timer.
    pub fn next_processing_time_timer(&self) -> Option<i64> {
        self.processing.next()
    }

    /// The earliest event-time timer.
    pub fn next_event_time_timer(&self) -> Option<i64> {
        self.event.next()
    }

    /// Number of registered timers of both domains.
    pub fn len(&self) -> usize {
        self.event.len() + self.processing.len()
    }

    /// Number of registered timers of `domain`.
    pub fn len_of(&self, domain: TimeDomain) -> usize {
        match domain {
            TimeDomain::EventTime => self.event.len(),
            TimeDomain::ProcessingTime => self.processing.len(),
        }
    }

    /// True when no timer is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Serialises the timers of each key group of `range` (event-time and
    /// processing-time apart), as `(key group, [(name, bytes)])` in the layout of keyed
    /// state snapshots; groups without timers are left out.
    pub fn snapshot(
        &self,
        range: KeyGroupRange,
        max_parallelism: u32,
    ) -> Result<Vec<(u32, KeyGroupSnapshot)>, StateError>
    where
        K: Key,
        N: Key,
    {
        self.freeze(range, max_parallelism).materialize()
    }

    /// The synchronous part of a snapshot, as Flink's heap timers take it: a copy of
    /// every timer; sorting them into key groups and encoding them is left to
    /// [`FrozenTimers::materialize`], on any thread.
    pub fn freeze(&self, range: KeyGroupRange, max_parallelism: u32) -> FrozenTimers<K, N>
    where
        K: Key,
        N: Key,
    {
        let copy = |queue: &TimerQueue<K, N>| -> Vec<(i64, K, N)> {
            queue.iter().map(|(t, k, n)| (t, k.clone(), n.clone())).collect()
        };
        FrozenTimers {
            event: copy(&self.event),
            processing: copy(&self.processing),
            range,
            max_parallelism,
        }
    }

    /// Registers the timers of a snapshot made by [`snapshot`](Self::snapshot): the
    /// entries named `_timers/…` of each group (other entries are skipped).
    pub fn restore(&mut self, groups: &[(u32, KeyGroupSnapshot)]) -> Result<(), StateError> {
        for (_, group) in groups {
            for (name, bytes) in group {
                let queue = match name.as_str() {
                    EVENT_TIMERS => &mut self.event,
                    PROCESSING_TIMERS => &mut self.processing,
                    _ => continue,
                };
                let timers: Vec<(i64, K, N)> = codec::decode(bytes)?;
                for (timestamp, key, namespace) in timers {
                    queue.register(key, namespace, timestamp);
                }
            }
        }
        Ok(())
    }
}

/// The timers of a [`TimerService`] as of a checkpoint, to encode on any thread.
#[derive(Debug)]
pub struct FrozenTimers<K, N> {
    event: Vec<(i64, K, N)>,
    processing: Vec<(i64, K, N)>,
    range: KeyGroupRange,
    max_parallelism: u32,
}

impl<K: Key + Ord, N: Key + Ord> FrozenTimers<K, N> {
    /// The timers of each key group of the range, as `(key group, [(name, bytes)])`
    /// sorted by key group; groups without timers are left out.
    pub fn materialize(self) -> Result<Vec<(u32, KeyGroupSnapshot)>, StateError> {
        let mut groups: BTreeMap<u32, KeyGroupSnapshot> = BTreeMap::new();
        for (name, timers) in [(EVENT_TIMERS, self.event), (PROCESSING_TIMERS, self.processing)] {
            let mut per_group: BTreeMap<u32, Vec<(i64, K, N)>> = BTreeMap::new();
            for timer in timers {
                let kg = assign_to_key_group(key_hash(&timer.1), self.max_parallelism);
                if self.range.contains(kg) {
                    per_group.entry(kg).or_default().push(timer);
                }
            }
            for (kg, mut timers) in per_group {
                timers.sort_unstable();
                groups
                    .entry(kg)
                    .or_default()
                    .push((name.to_string(), codec::encode(&timers)?));
            }
        }
        Ok(groups.into_iter().collect())
    }
}

/// State name of event-time timers in a keyed snapshot.
pub const EVENT_TIMERS: &str = "_timers/event";
/// State name of processing-time timers in a keyed snapshot.
pub const PROCESSING_TIMERS: &str = "_timers/processing";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_fire_in_order_once_the_watermark_reaches_them() {
        let mut t: TimerService<u32, u8> = TimerService::new();
        t.register_event_time_timer(1, 0, 20);
        t.register_event_time_timer(2, 0, 10);
        t.register_event_time_timer(2, 0, 10);
        assert_eq!(t.len(), 2);
        assert_eq!(t.advance_and_pop(9), None);
        assert_eq!(t.advance_and_pop(10).map(|x| (x.key, x.timestamp)), Some((2, 10)));
        assert_eq!(t.advance_and_pop(10), None);
        assert_eq!(t.advance_and_pop(i64::MAX).map(|x| x.key), Some(1));
        assert!(t.is_empty());
    }

    #[test]
    fn deleted_timer_does_not_fire() {
        let mut t: TimerService<u32, u8> = TimerService::new();
        t.register_event_time_timer(1, 0, 5);
        t.delete_event_time_timer(&1, &0, 5);
        assert_eq!(t.advance_and_pop(100), None);
    }

    #[test]
    fn processing_time_timers_are_deduplicated_and_fire_when_the_clock_reaches_them() {
        let mut t: TimerService<u32, u8> = TimerService::new();
        assert!(t.register_processing_time_timer(1, 0, 100));
        assert!(!t.register_processing_time_timer(1, 0, 100));
        assert!(t.register_processing_time_timer(1, 1, 100));
        assert!(t.register_processing_time_timer(2, 0, 50));
        assert_eq!(t.len_of(TimeDomain::ProcessingTime), 3);
        assert_eq!(t.next_processing_time_timer(), Some(50));
        assert_eq!(t.pop_processing_time_timer(49), None);
        assert_eq!(t.pop_processing_time_timer(100).map(|x| x.key), Some(2));
        t.delete_processing_time_timer(&1, &1, 100);
        assert_eq!(
            t.pop_processing_time_timer(100).map(|x| (x.key, x.namespace)),
            Some((1, 0))
        );
        assert_eq!(t.pop_processing_time_timer(i64::MAX), None);
    }

    #[test]
    fn the_domains_are_independent_and_the_watermark_never_goes_back() {
        let mut t: TimerService<u32, u8> = TimerService::new();
        t.register_event_time_timer(1, 0, 10);
        t.register_processing_time_timer(1, 0, 10);
        assert_eq!(t.pop_processing_time_timer(10).map(|x| x.timestamp), Some(10));
        assert_eq!(t.len_of(TimeDomain::EventTime), 1);
        assert_eq!(t.advance_and_pop(20).map(|x| x.timestamp), Some(10));
        assert_eq!(t.advance_and_pop(5), None);
        assert_eq!(t.current_watermark(), 20);
    }

    #[test]
    fn timers_snapshotted_per_key_group_restore_into_the_subtasks_that_own_them() {
        let mut t: TimerService<u32, u8> = TimerService::new();
        for key in 0..50u32 {
            t.register_event_time_timer(key, 1, 100 + key as i64);
            t.register_processing_time_timer(key, 2, 5_000 + key as i64);
        }
        let snap = t.snapshot(KeyGroupRange::new(0, 127), 128).unwrap();
        let mut halves = [TimerService::<u32, u8>::new(), TimerService::<u32, u8>::new()];
        for (i, half) in halves.iter_mut().enumerate() {
            let range = KeyGroupRange::for_subtask(128, 2, i as u32);
            let mine: Vec<_> = snap.iter().filter(|(kg, _)| range.contains(*kg)).cloned().collect();
            half.restore(&mine).unwrap();
        }
        assert_eq!(halves[0].len() + halves[1].len(), 100);
        let mut fired: Vec<u32> = Vec::new();
        for half in &mut halves {
            while let Some(timer) = half.advance_and_pop(i64::MAX) {
                fired.push(timer.key);
            }
            assert_eq!(half.len_of(TimeDomain::ProcessingTime), half.len());
        }
        fired.sort();
        assert_eq!(fired, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn a_timer_popped_while_firing_can_be_registered_again() {
        let mut t: TimerService<u32, u8> = TimerService::new();
        t.register_event_time_timer(1, 0, 10);
        let fired = t.advance_and_pop(10).unwrap();
        t.register_event_time_timer(fired.key, fired.namespace, fired.timestamp);
        assert_eq!(t.advance_and_pop(10).map(|x| x.timestamp), Some(10));
    }

    #[test]
    fn a_deleted_timer_registered_again_fires_and_repeats_stay_deduplicated() {
        let mut t: TimerService<u32, u8> = TimerService::new();
        t.register_event_time_timer(1, 0, 10);
        t.delete_event_time_timer(&1, &0, 10);
        t.register_event_time_timer(1, 0, 10);
        t.register_event_time_timer(2, 0, 10);
        t.register_event_time_timer(1, 0, 10);
        t.register_event_time_timer(1, 0, 10);
        assert_eq!(t.len(), 2);
        assert_eq!(t.advance_and_pop(10).map(|x| x.key), Some(1));
        assert_eq!(t.advance_and_pop(10).map(|x| x.key), Some(2));
        assert_eq!(t.advance_and_pop(10), None);
    }
}
