//! Which pipelined regions to deploy next (Flink's `PipelinedRegionSchedulingStrategy`):
//! a region is deployed once every producer subtask of its blocking inputs has
//! finished, so a batch job runs stage by stage and needs only the slots of the regions
//! running at one time. A streaming job has no blocking edges: every region is
//! schedulable at once.
//!
//! A pure state machine over [`PipelinedRegions`]: the caller reports finished subtasks
//! and restarted regions and deploys what [`RegionSchedulingStrategy::schedulable`]
//! returns. Invariants: a region is handed out once until it is reset; a region is
//! handed out only when all its blocking inputs are finished.
//!
//! It also decides, with a [`RegionPartitionReleaseStrategy`], which blocking
//! partitions may be released once their consumers finished
//! ([`RegionSchedulingStrategy::partitions_to_release`]); a failover that resets a
//! consumer of a released partition reruns its producer first, and a rerun producer
//! reruns its consumers.

use crate::pipelined_region::{PipelinedRegions, ResultPartitionRef, SubtaskRef};
use crate::region_partition_release::RegionPartitionReleaseStrategy;
use std::collections::BTreeSet;

/// Scheduling state of one job's regions.
#[derive(Debug, Clone)]
pub struct RegionSchedulingStrategy {
    regions: PipelinedRegions,
    scheduled: BTreeSet<usize>,
    finished: BTreeSet<SubtaskRef>,
    release: RegionPartitionReleaseStrategy,
}

impl RegionSchedulingStrategy {
    /// Nothing scheduled, nothing finished.
    pub fn new(regions: PipelinedRegions) -> Self {
        Self {
            regions,
            scheduled: BTreeSet::new(),
            finished: BTreeSet::new(),
            release: RegionPartitionReleaseStrategy::new(),
        }
    }

    /// The regions it schedules.
    pub fn regions(&self) -> &PipelinedRegions {
        &self.regions
    }

    /// The regions were computed again (the adaptive batch scheduler decided a
    /// vertex's parallelism, adding its subtasks): a new region counts as handed out
    /// when its subtasks belonged to a handed-out one; finished subtasks stay finished.
    pub fn replace_regions(&mut self, regions: PipelinedRegions) {
        let scheduled_subtasks: BTreeSet<SubtaskRef> = self
            .scheduled
            .iter()
            .flat_map(|r| self.regions.region(*r).collect::<Vec<_>>())
            .collect();
        self.scheduled = (0..regions.len())
            .filter(|r| regions.region(*r).any(|s| scheduled_subtasks.contains(&s)))
            .collect();
        self.regions = regions;
    }

    /// `subtask` finished: its results are complete.
    pub fn on_finished(&mut self, subtask: SubtaskRef) {
        self.finished.insert(subtask);
    }

    /// After `subtask` finished: the blocking partitions no region will read again
    /// (every consumer region of each finished), marked released. Empty unless its
    /// region finished with it.
    pub fn partitions_to_release(&mut self, subtask: SubtaskRef) -> Vec<ResultPartitionRef> {
        match self.regions.region_index(subtask) {
            Some(region) => self.release.on_region_finished(&self.regions, region, &self.finished),
            None => Vec::new(),
        }
    }

    /// True once `partition` was released (and its producer did not run again since).
    pub fn is_released(&self, partition: ResultPartitionRef) -> bool {
        self.release.is_released(partition)
    }

    /// `regions` are about to restart (a failover, before its delay): their subtasks no
    /// longer count as finished, so neither their consumers are handed out nor their
    /// inputs released meanwhile; they stay handed out until [`reset`](Self::reset).
    pub fn on_failover(&mut self, regions: &BTreeSet<usize>) {
        for r in regions {
            let subtasks: Vec<SubtaskRef> = self.regions.region(*r).collect();
            for s in subtasks {
                self.finished.remove(&s);
            }
        }
    }

    /// True once `subtask` finished (and was not reset since).
    pub fn is_finished(&self, subtask: SubtaskRef) -> bool {
        self.finished.contains(&subtask)
    }

    /// The regions to deploy now, marked scheduled: not yet scheduled, with every
    /// blocking input finished. In region order.
    pub fn schedulable(&mut self) -> Vec<usize> {
        let ready: Vec<usize> = (0..self.regions.len())
            .filter(|r| !self.scheduled.contains(r))
            .filter(|r| self.regions.blocking_inputs(*r).all(|s| self.finished.contains(&s)))
            .collect();
        self.scheduled.extend(ready.iter().copied());
        ready
    }

    /// `regions` restart: their subtasks are no longer finished nor scheduled, and the
    /// partitions they produce will be written anew.
    pub fn reset(&mut self, regions: &BTreeSet<usize>) {
        self.release.on_regions_reset(&self.regions, regions);
        for r in regions {
            self.scheduled.remove(r);
            let subtasks: Vec<SubtaskRef> = self.regions.region(*r).collect();
            for s in subtasks {
                self.finished.remove(&s);
            }
        }
    }

    /// Everything restarts (a global failover).
    pub fn reset_all(&mut self) {
        self.scheduled.clear();
        self.finished.clear();
        self.release.reset_all();
    }

    /// The regions a failover of `failed` must restart (Flink's
    /// `RestartPipelinedRegionFailoverStrategy`): the regions holding them; transitively,
    /// the producer regions of an involved region whose results are `lost` (their
    /// TaskManager died, or a consumer found them missing) or were released, since it
    /// must read them again; and every consumer region of an involved region, since the
    /// results it read (or is reading) are written anew.
    pub fn regions_to_restart(&self, failed: &[SubtaskRef], lost: &BTreeSet<SubtaskRef>) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        let mut todo: Vec<usize> = failed.iter().filter_map(|s| self.regions.region_index(*s)).collect();
        while let Some(r) = todo.pop() {
            if !out.insert(r) {
                continue;
            }
            let released = self.release.released_inputs(&self.regions, r);
            for input in self.regions.blocking_inputs(r) {
                if lost.contains(&input) || released.contains(&input) {
                    todo.extend(self.regions.region_index(input));
                }
            }
            todo.extend(self.regions.consumer_regions_of(r));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipelined_region::tests::job_in;
    use crate::stream_graph::Partitioner;
    use weir_core::RuntimeExecutionMode::{Batch, Streaming};

    #[test]
    fn a_streaming_job_schedules_every_region_at_once() {
        let jg = job_in(Streaming, &[2, 2], &[Partitioner::Forward]);
        let mut s = RegionSchedulingStrategy::new(PipelinedRegions::compute(&jg));
        assert_eq!(s.schedulable(), vec![0, 1]);
        assert!(s.schedulable().is_empty());
    }

    #[test]
    fn a_batch_job_runs_stage_by_stage_as_producers_finish() {
        // source (2) --hash--> aggregate (2) --rescale--> sink (1)
        let jg = job_in(Batch, &[2, 2, 1], &[Partitioner::Hash, Partitioner::Rescale]);
        let mut s = RegionSchedulingStrategy::new(PipelinedRegions::compute(&jg));
        let region = |s: &RegionSchedulingStrategy, t| s.regions().region_index(t).unwrap();
        let first = s.schedulable();
        assert_eq!(first, vec![region(&s, (0, 0)), region(&s, (0, 1))]);
        s.on_finished((0, 0));
        assert!(s.schedulable().is_empty(), "one producer is still running");
        s.on_finished((0, 1));
        assert_eq!(s.schedulable(), vec![region(&s, (1, 0)), region(&s, (1, 1))]);
        s.on_finished((1, 0));
        s.on_finished((1, 1));
        assert_eq!(s.schedulable(), vec![region(&s, (2, 0))]);
        assert!(s.schedulable().is_empty());
    }

    #[test]
    fn a_failed_consumer_restarts_alone_unless_its_inputs_are_lost() {
        let jg = job_in(Batch, &[2, 1], &[Partitioner::Hash]);
        let mut s = RegionSchedulingStrategy::new(PipelinedRegions::compute(&jg));
        let _ = s.schedulable();
        s.on_finished((0, 0));
        s.on_finished((0, 1));
        let consumer = s.regions().region_index((1, 0)).unwrap();
        assert_eq!(s.schedulable(), vec![consumer]);

        let only = s.regions_to_restart(&[(1, 0)], &BTreeSet::new());
        assert_eq!(only, BTreeSet::from([consumer]));
        s.reset(&only);
        assert_eq!(s.schedulable(), vec![consumer], "its inputs are still finished");

        let lost = BTreeSet::from([(0, 1)]);
        let wider = s.regions_to_restart(&[(1, 0)], &lost);
        let producer = s.regions().region_index((0, 1)).unwrap();
        assert_eq!(wider, BTreeSet::from([consumer, producer]));
        s.reset(&wider);
        assert_eq!(s.schedulable(), vec![producer]);
        s.on_finished((0, 1));
        assert_eq!(s.schedulable(), vec![consumer]);
    }

    #[test]
    fn a_rerun_producer_reruns_every_consumer_region_downstream_finished_or_not() {
        // source (2) --hash--> aggregate (2) --hash--> sink (1)
        let jg = job_in(Batch, &[2, 2, 1], &[Partitioner::Hash, Partitioner::Hash]);
        let mut s = RegionSchedulingStrategy::new(PipelinedRegions::compute(&jg));
        let region = |s: &RegionSchedulingStrategy, t| s.regions().region_index(t).unwrap();
        let _ = s.schedulable();
        s.on_finished((0, 0));
        s.on_finished((0, 1));
        assert_eq!(s.schedulable().len(), 2);
        s.on_finished((1, 0));

        // Aggregate 1 fails while reading source 1's result, which was lost: source 1
        // reruns, so both aggregates (one finished) and the sink (not yet deployed) do.
        let lost = BTreeSet::from([(0, 1)]);
        let restart = s.regions_to_restart(&[(1, 1)], &lost);
        let expected: BTreeSet<usize> = [(0, 1), (1, 0), (1, 1), (2, 0)]
            .into_iter()
            .map(|t| region(&s, t))
            .collect();
        assert_eq!(restart, expected);
        assert!(!restart.contains(&region(&s, (0, 0))), "source 0's result is intact");

        // Without a lost input only the failed aggregate and what reads it restart.
        let alone = s.regions_to_restart(&[(1, 1)], &BTreeSet::new());
        assert_eq!(alone, BTreeSet::from([region(&s, (1, 1)), region(&s, (2, 0))]));

        s.reset(&restart);
        assert_eq!(s.schedulable(), vec![region(&s, (0, 1))]);
        s.on_finished((0, 1));
        assert_eq!(s.schedulable(), vec![region(&s, (1, 0)), region(&s, (1, 1))]);
    }
}
