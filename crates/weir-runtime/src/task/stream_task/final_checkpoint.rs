//! The wait for the final checkpoint (Flink's FLIP-147): after the chain's input ended
//! and its outputs sent EndOfPartition, a task whose operators still await a completed
//! checkpoint (a two-phase-commit sink whose last transactions may only be committed
//! by one) stays alive, serving only its mailbox.
//!
//! - A trigger (a periodic checkpoint or a savepoint; the task is a root now, as every
//!   upstream task has finished) takes the task's part at once: snapshot, no barrier,
//!   store and acknowledge.
//! - A completion notification lets the operators commit; an abort leaves them waiting
//!   for the next checkpoint.
//! - Cancellation ends the wait as an error, as everywhere in the loop.
//!
//! The wait is idle time. It ends as soon as no operator awaits a checkpoint, at once
//! when none did, and never starts in a job without periodic checkpoints (operators are
//! told so at build time and finish their work at the end of input instead).

use super::{InputCounters, TaskLoop};
use crate::error::TaskError;
use crate::task::mailbox::TaskMail;
use std::time::Duration;

/// How long one wait for mail lasts before cancellation is checked again.
const MAIL_POLL: Duration = Duration::from_millis(100);

impl TaskLoop<'_> {
    /// Serves the mailbox until no operator awaits the final checkpoint; `input` keeps
    /// the task's published counters current meanwhile.
    pub(super) fn await_final_checkpoint(&mut self, input: InputCounters) -> Result<(), TaskError> {
        let mut announced = false;
        while self.ctx.state().awaits_final_checkpoint() {
            if !announced {
                announced = true;
                tracing::debug!(
                    "{} ended its input and waits for a checkpoint to commit its output",
                    self.ctx.task_name_with_subtask()
                );
            }
            self.check_cancelled()?;
            if self.publish_due() {
                self.publish_now(input);
            }
            self.wait_for_mail(MAIL_POLL);
            let Some(mail) = self.pending_mail.take() else {
                continue;
            };
            match mail {
                TaskMail::TriggerCheckpoint(barrier) | TaskMail::StopWithSavepoint { barrier, .. } => {
                    self.checkpoint(barrier, Duration::ZERO)?
                }
                TaskMail::NotifyCheckpointComplete(id) => self.ctx.state().notify_complete(id)?,
                TaskMail::NotifyCheckpointAborted(id) => self.ctx.state().notify_aborted(id)?,
            }
        }
        Ok(())
    }
}
