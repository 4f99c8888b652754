//! The stateful parts of one task's chain, as the task's checkpoints see them.
//!
//! While the chain is built (tail first, on the task thread) the chain builder names
//! the operator being built ([`StateRegistry::set_current_operator`]); a stateful
//! operator then asks for its restored state ([`StateRegistry::restored`]) and
//! registers the part of itself that snapshots ([`StateRegistry::register`]), shared
//! with the operator through `Rc<RefCell<…>>`. At a checkpoint the task calls every
//! registration on its own thread, between two records, so a snapshot sees the state
//! after exactly the records before the barrier.
//!
//! Invariant: an operator id is registered at most once per task (a second
//! registration under the same id is refused at build time).

use crate::error::TaskError;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use weir_core::ids::OperatorId;
use weir_core::{CheckpointId, KeyGroupRange};
use weir_state::{
    OperatorSnapshot, PendingOperatorSnapshot, PendingTaskSnapshot, RestoredState, SnapshotFormat, TaskSnapshot,
};

/// The part of an operator that takes part in checkpoints (Flink's
/// `CheckpointedFunction` / `CheckpointListener` of an operator).
pub trait CheckpointedOperator {
    /// A snapshot of the operator's state as of now, complete.
    fn snapshot_state(&mut self, checkpoint_id: CheckpointId) -> Result<OperatorSnapshot, TaskError>;
    /// The synchronous part of a snapshot as of now: what the task thread must take
    /// before it goes on, the rest (keyed state frozen copy-on-write) to complete on
    /// the checkpoint's upload thread; keyed state in an on-disk store is written in
    /// `format`. By default the whole [`snapshot_state`](Self::snapshot_state).
    fn snapshot_state_async(
        &mut self,
        checkpoint_id: CheckpointId,
        _format: SnapshotFormat,
    ) -> Result<PendingOperatorSnapshot, TaskError> {
        Ok(PendingOperatorSnapshot::ready(self.snapshot_state(checkpoint_id)?))
    }
    /// Checkpoint `checkpoint_id` completed everywhere (e.g. commit pending output).
    fn notify_checkpoint_complete(&mut self, checkpoint_id: CheckpointId) -> Result<(), TaskError> {
        let _ = checkpoint_id;
        Ok(())
    }
    /// Checkpoint `checkpoint_id` was aborted.
    fn notify_checkpoint_aborted(&mut self, checkpoint_id: CheckpointId) -> Result<(), TaskError> {
        let _ = checkpoint_id;
        Ok(())
    }
    /// After the end of input: true while the operator has work that only a completed
    /// checkpoint may finish (a two-phase-commit sink's last transactions), so the task
    /// must not finish yet (Flink's final checkpoint, FLIP-147).
    fn awaits_final_checkpoint(&self) -> bool {
        false
    }
}

/// A registered operator.
type Registration = (OperatorId, Rc<RefCell<dyn CheckpointedOperator>>);

/// The task's stateful operators and the state they were restored from.
#[derive(Default)]
pub struct StateRegistry {
    operators: RefCell<Vec<Registration>>,
    current: Cell<Option<OperatorId>>,
    restored: Option<RestoredState>,
}

impl StateRegistry {
    /// A registry restoring from `restored` (none: a fresh start).
    pub fn new(restored: Option<RestoredState>) -> Self {
        Self {
            operators: RefCell::new(Vec::new()),
            current: Cell::new(None),
            restored,
        }
    }

    /// Names the operator being built.
    pub fn set_current_operator(&self, id: OperatorId) {
        self.current.set(Some(id));
    }

    /// The operator being built.
    pub fn current_operator(&self) -> Option<OperatorId> {
        self.current.get()
    }

    /// The checkpoint the task was restored from, if any.
    pub fn restored_checkpoint(&self) -> Option<CheckpointId> {
        self.restored.as_ref().map(|r| r.checkpoint_id)
    }

    /// The restored state of the operator being built, for the key groups of `range`.
    pub fn restored(&self, range: KeyGroupRange) -> Option<OperatorSnapshot> {
        let id = self.current.get()?;
        self.restored.as_ref()?.operator(id, range)
    }

    /// Registers the operator being built.
    pub fn register(&self, operator: Rc<RefCell<dyn CheckpointedOperator>>) -> Result<(), TaskError> {
        let id = self
            .current
            .get()
            .ok_or_else(|| TaskError::Build("state registered outside of an operator's construction".into()))?;
        self.register_as(id, operator)
    }

    /// Registers `operator` under `id`.
    pub fn register_as(
        &self,
        id: OperatorId,
        operator: Rc<RefCell<dyn CheckpointedOperator>>,
    ) -> Result<(), TaskError> {
        let mut ops = self.operators.borrow_mut();
        if ops.iter().any(|(o, _)| *o == id) {
            return Err(TaskError::Build(format!("operator {id} registered its state twice")));
        }
        ops.push((id, operator));
        Ok(())
    }

    /// Number of registered operators.
    pub fn len(&self) -> usize {
        self.operators.borrow().len()
    }

    /// True when nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Snapshots every registered operator (operators without state are left out),
    /// completely.
    pub fn snapshot(&self, checkpoint_id: CheckpointId) -> Result<TaskSnapshot, TaskError> {
        self.snapshot_async(checkpoint_id, SnapshotFormat::Canonical)?
            .complete()
            .map_err(|e| TaskError::Build(format!("keyed state snapshot: {e}")))
    }

    /// The synchronous part of the snapshot of every registered operator (keyed state
    /// in an on-disk store in `format`); the checkpoint's upload thread completes it.
    pub fn snapshot_async(
        &self,
        checkpoint_id: CheckpointId,
        format: SnapshotFormat,
    ) -> Result<PendingTaskSnapshot, TaskError> {
        let mut out = PendingTaskSnapshot::default();
        for (id, op) in self.operators.borrow().iter() {
            out.add(*id, op.borrow_mut().snapshot_state_async(checkpoint_id, format)?);
        }
        Ok(out)
    }

    /// Tells every registered operator that `checkpoint_id` completed.
    pub fn notify_complete(&self, checkpoint_id: CheckpointId) -> Result<(), TaskError> {
        for (_, op) in self.operators.borrow().iter() {
            op.borrow_mut().notify_checkpoint_complete(checkpoint_id)?;
        }
        Ok(())
    }

    /// True while a registered operator waits for a checkpoint to complete before the
    /// task may finish.
    pub fn awaits_final_checkpoint(&self) -> bool {
        self.operators
            .borrow()
            .iter()
            .any(|(_, op)| op.borrow().awaits_final_checkpoint())
    }

    /// Tells every registered operator that `checkpoint_id` was aborted.
    pub fn notify_aborted(&self, checkpoint_id: CheckpointId) -> Result<(), TaskError> {
        for (_, op) in self.operators.borrow().iter() {
            op.borrow_mut().notify_checkpoint_aborted(checkpoint_id)?;
        }
        Ok(())
    }
}
