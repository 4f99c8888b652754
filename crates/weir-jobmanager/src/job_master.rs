//! The JobMaster of one job, as a state machine.
//!
//! It owns the job's ExecutionGraph and decides: when slots are available it assigns
//! every subtask a slot and emits deployments; it follows task state reports; on a
//! failure it cancels the running attempts, frees the slots and asks the restart
//! strategy whether and when to restart (from scratch: a new generation of attempts
//! and result partitions) or to fail the job. Inputs are method calls with the current
//! time; outputs are [`Action`]s that the JobManager's I/O shell carries out. The slot
//! table is passed in so that allocation is part of the same decision.

pub mod adaptive_batch;
mod attempt_metrics;
mod batch_scheduling;
mod checkpointing;
mod global_failover;
mod operator_metrics;
mod rates;
mod region_failover;
mod savepoints;
#[cfg(test)]
mod test_support;

pub use attempt_metrics::{AttemptMetrics, MetricsReport, VertexMetricsTotals};
pub use checkpointing::{vertex_infos, SUBSUMED_BY_NEWER, TRIGGER_NOT_DELIVERED};
pub use operator_metrics::{OperatorMetrics, OperatorRates};
pub use rates::AttemptRates;
pub use savepoints::{SavepointOperation, SavepointRefused, SavepointRequest, SavepointStatus, NO_SAVEPOINT_DIRECTORY};

use crate::failover::restart_strategy::RestartBackoffTimeStrategy;
use crate::resource_manager::slot_table::{SlotRef, SlotTable};
use crate::scheduler::slot_assignment::assign_slots;
use std::collections::{BTreeMap, HashMap, HashSet};
use weir_api::program::ProgramInvocation;
use weir_core::ids::{ExecutionAttemptId, JobId};
use weir_core::JobStatus;
use weir_graph::adaptive_graph::{edge_consumed_subpartitions, edge_num_subpartitions};
use weir_graph::{total_slots_required, ExecutionGraph, ExecutionState, JobGraph};
use weir_rpc::{InputChannelDescriptor, ResultPartitionDescriptor, ResultPartitionId, TaskDeploymentDescriptor};

/// What the I/O shell must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send a task to a TaskManager.
    Deploy {
        /// TaskManager RPC address.
        rpc_address: String,
        /// The task.
        tdd: Box<TaskDeploymentDescriptor>,
    },
    /// Cancel an attempt on a TaskManager.
    Cancel {
        /// TaskManager RPC address.
        rpc_address: String,
        /// The attempt.
        attempt_id: String,
        /// The job's fencing token ([`JobMaster::job_master_id`]).
        job_master_id: String,
    },
    /// Ask a source task to take a checkpoint.
    TriggerCheckpoint {
        /// TaskManager RPC address.
        rpc_address: String,
        /// The job.
        job_id: String,
        /// The source attempt.
        attempt_id: String,
        /// The checkpoint's barrier.
        barrier: weir_core::CheckpointBarrier,
        /// A stop-with-savepoint that drains (emits the MAX watermark) before ending.
        drain: bool,
    },
    /// Tell the attempts on one TaskManager that a checkpoint completed or was aborted.
    NotifyCheckpoint {
        /// TaskManager RPC address.
        rpc_address: String,
        /// The job.
        job_id: String,
        /// The attempts there.
        attempt_ids: Vec<String>,
        /// The checkpoint.
        checkpoint_id: u64,
        /// Completed (true) or aborted.
        completed: bool,
    },
    /// Write a checkpoint's `_metadata` (into `target`, or nowhere for JobManager
    /// storage) and report back with `checkpoint_metadata_written`.
    WriteCheckpointMetadata {
        /// The job.
        job_id: JobId,
        /// The checkpoint.
        checkpoint_id: u64,
        /// What to write.
        metadata: Box<weir_checkpoint::CheckpointMetadata>,
        /// The checkpoint directory.
        target: Option<String>,
        /// A savepoint: state files move into `target`, which becomes self-contained.
        savepoint: bool,
    },
    /// Delete a checkpoint directory.
    DiscardCheckpoint {
        /// The directory.
        location: String,
    },
    /// Tell one TaskManager to release blocking partitions of this job that every
    /// consumer finished reading (Flink's `releasePartitions`).
    ReleasePartitions {
        /// TaskManager RPC address.
        rpc_address: String,
        /// The job.
        job_id: String,
        /// The partitions, all held by that TaskManager.
        partitions: Vec<ResultPartitionId>,
    },
    /// Tell TaskManagers to drop everything of this job (its slots are already free).
    ReleaseJob {
        /// The job.
        job_id: String,
        /// Release only generations below this one.
        below_generation: u32,
        /// RPC addresses of the TaskManagers that held slots.
        rpc_addresses: Vec<String>,
        /// The job restarts: TaskManagers keep its local state copies (local recovery).
        keep_local_state: bool,
    },
}

/// One entry of the exception history (Flink's `exceptionHistory.entries`).
#[derive(Debug, Clone, PartialEq)]
pub struct ExceptionEntry {
    /// Exception class-like name.
    pub exception_name: String,
    /// The message chain, root cause last.
    pub stacktrace: String,
    /// When it happened, ms since the epoch.
    pub timestamp: i64,
    /// `name (i/n)` of the failing subtask; none for global failures.
    pub task_name: Option<String>,
    /// host:port of the TaskManager the task ran on.
    pub endpoint: Option<String>,
    /// Resource id of that TaskManager.
    pub taskmanager_id: Option<String>,
}

/// A failure reported to the JobMaster.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Exception class-like name.
    pub name: String,
    /// The message chain.
    pub message: String,
    /// The failing subtask, if any.
    pub task_name: Option<String>,
    /// Its TaskManager (data address, resource id).
    pub location: Option<(String, String)>,
}

/// Where a deployed attempt runs.
#[derive(Debug, Clone)]
struct Deployed {
    vertex: usize,
    subtask: u32,
    slot: SlotRef,
}

/// The JobMaster of one job.
pub struct JobMaster {
    /// The job.
    pub job_id: JobId,
    /// Program and settings.
    pub invocation: ProgramInvocation,
    /// StreamGraph fingerprint, checked by TaskManagers.
    pub fingerprint: String,
    /// This JobMaster's fencing token (Flink's `JobMasterId`): random, sent with every
    /// deployment and job-scoped request; TaskManagers refuse requests without it.
    pub job_master_id: String,
    /// The compiled graph.
    pub job_graph: JobGraph,
    /// Subtasks and attempts.
    pub execution_graph: ExecutionGraph,
    /// Job status.
    pub status: JobStatus,
    /// When each status was entered.
    pub timestamps: BTreeMap<JobStatus, i64>,
    /// Failures, oldest first.
    pub exceptions: Vec<ExceptionEntry>,
    /// Submission time.
    pub start_ms: i64,
    /// Time the job reached a globally terminal status.
    pub end_ms: Option<i64>,
    restart: RestartBackoffTimeStrategy,
    slots: Option<Vec<SlotRef>>,
    slots_needed: u32,
    slot_request_since: Option<i64>,
    slot_request_timeout_ms: i64,
    generation: u32,
    attempts: HashMap<String, Deployed>,
    metrics: HashMap<String, AttemptMetrics>,
    /// The attempts whose final counters (sent with FINISHED) are in `metrics`.
    final_metrics: HashSet<String>,
    /// Per attempt: the sample before the last one, for rates.
    previous_metrics: HashMap<String, attempt_metrics::PreviousSample>,
    restart_at: Option<i64>,
    checkpoints: Option<weir_checkpoint::CheckpointCoordinator>,
    checkpoint_settings: Option<weir_rpc::CheckpointingSettings>,
    checkpoint_scheduler_started: bool,
    restore_vertices: Vec<weir_checkpoint::RestoreVertex>,
    restore_plan: Option<weir_checkpoint::RestoreAssignment>,
    savepoints: BTreeMap<String, SavepointOperation>,
    allow_non_restored_state: bool,
    failover_strategy: weir_config::FailoverStrategy,
    regions: weir_graph::PipelinedRegions,
    region_restart: Option<region_failover::RegionRestart>,
    /// The partition generation of subtasks restarted by a region failover since the
    /// last global (re)start; the others use `generation`'s value at that start.
    vertex_generation: HashMap<(usize, u32), u32>,
    /// The generation of the last global (re)start.
    base_generation: u32,
    /// Stage-by-stage scheduling, for a job with blocking edges.
    batch: Option<batch_scheduling::BatchScheduling>,
    /// The adaptive batch scheduler, for a BATCH job with auto-parallelism.
    adaptive: Option<adaptive_batch::AdaptiveBatch>,
}

impl JobMaster {
    /// A job in CREATED, about to request slots.
    pub fn new(
        job_id: JobId,
        invocation: ProgramInvocation,
        fingerprint: String,
        job_graph: JobGraph,
        restart: RestartBackoffTimeStrategy,
        slot_request_timeout_ms: i64,
        now_ms: i64,
    ) -> Self {
        let execution_graph = ExecutionGraph::new_at(job_id, &job_graph, now_ms);
        let slots_needed = total_slots_required(&job_graph);
        // Blocking edges separate regions (scheduled and failed over one by one) in a
        // job scheduled stage by stage.
        let batch = batch_scheduling::BatchScheduling::for_job(&job_graph);
        let regions = weir_graph::PipelinedRegions::compute(&job_graph);
        let mut timestamps = BTreeMap::new();
        timestamps.insert(JobStatus::Initializing, now_ms);
        timestamps.insert(JobStatus::Created, now_ms);
        Self {
            job_id,
            invocation,
            fingerprint,
            job_master_id: crate::secret_id::fresh_secret_id(),
            job_graph,
            execution_graph,
            status: JobStatus::Created,
            timestamps,
            exceptions: Vec::new(),
            start_ms: now_ms,
            end_ms: None,
            restart,
            slots: None,
            slots_needed,
            slot_request_since: None,
            slot_request_timeout_ms,
            generation: 0,
            attempts: HashMap::new(),
            metrics: HashMap::new(),
            final_metrics: HashSet::new(),
            previous_metrics: HashMap::new(),
            restart_at: None,
            checkpoints: None,
            checkpoint_settings: None,
            checkpoint_scheduler_started: false,
            restore_vertices: Vec::new(),
            restore_plan: None,
            savepoints: BTreeMap::new(),
            allow_non_restored_state: false,
            failover_strategy: weir_config::FailoverStrategy::Full,
            regions,
            region_restart: None,
            vertex_generation: HashMap::new(),
            base_generation: 0,
            batch,
            adaptive: None,
        }
    }

    /// Slots the job needs (sum over slot sharing groups of their max parallelism).
    pub fn slots_needed(&self) -> u32 {
        self.slots_needed
    }

    /// True once the job reached FINISHED, FAILED or CANCELED.
    pub fn is_globally_terminal(&self) -> bool {
        self.status.is_globally_terminal()
    }

    fn set_status(&mut self, status: JobStatus, now_ms: i64) {
        self.status = status;
        self.timestamps.insert(status, now_ms);
        if status.is_globally_terminal() {
            self.end_ms = Some(now_ms);
            self.fail_open_savepoints(&format!(
                "The job reached status {status} before the savepoint completed."
            ));
        }
    }

    /// Starts scheduling: the job turns RUNNING and its subtasks wait for slots.
    pub fn start(&mut self, slots: &mut SlotTable, now_ms: i64) -> Vec<Action> {
        if let Err(failure) = self.plan_restore(now_ms, false) {
            return self.handle_failure(failure, slots, now_ms);
        }
        self.set_status(JobStatus::Running, now_ms);
        self.slot_request_since = Some(now_ms);
        self.try_schedule(slots, now_ms)
    }

    /// When the pending restart is due, if one is.
    pub fn restart_due_at(&self) -> Option<i64> {
        self.restart_at
            .filter(|_| self.status == JobStatus::Restarting)
            .or(self.region_restart_due_at())
    }

    /// Periodic work: slot request timeout, due restarts, pending slot requests.
    pub fn tick(&mut self, slots: &mut SlotTable, now_ms: i64) -> Vec<Action> {
        if let Some(at) = self.restart_at {
            if now_ms >= at && self.status == JobStatus::Restarting {
                return self.restart_now(slots, now_ms);
            }
        }
        if self.region_restart_due_at().is_some_and(|at| now_ms >= at) {
            return self.restart_regions(slots, now_ms);
        }
        if self.batch.is_some() {
            let mut actions = self.schedule_batch(slots, now_ms);
            actions.extend(self.checkpoint_tick(slots, now_ms));
            return actions;
        }
        if self.status == JobStatus::Running && self.slots.is_none() {
            return self.try_schedule(slots, now_ms);
        }
        self.checkpoint_tick(slots, now_ms)
    }

    fn try_schedule(&mut self, slots: &mut SlotTable, now_ms: i64) -> Vec<Action> {
        if self.batch.is_some() {
            return self.schedule_batch(slots, now_ms);
        }
        if self.slots.is_some() || self.status != JobStatus::Running {
            return Vec::new();
        }
        let Some(allocated) = slots.allocate(self.job_id, self.slots_needed) else {
            let since = *self.slot_request_since.get_or_insert(now_ms);
            if now_ms - since >= self.slot_request_timeout_ms {
                let available = slots.free_slots();
                let failure = Failure {
                    name: "weir.runtime.NoResourceAvailableException".into(),
                    message: format!(
                        "Slot request bulk is not fulfillable! Could not allocate the required slot within slot request timeout: the job needs {} slots, {} of {} are available\nCaused by: java.util.concurrent.TimeoutException: Timeout has occurred: {} ms",
                        self.slots_needed,
                        available,
                        slots.total_slots(),
                        self.slot_request_timeout_ms
                    ),
                    task_name: None,
                    location: None,
                };
                self.slot_request_since = None;
                return self.handle_failure(failure, slots, now_ms);
            }
            return Vec::new();
        };
        self.slot_request_since = None;
        let Some(assignment) = assign_slots(&self.job_graph, &allocated) else {
            slots.release_job(self.job_id);
            return Vec::new();
        };
        self.slots = Some(allocated);
        let mut actions = Vec::new();
        for vi in 0..self.job_graph.vertices.len() {
            let parallelism = self.job_graph.vertices[vi].parallelism;
            for i in 0..parallelism {
                let Some(slot) = assignment.get(&(vi, i)).cloned() else {
                    continue;
                };
                if let Some(action) = self.deploy(vi, i, slot, &assignment, slots, now_ms) {
                    actions.push(action);
                }
            }
        }
        actions
    }

    fn deploy(
        &mut self,
        vi: usize,
        i: u32,
        slot: SlotRef,
        assignment: &HashMap<(usize, u32), SlotRef>,
        slots: &SlotTable,
        now_ms: i64,
    ) -> Option<Action> {
        let tm = slots.get(&slot.resource_id)?;
        let job_id = self.job_id;
        let ev = self.execution_graph.execution_vertex_mut(vi, i)?;
        let deploying = ev
            .current
            .transition(ExecutionState::Scheduled, now_ms)
            .and_then(|()| ev.current.transition(ExecutionState::Deploying, now_ms));
        if let Err(e) = deploying {
            tracing::error!(job = %job_id, vertex = vi, subtask = i, error = %e, "not deploying an attempt that is not new");
            return None;
        }
        let attempt_id = ev.current.attempt_id.to_string();
        let attempt_number = ev.current.attempt_number;
        let job = self.job_id.to_string();
        let partition_type = |edge: &weir_graph::JobEdge| match edge.partition_type {
            weir_graph::ResultPartitionType::Blocking => weir_rpc::ResultPartitionType::Blocking,
            weir_graph::ResultPartitionType::Pipelined => weir_rpc::ResultPartitionType::Pipelined,
        };
        let partition = |edge: usize, producer_vertex: usize, producer: u32| ResultPartitionId {
            job_id: job.clone(),
            job_edge: edge as u32,
            producer_subtask: producer,
            attempt: self.generation_of(producer_vertex, producer),
        };
        let mut outputs = Vec::new();
        let mut inputs = Vec::new();
        for (ei, e) in self.job_graph.edges.iter().enumerate() {
            if e.source_vertex == vi {
                outputs.push(ResultPartitionDescriptor {
                    partition: Some(partition(ei, vi, i)),
                    num_subpartitions: edge_num_subpartitions(e, self.edge_ends(e), i),
                    partition_type: partition_type(e) as i32,
                });
            }
            if e.target_vertex == vi {
                for (producer, sub) in edge_consumed_subpartitions(e, self.edge_ends(e), i) {
                    let producer_slot = assignment.get(&(e.source_vertex, producer))?;
                    let producer_tm = slots.get(&producer_slot.resource_id)?;
                    inputs.push(InputChannelDescriptor {
                        partition: Some(partition(ei, e.source_vertex, producer)),
                        subpartition: sub,
                        producer_data_address: producer_tm.registration.data_address.clone(),
                        local: producer_slot.resource_id == slot.resource_id,
                        input_index: e.target_input,
                    });
                }
            }
        }
        let (checkpointing, restore) = self.restore_for(vi, i);
        let tdd = TaskDeploymentDescriptor {
            job_id: job.clone(),
            program: Some(crate::dispatcher::invocation::to_proto(&self.invocation)),
            fingerprint: self.fingerprint.clone(),
            vertex_index: vi as u32,
            subtask_index: i,
            attempt_number,
            attempt_id: attempt_id.clone(),
            slot_index: slot.slot_index,
            inputs,
            outputs,
            generation: self.generation_of(vi, i),
            checkpointing,
            restore,
            vertex_parallelism: self.vertex_parallelism_overrides(),
            job_master_id: self.job_master_id.clone(),
        };
        let rpc_address = tm.registration.rpc_address.clone();
        self.attempts.insert(
            attempt_id,
            Deployed {
                vertex: vi,
                subtask: i,
                slot,
            },
        );
        Some(Action::Deploy {
            rpc_address,
            tdd: Box::new(tdd),
        })
    }

    /// The partition generation subtask `subtask` of `vertex` runs with.
    fn generation_of(&self, vertex: usize, subtask: u32) -> u32 {
        self.vertex_generation
            .get(&(vertex, subtask))
            .copied()
            .unwrap_or(self.base_generation)
    }

    /// `name (i/n)` of a subtask.
    fn task_name(&self, vertex: usize, subtask: u32) -> String {
        let v = &self.job_graph.vertices[vertex];
        format!("{} ({}/{})", v.name, subtask + 1, v.parallelism)
    }

    /// A TaskManager reported a state change of an attempt.
    pub fn on_task_state(
        &mut self,
        attempt_id: &str,
        state: ExecutionState,
        failure: Option<(String, String)>,
        slots: &mut SlotTable,
        now_ms: i64,
    ) -> Vec<Action> {
        let Some(d) = self.attempts.get(attempt_id).cloned() else {
            return Vec::new();
        };
        let Some(ev) = self.execution_graph.execution_vertex_mut(d.vertex, d.subtask) else {
            return Vec::new();
        };
        if ev.current.attempt_id.to_string() != attempt_id || ev.current.state.is_terminal() {
            return Vec::new();
        }
        if state == ExecutionState::Failed {
            let (name, message) =
                failure.unwrap_or_else(|| ("weir.runtime.TaskException".into(), "task failed".into()));
            if ev.current.fail(message.clone(), now_ms).is_err() {
                // Unreachable: every live state may fail, and the attempt is live.
                return Vec::new();
            }
            let location = slots.get(&d.slot.resource_id).map(|tm| {
                (
                    tm.registration.data_address.clone(),
                    tm.registration.resource_id.clone(),
                )
            });
            let failure = Failure {
                name,
                message,
                task_name: Some(self.task_name(d.vertex, d.subtask)),
                location,
            };
            return self.handle_task_failure(failure, &[(d.vertex, d.subtask)], slots, now_ms);
        }
        let reported = if ev.current.state == ExecutionState::Deploying && state == ExecutionState::Running {
            ev.current
                .transition(ExecutionState::Initializing, now_ms)
                .and_then(|()| ev.current.transition(state, now_ms))
        } else {
            ev.current.transition(state, now_ms)
        };
        if let Err(e) = reported {
            // A repeated report changes nothing; any other the lifecycle refuses is ignored.
            if ev.current.state != state {
                tracing::warn!(job = %self.job_id, attempt = attempt_id, error = %e, "ignoring a task state report");
            }
            return Vec::new();
        }
        let mut actions = Vec::new();
        if self.batch.is_some() && state.is_terminal() {
            actions = self.batch_subtask_ended((d.vertex, d.subtask), state, slots);
        }
        if state == ExecutionState::Finished {
            self.decide_ready_vertices(now_ms);
        }
        if state == ExecutionState::Finished && self.all_finished() {
            self.set_status(JobStatus::Finished, now_ms);
            actions.extend(self.checkpoints_shutdown(weir_checkpoint::JobTermination::Finished, slots, now_ms));
            actions.extend(self.release(slots));
            return actions;
        }
        if state == ExecutionState::Finished {
            actions.extend(self.checkpoint_task_finished(d.vertex, d.subtask, slots, now_ms));
            actions.extend(self.schedule_batch(slots, now_ms));
        }
        actions
    }

    fn all_finished(&self) -> bool {
        !self.has_undecided_vertices()
            && self.execution_graph.job_vertices.iter().all(|v| {
                v.task_vertices
                    .iter()
                    .all(|t| t.current.state == ExecutionState::Finished)
            })
    }

    /// A TaskManager was lost (heartbeat timeout or connection loss).
    pub fn on_taskmanager_lost(
        &mut self,
        resource_id: &str,
        cause: &str,
        slots: &mut SlotTable,
        now_ms: i64,
    ) -> Vec<Action> {
        let mut hit: Vec<(usize, u32)> = self
            .attempts
            .iter()
            .filter(|(id, d)| {
                d.slot.resource_id == resource_id
                    && self
                        .execution_graph
                        .execution_vertex(d.vertex, d.subtask)
                        .is_some_and(|ev| ev.current.attempt_id.to_string() == **id && !ev.current.state.is_terminal())
            })
            .map(|(_, d)| (d.vertex, d.subtask))
            .collect();
        if self.status == JobStatus::Running {
            hit.extend(self.batch_results_lost(resource_id));
        }
        hit.sort_unstable();
        hit.dedup();
        let Some(&(vertex, subtask)) = hit.first() else {
            return Vec::new();
        };
        let failure = Failure {
            name: "weir.runtime.TaskManagerLostException".into(),
            message: format!("TaskManager {resource_id} is lost: {cause}"),
            task_name: Some(self.task_name(vertex, subtask)),
            location: None,
        };
        self.handle_task_failure(failure, &hit, slots, now_ms)
    }

    /// Cancels the job (`PATCH /jobs/:jid?mode=cancel`).
    pub fn cancel(&mut self, slots: &mut SlotTable, now_ms: i64) -> Vec<Action> {
        if self.is_globally_terminal() {
            return Vec::new();
        }
        self.set_status(JobStatus::Cancelling, now_ms);
        self.region_restart = None;
        let mut actions = self.checkpoints_abort_all("The job is cancelled.", slots, now_ms);
        actions.extend(self.stop_all(slots, now_ms));
        self.restart_at = None;
        self.set_status(JobStatus::Canceled, now_ms);
        actions.extend(self.checkpoints_shutdown(weir_checkpoint::JobTermination::Cancelled, slots, now_ms));
        actions
    }

    /// The restart strategy, as Flink prints it.
    pub fn restart_strategy_description(&self) -> String {
        self.restart.to_string()
    }

    /// The attempt id of a subtask's current execution.
    pub fn current_attempt(&self, vertex: usize, subtask: u32) -> Option<ExecutionAttemptId> {
        self.execution_graph
            .execution_vertex(vertex, subtask)
            .map(|ev| ev.current.attempt_id)
    }

    /// The TaskManager (resource id) each current attempt runs on.
    pub fn attempt_location(&self, attempt_id: &str) -> Option<&SlotRef> {
        self.attempts.get(attempt_id).map(|d| &d.slot)
    }
}

#[cfg(test)]
mod tests;
