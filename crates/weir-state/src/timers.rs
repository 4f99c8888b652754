//! Event-time timers of a keyed operator, deduplicated per (key, namespace, time).
//!
//! Timers fire in timestamp order when the watermark reaches them; a timer at `t`
//! fires once the watermark is `>= t`. The MAX watermark at the end of bounded input
//! fires every timer.

use crate::Key;
use std::collections::{BTreeSet, HashSet};

/// One registered timer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timer<K, N> {
    /// When it fires.
    pub timestamp: i64,
    /// The key it belongs to.
    pub key: K,
    /// Its namespace (e.g. a window).
    pub namespace: N,
}

/// Event-time timers of one operator subtask.
#[derive(Debug)]
pub struct TimerService<K: Ord, N: Ord> {
    queue: BTreeSet<Timer<K, N>>,
    registered: HashSet<(K, N, i64)>,
    watermark: i64,
}

impl<K: Key + Ord, N: Key + Ord> Default for TimerService<K, N> {
    fn default() -> Self {
        Self {
            queue: BTreeSet::new(),
            registered: HashSet::new(),
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

    /// Registers a timer; a second registration of the same (key, namespace, time) is a no-op.
    pub fn register_event_time_timer(&mut self, key: K, namespace: N, timestamp: i64) {
        if self.registered.insert((key.clone(), namespace.clone(), timestamp)) {
            self.queue.insert(Timer {
                timestamp,
                key,
                namespace,
            });
        }
    }

    /// Removes a timer if registered.
    pub fn delete_event_time_timer(&mut self, key: &K, namespace: &N, timestamp: i64) {
        if self.registered.remove(&(key.clone(), namespace.clone(), timestamp)) {
            self.queue.remove(&Timer {
                timestamp,
                key: key.clone(),
                namespace: namespace.clone(),
            });
        }
    }

    /// Advances the watermark and removes the next due timer, if any; call until `None`
    /// (firing a timer may register new ones that are due too).
    pub fn advance_and_pop(&mut self, watermark: i64) -> Option<Timer<K, N>> {
        self.watermark = self.watermark.max(watermark);
        let first = self.queue.first()?;
        if first.timestamp > self.watermark {
            return None;
        }
        let t = self.queue.pop_first()?;
        self.registered
            .remove(&(t.key.clone(), t.namespace.clone(), t.timestamp));
        Some(t)
    }

    /// Number of registered timers.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// True when no timer is registered.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

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
}
