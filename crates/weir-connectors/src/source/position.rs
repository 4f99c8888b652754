//! A source split's position in a checkpoint: which split (this subtask's share of
//! the input, `split` of `num_splits`) and how far it was read. Every built-in source
//! snapshots one position per subtask and resumes exactly there.
//!
//! Restoring at another parallelism would change which records form a split; the
//! built-in sources refuse it with a clear error instead of replaying or skipping
//! records.

use serde::{Deserialize, Serialize};
use weir_runtime::TaskError;

/// How far one split was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitPosition {
    /// The split: the subtask index when the snapshot was taken.
    pub split: u32,
    /// Number of splits: the parallelism when the snapshot was taken.
    pub num_splits: u32,
    /// Records (or lines) of the split's input consumed.
    pub offset: u64,
    /// Byte offset in the input, for file sources (0 otherwise).
    pub byte_offset: u64,
}

impl SplitPosition {
    /// The encoded list-state element.
    pub fn encode(&self) -> Result<Vec<u8>, TaskError> {
        Ok(weir_core::codec::encode(self)?)
    }

    /// The position of split `split` of `num_splits` among restored `elements`;
    /// `Ok(None)` when there is none (the split had not started). A position of
    /// another split count is a clear error.
    pub fn find(elements: &[Vec<u8>], split: u32, num_splits: u32, source: &str) -> Result<Option<Self>, TaskError> {
        let mut found = None;
        for bytes in elements {
            let p: SplitPosition = weir_core::codec::decode(bytes).map_err(|e| TaskError::Restore {
                checkpoint_id: 0,
                reason: format!("{source}: corrupt source position: {e}"),
            })?;
            if p.num_splits != num_splits {
                return Err(TaskError::Restore {
                    checkpoint_id: 0,
                    reason: format!(
                        "{source}: the state has positions of {} splits, but the source now runs with parallelism {num_splits}; \
                         rescaling this source is not supported",
                        p.num_splits
                    ),
                });
            }
            if p.split == split {
                found = Some(p);
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_finds_its_own_position_and_refuses_another_split_count() {
        let elements: Vec<Vec<u8>> = (0..2)
            .map(|s| {
                SplitPosition {
                    split: s,
                    num_splits: 2,
                    offset: 10 + s as u64,
                    byte_offset: 0,
                }
                .encode()
                .unwrap()
            })
            .collect();
        assert_eq!(
            SplitPosition::find(&elements, 1, 2, "S").unwrap().map(|p| p.offset),
            Some(11)
        );
        assert_eq!(SplitPosition::find(&elements[..1], 1, 2, "S").unwrap(), None);
        let err = SplitPosition::find(&elements, 0, 3, "Source: S")
            .unwrap_err()
            .to_string();
        assert!(err.contains("Source: S") && err.contains("parallelism 3"), "{err}");
        assert!(SplitPosition::find(&[vec![1]], 0, 2, "S").is_err());
    }
}
