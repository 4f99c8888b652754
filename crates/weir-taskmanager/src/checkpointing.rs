//! The TaskManager's part of checkpointing: what goes to the JobMaster (state reports,
//! checkpoint acknowledgements and declines, in order on one channel), the responder
//! the tasks call, and reading a deployment's checkpoint settings and restore state.

use crate::attempt_ref::AttemptRef;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;
use weir_core::checkpoint::StreamStateHandle;
use weir_rpc::{AcknowledgeCheckpointRequest, DeclineCheckpointRequest, TaskDeploymentDescriptor, TaskExecutionState};
use weir_runtime::checkpoint::{CheckpointResponder, CompletedSnapshot, TaskRestore, TaskStateStorage};
use weir_runtime::task::mailbox::Mailbox;
use weir_runtime::task::TaskCheckpointing;

/// A message to the JobMaster.
#[derive(Debug, Clone)]
pub enum Report {
    /// A task changed state (boxed: the largest report by far).
    State(Box<TaskExecutionState>),
    /// A task stored its part of a checkpoint.
    Acknowledge(AcknowledgeCheckpointRequest),
    /// A task declined a checkpoint.
    Decline(DeclineCheckpointRequest),
}

/// Sends one attempt's acknowledgements and declines to the JobMaster.
pub struct RpcResponder {
    attempt: AttemptRef,
    reports: UnboundedSender<Report>,
}

impl RpcResponder {
    fn send(&self, report: Report) {
        if self.reports.send(report).is_err() {
            tracing::warn!(
                "checkpoint report of attempt {} (job {}) dropped: the TaskManager is shutting down",
                self.attempt.attempt_id,
                self.attempt.job_id
            );
        }
    }
}

impl CheckpointResponder for RpcResponder {
    fn acknowledge(&self, s: CompletedSnapshot) {
        tracing::debug!(
            "checkpoint {} of attempt {} (job {}): {} bytes, sync {} ms, async {} ms, alignment {} ms",
            s.checkpoint_id,
            self.attempt.attempt_id,
            self.attempt.job_id,
            s.state_size,
            s.metrics.sync_duration_ms,
            s.metrics.async_duration_ms,
            s.metrics.alignment_duration_ms
        );
        self.send(Report::Acknowledge(AcknowledgeCheckpointRequest {
            job_id: self.attempt.job_id.clone(),
            attempt_id: self.attempt.attempt_id.clone(),
            job_master_id: self.attempt.job_master_id.clone(),
            checkpoint_id: s.checkpoint_id,
            handle: s.handle.as_ref().map(Into::into),
            state_size: s.state_size,
            sync_duration_ms: s.metrics.sync_duration_ms,
            async_duration_ms: s.metrics.async_duration_ms,
            alignment_duration_ms: s.metrics.alignment_duration_ms,
            persisted_data: s.persisted_data,
            union_state: s.union_state,
            shared_state: s
                .shared_state
                .iter()
                .map(|f| weir_rpc::FileStateHandle {
                    path: f.path.clone(),
                    size: f.size,
                })
                .collect(),
            checkpointed_size: s.checkpointed_size,
        }));
    }

    fn decline(&self, checkpoint_id: u64, reason: String) {
        self.send(Report::Decline(DeclineCheckpointRequest {
            job_id: self.attempt.job_id.clone(),
            attempt_id: self.attempt.attempt_id.clone(),
            job_master_id: self.attempt.job_master_id.clone(),
            checkpoint_id,
            reason,
        }));
    }
}

/// The task's checkpointing from its deployment: `None` when the job does not
/// checkpoint; an error names a malformed restore handle.
pub fn task_checkpointing(
    tdd: &TaskDeploymentDescriptor,
    vertex_id: &str,
    mailbox: Mailbox,
    reports: UnboundedSender<Report>,
) -> Result<Option<TaskCheckpointing>, String> {
    let Some(settings) = tdd.checkpointing.as_ref() else {
        return Ok(None);
    };
    let restore = match &tdd.restore {
        Some(r) => {
            let handles: Option<Vec<StreamStateHandle>> = r.handles.iter().map(|h| h.to_domain()).collect();
            Some(TaskRestore {
                checkpoint_id: r.checkpoint_id,
                handles: handles.ok_or_else(|| {
                    format!(
                        "the restore state of checkpoint {} has an empty state handle",
                        r.checkpoint_id
                    )
                })?,
                rescaled: r.rescaled,
                union_only: r.union_only.clone(),
                finished: r.finished,
            })
        }
        None => None,
    };
    Ok(Some(TaskCheckpointing {
        mailbox,
        storage: TaskStateStorage {
            dir: settings.directory().map(str::to_string),
            job_id: tdd.job_id.clone(),
            task_file_name: format!("{vertex_id}-{}-{}", tdd.subtask_index, tdd.attempt_id),
            inline_threshold: settings.inline_threshold,
            incremental: settings.incremental,
        },
        responder: Arc::new(RpcResponder {
            attempt: AttemptRef::of(tdd),
            reports,
        }),
        restore,
        final_checkpoint: settings.periodic,
    }))
}
