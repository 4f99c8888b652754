//! Savepoints and stop-with-savepoint in the JobMaster (Flink's
//! `SchedulerBase.triggerSavepoint` / `stopWithSavepoint` with the trigger-id keyed
//! operation cache of the REST API).
//!
//! A request gets a trigger id at once; the operation then follows its savepoint: it
//! completes with the savepoint's directory when `_metadata` is written, or fails with
//! the abort reason. A stop-with-savepoint triggers a `SYNC_SAVEPOINT`: the sources stop
//! emitting right after its barrier, and end when it completes (after the MAX watermark
//! with `drain`), so the job finishes with no record processed after the savepoint; if
//! the savepoint is aborted the sources go on and the job keeps running.
//!
//! Invariants: at most one stop-with-savepoint is in progress; an operation, once
//! completed or failed, never changes again.

use super::{Action, JobMaster};
use crate::resource_manager::slot_table::SlotTable;
use weir_checkpoint::CoordinatorAction;
use weir_core::JobStatus;
use weir_core::{CheckpointId, SnapshotType};
use weir_graph::ExecutionState;

/// Flink's message when neither the request nor the configuration names a directory.
pub const NO_SAVEPOINT_DIRECTORY: &str = "No savepoint directory configured. You can either specify a directory \
     while triggering the savepoint or configure a cluster-wide default via key \
     'execution.checkpointing.savepoint-dir'.";

/// Where a savepoint operation stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SavepointStatus {
    /// Triggered, not yet complete.
    InProgress,
    /// Written; `location` is its directory.
    Completed {
        /// The savepoint directory.
        location: String,
    },
    /// Could not be taken.
    Failed {
        /// Why.
        message: String,
    },
}

/// One savepoint or stop-with-savepoint request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavepointOperation {
    /// The savepoint's checkpoint id.
    pub checkpoint_id: CheckpointId,
    /// Set for a stop-with-savepoint: whether it drains.
    pub stop_drain: Option<bool>,
    /// Where it stands.
    pub status: SavepointStatus,
}

/// What a savepoint request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavepointRequest {
    /// The directory to put the savepoint in; the configured savepoint directory when
    /// `None`.
    pub target_directory: Option<String>,
    /// Stop the job after the savepoint (`Some(drain)`), or let it go on (`None`).
    pub stop_drain: Option<bool>,
}

/// A savepoint request refused before anything was triggered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SavepointRefused {
    /// No directory in the request nor in the configuration.
    #[error("{NO_SAVEPOINT_DIRECTORY}")]
    NoDirectory,
    /// The job is not in a state to take one.
    #[error("{0}")]
    NotPossible(String),
}

impl JobMaster {
    /// Triggers a savepoint (or a stop-with-savepoint) registered under `trigger_id`.
    pub fn trigger_savepoint(
        &mut self,
        trigger_id: String,
        request: SavepointRequest,
        slots: &mut SlotTable,
        now_ms: i64,
    ) -> Result<Vec<Action>, SavepointRefused> {
        let configured = self.checkpoints.as_ref().and_then(|c| c.config().savepoint_dir.clone());
        let target = request
            .target_directory
            .filter(|d| !d.trim().is_empty())
            .or(configured)
            .ok_or(SavepointRefused::NoDirectory)?;
        let not_possible = |why: &str| SavepointRefused::NotPossible(why.to_string());
        if self.status != JobStatus::Running {
            return Err(not_possible(&format!(
                "Cannot trigger a savepoint: job {} is {}, not RUNNING.",
                self.job_id, self.status
            )));
        }
        // Finished tasks go into the savepoint as finished (FLIP-147), as in checkpoints.
        let all_running = self.execution_graph.job_vertices.iter().all(|v| {
            v.task_vertices
                .iter()
                .all(|t| matches!(t.current.state, ExecutionState::Running | ExecutionState::Finished))
        });
        if !all_running {
            return Err(not_possible(
                "Cannot trigger a savepoint: not all tasks of the job are running (some are still being deployed).",
            ));
        }
        if request.stop_drain.is_some() && self.stop_in_progress() {
            return Err(not_possible(
                "A stop-with-savepoint of this job is already in progress.",
            ));
        }
        let snapshot_type = match request.stop_drain {
            Some(_) => SnapshotType::SyncSavepoint,
            None => SnapshotType::Savepoint,
        };
        let coordinator = self
            .checkpoints
            .as_mut()
            .ok_or_else(|| not_possible("The job has no checkpoint coordinator."))?;
        let (checkpoint_id, decisions) = coordinator
            .trigger_savepoint(now_ms, snapshot_type, target)
            .map_err(|e| SavepointRefused::NotPossible(e.to_string()))?;
        self.savepoints.insert(
            trigger_id,
            SavepointOperation {
                checkpoint_id,
                stop_drain: request.stop_drain,
                status: SavepointStatus::InProgress,
            },
        );
        Ok(self.carry_out(decisions, slots, now_ms))
    }

    /// The operation registered under `trigger_id`.
    pub fn savepoint_operation(&self, trigger_id: &str) -> Option<&SavepointOperation> {
        self.savepoints.get(trigger_id)
    }

    fn stop_in_progress(&self) -> bool {
        self.savepoints
            .values()
            .any(|op| op.stop_drain.is_some() && op.status == SavepointStatus::InProgress)
    }

    /// Whether the trigger of `checkpoint_id` is a draining stop-with-savepoint.
    pub(super) fn drains(&self, checkpoint_id: CheckpointId) -> bool {
        self.savepoints
            .values()
            .any(|op| op.checkpoint_id == checkpoint_id && op.stop_drain == Some(true))
    }

    /// Follows coordinator decisions: a savepoint's completion or abort settles its
    /// operation. `written` is the location reported for a just-written checkpoint.
    pub(super) fn settle_savepoints(&mut self, decisions: &[CoordinatorAction], written: Option<(CheckpointId, &str)>) {
        for decision in decisions {
            let (id, status) = match decision {
                CoordinatorAction::NotifyComplete { checkpoint_id, .. } => match written {
                    Some((id, location)) if id == *checkpoint_id => (
                        id,
                        SavepointStatus::Completed {
                            location: location.to_string(),
                        },
                    ),
                    _ => continue,
                },
                CoordinatorAction::NotifyAborted {
                    checkpoint_id, reason, ..
                } => (
                    *checkpoint_id,
                    SavepointStatus::Failed {
                        message: reason.clone(),
                    },
                ),
                _ => continue,
            };
            for op in self.savepoints.values_mut() {
                if op.checkpoint_id == id && op.status == SavepointStatus::InProgress {
                    op.status = status.clone();
                }
            }
        }
    }

    /// The job reached a terminal status: operations still in progress fail.
    pub(super) fn fail_open_savepoints(&mut self, why: &str) {
        for op in self.savepoints.values_mut() {
            if op.status == SavepointStatus::InProgress {
                op.status = SavepointStatus::Failed {
                    message: why.to_string(),
                };
            }
        }
    }
}
