//! The time arithmetic of the interval join (Flink's `IntervalJoinOperator`), as plain
//! functions.
//!
//! A left element at `t` joins right elements at `t + lower ..= t + upper`; seen from a
//! right element at `t`, left elements at `t - upper ..= t - lower`. An element is
//! buffered until no element of the other side can still join it: a cleanup timer at
//! `t + relative upper` (at `t` when that is not positive) removes its timestamp's
//! bucket once the watermark reaches it. An element behind the watermark is late and
//! dropped.

use super::error::JoinError;
use serde::{Deserialize, Serialize};

/// Which input of the interval join: the namespace of its cleanup timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum JoinSide {
    /// The first (left) input.
    Left,
    /// The second (right) input.
    Right,
}

impl JoinSide {
    /// `left` or `right`.
    pub fn name(self) -> &'static str {
        match self {
            JoinSide::Left => "left",
            JoinSide::Right => "right",
        }
    }
}

/// The inclusive bounds of the interval, relative to the left element: `lower <= upper`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntervalBounds {
    lower: i64,
    upper: i64,
}

impl IntervalBounds {
    /// Stands in for bounds `new` rejected: the job they were given to does not build.
    pub(crate) const REJECTED: IntervalBounds = IntervalBounds { lower: 0, upper: 0 };

    /// The bounds of `between(lower, upper)` in ms, each made inclusive by moving an
    /// exclusive one inwards by 1 ms; an error if no timestamp difference is left.
    pub fn new(lower: i64, upper: i64, lower_exclusive: bool, upper_exclusive: bool) -> Result<Self, JoinError> {
        let effective_lower = if lower_exclusive {
            lower.saturating_add(1)
        } else {
            lower
        };
        let effective_upper = if upper_exclusive {
            upper.saturating_sub(1)
        } else {
            upper
        };
        if lower > upper || effective_lower > effective_upper {
            let exclusive = match (lower_exclusive, upper_exclusive) {
                (false, false) => String::new(),
                (true, false) => ", lower bound exclusive".into(),
                (false, true) => ", upper bound exclusive".into(),
                (true, true) => ", both bounds exclusive".into(),
            };
            return Err(JoinError::EmptyInterval {
                lower,
                upper,
                exclusive,
                effective_lower,
                effective_upper,
            });
        }
        Ok(Self {
            lower: effective_lower,
            upper: effective_upper,
        })
    }

    /// The inclusive lower bound.
    pub fn lower(&self) -> i64 {
        self.lower
    }

    /// The inclusive upper bound.
    pub fn upper(&self) -> i64 {
        self.upper
    }

    /// The bounds relative to an element of `side`: the other side's timestamps it
    /// joins are `t + lower ..= t + upper`.
    pub fn relative_to(&self, side: JoinSide) -> (i64, i64) {
        match side {
            JoinSide::Left => (self.lower, self.upper),
            JoinSide::Right => (self.upper.saturating_neg(), self.lower.saturating_neg()),
        }
    }

    /// True if an element of `side` at `ours` joins one of the other side at `theirs`.
    pub fn joins(&self, side: JoinSide, ours: i64, theirs: i64) -> bool {
        let (lower, upper) = self.relative_to(side);
        theirs >= ours.saturating_add(lower) && theirs <= ours.saturating_add(upper)
    }

    /// When the buffered element of `side` at `timestamp` is removed.
    pub fn cleanup_time(&self, side: JoinSide, timestamp: i64) -> i64 {
        let (_, upper) = self.relative_to(side);
        if upper > 0 {
            timestamp.saturating_add(upper)
        } else {
            timestamp
        }
    }

    /// The timestamp whose bucket of `side` the cleanup timer at `timer` removes (the
    /// inverse of [`cleanup_time`](Self::cleanup_time)).
    pub fn bucket_of_cleanup(&self, side: JoinSide, timer: i64) -> i64 {
        let (_, upper) = self.relative_to(side);
        if upper > 0 {
            timer - upper
        } else {
            timer
        }
    }
}

/// True if an element at `timestamp` is late under `watermark` (Flink: behind it, once
/// there is one).
pub fn is_late(timestamp: i64, watermark: i64) -> bool {
    watermark != i64::MIN && timestamp < watermark
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_bounds_move_inwards_and_an_empty_interval_is_an_error_naming_both_bounds() {
        let b = IntervalBounds::new(-2, 3, true, true).unwrap();
        assert_eq!((b.lower(), b.upper()), (-1, 2));
        assert_eq!(IntervalBounds::new(4, 4, false, false).unwrap().lower(), 4);
        let e = IntervalBounds::new(5, 1, false, false).unwrap_err().to_string();
        assert!(
            e.contains("lowerBound <= upperBound") && e.contains("between(5, 1)"),
            "{e}"
        );
        let e = IntervalBounds::new(4, 4, false, true).unwrap_err().to_string();
        assert!(e.contains("upper bound exclusive") && e.contains("4..=3"), "{e}");
    }

    #[test]
    fn a_right_element_joins_the_left_ones_the_mirrored_interval_covers() {
        let b = IntervalBounds::new(-2, 3, false, false).unwrap();
        assert_eq!(b.relative_to(JoinSide::Right), (-3, 2));
        for left in 0..10 {
            for right in 0..10 {
                assert_eq!(
                    b.joins(JoinSide::Left, left, right),
                    b.joins(JoinSide::Right, right, left),
                    "left {left} right {right}"
                );
            }
        }
        assert!(b.joins(JoinSide::Left, 5, 3) && b.joins(JoinSide::Left, 5, 8));
        assert!(!b.joins(JoinSide::Left, 5, 2) && !b.joins(JoinSide::Left, 5, 9));
    }

    #[test]
    fn cleanup_waits_for_the_last_timestamp_the_other_side_could_join_and_finds_its_bucket_back() {
        let b = IntervalBounds::new(-2, 3, false, false).unwrap();
        assert_eq!(b.cleanup_time(JoinSide::Left, 10), 13);
        assert_eq!(b.cleanup_time(JoinSide::Right, 10), 12);
        let before = IntervalBounds::new(-5, -1, false, false).unwrap();
        assert_eq!(before.cleanup_time(JoinSide::Left, 10), 10);
        assert_eq!(before.cleanup_time(JoinSide::Right, 10), 15);
        for bounds in [b, before] {
            for side in [JoinSide::Left, JoinSide::Right] {
                let timer = bounds.cleanup_time(side, 10);
                assert_eq!(bounds.bucket_of_cleanup(side, timer), 10, "{bounds:?} {side:?}");
            }
        }
    }

    #[test]
    fn only_elements_behind_an_actual_watermark_are_late() {
        assert!(!is_late(i64::MIN, i64::MIN));
        assert!(!is_late(5, 5));
        assert!(is_late(4, 5));
    }
}
