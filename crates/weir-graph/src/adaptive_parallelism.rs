//! The adaptive batch scheduler's decision (Flink's `DefaultVertexParallelismDecider`
//! with the subpartition ranges of its input info computation): the parallelism of a
//! vertex whose parallelism the user did not set, decided once all its inputs finished,
//! from the bytes they produced; and which contiguous range of each producer's
//! subpartitions every consumer subtask reads.
//!
//! Producers of such a vertex write one subpartition per key group of the consumer's
//! max parallelism (not per consumer subtask), so the decision can be made after they
//! finished; a consumer subtask then reads a range of them.
//!
//! Pure functions. Invariants: a decided parallelism lies in `[min, max]` (or is lower
//! when fewer byte-balanced ranges suffice); the ranges are contiguous, non-empty,
//! cover every subpartition exactly once and are as many as the final parallelism.

use std::ops::Range;

/// Flink's cap on the share of the per-task volume that broadcast input may take.
pub const BROADCAST_CAP_RATIO: f64 = 0.5;

/// Most subpartitions one subtask reads (Flink's `MAX_NUM_SUBPARTITIONS_PER_TASK_CONSUME`).
pub const MAX_SUBPARTITIONS_PER_TASK: u32 = 32_768;

/// The adaptive batch scheduler's options (`execution.batch.adaptive.auto-parallelism.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdaptiveParallelismOptions {
    /// `.min-parallelism`.
    pub min_parallelism: u32,
    /// `.max-parallelism` (or its fallback `parallelism.default`, else 128).
    pub max_parallelism: u32,
    /// `.avg-data-volume-per-task` in bytes.
    pub avg_data_volume_per_task: u64,
    /// `.default-source-parallelism` (or the max parallelism).
    pub default_source_parallelism: u32,
}

impl Default for AdaptiveParallelismOptions {
    fn default() -> Self {
        Self {
            min_parallelism: 1,
            max_parallelism: 128,
            avg_data_volume_per_task: 16 * 1024 * 1024,
            default_source_parallelism: 128,
        }
    }
}

/// What one finished input of a vertex produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockingInput {
    /// Every consumer subtask reads all of it.
    pub broadcast: bool,
    /// Bytes per subpartition, summed over the producer subtasks.
    pub subpartition_bytes: Vec<u64>,
}

impl BlockingInput {
    /// Bytes the input produced.
    pub fn total_bytes(&self) -> u64 {
        self.subpartition_bytes.iter().sum()
    }
}

/// The parallelism of a source nobody set: its number of splits (e.g. files) when it
/// knows them, else the default source parallelism; never above the max.
pub fn decide_source_parallelism(options: &AdaptiveParallelismOptions, splits: Option<u32>) -> u32 {
    let p = splits.unwrap_or(options.default_source_parallelism);
    p.clamp(1, options.max_parallelism.max(1))
}

/// The broadcast bytes counted against a task's volume: at most half of it.
fn capped_broadcast_bytes(options: &AdaptiveParallelismOptions, inputs: &[BlockingInput]) -> u64 {
    let broadcast: u64 = inputs
        .iter()
        .filter(|i| i.broadcast)
        .map(BlockingInput::total_bytes)
        .sum();
    let cap = (options.avg_data_volume_per_task as f64 * BROADCAST_CAP_RATIO) as u64;
    broadcast.min(cap)
}

/// Flink's rule: `ceil(non-broadcast bytes / (avg volume − capped broadcast bytes))`,
/// at least enough subtasks to read every subpartition, clamped to `[min, max]`.
/// Without non-broadcast input: the minimum.
pub fn decide_parallelism(options: &AdaptiveParallelismOptions, inputs: &[BlockingInput]) -> u32 {
    let (min, max) = bounds(options);
    let non_broadcast: Vec<&BlockingInput> = inputs.iter().filter(|i| !i.broadcast).collect();
    if non_broadcast.is_empty() {
        return min;
    }
    let bytes: u64 = non_broadcast.iter().map(|i| i.total_bytes()).sum();
    let per_task = options
        .avg_data_volume_per_task
        .saturating_sub(capped_broadcast_bytes(options, inputs))
        .max(1);
    let by_volume = bytes.div_ceil(per_task);
    let most_subpartitions = non_broadcast
        .iter()
        .map(|i| i.subpartition_bytes.len() as u64)
        .max()
        .unwrap_or(0);
    let by_subpartitions = most_subpartitions.div_ceil(u64::from(MAX_SUBPARTITIONS_PER_TASK));
    let p = by_volume.max(by_subpartitions);
    u32::try_from(p).unwrap_or(u32::MAX).clamp(min, max)
}

fn bounds(options: &AdaptiveParallelismOptions) -> (u32, u32) {
    let max = options.max_parallelism.max(1);
    (options.min_parallelism.clamp(1, max), max)
}

/// The decision for a vertex with all-to-all inputs: the consumer subtasks' ranges of
/// subpartitions (their number is the final parallelism). Subpartitions are packed
/// greedily into ranges of at most the per-task volume; when that gives a count
/// outside `[min, max]`, the byte limit that gives the closest legal count is searched.
pub fn decide_all_to_all_ranges(options: &AdaptiveParallelismOptions, inputs: &[BlockingInput]) -> Vec<Range<u32>> {
    let subpartitions = inputs
        .iter()
        .filter(|i| !i.broadcast)
        .map(|i| i.subpartition_bytes.len())
        .max()
        .unwrap_or(0);
    if subpartitions == 0 {
        return std::iter::once(0..0).collect();
    }
    let mut bytes = vec![0u64; subpartitions];
    for input in inputs.iter().filter(|i| !i.broadcast) {
        for (b, n) in bytes.iter_mut().zip(&input.subpartition_bytes) {
            *b += n;
        }
    }
    let (min, max) = bounds(options);
    let (min, max) = (min.min(subpartitions as u32), max.min(subpartitions as u32));
    let per_task = options
        .avg_data_volume_per_task
        .saturating_sub(capped_broadcast_bytes(options, inputs))
        .max(1);
    let ranges = pack(&bytes, per_task);
    let count = ranges.len() as u32;
    if (min..=max).contains(&count) {
        return ranges;
    }
    if count > max {
        // The smallest limit that gives at most `max` ranges.
        let (mut lo, mut hi) = (per_task, bytes.iter().sum::<u64>().max(per_task));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pack(&bytes, mid).len() as u32 <= max {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return pack(&bytes, lo);
    }
    split_evenly(subpartitions as u32, min)
}

/// Contiguous ranges of `bytes`, each summing to at most `limit` (a single larger
/// subpartition is a range of its own).
fn pack(bytes: &[u64], limit: u64) -> Vec<Range<u32>> {
    let mut ranges = Vec::new();
    let (mut start, mut sum) = (0usize, 0u64);
    for (i, b) in bytes.iter().enumerate() {
        if i > start && sum + b > limit {
            ranges.push(start as u32..i as u32);
            start = i;
            sum = 0;
        }
        sum += b;
    }
    ranges.push(start as u32..bytes.len() as u32);
    ranges
}

/// `n` subpartitions in `parts` ranges of (nearly) equal counts: Flink's split for
/// pointwise inputs and for a count raised to the minimum.
pub fn split_evenly(n: u32, parts: u32) -> Vec<Range<u32>> {
    let parts = parts.clamp(1, n.max(1));
    (0..parts)
        .map(|i| {
            let start = (u64::from(i) * u64::from(n) / u64::from(parts)) as u32;
            let end = (u64::from(i + 1) * u64::from(n) / u64::from(parts)) as u32;
            start..end
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    fn options(min: u32, max: u32, avg_mib: u64) -> AdaptiveParallelismOptions {
        AdaptiveParallelismOptions {
            min_parallelism: min,
            max_parallelism: max,
            avg_data_volume_per_task: avg_mib * MIB,
            default_source_parallelism: max,
        }
    }

    fn input(broadcast: bool, total: u64, subpartitions: usize) -> BlockingInput {
        let each = total / subpartitions as u64;
        BlockingInput {
            broadcast,
            subpartition_bytes: vec![each; subpartitions],
        }
    }

    #[test]
    fn flinks_examples_non_broadcast_bytes_over_the_volume_per_task() {
        let o = options(1, 100, 1024);
        // 1 GiB of broadcast (capped at 512 MiB) and 8 GiB + 2 GiB: 10 GiB / 512 MiB = 20.
        let inputs = [
            input(true, 1024 * MIB, 10),
            input(false, 8 * 1024 * MIB, 10),
            input(false, 2 * 1024 * MIB, 10),
        ];
        assert_eq!(decide_parallelism(&o, &inputs), 20);
        // 256 MiB of broadcast: 10 GiB / 768 MiB = 13.33 -> 14.
        let inputs = [
            input(true, 256 * MIB, 10),
            input(false, 8 * 1024 * MIB, 10),
            input(false, 2 * 1024 * MIB, 10),
        ];
        assert_eq!(decide_parallelism(&o, &inputs), 14);
    }

    #[test]
    fn a_decision_is_clamped_to_min_and_max() {
        let small = [input(false, 800 * MIB, 10)];
        assert_eq!(decide_parallelism(&options(3, 100, 1024), &small), 3);
        let large = [input(false, 200 * 1024 * MIB, 10)];
        assert_eq!(decide_parallelism(&options(1, 100, 1024), &large), 100);
        let only_broadcast = [input(true, 200 * MIB, 10)];
        assert_eq!(decide_parallelism(&options(2, 100, 1024), &only_broadcast), 2);
    }

    #[test]
    fn a_small_file_gets_parallelism_one_with_the_default_volume() {
        let o = AdaptiveParallelismOptions {
            max_parallelism: 2,
            ..AdaptiveParallelismOptions::default()
        };
        let inputs = [input(false, 300 * 1024, 2)];
        assert_eq!(decide_parallelism(&o, &inputs), 1);
        let ranges = decide_all_to_all_ranges(&o, &inputs);
        assert_eq!((ranges.len(), ranges.first()), (1, Some(&(0..2))));
    }

    #[test]
    fn enough_subtasks_to_read_every_subpartition() {
        let inputs = [input(false, 1, 70_000)];
        assert_eq!(decide_parallelism(&options(1, 128, 1024), &inputs), 3);
    }

    #[test]
    fn ranges_balance_bytes_and_may_lower_the_parallelism() {
        let o = options(1, 10, 1);
        // Subpartitions of 0.5, 0.5, 1, 0.25, 0.25 MiB: three ranges of at most 1 MiB.
        let inputs = [BlockingInput {
            broadcast: false,
            subpartition_bytes: vec![MIB / 2, MIB / 2, MIB, MIB / 4, MIB / 4],
        }];
        assert_eq!(decide_all_to_all_ranges(&o, &inputs), vec![0..2, 2..3, 3..5]);
    }

    #[test]
    fn too_many_ranges_are_merged_down_to_the_max() {
        let o = options(1, 2, 1);
        let inputs = [input(false, 8 * MIB, 8)];
        let ranges = decide_all_to_all_ranges(&o, &inputs);
        assert_eq!(ranges, vec![0..4, 4..8]);
    }

    #[test]
    fn too_few_ranges_are_split_evenly_up_to_the_min() {
        let o = options(4, 8, 1024);
        let inputs = [input(false, MIB, 8)];
        assert_eq!(decide_all_to_all_ranges(&o, &inputs), vec![0..2, 2..4, 4..6, 6..8]);
    }

    #[test]
    fn sources_take_their_splits_or_the_default_capped_by_the_max() {
        let o = options(1, 4, 16);
        assert_eq!(decide_source_parallelism(&o, Some(3)), 3);
        assert_eq!(decide_source_parallelism(&o, Some(9)), 4);
        assert_eq!(decide_source_parallelism(&o, None), 4);
        assert_eq!(decide_source_parallelism(&o, Some(0)), 1);
    }

    #[test]
    fn even_splits_cover_every_subpartition_once() {
        assert_eq!(split_evenly(5, 2), vec![0..2, 2..5]);
        assert_eq!(split_evenly(2, 4), vec![0..1, 1..2]);
    }
}
