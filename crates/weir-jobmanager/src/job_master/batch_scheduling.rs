//! Stage-by-stage scheduling of jobs with BLOCKING edges (Flink's
//! `PipelinedRegionSchedulingStrategy` under the default scheduler): a pipelined region
//! is deployed once every producer of its blocking inputs finished, takes slots for
//! itself only, and gives them back when all its subtasks ended, so a batch job needs
//! only the slots of the regions running at one time. Streaming jobs (no blocking
//! edge) keep the all-at-once path of `JobMaster::try_schedule`.
//!
//! A failover restarts only the failed subtasks' regions, plus the finished producer
//! regions whose results were lost with their TaskManager
//! ([`RegionSchedulingStrategy::regions_to_restart`]); restarted consumers read the
//! producers' blocking partitions again, which stay registered on the TaskManagers
//! until the job ends.
//!
//! Invariants: a region holds slots exactly while it is deployed and has a live
//! subtask; regions waiting for slots are served oldest first; the slot request timeout
//! runs only while the job holds no slot at all (a job holding slots frees them as its
//! stages finish, so its waiting regions are fulfillable, as in Flink's bulk checker).

use super::{Action, Failure, JobMaster};
use crate::slot_table::{SlotRef, SlotTable};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use weir_graph::{
    ExecutionState, JobGraph, PipelinedRegions, RegionSchedulingStrategy, ResultPartitionType, SubtaskRef,
};
use weir_rest::JobStatus;

/// The scheduling state of a job with blocking edges.
#[derive(Debug, Clone)]
pub(super) struct BatchScheduling {
    strategy: RegionSchedulingStrategy,
    /// Regions handed out by the strategy that wait for slots, oldest first.
    waiting: VecDeque<usize>,
    /// The slots each deployed region holds.
    held: BTreeMap<usize, Vec<SlotRef>>,
    /// Where each subtask's latest attempt ran; kept after it finished, since its
    /// blocking results live there.
    locations: HashMap<SubtaskRef, SlotRef>,
    /// Finished subtasks whose results were lost with their TaskManager.
    lost: BTreeSet<SubtaskRef>,
    /// Since when regions wait while the job holds no slot.
    waiting_since: Option<i64>,
}

impl BatchScheduling {
    /// Stage-by-stage scheduling for `job_graph` when it has a blocking edge; `None`
    /// for a streaming job.
    pub(super) fn for_job(job_graph: &JobGraph) -> Option<Self> {
        job_graph
            .edges
            .iter()
            .any(|e| e.partition_type == ResultPartitionType::Blocking)
            .then(|| Self {
                strategy: RegionSchedulingStrategy::new(PipelinedRegions::compute(job_graph)),
                waiting: VecDeque::new(),
                held: BTreeMap::new(),
                locations: HashMap::new(),
                lost: BTreeSet::new(),
                waiting_since: None,
            })
    }

    /// Everything starts over (a global failover or restart).
    pub(super) fn reset_all(&mut self) {
        self.strategy.reset_all();
        self.waiting.clear();
        self.held.clear();
        self.locations.clear();
        self.lost.clear();
        self.waiting_since = None;
    }

    /// The regions were computed again (`old` → `new`, the adaptive batch scheduler
    /// decided a vertex): region numbers of waiting and deployed regions follow their
    /// subtasks.
    pub(super) fn replace_regions(&mut self, old: &PipelinedRegions, new: &PipelinedRegions) {
        let renumber = |r: usize| old.region(r).next().and_then(|s| new.region_index(s));
        self.waiting = self.waiting.iter().filter_map(|r| renumber(*r)).collect();
        self.held = std::mem::take(&mut self.held)
            .into_iter()
            .filter_map(|(r, slots)| Some((renumber(r)?, slots)))
            .collect();
        self.strategy.replace_regions(new.clone());
    }

    /// The regions a failover of `failed` restarts, as subtasks.
    pub(super) fn scope_of(&self, failed: &[SubtaskRef]) -> (BTreeSet<usize>, BTreeSet<SubtaskRef>) {
        let regions = self.strategy.regions_to_restart(failed, &self.lost);
        let subtasks = regions
            .iter()
            .flat_map(|r| self.strategy.regions().region(*r))
            .collect();
        (regions, subtasks)
    }
}

/// Slots a region needs under slot sharing, and which subtask goes to which of them:
/// per slot sharing group, the k-th subtask (in index order) of every vertex of the
/// region shares the group's k-th slot.
fn region_slots(job_graph: &JobGraph, subtasks: impl Iterator<Item = SubtaskRef>) -> Vec<Vec<SubtaskRef>> {
    let mut by_group: BTreeMap<&str, BTreeMap<usize, Vec<SubtaskRef>>> = BTreeMap::new();
    for (v, i) in subtasks {
        let group = job_graph.vertices[v].slot_sharing_group.as_str();
        by_group.entry(group).or_default().entry(v).or_default().push((v, i));
    }
    let mut out = Vec::new();
    for vertices in by_group.into_values() {
        let n = vertices.values().map(Vec::len).max().unwrap_or(0);
        for k in 0..n {
            out.push(vertices.values().filter_map(|s| s.get(k).copied()).collect());
        }
    }
    out
}

impl JobMaster {
    /// True for a job scheduled stage by stage.
    pub fn is_scheduled_stage_by_stage(&self) -> bool {
        self.batch.is_some()
    }

    /// Deploys the regions whose blocking inputs all finished, as far as free slots
    /// allow; fails the job when it waited for slots longer than the slot request
    /// timeout while holding none.
    pub(super) fn schedule_batch(&mut self, slots: &mut SlotTable, now_ms: i64) -> Vec<Action> {
        if self.status != JobStatus::Running {
            return Vec::new();
        }
        let Some(batch) = self.batch.as_mut() else {
            return Vec::new();
        };
        let ready = batch.strategy.schedulable();
        batch.waiting.extend(ready);
        let mut actions = Vec::new();
        while let Some(&region) = self.batch.as_ref().and_then(|b| b.waiting.front()) {
            let groups = region_slots(&self.job_graph, self.regions.region(region));
            let Some(allocated) = slots.allocate(self.job_id, groups.len() as u32) else {
                break;
            };
            let mut placement = HashMap::new();
            for (group, slot) in groups.iter().zip(&allocated) {
                for s in group {
                    placement.insert(*s, slot.clone());
                }
            }
            let Some(batch) = self.batch.as_mut() else {
                break;
            };
            batch.waiting.pop_front();
            batch.waiting_since = None;
            batch.held.insert(region, allocated);
            batch
                .locations
                .extend(placement.iter().map(|(s, slot)| (*s, slot.clone())));
            let locations = batch.locations.clone();
            let mut subtasks: Vec<SubtaskRef> = placement.keys().copied().collect();
            subtasks.sort_unstable();
            for (v, i) in subtasks {
                actions.extend(self.deploy(v, i, placement[&(v, i)].clone(), &locations, slots, now_ms));
            }
        }
        let Some(batch) = self.batch.as_mut() else {
            return actions;
        };
        if batch.waiting.is_empty() || !batch.held.is_empty() {
            batch.waiting_since = None;
            return actions;
        }
        let since = *batch.waiting_since.get_or_insert(now_ms);
        if now_ms - since < self.slot_request_timeout_ms {
            return actions;
        }
        let failure = Failure {
            name: "weir.runtime.NoResourceAvailableException".into(),
            message: format!(
                "Slot request bulk is not fulfillable! Could not allocate the required slot within slot request timeout: a stage of the job needs slots, {} of {} are available\nCaused by: java.util.concurrent.TimeoutException: Timeout has occurred: {} ms",
                slots.free_slots(),
                slots.total_slots(),
                self.slot_request_timeout_ms
            ),
            task_name: None,
            location: None,
        };
        actions.extend(self.handle_failure(failure, slots, now_ms));
        actions
    }

    /// A subtask of a stage-by-stage job reached a terminal state: a finished one
    /// completes its results; a region whose subtasks all ended gives its slots back.
    pub(super) fn batch_subtask_ended(&mut self, subtask: SubtaskRef, state: ExecutionState, slots: &mut SlotTable) {
        let Some(region) = self.regions.region_index(subtask) else {
            return;
        };
        let region_done = self.regions.region(region).all(|(v, i)| {
            self.execution_graph
                .execution_vertex(v, i)
                .is_some_and(|ev| ev.current.state.is_terminal())
        });
        let Some(batch) = self.batch.as_mut() else {
            return;
        };
        if state == ExecutionState::Finished {
            batch.strategy.on_finished(subtask);
        }
        if region_done {
            for slot in batch.held.remove(&region).unwrap_or_default() {
                slots.release_slot(self.job_id, &slot);
            }
        }
    }

    /// A batch region failover: the regions of `failed` (and of lost producers) give
    /// back their slots and will be handed out again by the strategy.
    pub(super) fn batch_failover_scope(
        &mut self,
        failed: &[SubtaskRef],
        slots: &mut SlotTable,
    ) -> BTreeSet<SubtaskRef> {
        let Some(batch) = self.batch.as_mut() else {
            return BTreeSet::new();
        };
        let (regions, subtasks) = batch.scope_of(failed);
        for r in &regions {
            for slot in batch.held.remove(r).unwrap_or_default() {
                slots.release_slot(self.job_id, &slot);
            }
        }
        batch.waiting.retain(|r| !regions.contains(r));
        subtasks
    }

    /// Makes the subtasks of `scope` schedulable again (their regions were reset).
    pub(super) fn batch_reset(&mut self, scope: &BTreeSet<SubtaskRef>) {
        let Some(batch) = self.batch.as_mut() else {
            return;
        };
        let regions: BTreeSet<usize> = scope.iter().filter_map(|s| self.regions.region_index(*s)).collect();
        batch.strategy.reset(&regions);
        for s in scope {
            batch.lost.remove(s);
        }
    }

    /// A TaskManager was lost: the finished subtasks whose results lived there and are
    /// still needed (the job is not finished) lost them.
    pub(super) fn batch_results_lost(&mut self, resource_id: &str) -> Vec<SubtaskRef> {
        let finished: Vec<SubtaskRef> = match self.batch.as_ref() {
            Some(batch) => batch
                .locations
                .iter()
                .filter(|(s, slot)| slot.resource_id == resource_id && batch.strategy.is_finished(**s))
                .map(|(s, _)| *s)
                .collect(),
            None => return Vec::new(),
        };
        if let Some(batch) = self.batch.as_mut() {
            batch.lost.extend(finished.iter().copied());
        }
        let mut lost = finished;
        lost.sort_unstable();
        lost
    }
}

#[cfg(test)]
#[path = "batch_scheduling_tests.rs"]
mod tests;
