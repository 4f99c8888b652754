//! The JobMaster's side of checkpointing: it owns the job's [`CheckpointCoordinator`]
//! and translates between it and the job's attempts. Coordinator decisions naming
//! subtasks become [`Action`]s naming attempts and TaskManagers; acknowledgements
//! naming attempts become coordinator events naming subtasks (stale attempts are
//! ignored). On a restart, every subtask is deployed with the state of the latest
//! completed checkpoint.

use super::{Action, Failure, JobMaster};
use crate::resource_manager::slot_table::SlotTable;
use std::collections::BTreeMap;
use weir_checkpoint::{
    assign_restore, CheckpointConfig, CheckpointCoordinator, CoordinatorAction, DeclineReason, RestoreVertex,
    SnapshotReport, SubtaskAcknowledgement, TaskKey, UpstreamRange, VertexInfo,
};
use weir_core::{CheckpointBarrier, CheckpointId};
use weir_graph::execution_graph::consumed_subpartitions;
use weir_graph::{DistributionPattern, ExecutionState, JobGraph};
use weir_rpc::{CheckpointingSettings, StateHandle, TaskRestoreDescriptor};

/// What a task says when a newer checkpoint's barrier overtook the one it aligned.
pub const SUBSUMED_BY_NEWER: &str = "subsumed by a newer one";
/// What the I/O shell says when a trigger RPC failed (the task is gone).
pub const TRIGGER_NOT_DELIVERED: &str = "the trigger did not reach the task";

/// The coordinator's view of the job's vertices.
pub fn vertex_infos(job_graph: &JobGraph, stream_graph: &weir_graph::StreamGraph) -> Vec<VertexInfo> {
    job_graph
        .vertices
        .iter()
        .enumerate()
        .map(|(index, v)| VertexInfo {
            vertex_id: v.id,
            name: v.name.clone(),
            parallelism: v.parallelism,
            max_parallelism: v.max_parallelism,
            operator_ids: v
                .operators
                .iter()
                .filter_map(|op| stream_graph.nodes.get(op.node_id as usize).map(|n| n.operator_id()))
                .collect(),
            is_source: v.is_source,
            upstream: (0..v.parallelism)
                .map(|s| upstream_subtasks(job_graph, index, s))
                .collect(),
        })
        .collect()
}

/// The subtasks that subtask `subtask` of vertex `vertex` reads from, over all its
/// input edges, as ranges: an all-to-all edge is one range of the whole producer
/// vertex (never one entry per producer), a pointwise edge the few producers it wires.
fn upstream_subtasks(job_graph: &JobGraph, vertex: usize, subtask: u32) -> Vec<UpstreamRange> {
    let consumer_parallelism = job_graph.vertices[vertex].parallelism;
    let mut keys = Vec::new();
    let mut whole = Vec::new();
    for e in job_graph.edges.iter().filter(|e| e.target_vertex == vertex) {
        let producer_parallelism = job_graph.vertices.get(e.source_vertex).map_or(0, |p| p.parallelism);
        if e.distribution == DistributionPattern::AllToAll {
            whole.push(UpstreamRange {
                vertex: e.source_vertex,
                subtasks: 0..producer_parallelism,
            });
            continue;
        }
        let consumed = consumed_subpartitions(e.distribution, producer_parallelism, consumer_parallelism, subtask);
        keys.extend(consumed.into_iter().map(|(producer, _)| TaskKey {
            vertex: e.source_vertex,
            subtask: producer,
        }));
    }
    // Producers of a pointwise edge already read whole are not listed twice.
    keys.retain(|k| {
        !whole
            .iter()
            .any(|r| r.vertex == k.vertex && r.subtasks.contains(&k.subtask))
    });
    let mut upstream = UpstreamRange::covering(keys);
    upstream.extend(whole.into_iter().filter(|r| !r.subtasks.is_empty()));
    upstream.sort_by_key(|r| (r.vertex, r.subtasks.start));
    upstream.dedup();
    upstream
}

impl JobMaster {
    /// Turns checkpointing on with `config` for the vertices `vertices`.
    pub fn enable_checkpointing(&mut self, config: CheckpointConfig, vertices: Vec<VertexInfo>) {
        let seed = self.job_id.0 as u64;
        self.checkpoint_settings = Some(CheckpointingSettings {
            directory: config.checkpoint_dir.clone().unwrap_or_default(),
            inline_threshold: config.data_inline_threshold,
            periodic: config.interval.is_some(),
            incremental: config.incremental,
        });
        self.restore_vertices = vertices
            .iter()
            .zip(&self.job_graph.vertices)
            .map(|(info, v)| RestoreVertex {
                info: info.clone(),
                max_parallelism_configured: v.max_parallelism_configured,
            })
            .collect();
        self.checkpoints = Some(CheckpointCoordinator::new(config, self.job_id, vertices, seed));
    }

    /// The coordinator, when the job checkpoints.
    pub fn checkpoint_coordinator(&self) -> Option<&CheckpointCoordinator> {
        self.checkpoints.as_ref()
    }

    fn task_key(&self, attempt_id: &str) -> Option<TaskKey> {
        let d = self.attempts.get(attempt_id)?;
        let ev = self.execution_graph.execution_vertex(d.vertex, d.subtask)?;
        (ev.current.attempt_id.to_string() == attempt_id).then_some(TaskKey {
            vertex: d.vertex,
            subtask: d.subtask,
        })
    }

    /// A task acknowledged a checkpoint.
    pub fn acknowledge_checkpoint(
        &mut self,
        attempt_id: &str,
        report: SnapshotReport,
        slots: &mut SlotTable,
        now_ms: i64,
    ) -> Vec<Action> {
        let Some(task) = self.task_key(attempt_id) else {
            // An attempt a failover cancelled while it uploaded: its files go.
            let decisions = self
                .checkpoints
                .as_ref()
                .map(|c| c.discard_late_state(&report))
                .unwrap_or_default();
            return self.carry_out(decisions, slots, now_ms);
        };
        let Some(coordinator) = self.checkpoints.as_mut() else {
            return Vec::new();
        };
        // The coordinator checks the path's text; the file system is asked here whether
        // a symbolic link leads out of the checkpoint's locations.
        if let Some(weir_core::checkpoint::StreamStateHandle::File { path, .. }) = &report.handle {
            let roots = coordinator.state_roots(report.checkpoint_id);
            if let Err(e) = weir_checkpoint::handle_paths::check_resolved_path(path, &roots) {
                let reason = DeclineReason::SnapshotFailed;
                let decisions = coordinator.decline(report.checkpoint_id, task, reason, e.to_string(), now_ms);
                return self.carry_out(decisions, slots, now_ms);
            }
        }
        let (_, decisions) = coordinator.acknowledge(SubtaskAcknowledgement { task, report }, now_ms);
        self.carry_out(decisions, slots, now_ms)
    }

    /// A task declined a checkpoint.
    pub fn decline_checkpoint(
        &mut self,
        attempt_id: &str,
        checkpoint_id: CheckpointId,
        reason: String,
        slots: &mut SlotTable,
        now_ms: i64,
    ) -> Vec<Action> {
        let Some(task) = self.task_key(attempt_id) else {
            return Vec::new();
        };
        let Some(coordinator) = self.checkpoints.as_mut() else {
            return Vec::new();
        };
        let running = self
            .execution_graph
            .execution_vertex(task.vertex, task.subtask)
            .is_some_and(|ev| ev.current.state == ExecutionState::Running);
        let kind = if !running || reason.contains(weir_core::checkpoint::DECLINE_TASK_CLOSING) {
            DeclineReason::TaskFinished
        } else if reason.contains(SUBSUMED_BY_NEWER) {
            DeclineReason::TaskNotReady
        } else if reason.contains(TRIGGER_NOT_DELIVERED) {
            DeclineReason::TaskNotRunning
        } else {
            DeclineReason::SnapshotFailed
        };
        let decisions = coordinator.decline(checkpoint_id, task, kind, reason, now_ms);
        self.carry_out(decisions, slots, now_ms)
    }

    /// The I/O shell wrote (or failed to write) a checkpoint's `_metadata`.
    pub fn checkpoint_metadata_written(
        &mut self,
        checkpoint_id: CheckpointId,
        result: Result<Option<String>, String>,
        slots: &mut SlotTable,
        now_ms: i64,
    ) -> Vec<Action> {
        let Some(coordinator) = self.checkpoints.as_mut() else {
            return Vec::new();
        };
        let location = result.as_ref().ok().cloned().flatten();
        let decisions = coordinator.metadata_written(checkpoint_id, result, now_ms);
        self.settle_savepoints(&decisions, location.as_deref().map(|l| (checkpoint_id, l)));
        self.carry_out(decisions, slots, now_ms)
    }

    /// Periodic checkpoint work: start the scheduler once every task runs, trigger,
    /// expire.
    pub(super) fn checkpoint_tick(&mut self, slots: &mut SlotTable, now_ms: i64) -> Vec<Action> {
        if self.checkpoints.is_none() || self.status != weir_core::JobStatus::Running {
            return Vec::new();
        }
        let all_running = self.execution_graph.job_vertices.iter().all(|v| {
            v.task_vertices
                .iter()
                .all(|t| matches!(t.current.state, ExecutionState::Running | ExecutionState::Finished))
        });
        let Some(coordinator) = self.checkpoints.as_mut() else {
            return Vec::new();
        };
        let mut decisions = Vec::new();
        if all_running && !self.checkpoint_scheduler_started {
            self.checkpoint_scheduler_started = true;
            decisions.extend(coordinator.start_scheduler(now_ms));
        } else if !all_running && self.checkpoint_scheduler_started {
            // A task is being deployed again: pending checkpoints cannot complete.
            self.checkpoint_scheduler_started = false;
            decisions.extend(coordinator.stop_scheduler());
            decisions.extend(coordinator.abort_all(DeclineReason::TaskNotRunning.message(), now_ms));
        }
        decisions.extend(coordinator.tick(now_ms));
        self.carry_out(decisions, slots, now_ms)
    }

    /// The job fails over, is cancelled or restarts: pending checkpoints are aborted.
    pub(super) fn checkpoints_abort_all(&mut self, reason: &str, slots: &mut SlotTable, now_ms: i64) -> Vec<Action> {
        self.checkpoint_scheduler_started = false;
        let Some(coordinator) = self.checkpoints.as_mut() else {
            return Vec::new();
        };
        let mut decisions = coordinator.stop_scheduler();
        decisions.extend(coordinator.abort_all(reason, now_ms));
        self.carry_out(decisions, slots, now_ms)
    }

    /// The job reached a terminal status: retention decides what is deleted.
    pub(super) fn checkpoints_shutdown(
        &mut self,
        termination: weir_checkpoint::JobTermination,
        slots: &mut SlotTable,
        now_ms: i64,
    ) -> Vec<Action> {
        self.checkpoint_scheduler_started = false;
        let Some(coordinator) = self.checkpoints.as_mut() else {
            return Vec::new();
        };
        let decisions = coordinator.shutdown(termination, now_ms);
        self.carry_out(decisions, slots, now_ms)
    }

    /// The checkpoint settings and the restore of subtask `subtask` of `vertex`, for its
    /// deployment descriptor.
    pub(super) fn restore_for(
        &self,
        vertex: usize,
        subtask: u32,
    ) -> (Option<CheckpointingSettings>, Option<TaskRestoreDescriptor>) {
        let restore = self.restore_plan.as_ref().and_then(|plan| {
            let r = plan.tasks.get(&TaskKey { vertex, subtask })?;
            Some(TaskRestoreDescriptor {
                checkpoint_id: r.checkpoint_id,
                handles: r.handles.iter().map(|h| StateHandle::from(&h.handle)).collect(),
                rescaled: r.handles.iter().filter(|h| !h.union_only).count() > 1
                    || r.handles.iter().any(|h| !h.union_only && h.old_subtask != subtask),
                union_only: r.handles.iter().map(|h| h.union_only).collect(),
                finished: r.finished,
            })
        });
        (self.checkpoint_settings.clone(), restore)
    }

    /// Starts the job from a savepoint or retained checkpoint read from `path`: checks
    /// that its state maps onto this job (operators by id, max parallelism), then makes
    /// it the checkpoint the first deployment and later failovers restore from (until a
    /// newer checkpoint completes). An error leaves the job unchanged.
    pub fn restore_from_savepoint(
        &mut self,
        metadata: weir_checkpoint::CheckpointMetadata,
        path: &str,
        allow_non_restored_state: bool,
        now_ms: i64,
    ) -> Result<(), weir_checkpoint::CheckpointError> {
        assign_restore(&metadata, path, &self.restore_vertices, allow_non_restored_state)?;
        self.allow_non_restored_state = allow_non_restored_state;
        if let Some(c) = self.checkpoints.as_mut() {
            c.restore_from(metadata, Some(path.to_string()), now_ms);
        }
        Ok(())
    }

    /// A subtask finished: the coordinator stops awaiting it.
    pub(super) fn checkpoint_task_finished(
        &mut self,
        vertex: usize,
        subtask: u32,
        slots: &mut SlotTable,
        now_ms: i64,
    ) -> Vec<Action> {
        let Some(coordinator) = self.checkpoints.as_mut() else {
            return Vec::new();
        };
        let decisions = coordinator.task_finished(TaskKey { vertex, subtask }, now_ms);
        self.carry_out(decisions, slots, now_ms)
    }

    /// Before a (re)start: plans the restore of every subtask from the latest completed
    /// checkpoint (counted as a recovery when `recovery`), and tells the coordinator
    /// which of the subtasks about to be deployed are restored as finished. A
    /// checkpoint that cannot be assigned fails the job.
    pub(super) fn plan_restore(&mut self, now_ms: i64, recovery: bool) -> Result<(), Failure> {
        let planned = self.plan_restore_from_latest(now_ms, recovery);
        let restore_plan = self.restore_plan.as_ref();
        if let Some(coordinator) = self.checkpoints.as_mut() {
            for (vertex, v) in self.execution_graph.job_vertices.iter().enumerate() {
                for (subtask, t) in (0u32..).zip(&v.task_vertices) {
                    if t.current.state == ExecutionState::Created {
                        let key = TaskKey { vertex, subtask };
                        let finished = restore_plan.and_then(|p| p.tasks.get(&key)).is_some_and(|r| r.finished);
                        coordinator.task_deployed(key, finished);
                    }
                }
            }
        }
        planned
    }

    fn plan_restore_from_latest(&mut self, now_ms: i64, recovery: bool) -> Result<(), Failure> {
        let Some(latest) = self.checkpoints.as_ref().and_then(|c| c.latest_completed()) else {
            return Ok(());
        };
        let path = latest
            .external_path
            .clone()
            .unwrap_or_else(|| format!("<jobmanager memory>/chk-{}", latest.id));
        match assign_restore(
            &latest.metadata,
            &path,
            &self.restore_vertices,
            self.allow_non_restored_state,
        ) {
            Ok(plan) => {
                tracing::info!(
                    "Restoring job {} from checkpoint {} located at {path}",
                    self.job_id,
                    latest.id
                );
                self.restore_plan = Some(plan);
                if let Some(c) = self.checkpoints.as_mut().filter(|_| recovery) {
                    c.report_recovery(now_ms);
                }
                Ok(())
            }
            Err(e) => Err(Failure {
                name: "weir.runtime.state.StateRestoreException".into(),
                message: e.to_string(),
                task_name: None,
                location: None,
            }),
        }
    }

    fn checkpoint_target(&self, key: TaskKey, slots: &SlotTable) -> Option<(String, String, ExecutionState)> {
        let ev = self.execution_graph.execution_vertex(key.vertex, key.subtask)?;
        let attempt = ev.current.attempt_id.to_string();
        let d = self.attempts.get(&attempt)?;
        let tm = slots.get(&d.slot.resource_id)?;
        Some((attempt, tm.registration.rpc_address.clone(), ev.current.state))
    }

    /// Carries out coordinator decisions: RPCs become actions, a source that is not
    /// running declines at once, `FailJob` fails the job over.
    pub(super) fn carry_out(
        &mut self,
        decisions: Vec<CoordinatorAction>,
        slots: &mut SlotTable,
        now_ms: i64,
    ) -> Vec<Action> {
        self.settle_savepoints(&decisions, None);
        let mut actions = Vec::new();
        let mut queue: std::collections::VecDeque<CoordinatorAction> = decisions.into();
        while let Some(d) = queue.pop_front() {
            match d {
                CoordinatorAction::TriggerCheckpoint {
                    checkpoint_id,
                    timestamp,
                    options,
                    tasks,
                    ..
                } => {
                    let barrier = CheckpointBarrier {
                        id: checkpoint_id,
                        timestamp,
                        options,
                    };
                    let drain = self.drains(checkpoint_id);
                    for key in tasks {
                        match self.checkpoint_target(key, slots) {
                            Some((attempt_id, rpc_address, ExecutionState::Running)) => {
                                actions.push(Action::TriggerCheckpoint {
                                    rpc_address,
                                    job_id: self.job_id.to_string(),
                                    attempt_id,
                                    barrier,
                                    drain,
                                })
                            }
                            _ => {
                                if let Some(c) = self.checkpoints.as_mut() {
                                    queue.extend(c.decline(
                                        checkpoint_id,
                                        key,
                                        DeclineReason::TaskNotRunning,
                                        String::new(),
                                        now_ms,
                                    ));
                                }
                                break;
                            }
                        }
                    }
                }
                CoordinatorAction::WriteMetadata {
                    checkpoint_id,
                    metadata,
                    target,
                    snapshot_type,
                } => actions.push(Action::WriteCheckpointMetadata {
                    job_id: self.job_id,
                    checkpoint_id,
                    metadata: Box::new(metadata),
                    target,
                    savepoint: snapshot_type.is_savepoint(),
                }),
                CoordinatorAction::NotifyComplete { checkpoint_id, tasks } => {
                    actions.extend(self.notify(checkpoint_id, &tasks, true, slots));
                }
                CoordinatorAction::NotifyAborted {
                    checkpoint_id, tasks, ..
                } => {
                    actions.extend(self.notify(checkpoint_id, &tasks, false, slots));
                }
                CoordinatorAction::Discard { location } => {
                    crate::checkpoint::discards::started();
                    actions.push(Action::DiscardCheckpoint { location });
                }
                CoordinatorAction::FailJob { reason } => {
                    let failure = Failure {
                        name: "weir.runtime.checkpoint.CheckpointException".into(),
                        message: reason,
                        task_name: None,
                        location: None,
                    };
                    actions.extend(self.handle_failure(failure, slots, now_ms));
                }
            }
        }
        actions
    }

    fn notify(
        &self,
        checkpoint_id: CheckpointId,
        tasks: &[TaskKey],
        completed: bool,
        slots: &SlotTable,
    ) -> Vec<Action> {
        let mut per_tm: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for key in tasks {
            if let Some((attempt, rpc, state)) = self.checkpoint_target(*key, slots) {
                if !state.is_terminal() {
                    per_tm.entry(rpc).or_default().push(attempt);
                }
            }
        }
        per_tm
            .into_iter()
            .map(|(rpc_address, attempt_ids)| Action::NotifyCheckpoint {
                rpc_address,
                job_id: self.job_id.to_string(),
                attempt_ids,
                checkpoint_id,
                completed,
            })
            .collect()
    }
}
