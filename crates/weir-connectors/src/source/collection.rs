//! A source over an in-memory collection, split by subtask: element `i` goes to
//! subtask `i % parallelism`.

use super::{SplitPosition, SOURCE_BATCH};
use weir_core::StreamRecord;
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

/// Emits this subtask's share of a collection, in order.
pub struct CollectionSource<T> {
    items: std::vec::IntoIter<T>,
    emitted: u64,
    subtask: u32,
    parallelism: u32,
}

impl<T: Clone> CollectionSource<T> {
    /// The share of `items` for `subtask` of `parallelism`.
    pub fn new(items: &[T], subtask: u32, parallelism: u32) -> Self {
        let p = parallelism.max(1) as usize;
        let mine: Vec<T> = items.iter().skip(subtask as usize).step_by(p).cloned().collect();
        Self {
            items: mine.into_iter(),
            emitted: 0,
            subtask,
            parallelism: p as u32,
        }
    }
}

impl<T> SourceFunction<T> for CollectionSource<T> {
    fn poll_next(&mut self, output: &mut dyn Output<T>) -> Result<SourceStatus, TaskError> {
        for _ in 0..SOURCE_BATCH {
            match self.items.next() {
                Some(v) => {
                    self.emitted += 1;
                    output.collect(StreamRecord::new(v))?
                }
                None => return Ok(SourceStatus::Finished),
            }
        }
        Ok(if self.items.len() == 0 {
            SourceStatus::Finished
        } else {
            SourceStatus::More
        })
    }

    fn snapshot_position(&mut self) -> Result<Vec<Vec<u8>>, TaskError> {
        Ok(vec![SplitPosition {
            split: self.subtask,
            num_splits: self.parallelism,
            offset: self.emitted,
            byte_offset: 0,
        }
        .encode()?])
    }

    fn restore_position(&mut self, positions: Vec<Vec<u8>>) -> Result<(), TaskError> {
        if let Some(p) = SplitPosition::find(&positions, self.subtask, self.parallelism, "collection source")? {
            while self.emitted < p.offset && self.items.next().is_some() {
                self.emitted += 1;
            }
        }
        Ok(())
    }
}
