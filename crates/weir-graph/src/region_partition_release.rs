//! When a blocking result partition may be released during the job (Flink's
//! `RegionPartitionGroupReleaseStrategy` under
//! `jobmanager.partition.release-during-job-execution`): once every region consuming
//! it has finished, nobody reads it again unless a failover resets one of them.
//!
//! A pure state machine over [`PipelinedRegions`] and the set of finished subtasks (a
//! region is finished when all its subtasks are): [`RegionPartitionReleaseStrategy`]
//! remembers what it released, so the scheduler knows which producers must run again
//! before a reset consumer can read their output.
//!
//! Invariants: a partition is handed out for release once, and only when it has at
//! least one consumer region and all of them finished (a partition whose consumers are
//! not decided yet is kept); a partition stays released until its producer's region
//! is reset (its rerun writes it anew).

use crate::pipelined_region::{PipelinedRegions, ResultPartitionRef, SubtaskRef};
use std::collections::{BTreeMap, BTreeSet};

/// The blocking result partitions released so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegionPartitionReleaseStrategy {
    released: BTreeSet<ResultPartitionRef>,
}

impl RegionPartitionReleaseStrategy {
    /// Nothing released.
    pub fn new() -> Self {
        Self::default()
    }

    /// `region` may have just finished: the partitions it consumed whose consumer
    /// regions have now all finished, in order, marked released. Empty while `region`
    /// itself has an unfinished subtask.
    pub fn on_region_finished(
        &mut self,
        regions: &PipelinedRegions,
        region: usize,
        finished: &BTreeSet<SubtaskRef>,
    ) -> Vec<ResultPartitionRef> {
        let mut region_done: BTreeMap<usize, bool> = BTreeMap::new();
        let mut is_done = |r: usize| {
            *region_done
                .entry(r)
                .or_insert_with(|| regions.region(r).all(|s| finished.contains(&s)))
        };
        if !is_done(region) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for partition in regions.consumed_partitions(region) {
            if self.released.contains(&partition) || !finished.contains(&partition.producer) {
                continue;
            }
            let mut consumers = regions.consumer_regions(partition).peekable();
            if consumers.peek().is_none() {
                continue;
            }
            if consumers.all(&mut is_done) {
                self.released.insert(partition);
                out.push(partition);
            }
        }
        out
    }

    /// True once `partition` was handed out for release (and its producer did not run
    /// again since).
    pub fn is_released(&self, partition: ResultPartitionRef) -> bool {
        self.released.contains(&partition)
    }

    /// The producer subtasks of the released partitions `region` reads: a reset
    /// `region` can run again only after they ran again.
    pub fn released_inputs(&self, regions: &PipelinedRegions, region: usize) -> BTreeSet<SubtaskRef> {
        regions
            .consumed_partitions(region)
            .filter(|p| self.released.contains(p))
            .map(|p| p.producer)
            .collect()
    }

    /// `reset` regions run again: the partitions their subtasks produce will be
    /// written anew, so they are no longer released.
    pub fn on_regions_reset(&mut self, regions: &PipelinedRegions, reset: &BTreeSet<usize>) {
        let producers: BTreeSet<SubtaskRef> = reset.iter().flat_map(|r| regions.region(*r)).collect();
        self.released.retain(|p| !producers.contains(&p.producer));
    }

    /// Everything starts over (a global failover): every partition is new.
    pub fn reset_all(&mut self) {
        self.released.clear();
    }
}

#[cfg(test)]
#[path = "region_partition_release_tests.rs"]
mod tests;
