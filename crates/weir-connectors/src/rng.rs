//! The deterministic random generator of generator sources: SplitMix64.
//!
//! A generated record depends only on the job's seed and the record's index, never on
//! which subtask generates it, so a job produces the same records at any parallelism.

use weir_core::ids::splitmix64;

/// SplitMix64 random numbers.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The generator for record `index` of a source seeded with `seed`.
    pub fn for_index(seed: u64, index: u64) -> Self {
        Self(splitmix64(seed ^ splitmix64(index)))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        splitmix64(self.0)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn next_below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            ((self.next_u64() as u128 * n as u128) >> 64) as u64
        }
    }

    /// A number in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_index_give_the_same_numbers() {
        let a: Vec<u64> = (0..5).map(|_| Rng::for_index(7, 3).next_below(100)).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut r = Rng::new(1);
        assert!((0..1000).all(|_| r.next_below(10) < 10));
        assert!((0..1000).all(|_| (0.0..1.0).contains(&r.next_f64())));
    }
}
