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
//! * at the end of a bounded input the current transaction is pre-committed and
//!   everything is committed: Weir takes no checkpoint after a task finished, so a
//!   finished job's output is complete without one. (A failover after that restores an
//!   earlier checkpoint and aborts the restored open transaction; the sink's `abort`
//!   must then also undo what was committed after it, see `file.rs`.)
//!
//! Without checkpointing the operator simply commits at the end of input.
//!
//! Invariants: pending transactions are ordered by checkpoint id and commit in that
//! order; a failed commit, pre-commit or abort is the task's error, never swallowed;
//! corrupt state bytes are a [`TaskError::Restore`] naming what was wrong.
//!
//! State format (version 1): a version byte, a big-endian u32 count of pending
//! transactions, each a u64 checkpoint id and a u32-length-prefixed transaction,
//! then a flag byte (1: an open transaction follows, u32-length-prefixed) and nothing
//! after it.

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
const STATE_VERSION: u8 = 1;

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
        let mut r = Self { what, bytes, offset: 0 };
        let found = r.u8()?;
        if found != version {
            return Err(StateDecodeError::Version {
                what,
                found,
                supported: version,
            });
        }
        Ok(r)
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
}

impl<X: TransactionCodec> TransactionState<X> {
    fn encode(pending: &[(CheckpointId, X)], open: Option<&X>) -> Vec<u8> {
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
        out
    }

    fn decode(bytes: &[u8]) -> Result<Self, StateDecodeError> {
        let mut r = StateReader::new("two-phase-commit state", bytes, STATE_VERSION)?;
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
                    what: "two-phase-commit state",
                    reason: format!("open-transaction flag {flag} is neither 0 nor 1"),
                })
            }
        };
        r.finish()?;
        Ok(Self { pending, open })
    }
}

/// Drives a [`TwoPhaseCommitSink`] through checkpoints; see the module doc.
pub struct TwoPhaseCommitOperator<T, S: TwoPhaseCommitSink<T>> {
    sink: S,
    current: Option<S::Transaction>,
    pending: Vec<(CheckpointId, S::Transaction)>,
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
            pending: Vec::new(),
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
        op.current = Some(op.sink.begin_transaction()?);
        Ok(op)
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
        register_checkpointed(ctx, Self::restore(sink, restored, checkpoint_id)?)
    }

    /// The sink.
    pub fn sink(&self) -> &S {
        &self.sink
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
        let txn = self
            .current
            .as_mut()
            .ok_or_else(|| TaskError::Build("the two-phase-commit sink got a record after its end of input".into()))?;
        self.sink.invoke(txn, record.value)
    }

    fn emit_watermark(&mut self, _watermark: Watermark) -> Result<(), TaskError> {
        Ok(())
    }

    /// Pre-commits the current transaction and commits everything.
    fn end_input(&mut self) -> Result<(), TaskError> {
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
            let next = self.sink.begin_transaction()?;
            if let Some(done) = self.current.replace(next) {
                self.pending.push((checkpoint_id, done));
            }
        }
        let element = TransactionState::encode(&self.pending, self.current.as_ref());
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
}

#[cfg(test)]
#[path = "two_phase_commit_tests.rs"]
mod tests;
