//! Which part of its input a source subtask reads, and how far it got: the splits of
//! the built-in sources and their positions in checkpoints.
//!
//! Every built-in source reads a sequence (generated indices, collection elements,
//! lines of a file) cut into `num_splits` *modular* splits: split `s` holds the items
//! whose index is `s` modulo `num_splits`. A fresh job has one split per source
//! subtask. The splits never change afterwards: a restore at another parallelism deals
//! the checkpointed splits out round-robin (operator list state), so a subtask may read
//! several splits, or none (it then finishes at once, as a Flink reader without
//! splits does).
//!
//! Invariants:
//! - A position's `offset` is an index of the whole sequence: every item of its split
//!   below `offset` has been emitted, none at or above it.
//! - All splits of one [`SplitSet`] have the same `num_splits`, and no split appears
//!   twice (a restore that violates either is a clear error, not a replay).

use serde::{Deserialize, Serialize};
use weir_runtime::TaskError;

/// How far one split was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitPosition {
    /// The split.
    pub split: u32,
    /// Number of splits: the source's parallelism when the job first started.
    pub num_splits: u32,
    /// Index in the whole sequence of the next item this split may emit.
    pub offset: u64,
    /// Byte offset in the input matching `offset`, for file sources (0 otherwise).
    pub byte_offset: u64,
}

impl SplitPosition {
    /// The encoded list-state element.
    pub fn encode(&self) -> Result<Vec<u8>, TaskError> {
        Ok(weir_core::codec::encode(self)?)
    }

    /// Decodes a list-state element written by [`encode`](Self::encode).
    pub fn decode(bytes: &[u8], source: &str) -> Result<Self, TaskError> {
        weir_core::codec::decode(bytes).map_err(|e| TaskError::Restore {
            checkpoint_id: 0,
            reason: format!("{source}: corrupt source position: {e}"),
        })
    }
}

/// The splits one source subtask reads, in split order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitSet {
    num_splits: u32,
    splits: Vec<SplitPosition>,
}

impl SplitSet {
    /// The one split of subtask `subtask` of a freshly started source of `parallelism`.
    pub fn fresh(subtask: u32, parallelism: u32) -> Self {
        let num_splits = parallelism.max(1);
        Self {
            num_splits,
            splits: vec![SplitPosition {
                split: subtask,
                num_splits,
                offset: 0,
                byte_offset: 0,
            }],
        }
    }

    /// The splits dealt to this subtask by a restore (possibly none).
    pub fn restore(elements: &[Vec<u8>], source: &str) -> Result<Self, TaskError> {
        let mut splits: Vec<SplitPosition> = elements
            .iter()
            .map(|bytes| SplitPosition::decode(bytes, source))
            .collect::<Result<_, _>>()?;
        splits.sort_by_key(|p| p.split);
        let num_splits = splits.first().map_or(1, |p| p.num_splits);
        let restore_error = |reason: String| TaskError::Restore {
            checkpoint_id: 0,
            reason: format!("{source}: {reason}"),
        };
        for (i, p) in splits.iter().enumerate() {
            if p.num_splits != num_splits || p.num_splits == 0 || p.split >= p.num_splits {
                return Err(restore_error(format!(
                    "inconsistent split positions: split {} of {} beside splits of {num_splits}",
                    p.split, p.num_splits
                )));
            }
            if i > 0 && splits[i - 1].split == p.split {
                return Err(restore_error(format!("split {} is restored twice", p.split)));
            }
        }
        Ok(Self { num_splits, splits })
    }

    /// The positions of the splits, in split order (for readers that track each split
    /// by its own position, such as byte ranges of a file).
    pub fn into_positions(self) -> Vec<SplitPosition> {
        self.splits
    }

    /// True when this subtask has nothing to read.
    pub fn is_empty(&self) -> bool {
        self.splits.is_empty()
    }

    /// The list-state elements of a checkpoint.
    pub fn snapshot(&self) -> Result<Vec<Vec<u8>>, TaskError> {
        self.splits.iter().map(SplitPosition::encode).collect()
    }

    /// For random-access sequences: the smallest index still to emit, over all splits;
    /// `None` when no split has one below `len`. Emitting in this order reproduces the
    /// sequence order across the splits (so event time stays in order).
    pub fn next_index(&self, len: u64) -> Option<u64> {
        self.splits
            .iter()
            .map(|p| first_at_or_after(p, p.offset))
            .filter(|i| *i < len)
            .min()
    }

    /// The stride between consecutive items when this subtask reads exactly one split
    /// (the common case, which a source may run as a tight loop).
    pub fn single_split_stride(&self) -> Option<u64> {
        (self.splits.len() == 1).then_some(self.num_splits as u64)
    }

    /// For random-access sequences: item `index` (from [`next_index`](Self::next_index))
    /// was emitted.
    pub fn emitted(&mut self, index: u64) {
        let split = (index % self.num_splits as u64) as u32;
        if let Some(p) = self.splits.iter_mut().find(|p| p.split == split) {
            p.offset = index + 1;
        }
    }

    /// For sequential inputs: where to start reading, the `(offset, byte_offset)` of the
    /// least advanced split.
    pub fn scan_start(&self) -> (u64, u64) {
        self.splits
            .iter()
            .min_by_key(|p| p.offset)
            .map_or((0, 0), |p| (p.offset, p.byte_offset))
    }

    /// For sequential inputs: whether item `index` is this subtask's to emit.
    pub fn owns(&self, index: u64) -> bool {
        let split = (index % self.num_splits as u64) as u32;
        self.splits.iter().any(|p| p.split == split && index >= p.offset)
    }

    /// For sequential inputs: the scan has consumed every item below `offset`, which
    /// ends at byte `byte_offset`; splits behind it move up to it.
    pub fn scanned_to(&mut self, offset: u64, byte_offset: u64) {
        for p in &mut self.splits {
            if p.offset < offset {
                p.offset = offset;
                p.byte_offset = byte_offset;
            }
        }
    }
}

/// The first index of `p`'s split at or after `from`.
fn first_at_or_after(p: &SplitPosition, from: u64) -> u64 {
    let n = p.num_splits.max(1) as u64;
    let rem = from % n;
    let s = p.split as u64;
    if rem <= s {
        from - rem + s
    } else {
        from - rem + n + s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elements(positions: &[(u32, u32, u64)]) -> Vec<Vec<u8>> {
        positions
            .iter()
            .map(|(split, num_splits, offset)| {
                SplitPosition {
                    split: *split,
                    num_splits: *num_splits,
                    offset: *offset,
                    byte_offset: 0,
                }
                .encode()
                .unwrap()
            })
            .collect()
    }

    /// Emits every index a set would, in order.
    fn drain(set: &mut SplitSet, len: u64) -> Vec<u64> {
        let mut out = Vec::new();
        while let Some(i) = set.next_index(len) {
            out.push(i);
            set.emitted(i);
        }
        out
    }

    #[test]
    fn a_fresh_split_reads_its_residue_class_in_order() {
        assert_eq!(drain(&mut SplitSet::fresh(1, 3), 10), vec![1, 4, 7]);
        assert_eq!(drain(&mut SplitSet::fresh(0, 1), 3), vec![0, 1, 2]);
    }

    #[test]
    fn rescaled_splits_together_emit_exactly_what_was_left_in_sequence_order() {
        // Two splits of a 10-item sequence, stopped at different places.
        let mut a = SplitSet::fresh(0, 2);
        let mut b = SplitSet::fresh(1, 2);
        for _ in 0..2 {
            let i = a.next_index(10).unwrap();
            a.emitted(i);
        }
        let i = b.next_index(10).unwrap();
        b.emitted(i);
        let mut state = a.snapshot().unwrap();
        state.extend(b.snapshot().unwrap());
        // Restored at parallelism 1: one subtask reads both.
        let mut both = SplitSet::restore(&state, "S").unwrap();
        assert_eq!(drain(&mut both, 10), vec![3, 4, 5, 6, 7, 8, 9]);
        // Restored at parallelism 3: round-robin, the third subtask gets none.
        let third = SplitSet::restore(&[], "S").unwrap();
        assert!(third.is_empty());
        assert_eq!(third.next_index(10), None);
    }

    #[test]
    fn a_scan_emits_only_owned_items_at_or_after_each_splits_offset() {
        let mut set = SplitSet::restore(&elements(&[(0, 3, 6), (2, 3, 2)]), "S").unwrap();
        assert_eq!(set.scan_start(), (2, 0));
        let owned: Vec<u64> = (0..10).filter(|i| set.owns(*i)).collect();
        assert_eq!(owned, vec![2, 5, 6, 8, 9]);
        set.scanned_to(4, 40);
        assert_eq!(set.scan_start(), (4, 40));
        let owned: Vec<u64> = (0..10).filter(|i| set.owns(*i)).collect();
        assert_eq!(owned, vec![5, 6, 8, 9]);
    }

    #[test]
    fn inconsistent_or_corrupt_positions_are_refused_by_source_name() {
        let err = SplitSet::restore(&elements(&[(0, 2, 0), (1, 3, 0)]), "Source: S")
            .unwrap_err()
            .to_string();
        assert!(err.contains("Source: S") && err.contains("inconsistent"), "{err}");
        let err = SplitSet::restore(&elements(&[(1, 2, 0), (1, 2, 4)]), "S")
            .unwrap_err()
            .to_string();
        assert!(err.contains("split 1 is restored twice"), "{err}");
        assert!(SplitSet::restore(&elements(&[(2, 2, 0)]), "S").is_err());
        assert!(SplitSet::restore(&[vec![1]], "S").is_err());
    }
}
