//! The checkpoint coordinator (Flink's `CheckpointCoordinator` with its
//! `CheckpointFailureManager` and completed-checkpoint store) as a pure state machine:
//! no threads, no clock, no I/O. The caller passes `now_ms` into every call and carries
//! out the returned [`CoordinatorAction`]s (RPCs to tasks, writing `_metadata`,
//! deleting directories, failing the job), then reports back what happened.
//!
//! # Protocol
//!
//! - [`CheckpointCoordinator::start_scheduler`] once all tasks run: the first periodic
//!   trigger is due after a random delay in `[min-pause, interval]` (seeded, as Flink's
//!   initial delay); [`CheckpointCoordinator::stop_scheduler`] stops periodic triggers
//!   (pending checkpoints stay; call [`CheckpointCoordinator::abort_all`] when they can
//!   no longer complete).
//! - [`CheckpointCoordinator::tick`] first expires pending checkpoints older than the
//!   timeout ("Checkpoint expired before completing.", a counted failure), then fires a
//!   due periodic trigger if fewer than max-concurrent checkpoints (savepoints included)
//!   are pending and min-pause has passed since the last completion; otherwise the
//!   trigger stays due and fires at the first tick that allows it. The next trigger is
//!   due one interval after the previous due time (or after now, when late by more than
//!   an interval).
//! - [`CheckpointCoordinator::trigger_savepoint`] ignores interval, min-pause and
//!   max-concurrent. Checkpoints and savepoints take ids from one counter, from 1.
//! - Checkpoints after tasks finish (Flink's FLIP-147): the caller reports finished
//!   subtasks ([`CheckpointCoordinator::task_finished`]) and deployed ones
//!   ([`CheckpointCoordinator::task_deployed`], finished when restored as finished). A checkpoint awaits the subtasks not
//!   finished at its trigger; the finished ones go into its metadata as finished,
//!   without state. A subtask that finishes before it acknowledged a pending
//!   checkpoint never will: the checkpoint is aborted, not counted as a failure.
//!   Periodic triggers skip a job whose subtasks have all finished.
//! - Each trigger emits [`CoordinatorAction::TriggerCheckpoint`] to the *root*
//!   subtasks: the unfinished source subtasks, and the unfinished subtasks whose
//!   upstream subtasks ([`VertexInfo::upstream`]) have all finished. Every awaited
//!   subtask then acknowledges or declines. Late (unknown id), duplicate and foreign
//!   acknowledgements (and those of subtasks not awaited) are ignored ([`AckOutcome`]);
//!   a late acknowledgement's state file is discarded.
//! - When all awaited subtasks acknowledged: [`CoordinatorAction::WriteMetadata`]. The
//!   checkpoint is then *finalizing*: it no longer expires nor takes declines. The
//!   caller reports the write with [`CheckpointCoordinator::metadata_written`]; on
//!   success the checkpoint completes: checkpoints go into the completed store (at most
//!   num-retained; the subsumed ones are discarded when they have an external path),
//!   older pending checkpoints are aborted as subsumed (not counted), and
//!   [`CoordinatorAction::NotifyComplete`] goes to every task.
//! - Aborting (decline, expiry, failed metadata write, subsumption, `abort_all`,
//!   shutdown) emits [`CoordinatorAction::NotifyAborted`] to every task and discards the
//!   checkpoint's directory. A metadata write reported for a checkpoint aborted while
//!   finalizing is discarded.
//! - Shared state of incremental checkpoints ([`SharedStateRegistry`]): a completed
//!   checkpoint registers the shared files its subtasks refer to; discarding it
//!   deletes those no other retained checkpoint refers to; aborting a checkpoint (and a
//!   late acknowledgement) deletes the files uploaded for it that no completed
//!   checkpoint refers to. A shared file must lie under `<dir>/<job-id>/shared`.
//! - Failure counting (`CheckpointFailureManager`): only checkpoints (not savepoints)
//!   with an id above the last completed one, aborted for a counted reason
//!   ([`DeclineReason::counts_as_failure`]), increment the consecutive-failure counter;
//!   when it exceeds `tolerable-failed-checkpoints` the coordinator emits
//!   [`CoordinatorAction::FailJob`] with Flink's message and resets the counter; any
//!   completion resets it.
//!
//! Invariants (checked by the property test): ids strictly increase from 1; at most
//! max-concurrent checkpoints are pending after a periodic trigger; every trigger ends
//! exactly once, in `NotifyComplete` or `NotifyAborted`; the completed store never
//! holds more than num-retained checkpoints.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use weir_config::ExternalizedCheckpointRetention;
use weir_core::checkpoint::StreamStateHandle;
use weir_core::ids::{splitmix64, JobId, JobVertexId};
use weir_core::{CheckpointId, CheckpointOptions, KeyGroupRange, SnapshotType};

use crate::config::CheckpointConfig;
use crate::error::CheckpointError;
use crate::handle_paths::{check_handle_path, state_roots};
use crate::metadata::{
    check_location, savepoint_directory_with, shared_state_directory, CheckpointMetadata, CheckpointStorage,
    SubtaskState, TaskState,
};
use crate::stats::{CheckpointStatsTracker, SubtaskCheckpointStats};

mod shared_registry;
mod types;

pub use shared_registry::SharedStateRegistry;

pub use types::{
    tolerable_failure_message, AckOutcome, CompletedCheckpoint, CoordinatorAction, DeclineReason, JobTermination,
    SnapshotReport, SubtaskAcknowledgement, TaskKey, UpstreamRange, VertexInfo,
    EXCEEDED_CHECKPOINT_TOLERABLE_FAILURE_MESSAGE, SHUTDOWN_MESSAGE, SUBSUMED_MESSAGE,
};

#[derive(Debug)]
struct Pending {
    timestamp: i64,
    options: CheckpointOptions,
    location: Option<String>,
    /// The subtasks that must acknowledge: those not finished at the trigger.
    awaited: BTreeSet<TaskKey>,
    acks: BTreeMap<TaskKey, SnapshotReport>,
    finalizing: Option<CheckpointMetadata>,
}

/// The checkpoint coordinator of one job. See the module documentation.
#[derive(Debug)]
pub struct CheckpointCoordinator {
    config: CheckpointConfig,
    storage: CheckpointStorage,
    job_id: JobId,
    vertices: Vec<VertexInfo>,
    all_tasks: Vec<TaskKey>,
    /// Subtasks that have finished (and were not restarted since).
    finished: BTreeSet<TaskKey>,
    rng: u64,
    next_id: CheckpointId,
    scheduler_running: bool,
    next_trigger_due: Option<i64>,
    last_completion_ms: Option<i64>,
    pending: BTreeMap<CheckpointId, Pending>,
    aborted_finalizing: BTreeSet<CheckpointId>,
    completed: VecDeque<CompletedCheckpoint>,
    latest_sync_savepoint: Option<CompletedCheckpoint>,
    restored: Option<CompletedCheckpoint>,
    consecutive_failures: u32,
    last_succeeded_id: CheckpointId,
    shut_down: bool,
    stats: CheckpointStatsTracker,
    shared: SharedStateRegistry,
}

impl CheckpointCoordinator {
    /// A coordinator for `job_id` with `vertices` (in the job's order; [`TaskKey::vertex`]
    /// indexes them). `seed` drives the initial delay and savepoint directory names.
    pub fn new(config: CheckpointConfig, job_id: JobId, vertices: Vec<VertexInfo>, seed: u64) -> Self {
        let all_tasks: Vec<TaskKey> = vertices
            .iter()
            .enumerate()
            .flat_map(|(vertex, v)| (0..v.parallelism).map(move |subtask| TaskKey { vertex, subtask }))
            .collect();
        let storage = CheckpointStorage::from_config(&config);
        let shared_dir = match &storage {
            CheckpointStorage::FileSystem { dir } => Some(shared_state_directory(dir, &job_id)),
            CheckpointStorage::JobManager => None,
        };
        CheckpointCoordinator {
            shared: SharedStateRegistry::new(shared_dir.as_deref()),
            storage,
            stats: CheckpointStatsTracker::new(config.history_size),
            config,
            job_id,
            vertices,
            all_tasks,
            finished: BTreeSet::new(),
            rng: seed,
            next_id: 1,
            scheduler_running: false,
            next_trigger_due: None,
            last_completion_ms: None,
            pending: BTreeMap::new(),
            aborted_finalizing: BTreeSet::new(),
            completed: VecDeque::new(),
            latest_sync_savepoint: None,
            restored: None,
            consecutive_failures: 0,
            last_succeeded_id: 0,
            shut_down: false,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CheckpointConfig {
        &self.config
    }

    /// The statistics, read-only.
    pub fn stats(&self) -> &CheckpointStatsTracker {
        &self.stats
    }

    /// Ids of the pending checkpoints and savepoints, ascending.
    pub fn pending_ids(&self) -> Vec<CheckpointId> {
        self.pending.keys().copied().collect()
    }

    /// The completed checkpoints retained, oldest first (at most num-retained).
    pub fn completed_checkpoints(&self) -> impl Iterator<Item = &CompletedCheckpoint> {
        self.completed.iter()
    }

    /// Consecutive counted failures since the last completion or job failure.
    pub fn consecutive_failures(&self) -> u32 {
        self.consecutive_failures
    }

    /// When the next periodic trigger is due, if the scheduler runs.
    pub fn next_trigger_due(&self) -> Option<i64> {
        self.next_trigger_due
    }

    /// What a failover restores from: the newest of the latest retained checkpoint, the
    /// latest stop-with-savepoint savepoint and the checkpoint the job was restored from.
    /// Other savepoints are never used for recovery (Flink 1.15+).
    pub fn latest_completed(&self) -> Option<&CompletedCheckpoint> {
        [
            self.completed.back(),
            self.latest_sync_savepoint.as_ref(),
            self.restored.as_ref(),
        ]
        .into_iter()
        .flatten()
        .max_by_key(|c| c.id)
    }

    /// Seeds the coordinator with the checkpoint the job is restored from: the next id
    /// is at least `metadata.checkpoint_id + 1`, the restore is recorded in the
    /// statistics, and the checkpoint is a recovery candidate until a newer one
    /// completes. It is not owned: never discarded by this coordinator.
    pub fn restore_from(&mut self, metadata: CheckpointMetadata, external_path: Option<String>, now_ms: i64) {
        self.next_id = self.next_id.max(metadata.checkpoint_id.saturating_add(1));
        self.last_succeeded_id = self.last_succeeded_id.max(metadata.checkpoint_id);
        self.stats.report_restored(
            metadata.checkpoint_id,
            now_ms,
            metadata.snapshot_type,
            external_path.clone(),
        );
        // Never unregistered: the files of the checkpoint restored from are not this
        // coordinator's to delete.
        self.shared.register(
            metadata.checkpoint_id,
            metadata
                .tasks
                .iter()
                .flat_map(|t| &t.subtasks)
                .flat_map(|s| &s.shared_state),
        );
        self.restored = Some(CompletedCheckpoint {
            id: metadata.checkpoint_id,
            timestamp: metadata.timestamp,
            completed_at: now_ms,
            snapshot_type: metadata.snapshot_type,
            metadata,
            external_path,
        });
    }

    /// A failover restores the job from [`latest_completed`](Self::latest_completed):
    /// counted as a restore in the statistics (the checkpoint stays in the store and
    /// is subsumed and discarded as usual). Returns its id, if there is one.
    pub fn report_recovery(&mut self, now_ms: i64) -> Option<CheckpointId> {
        let latest = self.latest_completed()?.clone();
        self.stats
            .report_restored(latest.id, now_ms, latest.snapshot_type, latest.external_path.clone());
        Some(latest.id)
    }

    /// All tasks run: periodic checkpoints start (when an interval is configured).
    pub fn start_scheduler(&mut self, now_ms: i64) -> Vec<CoordinatorAction> {
        let Some(interval) = self.config.interval_ms() else {
            return Vec::new();
        };
        if self.shut_down {
            return Vec::new();
        }
        let min_pause = self.config.min_pause_ms().min(interval);
        let span = (interval - min_pause + 1) as u64;
        let delay = min_pause + (self.next_random() % span) as i64;
        self.scheduler_running = true;
        self.next_trigger_due = Some(now_ms.saturating_add(delay));
        Vec::new()
    }

    /// Stops periodic triggers (job failing, cancelled, restarting or a task finished).
    pub fn stop_scheduler(&mut self) -> Vec<CoordinatorAction> {
        self.scheduler_running = false;
        self.next_trigger_due = None;
        Vec::new()
    }

    /// Expires overdue checkpoints, then fires a due periodic trigger if allowed.
    pub fn tick(&mut self, now_ms: i64) -> Vec<CoordinatorAction> {
        let mut actions = Vec::new();
        if self.shut_down {
            return actions;
        }
        let timeout = self.config.timeout_ms();
        let expired: Vec<CheckpointId> = self
            .pending
            .iter()
            .filter(|(_, p)| p.finalizing.is_none() && now_ms >= p.timestamp.saturating_add(timeout))
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            self.abort(
                id,
                DeclineReason::Expired.message(),
                Some(DeclineReason::Expired),
                now_ms,
                &mut actions,
            );
        }
        let (Some(due), Some(interval)) = (self.next_trigger_due, self.config.interval_ms()) else {
            return actions;
        };
        if !self.scheduler_running || now_ms < due || self.all_finished() {
            return actions;
        }
        if self.pending.len() >= self.config.max_concurrent as usize {
            return actions;
        }
        if let Some(last) = self.last_completion_ms {
            if now_ms < last.saturating_add(self.config.min_pause_ms()) {
                return actions;
            }
        }
        let next = due.saturating_add(interval);
        self.next_trigger_due = Some(if next <= now_ms {
            now_ms.saturating_add(interval)
        } else {
            next
        });
        let options = CheckpointOptions::for_config(
            self.config.mode,
            self.config.unaligned_enabled,
            self.config.aligned_checkpoint_timeout,
        );
        let id = self.next_id;
        let location = self.storage.checkpoint_location(&self.job_id, id);
        self.trigger(now_ms, options, location, &mut actions);
        actions
    }

    /// Triggers a savepoint into a new `savepoint-…` directory under `target_dir`,
    /// regardless of interval, min-pause and max-concurrent. Returns its id.
    pub fn trigger_savepoint(
        &mut self,
        now_ms: i64,
        snapshot_type: SnapshotType,
        target_dir: String,
    ) -> Result<(CheckpointId, Vec<CoordinatorAction>), CheckpointError> {
        let id = self.next_id;
        let refuse = |reason: &str| CheckpointError::TriggerFailed {
            job: self.job_id,
            checkpoint_id: id,
            reason: reason.to_string(),
        };
        if self.shut_down {
            return Err(refuse("the checkpoint coordinator is shut down"));
        }
        if !snapshot_type.is_savepoint() {
            return Err(refuse("a savepoint must be of type SAVEPOINT or SYNC_SAVEPOINT"));
        }
        if target_dir.trim().is_empty() {
            return Err(CheckpointError::NoSavepointDirectory { job: self.job_id });
        }
        if self.all_finished() {
            return Err(refuse("every task of the job has finished"));
        }
        check_location(&target_dir)?;
        let random = self.next_random();
        let location = savepoint_directory_with(&target_dir, &self.job_id, random);
        let options = CheckpointOptions::savepoint(snapshot_type, self.config.mode);
        let mut actions = Vec::new();
        let id = self.trigger(now_ms, options, Some(location), &mut actions);
        Ok((id, actions))
    }

    fn trigger(
        &mut self,
        now_ms: i64,
        options: CheckpointOptions,
        location: Option<String>,
        actions: &mut Vec<CoordinatorAction>,
    ) -> CheckpointId {
        let id = self.next_id;
        self.next_id += 1;
        let vertices: Vec<(JobVertexId, u32)> = self.vertices.iter().map(|v| (v.vertex_id, v.parallelism)).collect();
        self.stats.report_pending(
            id,
            now_ms,
            options.snapshot_type,
            options.unaligned_enabled(),
            &vertices,
        );
        let awaited: BTreeSet<TaskKey> = self
            .all_tasks
            .iter()
            .filter(|t| !self.finished.contains(t))
            .copied()
            .collect();
        let roots = awaited.iter().copied().filter(|t| self.is_root(*t)).collect();
        // Finished subtasks count as acknowledged with nothing, as of the trigger.
        for task in &self.finished {
            let nothing = SubtaskCheckpointStats {
                ack_timestamp: now_ms,
                end_to_end_duration_ms: 0,
                state_size: 0,
                checkpointed_size: 0,
                sync_duration_ms: 0,
                async_duration_ms: 0,
                alignment_duration_ms: 0,
                persisted_data: 0,
            };
            self.stats.report_ack(id, task.vertex, task.subtask, nothing);
        }
        let nothing_awaited = awaited.is_empty();
        self.pending.insert(
            id,
            Pending {
                timestamp: now_ms,
                options,
                location: location.clone(),
                awaited,
                acks: BTreeMap::new(),
                finalizing: None,
            },
        );
        actions.push(CoordinatorAction::TriggerCheckpoint {
            checkpoint_id: id,
            timestamp: now_ms,
            options,
            tasks: roots,
            location,
        });
        if nothing_awaited {
            actions.extend(self.finalize(id));
        }
        id
    }

    /// An unfinished subtask that receives the trigger: a source, or one whose upstream
    /// subtasks have all finished (no barrier will reach it).
    fn is_root(&self, task: TaskKey) -> bool {
        let Some(v) = self.vertices.get(task.vertex) else {
            return false;
        };
        if v.is_source {
            return true;
        }
        v.upstream.get(task.subtask as usize).is_some_and(|up| {
            up.iter().any(|r| !r.subtasks.is_empty())
                && up
                    .iter()
                    .flat_map(UpstreamRange::keys)
                    .all(|u| self.finished.contains(&u))
        })
    }

    fn all_finished(&self) -> bool {
        !self.all_tasks.is_empty() && self.all_tasks.iter().all(|t| self.finished.contains(t))
    }

    /// Subtask `task` finished. Pending checkpoints that await it and have not got its
    /// acknowledgement are aborted (it acknowledges before it finishes, so it never
    /// will); not counted as failures.
    pub fn task_finished(&mut self, task: TaskKey, now_ms: i64) -> Vec<CoordinatorAction> {
        let mut actions = Vec::new();
        if !self.all_tasks.contains(&task) || !self.finished.insert(task) {
            return actions;
        }
        let lost: Vec<CheckpointId> = self
            .pending
            .iter()
            .filter(|(_, p)| p.finalizing.is_none() && p.awaited.contains(&task) && !p.acks.contains_key(&task))
            .map(|(id, _)| *id)
            .collect();
        let vertex = self.vertices[task.vertex].name.clone();
        for id in lost {
            let reason = format!(
                "{} {vertex} ({}) finished before it acknowledged the checkpoint.",
                DeclineReason::TaskFinished.message(),
                task.subtask
            );
            self.abort(id, &reason, Some(DeclineReason::TaskFinished), now_ms, &mut actions);
        }
        actions
    }

    /// Subtask `task` is deployed again (a failover, or the job's first deployment from
    /// a checkpoint): finished only when it is restored as finished.
    pub fn task_deployed(&mut self, task: TaskKey, restored_as_finished: bool) {
        if restored_as_finished && self.all_tasks.contains(&task) {
            self.finished.insert(task);
        } else {
            self.finished.remove(&task);
        }
    }

    /// Whether subtask `task` is known to have finished.
    pub fn is_finished(&self, task: TaskKey) -> bool {
        self.finished.contains(&task)
    }

    /// Where the state files of checkpoint `id` may lie
    /// ([`crate::handle_paths::state_roots`]).
    pub fn state_roots(&self, id: CheckpointId) -> Vec<String> {
        let target = self.pending.get(&id).and_then(|p| p.location.as_deref());
        state_roots(&self.storage, &self.job_id, id, target)
    }

    /// A subtask acknowledged a checkpoint. A file handle outside the checkpoint's
    /// storage locations declines it instead ([`AckOutcome::Refused`]).
    pub fn acknowledge(&mut self, ack: SubtaskAcknowledgement, now_ms: i64) -> (AckOutcome, Vec<CoordinatorAction>) {
        let SubtaskAcknowledgement { task, report: ack } = ack;
        let known_task = self
            .vertices
            .get(task.vertex)
            .is_some_and(|v| task.subtask < v.parallelism);
        if !known_task {
            return (AckOutcome::UnknownTask, Vec::new());
        }
        let shared_root = match &self.storage {
            CheckpointStorage::FileSystem { dir } => vec![shared_state_directory(dir, &self.job_id)],
            CheckpointStorage::JobManager => Vec::new(),
        };
        let refused = match &ack.handle {
            Some(StreamStateHandle::File { path, .. }) => {
                check_handle_path(path, &self.state_roots(ack.checkpoint_id)).err()
            }
            _ => None,
        }
        .or_else(|| {
            ack.shared_state
                .iter()
                .find_map(|f| check_handle_path(&f.path, &shared_root).err())
        });
        if let Some(e) = refused {
            let actions = self.decline(
                ack.checkpoint_id,
                task,
                DeclineReason::SnapshotFailed,
                e.to_string(),
                now_ms,
            );
            return (AckOutcome::Refused, actions);
        }
        let Some(pending) = self.pending.get_mut(&ack.checkpoint_id) else {
            // Flink discards the state of late acknowledgements.
            return (AckOutcome::UnknownCheckpoint, self.discard_late_state(&ack));
        };
        if !pending.awaited.contains(&task) {
            return (AckOutcome::UnknownTask, Vec::new());
        }
        if pending.finalizing.is_some() || pending.acks.contains_key(&task) {
            return (AckOutcome::Duplicate, Vec::new());
        }
        let stats = SubtaskCheckpointStats {
            ack_timestamp: now_ms,
            end_to_end_duration_ms: (now_ms - pending.timestamp).max(0) as u64,
            state_size: ack.state_size,
            checkpointed_size: ack.checkpointed_size,
            sync_duration_ms: ack.sync_duration_ms,
            async_duration_ms: ack.async_duration_ms,
            alignment_duration_ms: ack.alignment_duration_ms,
            persisted_data: ack.persisted_data,
        };
        let id = ack.checkpoint_id;
        pending.acks.insert(task, ack);
        self.stats.report_ack(id, task.vertex, task.subtask, stats);
        if pending.acks.len() < pending.awaited.len() {
            return (AckOutcome::Acknowledged, Vec::new());
        }
        (AckOutcome::AllAcknowledged, self.finalize(id))
    }

    /// The state of an acknowledgement that came too late (its checkpoint completed or
    /// was aborted, or its attempt was replaced by a failover) to delete: its file and
    /// the shared files no completed checkpoint refers to. Nothing for a checkpoint
    /// still pending or not triggered yet, nothing outside the checkpoint's storage
    /// locations and never a file a retained checkpoint refers to.
    pub fn discard_late_state(&self, ack: &SnapshotReport) -> Vec<CoordinatorAction> {
        if ack.checkpoint_id >= self.next_id || self.pending.contains_key(&ack.checkpoint_id) {
            return Vec::new();
        }
        let mut actions = Vec::new();
        if let Some(StreamStateHandle::File { path, .. }) = &ack.handle {
            let retained = self
                .completed
                .iter()
                .chain(&self.restored)
                .chain(&self.latest_sync_savepoint)
                .flat_map(|c| c.metadata.tasks.iter().flat_map(|t| &t.subtasks))
                .any(|s| matches!(&s.handle, Some(StreamStateHandle::File { path: p, .. }) if p == path));
            let inside = check_handle_path(path, &self.state_roots(ack.checkpoint_id)).is_ok();
            if inside && !retained {
                actions.push(CoordinatorAction::Discard { location: path.clone() });
            }
        }
        actions.extend(
            self.shared
                .unreferenced(&ack.shared_state)
                .into_iter()
                .map(|location| CoordinatorAction::Discard { location }),
        );
        actions
    }

    /// Builds the metadata of fully acknowledged checkpoint `id` and asks for it to be
    /// written.
    fn finalize(&mut self, id: CheckpointId) -> Vec<CoordinatorAction> {
        let Some(pending) = self.pending.get_mut(&id) else {
            return Vec::new();
        };
        let tasks = self
            .vertices
            .iter()
            .enumerate()
            .map(|(vertex, v)| TaskState {
                vertex_id: v.vertex_id,
                vertex_name: v.name.clone(),
                operator_ids: v.operator_ids.clone(),
                parallelism: v.parallelism,
                max_parallelism: v.max_parallelism,
                subtasks: (0..v.parallelism)
                    .map(|subtask| {
                        let key = TaskKey { vertex, subtask };
                        let ack = pending.acks.get(&key);
                        SubtaskState {
                            subtask,
                            key_group_range: key_groups(v, subtask),
                            handle: ack.and_then(|a| a.handle.clone()),
                            state_size: ack.map_or(0, |a| a.state_size),
                            union_state: ack.is_some_and(|a| a.union_state),
                            finished: !pending.awaited.contains(&key),
                            shared_state: ack.map(|a| a.shared_state.clone()).unwrap_or_default(),
                        }
                    })
                    .collect(),
            })
            .collect();
        let metadata = CheckpointMetadata {
            job_id: self.job_id,
            checkpoint_id: id,
            timestamp: pending.timestamp,
            snapshot_type: pending.options.snapshot_type,
            tasks,
        };
        pending.finalizing = Some(metadata.clone());
        vec![CoordinatorAction::WriteMetadata {
            checkpoint_id: id,
            metadata,
            snapshot_type: pending.options.snapshot_type,
            target: pending.location.clone(),
        }]
    }

    /// The caller wrote (or failed to write) the metadata of checkpoint `id`; `Ok`
    /// carries the external path (`None` for JobManager storage).
    pub fn metadata_written(
        &mut self,
        checkpoint_id: CheckpointId,
        result: Result<Option<String>, String>,
        now_ms: i64,
    ) -> Vec<CoordinatorAction> {
        let mut actions = Vec::new();
        let finalizing = self.pending.get(&checkpoint_id).is_some_and(|p| p.finalizing.is_some());
        if !finalizing {
            if self.aborted_finalizing.remove(&checkpoint_id) {
                if let Ok(Some(path)) = result {
                    actions.push(CoordinatorAction::Discard { location: path });
                }
            }
            return actions;
        }
        let external_path = match result {
            Ok(path) => path,
            Err(message) => {
                let reason = format!("{} {message}", DeclineReason::MetadataWriteFailed.message());
                self.abort(
                    checkpoint_id,
                    &reason,
                    Some(DeclineReason::MetadataWriteFailed),
                    now_ms,
                    &mut actions,
                );
                return actions;
            }
        };
        let Some(pending) = self.pending.remove(&checkpoint_id) else {
            return actions;
        };
        let Some(metadata) = pending.finalizing else {
            return actions;
        };
        let snapshot_type = pending.options.snapshot_type;
        let completed = CompletedCheckpoint {
            id: checkpoint_id,
            timestamp: pending.timestamp,
            completed_at: now_ms,
            snapshot_type,
            metadata,
            external_path: external_path.clone(),
        };
        self.stats.report_completed(checkpoint_id, external_path);
        self.shared.register(
            checkpoint_id,
            completed
                .metadata
                .tasks
                .iter()
                .flat_map(|t| &t.subtasks)
                .flat_map(|s| &s.shared_state),
        );
        self.last_completion_ms = Some(now_ms);
        if checkpoint_id > self.last_succeeded_id {
            self.last_succeeded_id = checkpoint_id;
            self.consecutive_failures = 0;
        }
        match snapshot_type {
            SnapshotType::Checkpoint => {
                self.completed.push_back(completed);
                while self.completed.len() > self.config.num_retained as usize {
                    if let Some(old) = self.completed.pop_front() {
                        self.discard_completed(&old, &mut actions);
                    }
                }
                let subsumed: Vec<CheckpointId> = self
                    .pending
                    .iter()
                    .filter(|(id, p)| **id < checkpoint_id && !p.options.snapshot_type.is_savepoint())
                    .map(|(id, _)| *id)
                    .collect();
                for id in subsumed {
                    self.abort(id, SUBSUMED_MESSAGE, None, now_ms, &mut actions);
                }
            }
            SnapshotType::SyncSavepoint => self.latest_sync_savepoint = Some(completed),
            SnapshotType::Savepoint => {}
        }
        actions.push(CoordinatorAction::NotifyComplete {
            checkpoint_id,
            tasks: self.unfinished_tasks(),
        });
        actions
    }

    fn discard_completed(&mut self, checkpoint: &CompletedCheckpoint, actions: &mut Vec<CoordinatorAction>) {
        self.stats.report_discarded(checkpoint.id);
        if let Some(location) = &checkpoint.external_path {
            actions.push(CoordinatorAction::Discard {
                location: location.clone(),
            });
        }
        actions.extend(
            self.shared
                .unregister(checkpoint.id)
                .into_iter()
                .map(|location| CoordinatorAction::Discard { location }),
        );
    }

    /// A subtask declined checkpoint `checkpoint_id`: the checkpoint is aborted. Declines
    /// of unknown or finalizing checkpoints are ignored.
    pub fn decline(
        &mut self,
        checkpoint_id: CheckpointId,
        task: TaskKey,
        reason: DeclineReason,
        message: String,
        now_ms: i64,
    ) -> Vec<CoordinatorAction> {
        let mut actions = Vec::new();
        let declinable = self.pending.get(&checkpoint_id).is_some_and(|p| p.finalizing.is_none());
        if !declinable {
            return actions;
        }
        let vertex = self
            .vertices
            .get(task.vertex)
            .map_or("unknown vertex", |v| v.name.as_str());
        let mut text = format!("{} Declined by {vertex} ({}).", reason.message(), task.subtask);
        if !message.is_empty() {
            text.push_str(&format!(" Cause: {message}"));
        }
        self.abort(checkpoint_id, &text, Some(reason), now_ms, &mut actions);
        actions
    }

    /// Aborts every pending checkpoint without counting failures (failover, cancel).
    pub fn abort_all(&mut self, reason: &str, now_ms: i64) -> Vec<CoordinatorAction> {
        let mut actions = Vec::new();
        let ids: Vec<CheckpointId> = self.pending.keys().copied().collect();
        for id in ids {
            self.abort(id, reason, None, now_ms, &mut actions);
        }
        actions
    }

    /// The job reached a terminal state: stops the scheduler, aborts pending
    /// checkpoints and discards the retained checkpoints that the retention policy does
    /// not keep. Savepoints and the checkpoint restored from are never discarded.
    /// Every later call is a no-op.
    pub fn shutdown(&mut self, termination: JobTermination, now_ms: i64) -> Vec<CoordinatorAction> {
        if self.shut_down {
            return Vec::new();
        }
        self.stop_scheduler();
        let mut actions = self.abort_all(SHUTDOWN_MESSAGE, now_ms);
        self.shut_down = true;
        use ExternalizedCheckpointRetention as R;
        let discard = match (termination, self.config.externalized_retention) {
            (JobTermination::Suspended, _) => false,
            (JobTermination::Finished, _) => true,
            (_, R::NoExternalizedCheckpoints) => true,
            (JobTermination::Cancelled, R::DeleteOnCancellation) => true,
            (JobTermination::Cancelled, R::RetainOnCancellation) => false,
            (JobTermination::Failed, _) => false,
        };
        if discard {
            let completed: Vec<CompletedCheckpoint> = self.completed.drain(..).collect();
            for checkpoint in &completed {
                self.discard_completed(checkpoint, &mut actions);
            }
            // Files uploaded for checkpoints whose acknowledgement never arrived are
            // in no registry: the shared directory goes once no checkpoint needs it,
            // as one discard (deleting its files one by one beside it would race).
            if let CheckpointStorage::FileSystem { dir } = &self.storage {
                if !self.shared.holds_owned() {
                    let shared = shared_state_directory(dir, &self.job_id);
                    let inside = format!("{}/", shared.trim_end_matches('/'));
                    actions.retain(
                        |a| !matches!(a, CoordinatorAction::Discard { location } if location.starts_with(&inside)),
                    );
                    actions.push(CoordinatorAction::Discard { location: shared });
                }
            }
        }
        actions
    }

    /// Removes pending checkpoint `id` and emits its abort; `counted` carries the reason
    /// when the failure may count toward the threshold.
    fn abort(
        &mut self,
        id: CheckpointId,
        reason: &str,
        failure: Option<DeclineReason>,
        now_ms: i64,
        actions: &mut Vec<CoordinatorAction>,
    ) {
        let Some(pending) = self.pending.remove(&id) else {
            return;
        };
        if pending.finalizing.is_some() {
            self.aborted_finalizing.insert(id);
        }
        self.stats.report_failed(id, now_ms, reason);
        actions.push(CoordinatorAction::NotifyAborted {
            checkpoint_id: id,
            tasks: self.unfinished_tasks(),
            reason: reason.to_string(),
        });
        if let Some(location) = pending.location {
            actions.push(CoordinatorAction::Discard { location });
        }
        actions.extend(
            self.shared
                .unreferenced(pending.acks.values().flat_map(|a| &a.shared_state))
                .into_iter()
                .map(|location| CoordinatorAction::Discard { location }),
        );
        let Some(failure) = failure else {
            return;
        };
        if failure.counts_as_failure() && !pending.options.snapshot_type.is_savepoint() && id > self.last_succeeded_id {
            self.consecutive_failures += 1;
            if self.consecutive_failures > self.config.tolerable_failures {
                self.consecutive_failures = 0;
                actions.push(CoordinatorAction::FailJob {
                    reason: tolerable_failure_message(failure),
                });
            }
        }
    }

    fn unfinished_tasks(&self) -> Vec<TaskKey> {
        self.all_tasks
            .iter()
            .filter(|t| !self.finished.contains(t))
            .copied()
            .collect()
    }

    fn next_random(&mut self) -> u64 {
        self.rng = splitmix64(self.rng);
        self.rng
    }
}

/// The key groups of `subtask` of `v`; empty for an inconsistent vertex (max
/// parallelism below the parallelism) instead of a panic.
fn key_groups(v: &VertexInfo, subtask: u32) -> KeyGroupRange {
    if v.max_parallelism >= v.parallelism && v.parallelism > 0 {
        KeyGroupRange::for_subtask(v.max_parallelism, v.parallelism, subtask)
    } else {
        KeyGroupRange::new(1, 0)
    }
}

#[cfg(test)]
mod tests;
