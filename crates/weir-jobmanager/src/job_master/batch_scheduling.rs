//! Stage-by-stage scheduling of jobs with BLOCKING edges (Flink's
//! `PipelinedRegionSchedulingStrategy` under the default scheduler): a pipelined region
//! is deployed once every producer of its blocking inputs finished, takes slots for
//! itself only, and gives them back when all its subtasks ended, so a batch job needs
//! only the slots of the regions running at one time. Streaming jobs (no blocking
//! edge) keep the all-at-once path of `JobMaster::try_schedule`.
//!
//! A failover restarts only the failed subtasks' regions, plus the producer regions
//! whose results were lost with their TaskManager, found missing by a consumer (its
//! `PartitionNotFoundException`), or released
//! ([`RegionSchedulingStrategy::regions_to_restart`]); restarted consumers read the
//! producers' blocking partitions again.
//!
//! Blocking partitions are released during the job unless Flink's
//! `jobmanager.partition.release-during-job-execution` is false (then they go with the
//! job, as the TaskManagers release a job's partitions when it ends): once every region consuming a
//! partition finished, the TaskManager holding it is told to release it
//! ([`Action::ReleasePartitions`]), which frees its memory and deletes its spill file.
//! Regions about to restart do not count as finished meanwhile, so what they will
//! read again is kept.
//!
//! Invariants: a region holds slots exactly while it is deployed and has a live
//! subtask; regions waiting for slots are served oldest first; the slot request timeout
//! runs only while the job holds no slot at all (a job holding slots frees them as its
//! stages finish, so its waiting regions are fulfillable, as in Flink's bulk checker).

use super::{Action, Failure, JobMaster};
use crate::resource_manager::slot_table::{SlotRef, SlotTable};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use weir_core::JobStatus;
use weir_graph::{
    ExecutionState, JobGraph, PipelinedRegions, RegionSchedulingStrategy, ResultPartitionRef, ResultPartitionType,
    SubtaskRef,
};
use weir_rpc::ResultPartitionId;

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
    /// Producer subtasks whose results were lost with their TaskManager or found
    /// missing by a consumer.
    lost: BTreeSet<SubtaskRef>,
    /// Since when regions wait while the job holds no slot.
    waiting_since: Option<i64>,
    /// Whether partitions are released once their consumers finished
    /// (`jobmanager.partition.release-during-job-execution`); else with the job.
    release_during_execution: bool,
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
                release_during_execution: true,
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

    /// Whether a stage-by-stage job releases its blocking partitions once their
    /// consumers finished (the default) or keeps them until it ends
    /// (`jobmanager.partition.release-during-job-execution`).
    pub fn set_partition_release_during_job_execution(&mut self, release: bool) {
        if let Some(batch) = self.batch.as_mut() {
            batch.release_during_execution = release;
        }
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
    /// completes its results; a region whose subtasks all ended gives its slots back;
    /// a region that finished releases the partitions no region reads any more.
    pub(super) fn batch_subtask_ended(
        &mut self,
        subtask: SubtaskRef,
        state: ExecutionState,
        slots: &mut SlotTable,
    ) -> Vec<Action> {
        let Some(region) = self.regions.region_index(subtask) else {
            return Vec::new();
        };
        let region_done = self.regions.region(region).all(|(v, i)| {
            self.execution_graph
                .execution_vertex(v, i)
                .is_some_and(|ev| ev.current.state.is_terminal())
        });
        let Some(batch) = self.batch.as_mut() else {
            return Vec::new();
        };
        let mut releasable = Vec::new();
        if state == ExecutionState::Finished {
            batch.strategy.on_finished(subtask);
            if batch.release_during_execution {
                releasable = batch.strategy.partitions_to_release(subtask);
            }
        }
        if region_done {
            for slot in batch.held.remove(&region).unwrap_or_default() {
                slots.release_slot(self.job_id, &slot);
            }
        }
        self.release_partitions(&releasable, slots)
    }

    /// Tells the TaskManagers holding `partitions` (their producers' latest attempts)
    /// to release them, one action per TaskManager; those of lost TaskManagers are gone
    /// already.
    fn release_partitions(&self, partitions: &[ResultPartitionRef], slots: &SlotTable) -> Vec<Action> {
        let Some(batch) = self.batch.as_ref() else {
            return Vec::new();
        };
        let job_id = self.job_id.to_string();
        let mut by_taskmanager: BTreeMap<String, Vec<ResultPartitionId>> = BTreeMap::new();
        for p in partitions {
            let (vertex, subtask) = p.producer;
            let Some(tm) = batch.locations.get(&p.producer).and_then(|s| slots.get(&s.resource_id)) else {
                continue;
            };
            by_taskmanager
                .entry(tm.registration.rpc_address.clone())
                .or_default()
                .push(ResultPartitionId {
                    job_id: job_id.clone(),
                    job_edge: p.edge as u32,
                    producer_subtask: subtask,
                    attempt: self.generation_of(vertex, subtask),
                });
        }
        by_taskmanager
            .into_iter()
            .map(|(rpc_address, partitions)| Action::ReleasePartitions {
                rpc_address,
                job_id: job_id.clone(),
                partitions,
            })
            .collect()
    }

    /// Attempt `attempt_id` reports that it failed because a partition it consumes is
    /// missing (Flink's `PartitionNotFoundException`): unless that partition belongs to
    /// an older run of its producer, the producer's results count as lost, so the
    /// failover reruns it before the consumer.
    pub fn record_missing_partition(&mut self, attempt_id: &str, partition: &ResultPartitionId) {
        if !self.attempts.contains_key(attempt_id) || partition.job_id != self.job_id.to_string() {
            return;
        }
        let Some(edge) = self.job_graph.edges.get(partition.job_edge as usize) else {
            return;
        };
        let producer = (edge.source_vertex, partition.producer_subtask);
        if partition.attempt != self.generation_of(producer.0, producer.1) {
            return;
        }
        if let Some(batch) = self.batch.as_mut() {
            batch.lost.insert(producer);
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
        batch.strategy.on_failover(&regions);
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

#[cfg(test)]
#[path = "partition_release_tests.rs"]
mod partition_release_tests;
