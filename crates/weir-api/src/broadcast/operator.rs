//! The two-input operators of the broadcast state pattern. The broadcast side arrives
//! as [`CoElement::Second`]; the operators declare the broadcast states when they are
//! built (restored or empty), so the non-broadcast side can read them from the start.
//! Snapshots hold the operator state (list, union and broadcast) and, keyed, the keyed
//! state and timers of the subtask's key groups.

use super::{BroadcastContext, BroadcastProcessFunction, Declare, KeyedBroadcastProcessFunction, ReadOnlyContext};
use crate::functions::{Collector, KeyType, KeyedContext};
use crate::process::{restore_operator_state, SubtaskInfo};
use std::marker::PhantomData;
use std::sync::Arc;
use weir_core::element::WatermarkStatus;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::checkpoint::CheckpointedOperator;
use weir_runtime::error::TaskError;
use weir_runtime::operator::{CoElement, Output, TaskContext};
use weir_state::{
    HeapKeyedStateBackend, OperatorSnapshot, OperatorStateStore, TimeDomain, Timer, TimerService, VoidNamespace,
};

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

fn snapshot_store(name: &str, store: &OperatorStateStore) -> Result<OperatorSnapshot, TaskError> {
    store
        .snapshot()
        .map_err(|e| TaskError::Build(format!("{name}: operator state snapshot: {e}")))
}

/// Runs a [`BroadcastProcessFunction`].
pub struct BroadcastProcessOperator<A, B, O, F> {
    name: String,
    f: F,
    store: OperatorStateStore,
    info: SubtaskInfo,
    watermark: i64,
    out: Box<dyn Output<O>>,
    _t: PhantomData<fn(A, B)>,
}

impl<A, B, O, F: BroadcastProcessFunction<A, B, O>> BroadcastProcessOperator<A, B, O, F> {
    /// The operator of the subtask of `ctx`, its operator state restored and the
    /// broadcast states of `declarations` declared.
    pub(crate) fn restored(
        name: String,
        mut f: F,
        declarations: &[Declare],
        ctx: &TaskContext,
        out: Box<dyn Output<O>>,
    ) -> Result<Self, TaskError> {
        let mut store = restore_with_broadcast_states(&name, declarations, ctx)?;
        f.initialize_state(&mut store).map_err(|e| TaskError::user(&name, e))?;
        f.open().map_err(|e| TaskError::user(&name, e))?;
        Ok(Self {
            name,
            f,
            store,
            info: SubtaskInfo::of(ctx),
            watermark: i64::MIN,
            out,
            _t: PhantomData,
        })
    }
}

impl<A, B, O, F: BroadcastProcessFunction<A, B, O>> CheckpointedOperator for BroadcastProcessOperator<A, B, O, F> {
    fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<OperatorSnapshot, TaskError> {
        self.f
            .snapshot_state(checkpoint_id, &mut self.store)
            .map_err(|e| TaskError::user(&self.name, e))?;
        snapshot_store(&self.name, &self.store)
    }
}

impl<A, B, O, F: BroadcastProcessFunction<A, B, O>> Output<CoElement<A, B>> for BroadcastProcessOperator<A, B, O, F> {
    fn collect(&mut self, record: StreamRecord<CoElement<A, B>>) -> Result<(), TaskError> {
        let timestamp = record.timestamp;
        let mut out = Collector::new(&mut *self.out, timestamp);
        let r = match record.value {
            CoElement::First(a) => {
                let mut ctx: ReadOnlyContext<'_, '_> = ReadOnlyContext {
                    store: &mut self.store,
                    keyed: None,
                    timestamp,
                    watermark: self.watermark,
                    info: &self.info,
                };
                self.f.process_element(a, &mut ctx, &mut out)
            }
            CoElement::Second(b) => {
                let mut ctx = BroadcastContext {
                    store: &mut self.store,
                    timestamp,
                    watermark: self.watermark,
                    info: &self.info,
                };
                self.f.process_broadcast_element(b, &mut ctx, &mut out)
            }
        };
        if let Some(e) = out.into_error() {
            return Err(e);
        }
        r.map_err(|e| TaskError::user(&self.name, e))
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.watermark = self.watermark.max(watermark.0);
        self.out.emit_watermark(watermark)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.end_input()
    }
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        self.out.emit_watermark_status(status)
    }
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        self.out.on_processing_time(now)
    }
}

/// Runs a [`KeyedBroadcastProcessFunction`] with keyed state and timers for the keyed
/// side.
pub struct KeyedBroadcastProcessOperator<K: KeyType, A, B, O, F> {
    name: String,
    f: F,
    key_selector: Arc<dyn Fn(&A) -> K + Send + Sync>,
    backend: HeapKeyedStateBackend<K>,
    timers: TimerService<K, VoidNamespace>,
    store: OperatorStateStore,
    info: SubtaskInfo,
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
        let (backend, timers) = crate::keyed_state::restore_keyed(ctx)?;
        let mut store = restore_with_broadcast_states(&name, declarations, ctx)?;
        let info = SubtaskInfo::of(ctx);
        if let Some(at) = timers.next_processing_time_timer() {
            info.processing_time.register_wakeup(at);
        }
        f.initialize_state(&mut store).map_err(|e| TaskError::user(&name, e))?;
        f.open().map_err(|e| TaskError::user(&name, e))?;
        Ok(Self {
            name,
            f,
            key_selector,
            backend,
            timers,
            store,
            info,
            out,
            _t: PhantomData,
        })
    }

    fn fire(&mut self, timer: Timer<K, VoidNamespace>, domain: TimeDomain) -> Result<(), TaskError> {
        self.backend
            .set_current_key(timer.key)
            .map_err(|e| TaskError::user(&self.name, e))?;
        let output_ts = (domain == TimeDomain::EventTime).then_some(timer.timestamp);
        let watermark = self.timers.current_watermark();
        let mut keyed = KeyedContext {
            backend: &mut self.backend,
            timers: &mut self.timers,
            timestamp: output_ts,
            processing_time: &self.info.processing_time,
            time_domain: Some(domain),
            task_info: &self.info.task,
        };
        let mut ctx = ReadOnlyContext {
            store: &mut self.store,
            keyed: Some(&mut keyed),
            timestamp: output_ts,
            watermark,
            info: &self.info,
        };
        let mut out = Collector::new(&mut *self.out, output_ts);
        let r = self.f.on_timer(timer.timestamp, &mut ctx, &mut out);
        if let Some(e) = out.into_error() {
            return Err(e);
        }
        r.map_err(|e| TaskError::user(&self.name, e))
    }
}

impl<K: KeyType, A, B, O, F: KeyedBroadcastProcessFunction<K, A, B, O>> CheckpointedOperator
    for KeyedBroadcastProcessOperator<K, A, B, O, F>
{
    fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<OperatorSnapshot, TaskError> {
        self.f
            .snapshot_state(checkpoint_id, &mut self.store)
            .map_err(|e| TaskError::user(&self.name, e))?;
        let mut snapshot = crate::keyed_state::snapshot_keyed(&self.backend, &self.timers)?;
        let operator = snapshot_store(&self.name, &self.store)?;
        snapshot.list = operator.list;
        snapshot.union = operator.union;
        Ok(snapshot)
    }
}

impl<K: KeyType, A, B, O, F: KeyedBroadcastProcessFunction<K, A, B, O>> Output<CoElement<A, B>>
    for KeyedBroadcastProcessOperator<K, A, B, O, F>
{
    fn collect(&mut self, record: StreamRecord<CoElement<A, B>>) -> Result<(), TaskError> {
        let timestamp = record.timestamp;
        let watermark = self.timers.current_watermark();
        let r = match record.value {
            CoElement::First(a) => {
                let key = (self.key_selector)(&a);
                self.backend
                    .set_current_key(key)
                    .map_err(|e| TaskError::user(&self.name, e))?;
                let mut keyed = KeyedContext {
                    backend: &mut self.backend,
                    timers: &mut self.timers,
                    timestamp,
                    processing_time: &self.info.processing_time,
                    time_domain: None,
                    task_info: &self.info.task,
                };
                let mut ctx = ReadOnlyContext {
                    store: &mut self.store,
                    keyed: Some(&mut keyed),
                    timestamp,
                    watermark,
                    info: &self.info,
                };
                let mut out = Collector::new(&mut *self.out, timestamp);
                let r = self.f.process_element(a, &mut ctx, &mut out);
                out.into_error().map_or(Ok(r), Err)?
            }
            CoElement::Second(b) => {
                let mut ctx = BroadcastContext {
                    store: &mut self.store,
                    timestamp,
                    watermark,
                    info: &self.info,
                };
                let mut out = Collector::new(&mut *self.out, timestamp);
                let r = self.f.process_broadcast_element(b, &mut ctx, &mut out);
                out.into_error().map_or(Ok(r), Err)?
            }
        };
        r.map_err(|e| TaskError::user(&self.name, e))
    }

    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        while let Some(timer) = self.timers.advance_and_pop(watermark.0) {
            self.fire(timer, TimeDomain::EventTime)?;
        }
        self.out.emit_watermark(watermark)
    }

    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.end_input()
    }

    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        self.out.emit_watermark_status(status)
    }

    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        while let Some(timer) = self.timers.pop_processing_time_timer(now) {
            self.fire(timer, TimeDomain::ProcessingTime)?;
        }
        self.out.on_processing_time(now)
    }
}
