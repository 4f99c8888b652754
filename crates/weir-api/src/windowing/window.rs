//! Windows: [`TimeWindow`] (`[start, end)`) and [`GlobalWindow`], and the arithmetic
//! Flink's assigners use on them.
//!
//! Invariants: a time window's `max_timestamp` is `end - 1`; two time windows
//! *intersect* when they overlap or touch (`start <= other.end && end >= other.start`),
//! so touching session windows merge; arithmetic wraps like Java's `long` instead of
//! panicking.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt::Debug;
use std::hash::Hash;

/// A window: a namespace of keyed state and timers with a last timestamp.
pub trait Window: Hash + Eq + Ord + Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The largest timestamp that still belongs to the window.
    fn max_timestamp(&self) -> i64;
}

/// The time interval `[start, end)` in epoch milliseconds (Flink's `TimeWindow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TimeWindow {
    start: i64,
    end: i64,
}

impl TimeWindow {
    /// The window `[start, end)`.
    pub fn new(start: i64, end: i64) -> Self {
        Self { start, end }
    }

    /// The first timestamp of the window.
    pub fn start(&self) -> i64 {
        self.start
    }

    /// The first timestamp after the window.
    pub fn end(&self) -> i64 {
        self.end
    }

    /// True when the windows overlap or touch.
    pub fn intersects(&self, other: &TimeWindow) -> bool {
        self.start <= other.end && self.end >= other.start
    }

    /// The smallest window covering both.
    pub fn cover(&self, other: &TimeWindow) -> TimeWindow {
        TimeWindow::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// The start of the window of `size` (shifted by `offset`) that contains
    /// `timestamp`: `r = (ts - offset) % size; r < 0 ? ts - (r + size) : ts - r`.
    pub fn window_start_with_offset(timestamp: i64, offset: i64, size: i64) -> i64 {
        if size == 0 {
            return timestamp;
        }
        let remainder = timestamp.wrapping_sub(offset).wrapping_rem(size);
        if remainder < 0 {
            timestamp.wrapping_sub(remainder.wrapping_add(size))
        } else {
            timestamp.wrapping_sub(remainder)
        }
    }

    /// Merges overlapping or touching windows (Flink's `TimeWindow.mergeWindows`):
    /// sorted by start, each run of intersecting windows becomes its cover. Returns
    /// `(cover, merged windows)` for every run of more than one distinct window.
    pub fn merge_windows(windows: &[TimeWindow]) -> Vec<(TimeWindow, Vec<TimeWindow>)> {
        let mut sorted = windows.to_vec();
        sorted.sort_by_key(|w| w.start);
        let mut runs: Vec<(TimeWindow, Vec<TimeWindow>)> = Vec::new();
        for candidate in sorted {
            match runs.last_mut() {
                Some((cover, members)) if cover.intersects(&candidate) => {
                    *cover = cover.cover(&candidate);
                    if !members.contains(&candidate) {
                        members.push(candidate);
                    }
                }
                _ => runs.push((candidate, vec![candidate])),
            }
        }
        runs.retain(|(_, members)| members.len() > 1);
        runs
    }
}

impl Window for TimeWindow {
    fn max_timestamp(&self) -> i64 {
        self.end.wrapping_sub(1)
    }
}

impl std::fmt::Display for TimeWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TimeWindow{{start={}, end={}}}", self.start, self.end)
    }
}

/// The single window of all elements (Flink's `GlobalWindow`), for count windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
pub struct GlobalWindow;

impl Window for GlobalWindow {
    fn max_timestamp(&self) -> i64 {
        i64::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_13000_with_size_10000_falls_in_10000_to_20000() {
        let start = TimeWindow::window_start_with_offset(13_000, 0, 10_000);
        let w = TimeWindow::new(start, start + 10_000);
        assert_eq!(w, TimeWindow::new(10_000, 20_000));
        assert_eq!(w.max_timestamp(), 19_999);
    }

    #[test]
    fn negative_timestamps_round_down_to_their_window_start() {
        assert_eq!(TimeWindow::window_start_with_offset(-3, 0, 10), -10);
        assert_eq!(TimeWindow::window_start_with_offset(-10, 0, 10), -10);
        assert_eq!(TimeWindow::window_start_with_offset(7, 2, 10), 2);
        assert_eq!(TimeWindow::window_start_with_offset(1, 2, 10), -8);
    }

    #[test]
    fn touching_windows_intersect_and_cover_spans_both() {
        let a = TimeWindow::new(0, 10);
        let b = TimeWindow::new(10, 20);
        assert!(a.intersects(&b));
        assert!(!a.intersects(&TimeWindow::new(11, 20)));
        assert_eq!(a.cover(&b), TimeWindow::new(0, 20));
    }

    #[test]
    fn session_windows_merge_when_they_touch_or_overlap() {
        let ws = [
            TimeWindow::new(20, 30),
            TimeWindow::new(0, 10),
            TimeWindow::new(10, 15),
            TimeWindow::new(40, 50),
            TimeWindow::new(25, 28),
        ];
        let merged = TimeWindow::merge_windows(&ws);
        assert_eq!(
            merged,
            vec![
                (
                    TimeWindow::new(0, 15),
                    vec![TimeWindow::new(0, 10), TimeWindow::new(10, 15)]
                ),
                (
                    TimeWindow::new(20, 30),
                    vec![TimeWindow::new(20, 30), TimeWindow::new(25, 28)]
                ),
            ]
        );
    }

    #[test]
    fn a_window_equal_to_an_existing_one_merges_nothing() {
        let ws = [TimeWindow::new(0, 10), TimeWindow::new(0, 10)];
        assert!(TimeWindow::merge_windows(&ws).is_empty());
    }

    #[test]
    fn the_global_window_ends_at_the_end_of_time() {
        assert_eq!(GlobalWindow.max_timestamp(), i64::MAX);
    }
}
