//! A source over an in-memory collection, split by subtask: element `i` goes to
//! subtask `i % parallelism` (after a rescaling restore: to the subtask that was dealt
//! split `i % splits`, see [`SplitSet`]).

use super::{SplitSet, SOURCE_BATCH};
use weir_core::StreamRecord;
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

/// Emits this subtask's share of a collection, in order.
pub struct CollectionSource<T> {
    items: Vec<T>,
    splits: SplitSet,
}

impl<T: Clone> CollectionSource<T> {
    /// Subtask `subtask` of `parallelism` over `items`.
    pub fn new(items: &[T], subtask: u32, parallelism: u32) -> Self {
        Self {
            items: items.to_vec(),
            splits: SplitSet::fresh(subtask, parallelism),
        }
    }
}

impl<T: Clone> SourceFunction<T> for CollectionSource<T> {
    fn poll_next(&mut self, output: &mut dyn Output<T>) -> Result<SourceStatus, TaskError> {
        let len = self.items.len() as u64;
        for _ in 0..SOURCE_BATCH {
            let Some(index) = self.splits.next_index(len) else {
                return Ok(SourceStatus::Finished);
            };
            let item = self.items[index as usize].clone();
            self.splits.emitted(index);
            output.collect(StreamRecord::new(item))?;
        }
        Ok(if self.splits.next_index(len).is_none() {
            SourceStatus::Finished
        } else {
            SourceStatus::More
        })
    }

    fn snapshot_position(&mut self) -> Result<Vec<Vec<u8>>, TaskError> {
        self.splits.snapshot()
    }

    fn restore_position(&mut self, positions: Vec<Vec<u8>>) -> Result<(), TaskError> {
        self.splits = SplitSet::restore(&positions, "collection source")?;
        Ok(())
    }
}
