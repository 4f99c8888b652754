//! `KeyedStream<K, T>`: a stream partitioned by key, with keyed state, timers and
//! windows.

use crate::builder::RuntimeModeHandle;
use crate::datastream::DataStream;
use crate::functions::{Collector, KeyType, KeyedContext, KeyedProcessFunction, TaskInfo};
use crate::operators::KeyedProcessOperator;
use crate::windowing::{
    CountTrigger, GlobalWindow, GlobalWindows, PurgingTrigger, Window, WindowAssigner, WindowedStream,
};
use std::ops::Add;
use std::sync::Arc;
use weir_graph::{NodeKind, Partitioner};
use weir_runtime::error::UserError;
use weir_runtime::operator::factory::Data;
use weir_runtime::operator::{register_checkpointed, OperatorFactory, SelectorFactory};
use weir_state::ValueStateDescriptor;

/// A stream whose records are partitioned by `K`.
pub struct KeyedStream<K, T> {
    stream: DataStream<T>,
    key_selector: Arc<dyn Fn(&T) -> K + Send + Sync>,
}

impl<T: Data> DataStream<T> {
    /// Partitions by key: records with the same key go to the same subtask, whose keyed
    /// state and timers are scoped to that key.
    pub fn key_by<K: KeyType>(&self, key_selector: impl Fn(&T) -> K + Send + Sync + 'static) -> KeyedStream<K, T> {
        let key_selector: Arc<dyn Fn(&T) -> K + Send + Sync> = Arc::new(key_selector);
        let ks = key_selector.clone();
        self.keyed(
            key_selector,
            Arc::new(move |t: &T| weir_core::key_hash::key_hash(&ks(t))),
        )
    }

    /// Partitions by key as [`key_by`](Self::key_by) does, routing each record by
    /// `key_hash` instead of hashing the key `key_selector` builds: `key_hash(record)`
    /// must equal `weir_core::key_hash::key_hash(&key_selector(record))` for every
    /// record (so records and keyed state land in the same key groups), computed
    /// without building the key.
    pub fn key_by_with_hash<K: KeyType>(
        &self,
        key_selector: impl Fn(&T) -> K + Send + Sync + 'static,
        key_hash: impl Fn(&T) -> i32 + Send + Sync + 'static,
    ) -> KeyedStream<K, T> {
        self.keyed(Arc::new(key_selector), Arc::new(key_hash))
    }

    fn keyed<K: KeyType>(
        &self,
        key_selector: Arc<dyn Fn(&T) -> K + Send + Sync>,
        key_hash: Arc<dyn Fn(&T) -> i32 + Send + Sync>,
    ) -> KeyedStream<K, T> {
        let stream = self.repartition(Partitioner::Hash, Some(SelectorFactory::key_groups::<T>(key_hash)));
        KeyedStream::new(stream, key_selector)
    }
}

impl<K: KeyType, T: Data> KeyedStream<K, T> {
    pub(crate) fn new(stream: DataStream<T>, key_selector: Arc<dyn Fn(&T) -> K + Send + Sync>) -> Self {
        Self { stream, key_selector }
    }

    /// The key selector.
    pub fn key_selector(&self) -> Arc<dyn Fn(&T) -> K + Send + Sync> {
        self.key_selector.clone()
    }

    pub(crate) fn stream(&self) -> DataStream<T> {
        self.stream.clone()
    }

    /// Adds a one-input operator of its own fed by this keyed stream (Flink's
    /// `KeyedStream#transform`): each subtask receives the records of the key groups of
    /// its range and keeps and snapshots its state by key group itself.
    pub fn transform<O: Data>(&self, name: impl Into<String>, factory: OperatorFactory) -> DataStream<O> {
        self.stream.transform(name, NodeKind::Operator, true, factory)
    }

    /// Processes each record with `f`, with keyed state and timers for the record's key.
    pub fn process<O: Data, F: KeyedProcessFunction<K, T, O>>(&self, f: F) -> DataStream<O> {
        self.process_named("KeyedProcess", f)
    }

    fn process_named<O: Data, F: KeyedProcessFunction<K, T, O>>(&self, name: &str, f: F) -> DataStream<O> {
        let ks = self.key_selector.clone();
        let op_name = name.to_string();
        let factory = OperatorFactory::one_input::<T, O>(move |ctx, out| {
            let op = KeyedProcessOperator::restored(
                op_name.clone(),
                f.clone(),
                ks.clone(),
                crate::keyed_state::restore_keyed(ctx)?,
                ctx.processing_time_service(),
                out,
            )?
            .with_task_info(TaskInfo::of(ctx));
            register_checkpointed(ctx, op)
        });
        self.stream.transform(name, NodeKind::Operator, true, factory)
    }

    /// Cuts the stream into windows of `assigner` per key (event or processing time).
    pub fn window<W: Window, A: WindowAssigner<T, W>>(&self, assigner: A) -> WindowedStream<K, T, W> {
        WindowedStream::new(self.stream.clone(), self.key_selector.clone(), assigner, false)
    }

    /// Windows of `size` elements per key, emitted and purged when full (Flink's
    /// `countWindow`).
    pub fn count_window(&self, size: u64) -> WindowedStream<K, T, GlobalWindow> {
        self.window(GlobalWindows::create())
            .trigger(PurgingTrigger::<K, T, GlobalWindow>::of(CountTrigger::of(size)))
    }

    /// A rolling reduce: emits `f(previous result, record)` for every record (the first
    /// record of a key is emitted as it is). In BATCH mode only the final result of each
    /// key is emitted, when the input ends (as Flink's batch reduce).
    pub fn reduce(&self, f: impl Fn(T, T) -> T + Clone + Send + Sync + 'static) -> DataStream<T> {
        let mode = self.stream.builder.borrow().runtime_mode.clone();
        self.process_named(
            "Keyed Reduce",
            RollingReduce {
                f,
                desc: ValueStateDescriptor::new("_reduce"),
                mode,
            },
        )
    }

    /// A rolling sum of the field `field` selects: emits the key's first record with
    /// the field replaced by the running sum (Flink's `sum(position)`).
    pub fn sum<V>(&self, field: impl Fn(&mut T) -> &mut V + Clone + Send + Sync + 'static) -> DataStream<T>
    where
        V: Add<Output = V> + Copy + 'static,
    {
        self.reduce(move |mut acc, mut v| {
            let total = *field(&mut acc) + *field(&mut v);
            *field(&mut acc) = total;
            acc
        })
        .name("Keyed Aggregation")
    }

    /// A rolling minimum of the field `field` selects (Flink's `min(position)`).
    pub fn min<V>(&self, field: impl Fn(&mut T) -> &mut V + Clone + Send + Sync + 'static) -> DataStream<T>
    where
        V: PartialOrd + Copy + 'static,
    {
        self.reduce(move |mut acc, mut v| {
            let m = *field(&mut v);
            if m < *field(&mut acc) {
                *field(&mut acc) = m;
            }
            acc
        })
        .name("Keyed Aggregation")
    }

    /// A rolling maximum of the field `field` selects (Flink's `max(position)`).
    pub fn max<V>(&self, field: impl Fn(&mut T) -> &mut V + Clone + Send + Sync + 'static) -> DataStream<T>
    where
        V: PartialOrd + Copy + 'static,
    {
        self.reduce(move |mut acc, mut v| {
            let m = *field(&mut v);
            if m > *field(&mut acc) {
                *field(&mut acc) = m;
            }
            acc
        })
        .name("Keyed Aggregation")
    }
}

#[derive(Clone)]
struct RollingReduce<T, F> {
    f: F,
    desc: ValueStateDescriptor<T>,
    mode: RuntimeModeHandle,
}

impl<K: KeyType, T: Data, F: Fn(T, T) -> T + Clone + Send + Sync + 'static> KeyedProcessFunction<K, T, T>
    for RollingReduce<T, F>
{
    fn process_element(
        &mut self,
        value: T,
        ctx: &mut KeyedContext<'_, K>,
        out: &mut Collector<'_, T>,
    ) -> Result<(), UserError> {
        let mut state = ctx.value_state(&self.desc)?;
        let (next, first) = match state.value() {
            Some(acc) => ((self.f)(acc, value), false),
            None => (value, true),
        };
        if !self.mode.is_batch() {
            state.update(next.clone());
            out.collect(next);
            return Ok(());
        }
        state.update(next);
        if first {
            // The final watermark of a bounded input fires it.
            ctx.register_event_time_timer(i64::MAX)?;
        }
        Ok(())
    }

    fn on_timer(
        &mut self,
        _timestamp: i64,
        ctx: &mut KeyedContext<'_, K>,
        out: &mut Collector<'_, T>,
    ) -> Result<(), UserError> {
        if let Some(result) = ctx.value_state(&self.desc)?.take() {
            out.collect(result);
        }
        Ok(())
    }
}
