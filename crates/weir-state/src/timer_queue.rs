//! The timers of one time domain, bucketed by timestamp (the queue behind
//! [`crate::TimerService`]).
//!
//! Keyed operators register many timers at few distinct times: a window operator
//! registers one per (key, window), all at the window's end, and repeats the same
//! registration for every element. So timers are kept in an ordered map from timestamp
//! to a *bucket* of (key, namespace) pairs. A bucket keeps its pairs in registration
//! order (a queue) and the ones registered and not popped yet in a hash set, which
//! deduplicates a registration and finds a deletion with one probe. Timers fire in
//! time order, and the timers of one time in the order they were registered (a timer
//! deleted and registered again before its time keeps its first place). Flink leaves
//! the order within a time unspecified; this one is deterministic for a given input
//! and needs no sort when the time comes.
//!
//! Invariants:
//! - a timer is registered iff its pair is in its bucket's set, once; its queue holds
//!   every pair of the set at least once, ahead of any pair registered later; queue
//!   entries not in the set (deleted, or a pair's later duplicate) are skipped when
//!   popped;
//! - a bucket whose set is empty is removed from the map, so the first bucket holds the
//!   earliest timer;
//! - `last_registered`, when set, is certainly registered: it is forgotten at every pop
//!   and delete, so a repeated registration can skip the bucket.

use crate::Key;
use rustc_hash::FxHashSet;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, VecDeque};

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

/// The timers at one timestamp.
#[derive(Debug)]
struct Bucket<K, N> {
    /// Pairs in registration order, the next one first; may hold stale entries.
    order: VecDeque<(K, N)>,
    /// The registered pairs.
    live: FxHashSet<(K, N)>,
    /// True once a pair was popped: the bucket's time is due.
    firing: bool,
}

impl<K: Key, N: Key> Bucket<K, N> {
    fn from_spare(spare: &mut Spare<K, N>) -> Self {
        Self {
            order: std::mem::take(&mut spare.order),
            live: std::mem::take(&mut spare.live),
            firing: false,
        }
    }

    /// Adds `pair`; true if it was not there.
    fn insert(&mut self, pair: (K, N)) -> bool {
        if self.live.insert(pair.clone()) {
            self.order.push_back(pair);
            true
        } else {
            false
        }
    }

    /// Removes `pair`; true if it was there. Its queue entry stays, skipped later.
    fn remove(&mut self, pair: &(K, N)) -> bool {
        self.live.remove(pair)
    }

    fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Removes and returns the pair registered first.
    fn pop_first(&mut self) -> Option<(K, N)> {
        while let Some(pair) = self.order.pop_front() {
            if self.live.remove(&pair) {
                self.firing = true;
                return Some(pair);
            }
        }
        None
    }

    /// The pair at the head of the queue: the one [`pop_first`](Self::pop_first)
    /// returns next unless it was deleted since it was queued.
    fn peek_first(&self) -> Option<&(K, N)> {
        self.order.front()
    }

    fn iter(&self) -> impl Iterator<Item = &(K, N)> {
        self.live.iter()
    }
}

/// Emptied tables kept for the next bucket, so a new bucket does not grow them from
/// nothing every time.
#[derive(Debug)]
struct Spare<K, N> {
    order: VecDeque<(K, N)>,
    live: FxHashSet<(K, N)>,
}

/// The timers of one time domain, ordered by time and then registration, each
/// registered at most once.
#[derive(Debug)]
pub(crate) struct TimerQueue<K, N> {
    buckets: BTreeMap<i64, Bucket<K, N>>,
    len: usize,
    last_registered: Option<Timer<K, N>>,
    spare: Spare<K, N>,
}

impl<K: Key, N: Key> TimerQueue<K, N> {
    pub(crate) fn new() -> Self {
        Self {
            buckets: BTreeMap::new(),
            len: 0,
            last_registered: None,
            spare: Spare {
                order: VecDeque::new(),
                live: FxHashSet::default(),
            },
        }
    }

    /// Registers a timer; true if it was not registered yet.
    pub(crate) fn register(&mut self, key: K, namespace: N, timestamp: i64) -> bool {
        if let Some(last) = &self.last_registered {
            if last.timestamp == timestamp && last.key == key && last.namespace == namespace {
                return false;
            }
        }
        let bucket = match self.buckets.entry(timestamp) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(Bucket::from_spare(&mut self.spare)),
        };
        let added = bucket.insert((key.clone(), namespace.clone()));
        if added {
            self.len += 1;
        }
        self.last_registered = Some(Timer {
            timestamp,
            key,
            namespace,
        });
        added
    }

    /// Removes a timer if registered.
    pub(crate) fn delete(&mut self, key: &K, namespace: &N, timestamp: i64) {
        self.last_registered = None;
        let Some(bucket) = self.buckets.get_mut(&timestamp) else {
            return;
        };
        if !bucket.remove(&(key.clone(), namespace.clone())) {
            return;
        }
        self.len -= 1;
        if bucket.is_empty() {
            if let Some(emptied) = self.buckets.remove(&timestamp) {
                self.recycle(emptied);
            }
        }
    }

    fn recycle(&mut self, mut bucket: Bucket<K, N>) {
        bucket.order.clear();
        self.spare = Spare {
            order: bucket.order,
            live: bucket.live,
        };
    }

    /// Removes and returns the earliest timer if it is due at `time`.
    pub(crate) fn pop_due(&mut self, time: i64) -> Option<Timer<K, N>> {
        let mut first = self.buckets.first_entry()?;
        let timestamp = *first.key();
        if timestamp > time {
            return None;
        }
        let popped = first.get_mut().pop_first();
        if first.get().is_empty() {
            let emptied = first.remove();
            self.recycle(emptied);
        }
        let (key, namespace) = popped?;
        self.len -= 1;
        self.last_registered = None;
        Some(Timer {
            timestamp,
            key,
            namespace,
        })
    }

    /// The timer [`pop_due`](Self::pop_due) returns next if its bucket is firing (due
    /// already), as (key, namespace): a hint for prefetching, which may name a timer
    /// deleted since it was registered.
    pub(crate) fn peek_firing(&self) -> Option<(&K, &N)> {
        let bucket = self.buckets.first_key_value()?.1;
        if !bucket.firing {
            return None;
        }
        bucket.peek_first().map(|(k, n)| (k, n))
    }

    /// The earliest timer's time.
    pub(crate) fn next(&self) -> Option<i64> {
        self.buckets.keys().next().copied()
    }

    /// Number of registered timers.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Every registered timer as (time, key, namespace), in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (i64, &K, &N)> {
        self.buckets
            .iter()
            .flat_map(|(t, b)| b.iter().map(move |(k, n)| (*t, k, n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut TimerQueue<u32, u8>, time: i64) -> Vec<(i64, u32, u8)> {
        std::iter::from_fn(|| q.pop_due(time))
            .map(|t| (t.timestamp, t.key, t.namespace))
            .collect()
    }

    #[test]
    fn timers_pop_in_time_order_and_in_registration_order_within_a_time() {
        let mut q = TimerQueue::new();
        for (k, n, t) in [(3, 0, 20), (1, 1, 10), (2, 0, 10), (1, 0, 10), (0, 0, 30), (9, 9, 20)] {
            assert!(q.register(k, n, t));
        }
        assert!(!q.register(1, 1, 10));
        assert_eq!(q.len(), 6);
        assert_eq!(q.next(), Some(10));
        assert_eq!(
            drain(&mut q, 20),
            [(10, 1, 1), (10, 2, 0), (10, 1, 0), (20, 3, 0), (20, 9, 9)]
        );
        assert_eq!(q.next(), Some(30));
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn a_timer_registered_into_a_firing_bucket_pops_after_the_ones_before_it() {
        let mut q = TimerQueue::new();
        for k in [2, 4, 6] {
            q.register(k, 0u8, 10);
        }
        assert_eq!(q.peek_firing(), None, "a bucket not popped from yet is not firing");
        assert_eq!(q.pop_due(10).map(|t| t.key), Some(2));
        assert_eq!(q.peek_firing(), Some((&4, &0)));
        assert!(q.register(5, 0, 10));
        assert!(q.register(1, 0, 10));
        assert!(!q.register(4, 0, 10));
        assert_eq!(q.peek_firing(), Some((&4, &0)));
        assert_eq!(drain(&mut q, 10), [(10, 4, 0), (10, 6, 0), (10, 5, 0), (10, 1, 0)]);
        assert_eq!(q.peek_firing(), None);
        assert_eq!(q.len(), 0);
        assert_eq!(q.next(), None);
    }

    #[test]
    fn deleted_timers_never_pop_and_re_registered_ones_pop_once() {
        let mut q = TimerQueue::new();
        q.register(1, 0u8, 10);
        q.register(2, 0, 10);
        q.delete(&1, &0, 10);
        q.delete(&7, &0, 10);
        q.delete(&2, &0, 99);
        assert_eq!(q.len(), 1);
        q.register(1, 0, 10);
        q.delete(&1, &0, 10);
        q.register(1, 0, 10);
        assert_eq!(
            drain(&mut q, 10),
            [(10, 1, 0), (10, 2, 0)],
            "deleted and registered again before its time, a timer keeps its first place"
        );
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn timers_deleted_and_registered_while_their_bucket_fires_keep_the_order() {
        let mut q = TimerQueue::new();
        for k in [1, 3, 5, 7] {
            q.register(k, 0u8, 10);
        }
        assert_eq!(q.pop_due(10).map(|t| t.key), Some(1));
        q.delete(&5, &0, 10);
        q.delete(&1, &0, 10);
        assert!(q.register(1, 0, 10));
        assert!(q.register(4, 0, 10));
        assert!(!q.register(3, 0, 10));
        assert_eq!(q.len(), 4);
        assert_eq!(q.peek_firing(), Some((&3, &0)));
        q.delete(&3, &0, 10);
        assert_eq!(
            q.peek_firing(),
            Some((&3, &0)),
            "a hint: the deleted head is not skipped"
        );
        assert!(q.register(3, 0, 10));
        assert_eq!(drain(&mut q, 10), [(10, 3, 0), (10, 7, 0), (10, 1, 0), (10, 4, 0)]);
        assert!(q.register(2, 0, 10));
        assert_eq!(drain(&mut q, 10), [(10, 2, 0)]);
    }

    #[test]
    fn the_last_bucket_emptied_by_a_delete_is_gone_and_later_timers_come_first() {
        let mut q = TimerQueue::new();
        q.register(1, 0u8, 5);
        q.register(1, 0, 50);
        q.delete(&1, &0, 5);
        assert_eq!(q.next(), Some(50));
        assert_eq!(q.pop_due(49), None);
        assert!(q.register(1, 0, 5));
        assert_eq!(drain(&mut q, 100), [(5, 1, 0), (50, 1, 0)]);
        let mut all: Vec<_> = q.iter().collect();
        all.sort();
        assert!(all.is_empty());
    }
}
