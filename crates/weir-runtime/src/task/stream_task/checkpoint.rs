//! The task loop's part in checkpoints: taking the synchronous snapshot, forwarding the
//! barrier (an unaligned one as a priority event, keeping what it overtook as output
//! channel state), completing an unaligned checkpoint with its input channel state,
//! and handing the snapshot to a background thread that encodes, stores and
//! acknowledges it.
//!
//! Invariant: every checkpoint the loop starts ends in exactly one acknowledgement or
//! one decline to the responder.

use super::{PendingUnaligned, TaskLoop};
use crate::checkpoint::{CompletedSnapshot, SnapshotMetrics};
use crate::error::TaskError;
use std::time::{Duration, Instant};
use weir_core::{CheckpointBarrier, CheckpointId, Event};
use weir_state::PendingTaskSnapshot;

impl TaskLoop<'_> {
    /// Takes the task's part of checkpoint `barrier.id`: snapshot, barrier downstream
    /// (with output channel state when it is unaligned: a source's), asynchronous store
    /// and acknowledgement.
    pub(super) fn checkpoint(&mut self, barrier: CheckpointBarrier, alignment: Duration) -> Result<(), TaskError> {
        let started = Instant::now();
        let Some(snapshot) = self.snapshot_and_forward(barrier)? else {
            return Ok(());
        };
        let metrics = SnapshotMetrics {
            sync_duration_ms: started.elapsed().as_millis() as u64,
            async_duration_ms: 0,
            alignment_duration_ms: alignment.as_millis() as u64,
        };
        self.persist(barrier.id, snapshot, metrics);
        Ok(())
    }

    /// The first half of an unaligned checkpoint: snapshot and barrier downstream now;
    /// the snapshot waits for its channel state ([`complete_unaligned`](Self::complete_unaligned)).
    pub(super) fn checkpoint_unaligned(&mut self, barrier: CheckpointBarrier) -> Result<(), TaskError> {
        let started = Instant::now();
        if let Some(snapshot) = self.snapshot_and_forward(barrier)? {
            self.unaligned = Some(PendingUnaligned {
                checkpoint_id: barrier.id,
                snapshot,
                sync_duration: started.elapsed(),
            });
        }
        Ok(())
    }

    /// The channel state of unaligned checkpoint `id` is complete: store the snapshot
    /// with it and acknowledge.
    pub(super) fn complete_unaligned(
        &mut self,
        id: CheckpointId,
        input_channel_state: Vec<weir_state::InputChannelState>,
        alignment: Duration,
    ) {
        let Some(pending) = self.unaligned.take().filter(|p| p.checkpoint_id == id) else {
            // The synchronous snapshot failed (and was declined) or there is no
            // checkpointing: nothing to complete.
            return;
        };
        let mut snapshot = pending.snapshot;
        snapshot.snapshot.input_channel_state = input_channel_state;
        let metrics = SnapshotMetrics {
            sync_duration_ms: pending.sync_duration.as_millis() as u64,
            async_duration_ms: 0,
            alignment_duration_ms: alignment.as_millis() as u64,
        };
        self.persist(id, snapshot, metrics);
    }

    /// Snapshots every registered operator and forwards `barrier` (an unaligned one as
    /// a priority event, the data it overtook becoming the snapshot's output channel
    /// state); `None` when the task does not checkpoint or the snapshot failed (then
    /// the checkpoint is declined).
    fn snapshot_and_forward(&mut self, barrier: CheckpointBarrier) -> Result<Option<PendingTaskSnapshot>, TaskError> {
        let Some(cp) = self.checkpointing.as_ref() else {
            // A job without checkpointing never sees barriers; forward to keep order.
            self.ctx.broadcast_event(Event::CheckpointBarrier(barrier))?;
            return Ok(None);
        };
        let format = cp.storage.format(barrier.options.snapshot_type);
        let snapshot = match self.ctx.state().snapshot_async(barrier.id, format) {
            Ok(snapshot) => Some(snapshot),
            Err(e) => {
                cp.responder
                    .decline(barrier.id, format!("the synchronous snapshot failed: {e}"));
                None
            }
        };
        if self.outputs_ended {
            // The final checkpoint: every consumer has its EndOfPartition, which counts
            // as the barrier.
            return Ok(snapshot);
        }
        if !barrier.options.is_unaligned() {
            self.ctx.broadcast_event(Event::CheckpointBarrier(barrier))?;
            return Ok(snapshot);
        }
        let output_channel_state = self.ctx.broadcast_priority_event(Event::CheckpointBarrier(barrier))?;
        Ok(snapshot.map(|mut s| {
            s.snapshot.output_channel_state = output_channel_state;
            s
        }))
    }

    /// Hands `snapshot` to a background thread that completes (encodes the frozen
    /// keyed state), encodes and stores it and acknowledges checkpoint `id` (at once,
    /// without a handle, when it is empty).
    fn persist(&mut self, id: CheckpointId, snapshot: PendingTaskSnapshot, metrics: SnapshotMetrics) {
        let Some(cp) = self.checkpointing.as_ref() else {
            return;
        };
        let persisted_data = snapshot.snapshot.persisted_data();
        let union_state = snapshot.has_union_state();
        if snapshot.is_empty() {
            cp.responder.acknowledge(CompletedSnapshot {
                checkpoint_id: id,
                handle: None,
                state_size: 0,
                persisted_data: 0,
                union_state,
                shared_state: Vec::new(),
                checkpointed_size: 0,
                metrics,
            });
            return;
        }
        let (storage, responder) = (cp.storage.clone(), cp.responder.clone());
        let on_failure = cp.responder.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("checkpoint {id} upload"))
            .spawn(move || {
                let upload = Instant::now();
                // Encoding (and uploading the new files of on-disk stores) is the
                // asynchronous phase: the task thread only took the operator state's
                // bytes and froze the keyed state.
                let completed = snapshot.complete_with(Some(&storage)).and_then(|s| {
                    let bytes = s.encode()?;
                    Ok((bytes, s.shared_state(), s.shared_state_size(), s.uploaded_shared_size()))
                });
                let (bytes, shared_state, shared_size, uploaded) = match completed {
                    Ok(completed) => completed,
                    Err(e) => return responder.decline(id, format!("the asynchronous snapshot failed: {e}")),
                };
                let size = bytes.len() as u64;
                match storage.store(id, bytes) {
                    Ok(handle) => responder.acknowledge(CompletedSnapshot {
                        checkpoint_id: id,
                        handle: Some(handle),
                        state_size: size + shared_size,
                        persisted_data,
                        union_state,
                        shared_state,
                        checkpointed_size: size + uploaded,
                        metrics: SnapshotMetrics {
                            async_duration_ms: upload.elapsed().as_millis() as u64,
                            ..metrics
                        },
                    }),
                    Err(e) => responder.decline(id, format!("the asynchronous snapshot failed: {e}")),
                }
            });
        match spawned {
            Ok(upload) => {
                self.uploads.retain(|u| !u.is_finished());
                self.uploads.push(upload);
            }
            Err(e) => on_failure.decline(id, format!("cannot start the snapshot upload: {e}")),
        }
    }

    /// Waits until every upload started has acknowledged or declined its checkpoint.
    pub(super) fn wait_for_uploads(&mut self) {
        for upload in self.uploads.drain(..) {
            if upload.join().is_err() {
                tracing::error!(
                    "a snapshot upload of task '{}' panicked",
                    self.ctx.task_name_with_subtask()
                );
            }
        }
    }

    pub(super) fn decline(&self, id: u64, reason: &str) {
        if let Some(cp) = &self.checkpointing {
            cp.responder.decline(id, reason.to_string());
        }
    }
}
