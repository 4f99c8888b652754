//! A seeded, deterministic generator of a fixed number of records.
//!
//! Record `i` is `f(i, Rng::for_index(seed, i))`; subtask `s` of `p` generates the
//! indices `s, s+p, s+2p, …` below the count, so the records are the same at every
//! parallelism. After a rescaling restore a subtask generates the indices of the
//! splits it was dealt, in index order ([`SplitSet`]).

use super::{SplitSet, SOURCE_BATCH};
use crate::rng::Rng;
use std::sync::Arc;
use weir_core::StreamRecord;
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

/// The function that makes record `index`.
pub type GeneratorFn<T> = Arc<dyn Fn(u64, &mut Rng) -> T + Send + Sync>;

/// Generates this subtask's share of `count` records.
pub struct GeneratorSource<T> {
    splits: SplitSet,
    count: u64,
    parallelism: u32,
    seed: u64,
    f: GeneratorFn<T>,
    /// Records per second for this subtask, if throttled.
    rate: Option<f64>,
    started: Option<std::time::Instant>,
    emitted: u64,
}

impl<T> GeneratorSource<T> {
    /// Subtask `subtask` of `parallelism` of a generator of `count` records.
    pub fn new(count: u64, seed: u64, f: GeneratorFn<T>, subtask: u32, parallelism: u32) -> Self {
        Self {
            splits: SplitSet::fresh(subtask, parallelism),
            count,
            parallelism: parallelism.max(1),
            seed,
            f,
            rate: None,
            started: None,
            emitted: 0,
        }
    }

    /// Throttles the whole source to `records_per_sec` in wall-clock time (each
    /// subtask takes its share), for demos and failure tests.
    pub fn with_rate(mut self, records_per_sec: f64) -> Self {
        if records_per_sec > 0.0 {
            self.rate = Some(records_per_sec / self.parallelism as f64);
        }
        self
    }

    /// How many records may go out now to keep to the rate, or how long until the next
    /// one may (at most 10 ms, so the task looks at its mailbox often).
    fn allowance(&mut self) -> Result<usize, std::time::Duration> {
        let Some(rate) = self.rate else { return Ok(SOURCE_BATCH) };
        let started = *self.started.get_or_insert_with(std::time::Instant::now);
        let due = (started.elapsed().as_secs_f64() * rate) as u64;
        if due > self.emitted {
            Ok(((due - self.emitted) as usize).min(SOURCE_BATCH))
        } else {
            let wait = (self.emitted + 1 - due) as f64 / rate;
            Err(std::time::Duration::from_secs_f64(wait.min(0.01)))
        }
    }
}

impl<T> GeneratorSource<T> {
    fn emit(&mut self, index: u64, output: &mut dyn Output<T>) -> Result<(), TaskError> {
        let mut rng = Rng::for_index(self.seed, index);
        output.collect(StreamRecord::new((self.f)(index, &mut rng)))
    }
}

impl<T> SourceFunction<T> for GeneratorSource<T> {
    fn poll_next(&mut self, output: &mut dyn Output<T>) -> Result<SourceStatus, TaskError> {
        let allowed = match self.allowance() {
            Ok(n) => n,
            Err(wait) if self.splits.next_index(self.count).is_some() => return Ok(SourceStatus::Throttled(wait)),
            Err(_) => return Ok(SourceStatus::Finished),
        };
        self.emitted += allowed as u64;
        if let Some(stride) = self.splits.single_split_stride() {
            let Some(mut next) = self.splits.next_index(self.count) else {
                return Ok(SourceStatus::Finished);
            };
            let mut last = None;
            for _ in 0..allowed {
                if next >= self.count {
                    break;
                }
                self.emit(next, output)?;
                last = Some(next);
                next += stride;
            }
            if let Some(last) = last {
                self.splits.emitted(last);
            }
        } else {
            for _ in 0..allowed {
                let Some(index) = self.splits.next_index(self.count) else {
                    break;
                };
                self.emit(index, output)?;
                self.splits.emitted(index);
            }
        }
        Ok(if self.splits.next_index(self.count).is_none() {
            SourceStatus::Finished
        } else {
            SourceStatus::More
        })
    }

    fn snapshot_position(&mut self) -> Result<Vec<Vec<u8>>, TaskError> {
        self.splits.snapshot()
    }

    fn restore_position(&mut self, positions: Vec<Vec<u8>>) -> Result<(), TaskError> {
        self.splits = SplitSet::restore(&positions, "generator source")?;
        Ok(())
    }
}
