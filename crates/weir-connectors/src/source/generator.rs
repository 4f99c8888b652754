//! A seeded, deterministic generator of a fixed number of records.
//!
//! Record `i` is `f(i, Rng::for_index(seed, i))`; subtask `s` of `p` generates the
//! indices `s, s+p, s+2p, …` below the count, so the records are the same at every
//! parallelism.

use super::SOURCE_BATCH;
use crate::rng::Rng;
use std::sync::Arc;
use weir_core::StreamRecord;
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

/// The function that makes record `index`.
pub type GeneratorFn<T> = Arc<dyn Fn(u64, &mut Rng) -> T + Send + Sync>;

/// Generates this subtask's share of `count` records.
pub struct GeneratorSource<T> {
    next: u64,
    count: u64,
    step: u64,
    seed: u64,
    f: GeneratorFn<T>,
}

impl<T> GeneratorSource<T> {
    /// Subtask `subtask` of `parallelism` of a generator of `count` records.
    pub fn new(count: u64, seed: u64, f: GeneratorFn<T>, subtask: u32, parallelism: u32) -> Self {
        Self {
            next: subtask as u64,
            count,
            step: parallelism.max(1) as u64,
            seed,
            f,
        }
    }
}

impl<T> SourceFunction<T> for GeneratorSource<T> {
    fn poll_next(&mut self, output: &mut dyn Output<T>) -> Result<SourceStatus, TaskError> {
        for _ in 0..SOURCE_BATCH {
            if self.next >= self.count {
                return Ok(SourceStatus::Finished);
            }
            let mut rng = Rng::for_index(self.seed, self.next);
            let v = (self.f)(self.next, &mut rng);
            output.collect(StreamRecord::new(v))?;
            self.next += self.step;
        }
        Ok(if self.next >= self.count {
            SourceStatus::Finished
        } else {
            SourceStatus::More
        })
    }
}
