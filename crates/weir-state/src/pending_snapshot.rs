//! Snapshots taken in two halves, as Flink's asynchronous snapshots: the task thread
//! takes the synchronous half (operator state as bytes, keyed state frozen, see
//! [`crate::heap::FrozenKeyedState`]) and a background thread completes it (encodes the
//! frozen keyed state) before storing it.
//!
//! Invariant: completing a pending snapshot gives the same snapshot as taking it
//! synchronously at the same moment.

use crate::error::StateError;
use crate::heap::FrozenKeyedState;
use crate::incremental::transfer::SharedStateTransfer;
use crate::snapshot::{OperatorSnapshot, TaskSnapshot};
use weir_core::ids::OperatorId;

/// One operator's snapshot, its keyed state possibly still frozen.
#[derive(Debug, Default)]
pub struct PendingOperatorSnapshot {
    /// What is already bytes: operator state, and timers by key group.
    pub ready: OperatorSnapshot,
    /// The keyed state, to encode off the task thread.
    pub frozen: Option<FrozenKeyedState>,
}

impl PendingOperatorSnapshot {
    /// A snapshot with nothing left to do.
    pub fn ready(snapshot: OperatorSnapshot) -> Self {
        Self {
            ready: snapshot,
            frozen: None,
        }
    }

    /// True when it holds no state and nothing frozen.
    pub fn is_empty(&self) -> bool {
        self.frozen.is_none() && self.ready.is_empty()
    }

    /// Encodes the frozen keyed state and merges it with the ready part's key groups
    /// (the keyed state first in each group, then what was ready, such as timers);
    /// groups without entries are left out.
    pub fn complete(self) -> Result<OperatorSnapshot, StateError> {
        self.complete_with(None)
    }

    /// [`complete`](Self::complete), uploading the store files of an incremental
    /// snapshot through `transfer` (without it, the snapshot is canonical).
    pub fn complete_with(self, transfer: Option<&dyn SharedStateTransfer>) -> Result<OperatorSnapshot, StateError> {
        let mut snapshot = self.ready;
        let Some(frozen) = self.frozen else {
            return Ok(snapshot);
        };
        let completed = frozen.complete(transfer)?;
        let mut groups = completed.groups;
        snapshot.incremental.extend(completed.incremental);
        for (kg, entries) in std::mem::take(&mut snapshot.keyed) {
            match groups.iter_mut().find(|(g, _)| *g == kg) {
                Some((_, group)) => group.extend(entries),
                None => groups.push((kg, entries)),
            }
        }
        groups.retain(|(_, g)| !g.is_empty());
        snapshot.keyed = groups;
        Ok(snapshot)
    }
}

/// A task's snapshot whose operators' keyed state may still be frozen.
#[derive(Debug, Default)]
pub struct PendingTaskSnapshot {
    /// The complete parts: operators with nothing frozen, channel state.
    pub snapshot: TaskSnapshot,
    /// Operators with frozen keyed state.
    pub pending: Vec<(OperatorId, PendingOperatorSnapshot)>,
}

impl PendingTaskSnapshot {
    /// Adds operator `id`'s snapshot (nothing, if it is empty).
    pub fn add(&mut self, id: OperatorId, operator: PendingOperatorSnapshot) {
        if operator.frozen.is_some() {
            self.pending.push((id, operator));
        } else if !operator.ready.is_empty() {
            self.snapshot.operators.insert(id, operator.ready);
        }
    }

    /// True when it holds no state at all.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty() && self.snapshot.is_empty()
    }

    /// True when an operator holds union list state (which every subtask restores).
    pub fn has_union_state(&self) -> bool {
        self.snapshot.has_union_state()
            || self
                .pending
                .iter()
                .any(|(_, o)| o.ready.union.values().any(|elements| !elements.is_empty()))
    }

    /// Completes every pending operator: the task's snapshot.
    pub fn complete(self) -> Result<TaskSnapshot, StateError> {
        self.complete_with(None)
    }

    /// [`complete`](Self::complete), uploading the store files of incremental
    /// snapshots through `transfer`.
    pub fn complete_with(self, transfer: Option<&dyn SharedStateTransfer>) -> Result<TaskSnapshot, StateError> {
        let mut snapshot = self.snapshot;
        for (id, operator) in self.pending {
            let operator = operator.complete_with(transfer)?;
            if !operator.is_empty() {
                snapshot.operators.insert(id, operator);
            }
        }
        Ok(snapshot)
    }
}
