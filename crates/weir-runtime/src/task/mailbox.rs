//! Control mails to a running task (Flink's mailbox): processed in order on the task
//! thread between batches of input, so a checkpoint trigger or notification never
//! races the records.

use std::sync::mpsc::{channel, Receiver, Sender};
use weir_core::{CheckpointBarrier, CheckpointId};

/// A control mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskMail {
    /// A source task: snapshot now and emit the barrier.
    TriggerCheckpoint(CheckpointBarrier),
    /// A source task: take the synchronous savepoint of a stop-with-savepoint, emit its
    /// barrier, then emit nothing more; when it completes the source ends (with the MAX
    /// watermark first when `drain`), when it is aborted the source goes on.
    StopWithSavepoint {
        /// The savepoint's barrier (snapshot type `SYNC_SAVEPOINT`).
        barrier: CheckpointBarrier,
        /// Emit the MAX watermark before ending (`weir stop --drain`).
        drain: bool,
    },
    /// The checkpoint completed everywhere.
    NotifyCheckpointComplete(CheckpointId),
    /// The checkpoint was aborted.
    NotifyCheckpointAborted(CheckpointId),
}

/// The sending side, kept by whoever deploys the task.
pub type MailboxSender = Sender<TaskMail>;

/// The task's side.
#[derive(Debug)]
pub struct Mailbox {
    rx: Receiver<TaskMail>,
}

impl Mailbox {
    /// A mailbox and its sender.
    pub fn new() -> (MailboxSender, Mailbox) {
        let (tx, rx) = channel();
        (tx, Mailbox { rx })
    }

    /// The next mail, if one is waiting (a dropped sender just means no more mail).
    pub fn try_take(&self) -> Option<TaskMail> {
        self.rx.try_recv().ok()
    }

    /// The next mail, waiting at most `timeout` for one.
    pub fn take_timeout(&self, timeout: std::time::Duration) -> Option<TaskMail> {
        self.rx.recv_timeout(timeout).ok()
    }
}
