//! Key groups, exactly as Flink's `KeyGroupRangeAssignment`.
//!
//! A key's *key hash* (see [`crate::key_hash`]) is spread with
//! [`flink_murmur_hash`] and taken modulo the max parallelism to give its key group;
//! key groups are assigned to subtasks in contiguous ranges. Keyed state is scoped and
//! snapshotted per key group, so a job can be restored at another parallelism as long
//! as the max parallelism stays the same.

use crate::error::CoreError;
use crate::murmur::flink_murmur_hash;
use serde::{Deserialize, Serialize};

/// The largest max parallelism, Flink's `UPPER_BOUND_MAX_PARALLELISM` (2^15).
pub const UPPER_BOUND_MAX_PARALLELISM: u32 = 1 << 15;
/// The smallest default max parallelism.
pub const DEFAULT_LOWER_BOUND_MAX_PARALLELISM: u32 = 128;

/// Flink's default max parallelism for an operator of parallelism `p`:
/// `min(max(round_up_pow2(p + p/2), 128), 32768)`.
pub fn default_max_parallelism(parallelism: u32) -> u32 {
    let p = parallelism.max(1);
    let scaled = (p + p / 2).next_power_of_two();
    scaled.clamp(DEFAULT_LOWER_BOUND_MAX_PARALLELISM, UPPER_BOUND_MAX_PARALLELISM)
}

/// Checks a parallelism against Flink's bounds (1..=32768) and, when given, the max
/// parallelism of the operator.
pub fn check_parallelism(parallelism: u32, max_parallelism: Option<u32>) -> Result<(), CoreError> {
    if parallelism == 0 || parallelism > UPPER_BOUND_MAX_PARALLELISM {
        return Err(CoreError::ParallelismOutOfBounds(parallelism as i64));
    }
    if let Some(max) = max_parallelism {
        if max == 0 || max > UPPER_BOUND_MAX_PARALLELISM {
            return Err(CoreError::MaxParallelismOutOfBounds(max as i64));
        }
        if parallelism > max {
            return Err(CoreError::ParallelismAboveMax {
                parallelism,
                max_parallelism: max,
            });
        }
    }
    Ok(())
}

/// The key group of a key whose key hash is `key_hash`.
#[inline]
pub fn assign_to_key_group(key_hash: i32, max_parallelism: u32) -> u32 {
    (flink_murmur_hash(key_hash) as u32) % max_parallelism
}

/// The subtask index that owns `key_group`.
#[inline]
pub fn operator_index_for_key_group(max_parallelism: u32, parallelism: u32, key_group: u32) -> u32 {
    ((key_group as u64 * parallelism as u64) / max_parallelism as u64) as u32
}

/// The subtask index a key with `key_hash` is sent to.
#[inline]
pub fn assign_key_to_parallel_operator(key_hash: i32, max_parallelism: u32, parallelism: u32) -> u32 {
    operator_index_for_key_group(
        max_parallelism,
        parallelism,
        assign_to_key_group(key_hash, max_parallelism),
    )
}

/// An inclusive range of key groups `[start, end]`; empty when `end < start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyGroupRange {
    /// First key group in the range.
    pub start: u32,
    /// Last key group in the range (inclusive).
    pub end: u32,
}

impl KeyGroupRange {
    /// The range `[start, end]`.
    pub fn new(start: u32, end: u32) -> Self {
        Self { start, end }
    }

    /// The key groups owned by subtask `index` of `parallelism`:
    /// `start = (i*maxP + p - 1) / p`, `end = ((i+1)*maxP - 1) / p`.
    pub fn for_subtask(max_parallelism: u32, parallelism: u32, index: u32) -> Self {
        let (m, p, i) = (max_parallelism as u64, parallelism as u64, index as u64);
        let start = (i * m).div_ceil(p);
        let end = ((i + 1) * m - 1) / p;
        Self {
            start: start as u32,
            end: end as u32,
        }
    }

    /// Number of key groups in the range.
    pub fn len(&self) -> usize {
        if self.end < self.start {
            0
        } else {
            (self.end - self.start + 1) as usize
        }
    }

    /// True when the range holds no key group.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when `key_group` lies in the range.
    pub fn contains(&self, key_group: u32) -> bool {
        key_group >= self.start && key_group <= self.end
    }

    /// True when the two ranges share a key group.
    pub fn intersects(&self, other: &KeyGroupRange) -> bool {
        !self.is_empty() && !other.is_empty() && self.start <= other.end && other.start <= self.end
    }

    /// True when every key group of `other` lies in this range.
    pub fn covers(&self, other: &KeyGroupRange) -> bool {
        other.is_empty() || (self.start <= other.start && other.end <= self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key_hash::java_string_hash;

    #[test]
    fn ranges_intersect_when_they_share_a_key_group_and_cover_their_subranges() {
        let r = KeyGroupRange::new(10, 20);
        assert!(r.intersects(&KeyGroupRange::new(20, 30)));
        assert!(!r.intersects(&KeyGroupRange::new(21, 30)));
        assert!(!r.intersects(&KeyGroupRange::new(1, 0)));
        assert!(r.covers(&KeyGroupRange::new(10, 20)));
        assert!(r.covers(&KeyGroupRange::new(12, 15)));
        assert!(!r.covers(&KeyGroupRange::new(9, 15)));
        assert!(!r.covers(&KeyGroupRange::new(15, 21)));
    }

    #[test]
    fn default_max_parallelism_follows_flink_formula() {
        for p in 1..=85 {
            assert_eq!(default_max_parallelism(p), 128, "p={p}");
        }
        assert_eq!(default_max_parallelism(86), 256);
        assert_eq!(default_max_parallelism(100), 256);
        assert_eq!(default_max_parallelism(128), 256);
        assert_eq!(default_max_parallelism(1000), 2048);
        assert_eq!(default_max_parallelism(21846), 32768);
        assert_eq!(default_max_parallelism(32768), 32768);
    }

    #[test]
    fn integer_keys_land_in_flink_key_groups() {
        let expected = [(0, 94), (1, 86), (2, 127), (3, 113), (4, 7)];
        for (key, kg) in expected {
            assert_eq!(assign_to_key_group(key, 128), kg, "key {key}");
        }
    }

    #[test]
    fn java_hash_codes_land_in_flink_key_groups() {
        assert_eq!(assign_to_key_group(java_string_hash("a"), 128), 81);
        assert_eq!(assign_to_key_group(java_string_hash("hello"), 128), 35);
        let v: i64 = 1000;
        let long_hash = (v ^ ((v as u64) >> 32) as i64) as i32;
        assert_eq!(assign_to_key_group(long_hash, 128), 7);
    }

    #[test]
    fn subtask_ranges_match_flink_for_three_and_five() {
        let r: Vec<_> = (0..3).map(|i| KeyGroupRange::for_subtask(128, 3, i)).collect();
        assert_eq!(
            r,
            vec![
                KeyGroupRange::new(0, 42),
                KeyGroupRange::new(43, 85),
                KeyGroupRange::new(86, 127)
            ]
        );
        let r: Vec<_> = (0..5).map(|i| KeyGroupRange::for_subtask(128, 5, i)).collect();
        assert_eq!(
            r,
            vec![
                KeyGroupRange::new(0, 25),
                KeyGroupRange::new(26, 51),
                KeyGroupRange::new(52, 76),
                KeyGroupRange::new(77, 102),
                KeyGroupRange::new(103, 127)
            ]
        );
    }

    #[test]
    fn every_key_group_is_owned_by_the_subtask_whose_range_contains_it() {
        for p in 1..=17u32 {
            for kg in 0..128 {
                let owner = operator_index_for_key_group(128, p, kg);
                assert!(KeyGroupRange::for_subtask(128, p, owner).contains(kg), "p={p} kg={kg}");
            }
        }
    }

    #[test]
    fn parallelism_zero_or_above_bounds_is_rejected() {
        assert!(check_parallelism(0, None).is_err());
        assert!(check_parallelism(32769, None).is_err());
        assert!(check_parallelism(4, Some(2)).is_err());
        assert!(check_parallelism(4, Some(128)).is_ok());
        assert_eq!(
            check_parallelism(0, None).unwrap_err().to_string(),
            "Operator parallelism not within bounds: 0"
        );
    }
}
