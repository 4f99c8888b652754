//! Non-keyed process functions with operator state (Flink's `ProcessFunction` on a
//! `DataStream`, together with `CheckpointedFunction`).
//!
//! A [`ProcessFunction`] sees each record with its timestamp and the subtask's
//! [`OperatorStateStore`]: list state (dealt out round-robin when a job restores at
//! another parallelism) and union list state (every subtask gets every element). The
//! store is restored when the operator is built, before `initialize_state` and `open`;
//! it is snapshotted on the task thread between two records, right after the
//! function's `snapshot_state` hook had the chance to write its fields into it.
//!
//! This module also owns what every function with operator state shares, the broadcast
//! functions of [`crate::broadcast`] included: the hooks of its trait
//! (`operator_state_hooks!`), the context of its calls ([`FunctionContext`], which
//! each kind of call completes with its side), and restoring and snapshotting the store.

use crate::datastream::DataStream;
use crate::forwarding::forward_output_noting_watermark;
use crate::functions::{Collector, SubtaskInfo};
use weir_core::StreamRecord;
use weir_graph::NodeKind;
use weir_runtime::checkpoint::CheckpointedOperator;
use weir_runtime::error::{TaskError, UserError};
use weir_runtime::operator::factory::Data;
use weir_runtime::operator::{register_checkpointed, OperatorFactory, Output, TaskContext};
use weir_state::heap::StateValue;
use weir_state::{ListStateDescriptor, OperatorListState, OperatorSnapshot, OperatorStateStore, StateError};

/// The operator state store of the subtask being built, restored from its part of the
/// checkpoint the task restores from (empty on a fresh start).
pub fn restore_operator_state(ctx: &TaskContext) -> Result<OperatorStateStore, TaskError> {
    let restored = ctx.state().restored(ctx.key_group_range());
    OperatorStateStore::restore(restored.as_ref(), ctx.subtask_index).map_err(|e| TaskError::Restore {
        checkpoint_id: ctx.state().restored_checkpoint().unwrap_or(0),
        reason: format!("{}: operator state: {e}", ctx.task_name_with_subtask()),
    })
}

/// Snapshots `store` right after the function's `hook` had the chance to write its
/// fields into it (its `snapshot_state`), failing as operator `name`.
pub(crate) fn snapshot_operator_state(
    name: &str,
    store: &mut OperatorStateStore,
    hook: impl FnOnce(&mut OperatorStateStore) -> Result<(), UserError>,
) -> Result<OperatorSnapshot, TaskError> {
    hook(store).map_err(|e| TaskError::user(name, e))?;
    store
        .snapshot()
        .map_err(|e| TaskError::Build(format!("{name}: operator state snapshot: {e}")))
}

/// The context of a call of a function with operator state: the timestamp of the
/// record (or timer) being processed, the operator's watermark, the task's clock, the
/// subtask and its operator list state. `S`, the side of the call, says what else it
/// offers: [`ProcessContext`] the whole store, the broadcast contexts
/// ([`ReadOnlyContext`](crate::broadcast::ReadOnlyContext),
/// [`BroadcastContext`](crate::broadcast::BroadcastContext)) their broadcast state.
pub struct FunctionContext<'a, S> {
    pub(crate) store: &'a mut OperatorStateStore,
    pub(crate) timestamp: Option<i64>,
    pub(crate) watermark: i64,
    pub(crate) info: &'a SubtaskInfo,
    pub(crate) side: S,
}

impl<'a, S> FunctionContext<'a, S> {
    /// The context of a call on the subtask `info` with `store`, for a record (or
    /// timer) of `timestamp` under `watermark`.
    pub(crate) fn new(
        store: &'a mut OperatorStateStore,
        timestamp: Option<i64>,
        watermark: i64,
        info: &'a SubtaskInfo,
        side: S,
    ) -> Self {
        Self {
            store,
            timestamp,
            watermark,
            info,
            side,
        }
    }

    /// The same call's context with another side (a reborrow).
    pub(crate) fn with_side<T>(&mut self, side: T) -> FunctionContext<'_, T> {
        FunctionContext::new(self.store, self.timestamp, self.watermark, self.info, side)
    }

    /// The timestamp of the record being processed (of the timer, in `on_timer`).
    pub fn timestamp(&self) -> Option<i64> {
        self.timestamp
    }

    /// The operator's current event-time watermark.
    pub fn current_watermark(&self) -> i64 {
        self.watermark
    }

    /// The task's current processing time (epoch ms).
    pub fn current_processing_time(&self) -> i64 {
        self.info.processing_time.current_processing_time()
    }

    /// This subtask's index, from 0.
    pub fn subtask_index(&self) -> u32 {
        self.info.task.subtask_index
    }

    /// The operator's parallelism.
    pub fn parallelism(&self) -> u32 {
        self.info.task.parallelism
    }

    /// The list state `desc` of this subtask (redistributed round-robin on rescale).
    pub fn list_state<T: StateValue>(
        &mut self,
        desc: &ListStateDescriptor<T>,
    ) -> Result<OperatorListState<'_, T>, StateError> {
        self.store.list_state(desc)
    }

    /// The union list state `desc` of this subtask (every subtask gets every element
    /// on restore).
    pub fn union_list_state<T: StateValue>(
        &mut self,
        desc: &ListStateDescriptor<T>,
    ) -> Result<OperatorListState<'_, T>, StateError> {
        self.store.union_list_state(desc)
    }
}

/// The side of a [`ProcessFunction`] call: the function may use the whole store.
pub struct ProcessSide;

/// The context of a [`ProcessFunction`] call: the record's timestamp, the subtask and
/// its operator state.
pub type ProcessContext<'a> = FunctionContext<'a, ProcessSide>;

impl ProcessContext<'_> {
    /// The subtask's operator state (Flink's `OperatorStateStore`).
    pub fn operator_state(&mut self) -> &mut OperatorStateStore {
        self.store
    }
}

/// The hooks every function with operator state has, each a no-op by default
/// (Flink's `CheckpointedFunction` and `open`); expands inside a trait definition.
macro_rules! operator_state_hooks {
    () => {
        /// Called once per subtask with its (possibly restored) operator state, before
        /// `open` (Flink's `initializeState`); see
        /// [`OperatorStateStore::is_restored`](weir_state::OperatorStateStore::is_restored).
        fn initialize_state(
            &mut self,
            _store: &mut ::weir_state::OperatorStateStore,
        ) -> Result<(), ::weir_runtime::error::UserError> {
            Ok(())
        }

        /// Called once per subtask before the first record.
        fn open(&mut self) -> Result<(), ::weir_runtime::error::UserError> {
            Ok(())
        }

        /// Called at every checkpoint, on the task thread, before the store is
        /// snapshotted: write what the function keeps in fields into its state (Flink's
        /// `snapshotState`).
        fn snapshot_state(
            &mut self,
            _checkpoint_id: u64,
            _store: &mut ::weir_state::OperatorStateStore,
        ) -> Result<(), ::weir_runtime::error::UserError> {
            Ok(())
        }
    };
}

/// The hooks of `operator_state_hooks!` implemented by calling those of the adapted
/// function `self.f`; expands inside the impl of an adapter's trait.
macro_rules! delegate_operator_state_hooks {
    () => {
        fn initialize_state(
            &mut self,
            store: &mut ::weir_state::OperatorStateStore,
        ) -> Result<(), ::weir_runtime::error::UserError> {
            self.f.initialize_state(store)
        }

        fn open(&mut self) -> Result<(), ::weir_runtime::error::UserError> {
            self.f.open()
        }

        fn snapshot_state(
            &mut self,
            checkpoint_id: u64,
            store: &mut ::weir_state::OperatorStateStore,
        ) -> Result<(), ::weir_runtime::error::UserError> {
            self.f.snapshot_state(checkpoint_id, store)
        }
    };
}

pub(crate) use {delegate_operator_state_hooks, operator_state_hooks};

/// Processes each record of a (non-keyed) stream, with operator state (Flink's
/// `ProcessFunction` + `CheckpointedFunction`). One instance is cloned per subtask.
pub trait ProcessFunction<I, O>: Clone + Send + Sync + 'static {
    operator_state_hooks!();

    /// Called for every record.
    fn process_element(
        &mut self,
        value: I,
        ctx: &mut ProcessContext<'_>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError>;
}

/// Runs a [`ProcessFunction`] with the subtask's operator state.
pub struct ProcessOperator<I, O, F> {
    name: String,
    f: F,
    store: OperatorStateStore,
    info: SubtaskInfo,
    watermark: i64,
    out: Box<dyn Output<O>>,
    _i: std::marker::PhantomData<fn(I)>,
}

impl<I, O, F: ProcessFunction<I, O>> ProcessOperator<I, O, F> {
    /// The operator of the subtask of `ctx`, with its operator state restored.
    pub fn restored(name: String, f: F, ctx: &TaskContext, out: Box<dyn Output<O>>) -> Result<Self, TaskError> {
        let store = restore_operator_state(ctx)?;
        Self::with_store(name, f, store, SubtaskInfo::of(ctx), out)
    }

    pub(crate) fn with_store(
        name: String,
        mut f: F,
        mut store: OperatorStateStore,
        info: SubtaskInfo,
        out: Box<dyn Output<O>>,
    ) -> Result<Self, TaskError> {
        f.initialize_state(&mut store)
            .and_then(|()| f.open())
            .map_err(|e| TaskError::user(&name, e))?;
        Ok(Self {
            name,
            f,
            store,
            info,
            watermark: i64::MIN,
            out,
            _i: std::marker::PhantomData,
        })
    }
}

impl<I, O, F: ProcessFunction<I, O>> CheckpointedOperator for ProcessOperator<I, O, F> {
    fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<OperatorSnapshot, TaskError> {
        snapshot_operator_state(&self.name, &mut self.store, |store| {
            self.f.snapshot_state(checkpoint_id, store)
        })
    }
}

impl<I, O, F: ProcessFunction<I, O>> Output<I> for ProcessOperator<I, O, F> {
    fn collect(&mut self, record: StreamRecord<I>) -> Result<(), TaskError> {
        let mut ctx = ProcessContext::new(
            &mut self.store,
            record.timestamp,
            self.watermark,
            &self.info,
            ProcessSide,
        );
        let mut out = Collector::new(&mut *self.out, record.timestamp);
        let r = self.f.process_element(record.value, &mut ctx, &mut out);
        out.finish(&self.name, r)
    }

    forward_output_noting_watermark!();
}

impl<T: Data> DataStream<T> {
    /// Processes each record with `f`, which may keep operator state (list and union
    /// list state) that checkpoints snapshot and restores redistribute.
    pub fn process<O: Data, F: ProcessFunction<T, O>>(&self, f: F) -> DataStream<O> {
        let factory = OperatorFactory::one_input::<T, O>(move |ctx, out| {
            let op = ProcessOperator::restored("Process".to_string(), f.clone(), ctx, out)?;
            register_checkpointed(ctx, op)
        });
        self.transform("Process", NodeKind::Operator, false, factory)
    }
}

#[cfg(test)]
#[path = "process_tests.rs"]
pub(crate) mod tests;
