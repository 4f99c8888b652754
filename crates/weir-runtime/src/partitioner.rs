//! Channel selection for each ship strategy (flink-facts §3): which output channel(s)
//! of a [`RecordWriter`](crate::network::RecordWriter) a record goes to.
//!
//! Owns the [`ChannelSelector`] trait and one selector per Flink partitioner, with
//! Flink's behaviour: FORWARD and GLOBAL pick channel 0; REBALANCE starts at a random
//! channel (here derived from a seed) and goes round-robin; RESCALE goes round-robin
//! from channel 0 over the producer's channels (a pointwise producer's subpartitions
//! are its local subset); SHUFFLE picks uniformly at random (SplitMix64 seeded per
//! subtask); BROADCAST sends to every channel; HASH assigns the key's key group to a
//! subtask like `KeyGroupRangeAssignment`; CUSTOM asks a user function.
//!
//! Invariant: after `setup(n)` with `n >= 1`, `select_channel` returns a value in
//! `0..n`. With `n == 0` (never created by the network stack) selectors return 0.

use std::fmt;
use std::sync::Arc;
use weir_core::ids::splitmix64;
use weir_core::key_group::assign_key_to_parallel_operator;
use weir_graph::Partitioner;

/// A key's stable hash, as [`KeyGroupStreamPartitioner`] takes it.
pub type KeyHashFn<T> = Arc<dyn Fn(&T) -> i32 + Send + Sync>;

/// A user partitioning function `f(record, num_channels) -> channel`, as
/// [`CustomPartitioner`] takes it.
pub type PartitionFn<T> = Arc<dyn Fn(&T, usize) -> usize + Send + Sync>;

/// Chooses the output channel of each record.
pub trait ChannelSelector<T>: Send {
    /// Called once with the number of output channels before any selection.
    fn setup(&mut self, num_channels: usize);
    /// The channel for `record` (ignored when [`is_broadcast`](Self::is_broadcast)).
    fn select_channel(&mut self, record: &T) -> usize;
    /// True when every record goes to every channel.
    fn is_broadcast(&self) -> bool {
        false
    }
}

/// FORWARD: always channel 0 (the same-index downstream subtask).
#[derive(Debug, Clone, Copy, Default)]
pub struct ForwardPartitioner;

impl<T> ChannelSelector<T> for ForwardPartitioner {
    fn setup(&mut self, _num_channels: usize) {}
    #[inline]
    fn select_channel(&mut self, _record: &T) -> usize {
        0
    }
}

/// GLOBAL: always channel 0 (the first downstream subtask).
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobalPartitioner;

impl<T> ChannelSelector<T> for GlobalPartitioner {
    fn setup(&mut self, _num_channels: usize) {}
    #[inline]
    fn select_channel(&mut self, _record: &T) -> usize {
        0
    }
}

/// BROADCAST: every record to every channel.
#[derive(Debug, Clone, Copy, Default)]
pub struct BroadcastPartitioner;

impl<T> ChannelSelector<T> for BroadcastPartitioner {
    fn setup(&mut self, _num_channels: usize) {}
    #[inline]
    fn select_channel(&mut self, _record: &T) -> usize {
        0
    }
    fn is_broadcast(&self) -> bool {
        true
    }
}

/// REBALANCE: round-robin over all channels from a seed-derived start
/// (Flink: `next = nextInt(n)` in `setup`, then `next = (next + 1) % n`).
#[derive(Debug, Clone)]
pub struct RebalancePartitioner {
    seed: u64,
    next: usize,
    n: usize,
}

impl RebalancePartitioner {
    /// A rebalance selector whose start channel derives from `seed` (use a different
    /// seed per producing subtask so producers do not all start at the same channel).
    pub fn new(seed: u64) -> Self {
        Self { seed, next: 0, n: 0 }
    }
}

impl<T> ChannelSelector<T> for RebalancePartitioner {
    fn setup(&mut self, num_channels: usize) {
        self.n = num_channels;
        self.next = if num_channels == 0 {
            0
        } else {
            (splitmix64(self.seed) % num_channels as u64) as usize
        };
    }
    #[inline]
    fn select_channel(&mut self, _record: &T) -> usize {
        if self.n == 0 {
            return 0;
        }
        self.next += 1;
        if self.next >= self.n {
            self.next = 0;
        }
        self.next
    }
}

/// RESCALE: round-robin over this producer's channels, starting at channel 0
/// (Flink: `next` starts at -1, then `next = (next + 1) % n`).
#[derive(Debug, Clone)]
pub struct RescalePartitioner {
    next: Option<usize>,
    n: usize,
}

impl RescalePartitioner {
    /// A rescale selector.
    pub fn new() -> Self {
        Self { next: None, n: 0 }
    }
}

impl Default for RescalePartitioner {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> ChannelSelector<T> for RescalePartitioner {
    fn setup(&mut self, num_channels: usize) {
        self.n = num_channels;
        self.next = None;
    }
    #[inline]
    fn select_channel(&mut self, _record: &T) -> usize {
        let next = match self.next {
            Some(c) if c + 1 < self.n => c + 1,
            _ => 0,
        };
        self.next = Some(next);
        next
    }
}

/// SHUFFLE: a uniformly random channel from a SplitMix64 generator.
#[derive(Debug, Clone)]
pub struct ShufflePartitioner {
    state: u64,
    n: usize,
}

const SPLITMIX_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

impl ShufflePartitioner {
    /// A shuffle selector whose random sequence is determined by `seed` (use a
    /// different seed per producing subtask).
    pub fn new(seed: u64) -> Self {
        Self { state: seed, n: 0 }
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        // splitmix64(x) mixes x + gamma, so stepping the state by gamma yields the
        // SplitMix64 sequence.
        let r = splitmix64(self.state);
        self.state = self.state.wrapping_add(SPLITMIX_GAMMA);
        r
    }
}

impl<T> ChannelSelector<T> for ShufflePartitioner {
    fn setup(&mut self, num_channels: usize) {
        self.n = num_channels;
    }
    #[inline]
    fn select_channel(&mut self, _record: &T) -> usize {
        // Lemire's multiply-shift: uniform in 0..n without a division.
        ((self.next_u64() as u128 * self.n as u128) >> 64) as usize
    }
}

/// HASH (`keyBy`): the record's key hash → key group → subtask, as Flink's
/// `KeyGroupStreamPartitioner`.
pub struct KeyGroupStreamPartitioner<T> {
    /// The stable hash of the record's key.
    pub key_hash: KeyHashFn<T>,
    /// The consuming operator's max parallelism (number of key groups).
    pub max_parallelism: u32,
    n: u32,
}

impl<T> KeyGroupStreamPartitioner<T> {
    /// Partitions by `key_hash` into `max_parallelism` key groups.
    pub fn new(key_hash: KeyHashFn<T>, max_parallelism: u32) -> Self {
        Self {
            key_hash,
            max_parallelism: max_parallelism.max(1),
            n: 0,
        }
    }
}

impl<T> fmt::Debug for KeyGroupStreamPartitioner<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyGroupStreamPartitioner")
            .field("max_parallelism", &self.max_parallelism)
            .finish()
    }
}

impl<T> ChannelSelector<T> for KeyGroupStreamPartitioner<T> {
    fn setup(&mut self, num_channels: usize) {
        self.n = u32::try_from(num_channels).unwrap_or(u32::MAX);
    }
    #[inline]
    fn select_channel(&mut self, record: &T) -> usize {
        // One channel owns every key group: no need to hash the key.
        if self.n <= 1 {
            return 0;
        }
        assign_key_to_parallel_operator((self.key_hash)(record), self.max_parallelism, self.n) as usize
    }
}

/// CUSTOM: a user function `f(record, num_channels) -> channel`; an out-of-range
/// answer is taken modulo the number of channels.
pub struct CustomPartitioner<T> {
    /// The user's partitioning function.
    pub f: PartitionFn<T>,
    n: usize,
}

impl<T> CustomPartitioner<T> {
    /// Partitions with `f`.
    pub fn new(f: PartitionFn<T>) -> Self {
        Self { f, n: 0 }
    }
}

impl<T> fmt::Debug for CustomPartitioner<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CustomPartitioner")
    }
}

impl<T> ChannelSelector<T> for CustomPartitioner<T> {
    fn setup(&mut self, num_channels: usize) {
        self.n = num_channels;
    }
    #[inline]
    fn select_channel(&mut self, record: &T) -> usize {
        if self.n == 0 {
            return 0;
        }
        (self.f)(record, self.n) % self.n
    }
}

/// The selector of a ship strategy that needs no program code, seeded with `seed`
/// (for REBALANCE and SHUFFLE); `None` for HASH and CUSTOM, which need the program's
/// key or partitioning function.
pub fn selector_for<T: 'static>(partitioner: Partitioner, seed: u64) -> Option<Box<dyn ChannelSelector<T>>> {
    Some(match partitioner {
        Partitioner::Forward => Box::new(ForwardPartitioner),
        Partitioner::Rebalance => Box::new(RebalancePartitioner::new(seed)),
        Partitioner::Rescale => Box::new(RescalePartitioner::new()),
        Partitioner::Shuffle => Box::new(ShufflePartitioner::new(seed)),
        Partitioner::Broadcast => Box::new(BroadcastPartitioner),
        Partitioner::Global => Box::new(GlobalPartitioner),
        Partitioner::Hash | Partitioner::Custom => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picks<S: ChannelSelector<u64>>(s: &mut S, n: usize, count: usize) -> Vec<usize> {
        s.setup(n);
        (0..count as u64).map(|i| s.select_channel(&i)).collect()
    }

    #[test]
    fn forward_and_global_always_pick_channel_zero() {
        assert_eq!(picks(&mut ForwardPartitioner, 1, 3), vec![0, 0, 0]);
        assert_eq!(picks(&mut GlobalPartitioner, 4, 3), vec![0, 0, 0]);
        assert!(!ChannelSelector::<u64>::is_broadcast(&GlobalPartitioner));
    }

    #[test]
    fn broadcast_is_broadcast() {
        assert!(ChannelSelector::<u64>::is_broadcast(&BroadcastPartitioner));
    }

    #[test]
    fn rebalance_cycles_through_all_channels_from_a_seeded_start() {
        for seed in 0..20u64 {
            let n = 5;
            let got = picks(&mut RebalancePartitioner::new(seed), n, 10);
            let start = (splitmix64(seed) % n as u64) as usize;
            let expected: Vec<usize> = (1..=10).map(|i| (start + i) % n).collect();
            assert_eq!(got, expected, "seed {seed}");
        }
        let starts: std::collections::HashSet<usize> = (0..32u64)
            .map(|s| picks(&mut RebalancePartitioner::new(s), 4, 1)[0])
            .collect();
        assert!(starts.len() > 1, "different seeds start at different channels");
    }

    #[test]
    fn rescale_round_robins_from_channel_zero() {
        assert_eq!(picks(&mut RescalePartitioner::new(), 3, 7), vec![0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(picks(&mut RescalePartitioner::new(), 1, 3), vec![0, 0, 0]);
    }

    #[test]
    fn shuffle_is_deterministic_per_seed_and_roughly_uniform() {
        let a = picks(&mut ShufflePartitioner::new(7), 4, 40_000);
        let b = picks(&mut ShufflePartitioner::new(7), 4, 40_000);
        assert_eq!(a, b);
        let mut counts = [0usize; 4];
        for c in a {
            counts[c] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
        assert_ne!(
            picks(&mut ShufflePartitioner::new(8), 4, 64),
            picks(&mut ShufflePartitioner::new(7), 4, 64)
        );
    }

    #[test]
    fn key_groups_match_assign_key_to_parallel_operator() {
        let hash: KeyHashFn<u64> = Arc::new(|k: &u64| *k as i32);
        for n in [1usize, 2, 3, 5, 7] {
            let mut p = KeyGroupStreamPartitioner::new(hash.clone(), 128);
            p.setup(n);
            for k in 0..500u64 {
                assert_eq!(
                    p.select_channel(&k),
                    assign_key_to_parallel_operator(k as i32, 128, n as u32) as usize
                );
            }
        }
        // Flink's reference values: key 0 → key group 94 → subtask 94*3/128 = 2.
        let mut p = KeyGroupStreamPartitioner::new(hash, 128);
        p.setup(3);
        assert_eq!(p.select_channel(&0), 2);
    }

    #[test]
    fn custom_results_are_clamped_into_range() {
        let f: PartitionFn<u64> = Arc::new(|k: &u64, _n| *k as usize * 10);
        assert_eq!(picks(&mut CustomPartitioner::new(f), 3, 4), vec![0, 1, 2, 0]);
        let seen: PartitionFn<u64> = Arc::new(|_k: &u64, n| n - 1);
        assert_eq!(picks(&mut CustomPartitioner::new(seen), 6, 1), vec![5]);
    }

    #[test]
    fn selectors_for_code_free_strategies_exist() {
        for p in [
            Partitioner::Forward,
            Partitioner::Rebalance,
            Partitioner::Rescale,
            Partitioner::Shuffle,
            Partitioner::Broadcast,
            Partitioner::Global,
        ] {
            let mut s = selector_for::<u64>(p, 1).unwrap();
            s.setup(3);
            assert!(s.select_channel(&1) < 3);
            assert_eq!(s.is_broadcast(), p == Partitioner::Broadcast);
        }
        assert!(selector_for::<u64>(Partitioner::Hash, 1).is_none());
        assert!(selector_for::<u64>(Partitioner::Custom, 1).is_none());
    }
}
