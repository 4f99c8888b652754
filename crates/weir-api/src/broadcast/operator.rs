//! The two-input operators of the broadcast state pattern. The broadcast side arrives
//! as [`CoElement::Second`]; the operators declare the broadcast states when they are
//! built (restored or empty), so the non-broadcast side can read them from the start.
//! Snapshots hold the operator state (list, union and broadcast) and, keyed, the keyed
//! state and timers of the subtask's key groups. The non-keyed operator is a
//! [`ProcessOperator`] running the function through [`BroadcastAdapter`].

use super::{
    BroadcastContext, BroadcastProcessFunction, BroadcastSide, Declare, KeyedBroadcastProcessFunction, ReadOnlyContext,
    ReadOnlySide,
};
use crate::forwarding::fire_timers_and_forward;
use crate::functions::{Collector, KeyType, SubtaskInfo};
use crate::operators::{timer_output_timestamp, KeyedParts};
use crate::process::{
    delegate_operator_state_hooks, restore_operator_state, snapshot_operator_state, ProcessContext, ProcessFunction,
    ProcessOperator,
};
use std::marker::PhantomData;
use std::sync::Arc;
use weir_core::StreamRecord;
use weir_runtime::checkpoint::CheckpointedOperator;
use weir_runtime::error::{TaskError, UserError};
use weir_runtime::operator::{CoElement, Output, TaskContext};
use weir_state::{OperatorSnapshot, OperatorStateStore, TimeDomain, Timer, VoidNamespace};

/// The subtask's operator state, restored, with every declared broadcast state.
fn restore_with_broadcast_states(
    name: &str,
    declarations: &[Declare],
    ctx: &TaskContext,
) -> Result<OperatorStateStore, TaskError> {
    let mut store = restore_operator_state(ctx)?;
    for declare in declarations {
        if let Err(e) = declare(&mut store) {
            return Err(match ctx.state().restored_checkpoint() {
                Some(checkpoint_id) if store.is_restored() => TaskError::Restore {
                    checkpoint_id,
                    reason: format!("{}: {name}: {e}", ctx.task_name_with_subtask()),
                },
                _ => TaskError::Build(format!("{name}: {e}")),
            });
        }
    }
    Ok(store)
}

/// Runs a [`BroadcastProcessFunction`]: a [`ProcessOperator`] over [`CoElement`]s.
pub type BroadcastProcessOperator<A, B, O, F> = ProcessOperator<CoElement<A, B>, O, BroadcastAdapter<F, A, B>>;

impl<A: 'static, B: 'static, O, F: BroadcastProcessFunction<A, B, O>> BroadcastProcessOperator<A, B, O, F> {
    /// The operator of the subtask of `ctx`, its operator state restored and the
    /// broadcast states of `declarations` declared.
    pub(crate) fn with_broadcast_states(
        name: String,
        f: F,
        declarations: &[Declare],
        ctx: &TaskContext,
        out: Box<dyn Output<O>>,
    ) -> Result<Self, TaskError> {
        let store = restore_with_broadcast_states(&name, declarations, ctx)?;
        let adapter = BroadcastAdapter { f, _t: PhantomData };
        ProcessOperator::with_store(name, adapter, store, SubtaskInfo::of(ctx), out)
    }
}

/// Runs a [`BroadcastProcessFunction`] as a [`ProcessFunction`] over [`CoElement`]s:
/// the broadcast side (second) with the writable context, the other with the
/// read-only one.
pub struct BroadcastAdapter<F, A, B> {
    f: F,
    _t: PhantomData<fn(A, B)>,
}

impl<F: Clone, A, B> Clone for BroadcastAdapter<F, A, B> {
    fn clone(&self) -> Self {
        Self {
            f: self.f.clone(),
            _t: PhantomData,
        }
    }
}

impl<A: 'static, B: 'static, O, F: BroadcastProcessFunction<A, B, O>> ProcessFunction<CoElement<A, B>, O>
    for BroadcastAdapter<F, A, B>
{
    delegate_operator_state_hooks!();

    fn process_element(
        &mut self,
        value: CoElement<A, B>,
        ctx: &mut ProcessContext<'_>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError> {
        match value {
            CoElement::First(a) => {
                let mut ctx = ctx.with_side(ReadOnlySide { keyed: None });
                self.f.process_element(a, &mut ctx, out)
            }
            CoElement::Second(b) => self
                .f
                .process_broadcast_element(b, &mut ctx.with_side(BroadcastSide), out),
        }
    }
}

/// Runs a [`KeyedBroadcastProcessFunction`] with keyed state and timers for the keyed
/// side.
pub struct KeyedBroadcastProcessOperator<K: KeyType, A, B, O, F> {
    name: String,
    f: F,
    key_selector: Arc<dyn Fn(&A) -> K + Send + Sync>,
    keyed: KeyedParts<K>,
    store: OperatorStateStore,
    out: Box<dyn Output<O>>,
    _t: PhantomData<fn(B)>,
}

impl<K: KeyType, A, B, O, F: KeyedBroadcastProcessFunction<K, A, B, O>> KeyedBroadcastProcessOperator<K, A, B, O, F> {
    /// The operator of the subtask of `ctx`, its keyed state, timers and operator state
    /// restored and the broadcast states of `declarations` declared.
    pub(crate) fn restored(
        name: String,
        mut f: F,
        key_selector: Arc<dyn Fn(&A) -> K + Send + Sync>,
        declarations: &[Declare],
        ctx: &TaskContext,
        out: Box<dyn Output<O>>,
    ) -> Result<Self, TaskError> {
        let restored = crate::keyed_state::restore_keyed(ctx)?;
        let mut store = restore_with_broadcast_states(&name, declarations, ctx)?;
        let keyed = KeyedParts::new(restored, SubtaskInfo::of(ctx));
        f.initialize_state(&mut store)
            .and_then(|()| f.open())
            .map_err(|e| TaskError::user(&name, e))?;
        Ok(Self {
            name,
            f,
            key_selector,
            keyed,
            store,
            out,
            _t: PhantomData,
        })
    }

    fn fire(&mut self, timer: Timer<K, VoidNamespace>, domain: TimeDomain) -> Result<(), TaskError> {
        let output_ts = timer_output_timestamp(timer.timestamp, domain);
        let watermark = self.keyed.timers.current_watermark();
        let (mut keyed, info) = self.keyed.context(&self.name, timer.key, output_ts, Some(domain))?;
        let side = ReadOnlySide {
            keyed: Some(&mut keyed),
        };
        let mut ctx = ReadOnlyContext::new(&mut self.store, output_ts, watermark, info, side);
        let mut out = Collector::new(&mut *self.out, output_ts);
        let r = self.f.on_timer(timer.timestamp, &mut ctx, &mut out);
        out.finish(&self.name, r)
    }
}

impl<K: KeyType, A, B, O, F: KeyedBroadcastProcessFunction<K, A, B, O>> CheckpointedOperator
    for KeyedBroadcastProcessOperator<K, A, B, O, F>
{
    fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<OperatorSnapshot, TaskError> {
        self.snapshot_state_async(checkpoint_id, weir_state::SnapshotFormat::Canonical)?
            .complete()
            .map_err(|e| TaskError::Build(format!("keyed state snapshot: {e}")))
    }

    fn snapshot_state_async(
        &mut self,
        checkpoint_id: u64,
        format: weir_state::SnapshotFormat,
    ) -> Result<weir_state::PendingOperatorSnapshot, TaskError> {
        let operator = snapshot_operator_state(&self.name, &mut self.store, |store| {
            self.f.snapshot_state(checkpoint_id, store)
        })?;
        let mut snapshot = crate::keyed_state::snapshot_keyed_async(
            &mut self.keyed.backend,
            &self.keyed.timers,
            checkpoint_id,
            format,
        )?;
        snapshot.ready.list = operator.list;
        snapshot.ready.union = operator.union;
        Ok(snapshot)
    }

    fn notify_checkpoint_complete(&mut self, checkpoint_id: u64) -> Result<(), TaskError> {
        self.keyed.backend.notify_checkpoint_complete(checkpoint_id);
        Ok(())
    }
}

impl<K: KeyType, A, B, O, F: KeyedBroadcastProcessFunction<K, A, B, O>> Output<CoElement<A, B>>
    for KeyedBroadcastProcessOperator<K, A, B, O, F>
{
    fn collect(&mut self, record: StreamRecord<CoElement<A, B>>) -> Result<(), TaskError> {
        let timestamp = record.timestamp;
        let watermark = self.keyed.timers.current_watermark();
        match record.value {
            CoElement::First(a) => {
                let key = (self.key_selector)(&a);
                let (mut keyed, info) = self.keyed.context(&self.name, key, timestamp, None)?;
                let side = ReadOnlySide {
                    keyed: Some(&mut keyed),
                };
                let mut ctx = ReadOnlyContext::new(&mut self.store, timestamp, watermark, info, side);
                let mut out = Collector::new(&mut *self.out, timestamp);
                let r = self.f.process_element(a, &mut ctx, &mut out);
                out.finish(&self.name, r)
            }
            CoElement::Second(b) => {
                let info = &self.keyed.info;
                let mut ctx = BroadcastContext::new(&mut self.store, timestamp, watermark, info, BroadcastSide);
                let mut out = Collector::new(&mut *self.out, timestamp);
                let r = self.f.process_broadcast_element(b, &mut ctx, &mut out);
                out.finish(&self.name, r)
            }
        }
    }

    fire_timers_and_forward!(keyed.timers, fire);
}
