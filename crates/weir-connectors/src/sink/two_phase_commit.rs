//! A generic two-phase-commit sink (Flink's `TwoPhaseCommitSinkFunction`): the
//! [`TwoPhaseCommitSink`] trait a transactional sink implements, and the operator
//! ([`TwoPhaseCommitOperator`]) that drives it through the task's checkpoints.
//!
//! The operator owns the sink's transactions and their life cycle:
//!
//! * records go into the **current** transaction;
//! * at a checkpoint's barrier ([`CheckpointedOperator::snapshot_state`]) the current
//!   transaction is pre-committed (flushed and made durable), kept **pending** under the
//!   checkpoint's id, and a new one is begun; the snapshot holds the pending
//!   transactions and the new open one as one operator list-state element
//!   ([`TWO_PHASE_COMMIT_STATE`]), so a rescale hands a subtask's transactions over
//!   whole;
//! * when checkpoint `n` completes, every pending transaction of a checkpoint `<= n` is
//!   committed, oldest first, and dropped; an aborted checkpoint leaves them pending (a
//!   later completion commits them, as Flink does);
//! * on restore, every restored pending transaction is committed (its checkpoint
//!   completed, so its data belongs to the result; commits are idempotent) and every
//!   restored open transaction is aborted (its data came after the checkpoint and is
//!   replayed);
//! * at the end of a bounded input, in a job with periodic checkpoints, the current
//!   transaction stays open and the operator **awaits the final checkpoint** (Flink's
//!   FLIP-147): the task does not finish until a checkpoint after the end of input
//!   pre-committed it and completed, and every pending transaction is committed; a
//!   snapshot then records that the input had **ended**. Restored from such a
//!   snapshot, the operator commits as above and writes nothing more: everything its
//!   input could still bring was in the committed transactions, so records replayed
//!   after the restore are dropped;
//! * without periodic checkpoints the operator pre-commits the current transaction and
//!   commits everything at the end of input (nothing else would commit it). A failover
//!   after that restores an earlier savepoint and aborts the restored open
//!   transaction; the sink's `abort` must then also undo what was committed after it,
//!   see `file.rs`.
//!
//! Invariants: pending transactions are ordered by checkpoint id and commit in that
//! order; a failed commit, pre-commit or abort is the task's error, never swallowed;
//! corrupt state bytes are a [`TaskError::Restore`] naming what was wrong.
//!
//! State format (version 2): a version byte, a big-endian u32 count of pending
//! transactions, each a u64 checkpoint id and a u32-length-prefixed transaction,
//! then a flag byte (1: an open transaction follows, u32-length-prefixed), then a byte
//! saying whether the input had ended (0 or 1), and nothing after it. Version 1, read
//! too, has no end-of-input byte.

use std::marker::PhantomData;
use thiserror::Error;
use weir_core::{CheckpointId, StreamRecord, Watermark};
use weir_runtime::checkpoint::CheckpointedOperator;
use weir_runtime::operator::{register_checkpointed, Output, TaskContext};
use weir_runtime::TaskError;
use weir_state::OperatorSnapshot;

/// Name of the operator list state holding the transactions.
pub const TWO_PHASE_COMMIT_STATE: &str = "two-phase-commit-transactions";

/// The version byte of the operator's state element.
const STATE_VERSION: u8 = 2;

/// The oldest version of the state element this build reads.
const OLDEST_STATE_VERSION: u8 = 1;

/// Why state bytes could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StateDecodeError {
    /// The bytes start with a version this build does not read.
    #[error("{what}: format version {found} is not supported (this build reads {supported})")]
    Version {
        /// What was being read.
        what: &'static str,
        /// The version found.
        found: u8,
        /// The version this build reads.
        supported: u8,
    },
    /// The bytes end before a field.
    #[error("{what}: truncated: {needed} more bytes needed at offset {offset} of {len}")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes the next field needs.
        needed: usize,
        /// Where it starts.
        offset: usize,
        /// Length of the input.
        len: usize,
    },
    /// Bytes are left after the last field.
    #[error("{what}: {extra} unexpected bytes after the end")]
    Trailing {
        /// What was being read.
        what: &'static str,
        /// How many.
        extra: usize,
    },
    /// A field holds an impossible value.
    #[error("{what}: {reason}")]
    Invalid {
        /// What was being read.
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

/// Reads length-checked big-endian fields from state bytes.
pub struct StateReader<'a> {
    what: &'static str,
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> StateReader<'a> {
    /// A reader of `bytes` holding `what` (named in errors), checking its leading
    /// version byte against `version`.
    pub fn new(what: &'static str, bytes: &'a [u8], version: u8) -> Result<Self, StateDecodeError> {
        Self::versioned(what, bytes, version..=version).map(|(r, _)| r)
    }

    /// A reader of `bytes` whose leading version byte is one of `versions`, with the
    /// version found.
    pub fn versioned(
        what: &'static str,
        bytes: &'a [u8],
        versions: std::ops::RangeInclusive<u8>,
    ) -> Result<(Self, u8), StateDecodeError> {
        let mut r = Self { what, bytes, offset: 0 };
        let found = r.u8()?;
        if !versions.contains(&found) {
            return Err(StateDecodeError::Version {
                what,
                found,
                supported: *versions.end(),
            });
        }
        Ok((r, found))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], StateDecodeError> {
        if self.bytes.len() - self.offset < n {
            return Err(StateDecodeError::Truncated {
                what: self.what,
                needed: n,
                offset: self.offset,
                len: self.bytes.len(),
            });
        }
        let out = &self.bytes[self.offset..self.offset + n];
        self.offset += n;
        Ok(out)
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8, StateDecodeError> {
        Ok(self.take(1)?[0])
    }

    /// A big-endian u32.
    pub fn u32(&mut self) -> Result<u32, StateDecodeError> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4)?);
        Ok(u32::from_be_bytes(b))
    }

    /// A big-endian u64.
    pub fn u64(&mut self) -> Result<u64, StateDecodeError> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(b))
    }

    /// A u32-length-prefixed byte string.
    pub fn bytes(&mut self) -> Result<&'a [u8], StateDecodeError> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    /// A u32-length-prefixed UTF-8 string.
    pub fn string(&mut self) -> Result<String, StateDecodeError> {
        let what = self.what;
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|e| StateDecodeError::Invalid {
            what,
            reason: format!("a string is not UTF-8: {e}"),
        })
    }

    /// Checks that every byte was read.
    pub fn finish(self) -> Result<(), StateDecodeError> {
        match self.bytes.len() - self.offset {
            0 => Ok(()),
            extra => Err(StateDecodeError::Trailing { what: self.what, extra }),
        }
    }
}

/// Appends `bytes` with its u32 length in front.
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// A transaction's durable identity, as it goes into a checkpoint.
pub trait TransactionCodec: Sized {
    /// The versioned bytes of the transaction.
    fn encode(&self) -> Vec<u8>;
    /// Reads bytes written by [`encode`](Self::encode).
    fn decode(bytes: &[u8]) -> Result<Self, StateDecodeError>;
}

/// A sink that writes in transactions committed after the checkpoint that covers them.
pub trait TwoPhaseCommitSink<T> {
    /// One transaction: what was written since the previous checkpoint.
    type Transaction: TransactionCodec;

    /// Starts a new transaction.
    fn begin_transaction(&mut self) -> Result<Self::Transaction, TaskError>;
    /// Writes `record` into `txn`.
    fn invoke(&mut self, txn: &mut Self::Transaction, record: T) -> Result<(), TaskError>;
    /// At a checkpoint's barrier: flushes `txn` and makes it durable, so that it can be
    /// committed (or aborted) later, possibly by another process.
    fn pre_commit(&mut self, txn: &mut Self::Transaction) -> Result<(), TaskError>;
    /// Makes a pre-committed `txn` visible. Must be idempotent: committing a transaction
    /// that is already committed succeeds.
    fn commit(&mut self, txn: &Self::Transaction) -> Result<(), TaskError>;
    /// Discards `txn` (a restored open transaction: its data is replayed).
    fn abort(&mut self, txn: Self::Transaction) -> Result<(), TaskError>;
    /// Called once on restore, before the restored transactions are committed and
    /// aborted and before the first new transaction begins, with the restored open
    /// transactions (e.g. to continue a writer's numbering).
    fn restore(&mut self, open: &[Self::Transaction]) -> Result<(), TaskError> {
        let _ = open;
        Ok(())
    }
}

/// The transactions of one subtask as one list-state element.
struct TransactionState<X> {
    pending: Vec<(CheckpointId, X)>,
    open: Option<X>,
    /// The subtask's input had ended.
    ended: bool,
}

impl<X: TransactionCodec> TransactionState<X> {
    fn encode(pending: &[(CheckpointId, X)], open: Option<&X>, ended: bool) -> Vec<u8> {
        let mut out = vec![STATE_VERSION];
        out.extend_from_slice(&(pending.len() as u32).to_be_bytes());
        for (id, txn) in pending {
            out.extend_from_slice(&id.to_be_bytes());
            put_bytes(&mut out, &txn.encode());
        }
        match open {
            Some(txn) => {
                out.push(1);
                put_bytes(&mut out, &txn.encode());
            }
            None => out.push(0),
        }
        out.push(u8::from(ended));
        out
    }

    fn decode(bytes: &[u8]) -> Result<Self, StateDecodeError> {
        let what = "two-phase-commit state";
        let (mut r, version) = StateReader::versioned(what, bytes, OLDEST_STATE_VERSION..=STATE_VERSION)?;
        let n = r.u32()?;
        let mut pending = Vec::new();
        for _ in 0..n {
            let id = r.u64()?;
            pending.push((id, X::decode(r.bytes()?)?));
        }
        let open = match r.u8()? {
            0 => None,
            1 => Some(X::decode(r.bytes()?)?),
            flag => {
                return Err(StateDecodeError::Invalid {
                    what,
                    reason: format!("open-transaction flag {flag} is neither 0 nor 1"),
                })
            }
        };
        let ended = match version {
            1 => false,
            _ => match r.u8()? {
                0 => false,
                1 => true,
                flag => {
                    return Err(StateDecodeError::Invalid {
                        what,
                        reason: format!("end-of-input flag {flag} is neither 0 nor 1"),
                    })
                }
            },
        };
        r.finish()?;
        Ok(Self { pending, open, ended })
    }
}

/// Drives a [`TwoPhaseCommitSink`] through checkpoints; see the module doc.
pub struct TwoPhaseCommitOperator<T, S: TwoPhaseCommitSink<T>> {
    sink: S,
    current: Option<S::Transaction>,
    /// Records went into `current`.
    written: bool,
    pending: Vec<(CheckpointId, S::Transaction)>,
    /// A checkpoint will come after the end of input (the job checkpoints
    /// periodically).
    final_checkpoint: bool,
    /// The input ended; the last transactions wait for the final checkpoint.
    ended: bool,
    /// Restored from a snapshot taken after the end of input: nothing more is written.
    restored_ended: bool,
    /// Records dropped because the operator was restored after its end of input.
    dropped: u64,
    _records: PhantomData<fn(T)>,
}

impl<T, S: TwoPhaseCommitSink<T>> TwoPhaseCommitOperator<T, S> {
    /// The operator of `sink`, restored from `restored` (the state of checkpoint
    /// `checkpoint_id`) if given: restored pending transactions are committed, restored
    /// open ones aborted, then the first transaction begins.
    pub fn restore(
        sink: S,
        restored: Option<OperatorSnapshot>,
        checkpoint_id: CheckpointId,
    ) -> Result<Self, TaskError> {
        let mut op = Self {
            sink,
            current: None,
            written: false,
            pending: Vec::new(),
            final_checkpoint: false,
            ended: false,
            restored_ended: false,
            dropped: 0,
            _records: PhantomData,
        };
        let elements = restored
            .and_then(|mut s| s.list.remove(TWO_PHASE_COMMIT_STATE))
            .unwrap_or_default();
        let mut pending = Vec::new();
        let mut open = Vec::new();
        for bytes in &elements {
            let state = TransactionState::<S::Transaction>::decode(bytes).map_err(|e| TaskError::Restore {
                checkpoint_id,
                reason: e.to_string(),
            })?;
            pending.extend(state.pending);
            open.extend(state.open);
            op.restored_ended |= state.ended;
        }
        if !elements.is_empty() {
            op.sink.restore(&open)?;
        }
        pending.sort_by_key(|(id, _)| *id);
        for (_, txn) in &pending {
            op.sink.commit(txn)?;
        }
        for txn in open {
            op.sink.abort(txn)?;
        }
        if !op.restored_ended {
            op.current = Some(op.sink.begin_transaction()?);
        }
        Ok(op)
    }

    /// The same operator in a job that takes periodic checkpoints: at the end of input
    /// it awaits the final checkpoint instead of committing at once.
    pub fn with_final_checkpoint(mut self, expected: bool) -> Self {
        self.final_checkpoint = expected;
        self
    }

    /// The operator of `sink` for the subtask of `ctx`, restored from the task's
    /// restored state and registered with its checkpoints; the chain's handle.
    pub fn build(ctx: &TaskContext, sink: S) -> Result<Box<dyn Output<T>>, TaskError>
    where
        S: 'static,
        T: 'static,
    {
        let restored = ctx.state().restored(ctx.key_group_range());
        let checkpoint_id = ctx.state().restored_checkpoint().unwrap_or(0);
        let op = Self::restore(sink, restored, checkpoint_id)?.with_final_checkpoint(ctx.final_checkpoint_expected());
        register_checkpointed(ctx, op)
    }

    /// The sink.
    pub fn sink(&self) -> &S {
        &self.sink
    }

    /// Records dropped because the operator was restored from a snapshot taken after its
    /// end of input.
    pub fn dropped_after_end_of_input(&self) -> u64 {
        self.dropped
    }

    /// Checkpoint ids of the transactions waiting for their checkpoint to complete.
    pub fn pending_checkpoints(&self) -> Vec<CheckpointId> {
        self.pending.iter().map(|(id, _)| *id).collect()
    }

    /// Commits the pending transactions of checkpoints `<= up_to`, oldest first.
    fn commit_up_to(&mut self, up_to: CheckpointId) -> Result<(), TaskError> {
        while self.pending.first().is_some_and(|(id, _)| *id <= up_to) {
            self.sink.commit(&self.pending[0].1)?;
            self.pending.remove(0);
        }
        Ok(())
    }
}

impl<T, S: TwoPhaseCommitSink<T>> Output<T> for TwoPhaseCommitOperator<T, S> {
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        if self.restored_ended {
            self.dropped += 1;
            return Ok(());
        }
        let txn = match self.current.as_mut() {
            Some(txn) if !self.ended => txn,
            _ => {
                return Err(TaskError::Build(
                    "the two-phase-commit sink got a record after its end of input".into(),
                ))
            }
        };
        self.written = true;
        self.sink.invoke(txn, record.value)
    }

    fn emit_watermark(&mut self, _watermark: Watermark) -> Result<(), TaskError> {
        Ok(())
    }

    /// Awaits the final checkpoint when one will come and there is something to commit;
    /// otherwise pre-commits the current transaction and commits everything.
    fn end_input(&mut self) -> Result<(), TaskError> {
        if self.restored_ended {
            if self.dropped > 0 {
                tracing::info!(
                    "a two-phase-commit sink restored after its end of input dropped {} replayed records",
                    self.dropped
                );
            }
            return Ok(());
        }
        if self.final_checkpoint && (self.written || !self.pending.is_empty()) {
            self.ended = true;
            return Ok(());
        }
        if let Some(mut txn) = self.current.take() {
            self.sink.pre_commit(&mut txn)?;
            self.pending.push((CheckpointId::MAX, txn));
        }
        self.commit_up_to(CheckpointId::MAX)
    }
}

impl<T, S: TwoPhaseCommitSink<T>> CheckpointedOperator for TwoPhaseCommitOperator<T, S> {
    fn snapshot_state(&mut self, checkpoint_id: CheckpointId) -> Result<OperatorSnapshot, TaskError> {
        // A failed pre-commit declines the checkpoint and keeps the transaction current.
        if let Some(txn) = self.current.as_mut() {
            self.sink.pre_commit(txn)?;
            // After the end of input no new transaction begins: nothing more comes.
            let next = match self.ended {
                true => None,
                false => Some(self.sink.begin_transaction()?),
            };
            if let Some(done) = std::mem::replace(&mut self.current, next) {
                self.pending.push((checkpoint_id, done));
            }
            self.written = false;
        }
        let ended = self.ended || self.restored_ended;
        let element = TransactionState::encode(&self.pending, self.current.as_ref(), ended);
        let mut s = OperatorSnapshot::default();
        s.list.insert(TWO_PHASE_COMMIT_STATE.to_string(), vec![element]);
        Ok(s)
    }

    fn notify_checkpoint_complete(&mut self, checkpoint_id: CheckpointId) -> Result<(), TaskError> {
        self.commit_up_to(checkpoint_id)
    }

    /// Keeps the pending transactions: a later completion commits them.
    fn notify_checkpoint_aborted(&mut self, _checkpoint_id: CheckpointId) -> Result<(), TaskError> {
        Ok(())
    }

    fn awaits_final_checkpoint(&self) -> bool {
        self.ended && (self.current.is_some() || !self.pending.is_empty())
    }
}

#[cfg(test)]
#[path = "two_phase_commit_tests.rs"]
mod tests;
