//! Per-second rates of counters that only grow, for a process that keeps totals (a
//! TaskManager's tasks) and is asked for rates at irregular times (scrapes).
//!
//! For each key the tracker keeps a *base* reading at least [`MIN_SPAN_MS`] old and
//! the latest reading; a rate is `(latest − base) / (latest time − base time)`. A read
//! closer than the span to the latest moves only the latest, so frequent scrapes do not
//! shrink the window to noise, and rare ones get the average since the last.

use std::collections::HashMap;
use std::hash::Hash;

/// The shortest time a rate is computed over.
pub const MIN_SPAN_MS: i64 = 1000;

#[derive(Debug, Clone)]
struct Reading<const N: usize> {
    at_ms: i64,
    totals: [u64; N],
}

#[derive(Debug, Clone)]
struct Window<const N: usize> {
    base: Reading<N>,
    latest: Reading<N>,
}

/// Rates of `N` counters per key.
#[derive(Debug)]
pub struct RateTracker<K, const N: usize> {
    windows: HashMap<K, Window<N>>,
}

impl<K: Eq + Hash + Clone, const N: usize> Default for RateTracker<K, N> {
    fn default() -> Self {
        Self {
            windows: HashMap::new(),
        }
    }
}

impl<K: Eq + Hash + Clone, const N: usize> RateTracker<K, N> {
    /// Records `totals` of `key` read at `now_ms` and returns the per-second rates, or
    /// `None` while the key has no reading at least [`MIN_SPAN_MS`] older.
    pub fn observe(&mut self, key: &K, now_ms: i64, totals: [u64; N]) -> Option<[f64; N]> {
        let reading = Reading { at_ms: now_ms, totals };
        let window = self.windows.entry(key.clone()).or_insert_with(|| Window {
            base: reading.clone(),
            latest: reading.clone(),
        });
        if now_ms - window.latest.at_ms >= MIN_SPAN_MS {
            window.base = window.latest.clone();
        }
        window.latest = reading;
        let span_ms = window.latest.at_ms - window.base.at_ms;
        if span_ms < MIN_SPAN_MS {
            return None;
        }
        let seconds = span_ms as f64 / 1000.0;
        let mut rates = [0.0; N];
        for (i, rate) in rates.iter_mut().enumerate() {
            *rate = window.latest.totals[i].saturating_sub(window.base.totals[i]) as f64 / seconds;
        }
        Some(rates)
    }

    /// Forgets every key `keep` refuses (tasks that ended).
    pub fn retain(&mut self, mut keep: impl FnMut(&K) -> bool) {
        self.windows.retain(|k, _| keep(k));
    }

    /// Keys tracked.
    pub fn len(&self) -> usize {
        self.windows.len()
    }

    /// True when no key is tracked.
    pub fn is_empty(&self) -> bool {
        self.windows.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_needs_two_readings_a_second_apart() {
        let mut t: RateTracker<&str, 1> = RateTracker::default();
        assert_eq!(t.observe(&"a", 0, [0]), None);
        assert_eq!(t.observe(&"a", 500, [50]), None);
        // The window is [500, 2000]: the latest reading became the base.
        assert_eq!(t.observe(&"a", 2000, [300]), Some([250.0 / 1.5]));
    }

    #[test]
    fn close_readings_move_the_end_of_the_window_not_its_start() {
        let mut t: RateTracker<&str, 2> = RateTracker::default();
        t.observe(&"a", 0, [0, 0]);
        assert_eq!(t.observe(&"a", 1000, [100, 10]), Some([100.0, 10.0]));
        // 200 ms later: still over [0, 1200].
        assert_eq!(t.observe(&"a", 1200, [160, 10]), Some([160.0 / 1.2, 10.0 / 1.2]));
        // A second after the latest: the window becomes [1200, 2200].
        assert_eq!(t.observe(&"a", 2200, [260, 20]), Some([100.0, 10.0]));
    }

    #[test]
    fn keys_are_independent_and_can_be_forgotten() {
        let mut t: RateTracker<u32, 1> = RateTracker::default();
        t.observe(&1, 0, [0]);
        t.observe(&2, 0, [0]);
        assert_eq!(t.observe(&1, 1000, [7]), Some([7.0]));
        t.retain(|k| *k == 2);
        assert_eq!(t.len(), 1);
        assert_eq!(t.observe(&1, 2000, [9]), None);
    }

    #[test]
    fn a_counter_that_went_back_gives_zero_not_a_wrapped_value() {
        let mut t: RateTracker<u8, 1> = RateTracker::default();
        t.observe(&0, 0, [100]);
        assert_eq!(t.observe(&0, 1000, [40]), Some([0.0]));
    }
}
