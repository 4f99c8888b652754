//! Two-input operators: `connect` two streams (of possibly different types) and process
//! them together, as Flink's `ConnectedStreams`.
//!
//! The operator's watermark is the minimum of its two inputs' watermarks; its input ends
//! when both inputs have ended. Keyed connected streams partition both inputs by key
//! (each with its own key selector), so records of the same key from either input meet
//! in the same subtask, with the same keyed state and timers.

use crate::datastream::DataStream;
use crate::functions::{Collector, KeyType, KeyedContext, KeyedProcessFunction, TaskInfo};
use crate::operators::KeyedProcessOperator;
use std::marker::PhantomData;
use std::sync::Arc;
use weir_core::StreamRecord;
use weir_graph::Partitioner;
use weir_runtime::error::{TaskError, UserError};
use weir_runtime::operator::factory::Data;
use weir_runtime::operator::{register_checkpointed, CoElement, OperatorFactory, Output, SelectorFactory};

/// A shared key selector.
type KeySelector<T, K> = Arc<dyn Fn(&T) -> K + Send + Sync>;

/// Two streams feeding one operator.
pub struct ConnectedStreams<A, B> {
    pub(crate) first: DataStream<A>,
    pub(crate) second: DataStream<B>,
}

impl<A: Data> DataStream<A> {
    /// Connects this stream (the first input) with `other` (the second input).
    pub fn connect<B: Data>(&self, other: &DataStream<B>) -> ConnectedStreams<A, B> {
        ConnectedStreams {
            first: self.clone(),
            second: other.clone(),
        }
    }
}

/// Applies one function per input (Flink's `CoMap`/`CoFlatMap`).
struct CoFlatMapOperator<A, B, O, F1, F2> {
    f1: F1,
    f2: F2,
    out: Box<dyn Output<O>>,
    _t: PhantomData<fn(A, B)>,
}

impl<A, B, O, I1, I2, F1, F2> Output<CoElement<A, B>> for CoFlatMapOperator<A, B, O, F1, F2>
where
    I1: IntoIterator<Item = O>,
    I2: IntoIterator<Item = O>,
    F1: FnMut(A) -> I1,
    F2: FnMut(B) -> I2,
{
    fn collect(&mut self, record: StreamRecord<CoElement<A, B>>) -> Result<(), TaskError> {
        let ts = record.timestamp;
        match record.value {
            CoElement::First(a) => {
                for value in (self.f1)(a) {
                    self.out.collect(StreamRecord { value, timestamp: ts })?;
                }
            }
            CoElement::Second(b) => {
                for value in (self.f2)(b) {
                    self.out.collect(StreamRecord { value, timestamp: ts })?;
                }
            }
        }
        Ok(())
    }
    fn emit_watermark(&mut self, watermark: weir_core::Watermark) -> Result<(), TaskError> {
        self.out.emit_watermark(watermark)
    }
    fn emit_watermark_status(&mut self, status: weir_core::element::WatermarkStatus) -> Result<(), TaskError> {
        self.out.emit_watermark_status(status)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.end_input()
    }
}

impl<A: Data, B: Data> ConnectedStreams<A, B> {
    /// One output per record: `f1` for the first input, `f2` for the second.
    pub fn map<O: Data>(
        &self,
        f1: impl Fn(A) -> O + Clone + Send + Sync + 'static,
        f2: impl Fn(B) -> O + Clone + Send + Sync + 'static,
    ) -> DataStream<O> {
        let named = self.flat_map(move |a| Some(f1(a)), move |b| Some(f2(b)));
        named.name("Co-Map")
    }

    /// Any number of outputs per record: `f1` for the first input, `f2` for the second.
    pub fn flat_map<O: Data, I1: IntoIterator<Item = O> + 'static, I2: IntoIterator<Item = O> + 'static>(
        &self,
        f1: impl Fn(A) -> I1 + Clone + Send + Sync + 'static,
        f2: impl Fn(B) -> I2 + Clone + Send + Sync + 'static,
    ) -> DataStream<O> {
        let factory = OperatorFactory::two_input::<A, B, O>(move |_ctx, out| {
            Ok(Box::new(CoFlatMapOperator {
                f1: f1.clone(),
                f2: f2.clone(),
                out,
                _t: PhantomData,
            }))
        });
        self.first
            .transform_two_input(&self.second, "Co-Flat Map", false, factory)
    }

    /// Partitions both inputs by key so that records with equal keys meet.
    pub fn key_by<K: KeyType>(
        &self,
        key1: impl Fn(&A) -> K + Send + Sync + 'static,
        key2: impl Fn(&B) -> K + Send + Sync + 'static,
    ) -> KeyedConnectedStreams<K, A, B> {
        let key1: KeySelector<A, K> = Arc::new(key1);
        let key2: KeySelector<B, K> = Arc::new(key2);
        let (k1, k2) = (key1.clone(), key2.clone());
        let h1: Arc<dyn Fn(&A) -> i32 + Send + Sync> = Arc::new(move |a: &A| weir_core::key_hash::key_hash(&k1(a)));
        let h2: Arc<dyn Fn(&B) -> i32 + Send + Sync> = Arc::new(move |b: &B| weir_core::key_hash::key_hash(&k2(b)));
        KeyedConnectedStreams {
            first: self
                .first
                .repartition(Partitioner::Hash, Some(SelectorFactory::key_groups::<A>(h1))),
            second: self
                .second
                .repartition(Partitioner::Hash, Some(SelectorFactory::key_groups::<B>(h2))),
            key1,
            key2,
        }
    }
}

/// Processes two keyed inputs with shared keyed state and timers (Flink's
/// `KeyedCoProcessFunction`). One instance is cloned per subtask.
pub trait KeyedCoProcessFunction<K: KeyType, A, B, O>: Clone + Send + Sync + 'static {
    /// Called once per subtask before the first record.
    fn open(&mut self) -> Result<(), UserError> {
        Ok(())
    }

    /// A record of the first input, with its key current.
    fn process_element1(
        &mut self,
        value: A,
        ctx: &mut KeyedContext<'_, K>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError>;

    /// A record of the second input, with its key current.
    fn process_element2(
        &mut self,
        value: B,
        ctx: &mut KeyedContext<'_, K>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError>;

    /// A timer of the current key fired.
    fn on_timer(
        &mut self,
        _timestamp: i64,
        _ctx: &mut KeyedContext<'_, K>,
        _out: &mut Collector<'_, O>,
    ) -> Result<(), UserError> {
        Ok(())
    }
}

/// Runs a [`KeyedCoProcessFunction`] as a keyed process function over [`CoElement`]s.
struct CoProcessAdapter<F, A, B> {
    f: F,
    _t: PhantomData<fn(A, B)>,
}

impl<F: Clone, A, B> Clone for CoProcessAdapter<F, A, B> {
    fn clone(&self) -> Self {
        Self {
            f: self.f.clone(),
            _t: PhantomData,
        }
    }
}

impl<K: KeyType, A: 'static, B: 'static, O, F: KeyedCoProcessFunction<K, A, B, O>>
    KeyedProcessFunction<K, CoElement<A, B>, O> for CoProcessAdapter<F, A, B>
{
    fn open(&mut self) -> Result<(), UserError> {
        self.f.open()
    }
    fn process_element(
        &mut self,
        value: CoElement<A, B>,
        ctx: &mut KeyedContext<'_, K>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError> {
        match value {
            CoElement::First(a) => self.f.process_element1(a, ctx, out),
            CoElement::Second(b) => self.f.process_element2(b, ctx, out),
        }
    }
    fn on_timer(
        &mut self,
        timestamp: i64,
        ctx: &mut KeyedContext<'_, K>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError> {
        self.f.on_timer(timestamp, ctx, out)
    }
}

/// Two streams partitioned by key.
pub struct KeyedConnectedStreams<K, A, B> {
    first: DataStream<A>,
    second: DataStream<B>,
    key1: KeySelector<A, K>,
    key2: KeySelector<B, K>,
}

impl<K: KeyType, A: Data, B: Data> KeyedConnectedStreams<K, A, B> {
    /// Processes both inputs with `f`, with keyed state and timers for each record's key.
    pub fn process<O: Data, F: KeyedCoProcessFunction<K, A, B, O>>(&self, f: F) -> DataStream<O> {
        let (k1, k2) = (self.key1.clone(), self.key2.clone());
        let key: KeySelector<CoElement<A, B>, K> = Arc::new(move |e: &CoElement<A, B>| match e {
            CoElement::First(a) => k1(a),
            CoElement::Second(b) => k2(b),
        });
        let adapter = CoProcessAdapter { f, _t: PhantomData };
        let factory = OperatorFactory::two_input::<A, B, O>(move |ctx, out| {
            let op = KeyedProcessOperator::restored(
                "KeyedCoProcess".to_string(),
                adapter.clone(),
                key.clone(),
                crate::keyed_state::restore_keyed(ctx)?,
                ctx.processing_time_service(),
                out,
            )?
            .with_task_info(TaskInfo::of(ctx));
            register_checkpointed(ctx, op)
        });
        self.first
            .transform_two_input(&self.second, "KeyedCoProcess", true, factory)
    }
}
