//! The operators behind the API's transformations. Each is an `Output` of its input
//! type and owns the output it emits to; chained operators call each other directly.
//! Every operator forwards watermarks, watermark statuses and processing-time ticks
//! (the macros of `forwarding`); keyed operators lend their function its key's state
//! and timers through `KeyedParts`.

use crate::forwarding::{fire_timers_and_forward, forward_output};
use crate::functions::{Collector, KeyType, KeyedContext, KeyedProcessFunction, SubtaskInfo, TaskInfo};
use std::marker::PhantomData;
use std::sync::Arc;
use weir_core::StreamRecord;
use weir_runtime::error::TaskError;
use weir_runtime::operator::{Output, ProcessingTimeService};
use weir_state::{KeyedStateBackend, TimeDomain, Timer, TimerService, VoidNamespace};

/// `map`: one output per input, same timestamp.
pub struct MapOperator<I, O, F> {
    f: F,
    out: Box<dyn Output<O>>,
    _i: PhantomData<fn(I)>,
}

impl<I, O, F: FnMut(I) -> O> MapOperator<I, O, F> {
    /// A map emitting to `out`.
    pub fn new(f: F, out: Box<dyn Output<O>>) -> Self {
        Self {
            f,
            out,
            _i: PhantomData,
        }
    }
}

impl<I, O, F: FnMut(I) -> O> Output<I> for MapOperator<I, O, F> {
    #[inline]
    fn collect(&mut self, record: StreamRecord<I>) -> Result<(), TaskError> {
        let value = (self.f)(record.value);
        self.out.collect(StreamRecord {
            value,
            timestamp: record.timestamp,
        })
    }
    forward_output!();
}

/// `filter`: keeps the records the predicate accepts.
pub struct FilterOperator<T, F> {
    f: F,
    out: Box<dyn Output<T>>,
}

impl<T, F: FnMut(&T) -> bool> FilterOperator<T, F> {
    /// A filter emitting to `out`.
    pub fn new(f: F, out: Box<dyn Output<T>>) -> Self {
        Self { f, out }
    }
}

impl<T, F: FnMut(&T) -> bool> Output<T> for FilterOperator<T, F> {
    #[inline]
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        if (self.f)(&record.value) {
            self.out.collect(record)
        } else {
            Ok(())
        }
    }
    forward_output!();
}

/// `flat_map`: any number of outputs per input, each with the input's timestamp.
pub struct FlatMapOperator<I, O, It, F> {
    f: F,
    out: Box<dyn Output<O>>,
    _t: PhantomData<fn(I) -> It>,
}

impl<I, O, It: IntoIterator<Item = O>, F: FnMut(I) -> It> FlatMapOperator<I, O, It, F> {
    /// A flat map emitting to `out`.
    pub fn new(f: F, out: Box<dyn Output<O>>) -> Self {
        Self {
            f,
            out,
            _t: PhantomData,
        }
    }
}

impl<I, O, It: IntoIterator<Item = O>, F: FnMut(I) -> It> Output<I> for FlatMapOperator<I, O, It, F> {
    #[inline]
    fn collect(&mut self, record: StreamRecord<I>) -> Result<(), TaskError> {
        let ts = record.timestamp;
        for value in (self.f)(record.value) {
            self.out.collect(StreamRecord { value, timestamp: ts })?;
        }
        Ok(())
    }
    forward_output!();
}

/// What a keyed operator lends its function besides records: keyed state, timers, and
/// the subtask with the task's clock.
pub(crate) struct KeyedParts<K: KeyType> {
    pub(crate) backend: KeyedStateBackend<K>,
    pub(crate) timers: TimerService<K, VoidNamespace>,
    pub(crate) info: SubtaskInfo,
}

impl<K: KeyType> KeyedParts<K> {
    /// The parts of a subtask from its (restored) keyed state and timers; asks the
    /// task's clock to wake it at the earliest processing-time timer.
    pub(crate) fn new(
        (backend, timers): (KeyedStateBackend<K>, TimerService<K, VoidNamespace>),
        info: SubtaskInfo,
    ) -> Self {
        if let Some(at) = timers.next_processing_time_timer() {
            info.processing_time.register_wakeup(at);
        }
        Self { backend, timers, info }
    }

    /// Makes `key` current (failing as operator `name`) and lends out the context of a
    /// call for it: output `timestamp` and, in `on_timer`, the firing timer's
    /// `time_domain`; with it the subtask, for contexts that wrap this one.
    pub(crate) fn context(
        &mut self,
        name: &str,
        key: K,
        timestamp: Option<i64>,
        time_domain: Option<TimeDomain>,
    ) -> Result<(KeyedContext<'_, K>, &SubtaskInfo), TaskError> {
        self.backend
            .set_current_key(key)
            .map_err(|e| TaskError::user(name, e))?;
        let ctx = KeyedContext {
            backend: &mut self.backend,
            timers: &mut self.timers,
            timestamp,
            processing_time: &self.info.processing_time,
            time_domain,
            task_info: &self.info.task,
        };
        Ok((ctx, &self.info))
    }
}

/// The timestamp the output of a timer of `domain` at `timestamp` carries (Flink): an
/// event-time timer's output carries the timer's time, a processing-time timer's none.
pub(crate) fn timer_output_timestamp(timestamp: i64, domain: TimeDomain) -> Option<i64> {
    (domain == TimeDomain::EventTime).then_some(timestamp)
}

/// Runs a [`KeyedProcessFunction`] with keyed state and event-time and
/// processing-time timers.
pub struct KeyedProcessOperator<K: KeyType, I, O, F> {
    name: String,
    f: F,
    key_selector: Arc<dyn Fn(&I) -> K + Send + Sync>,
    keyed: KeyedParts<K>,
    out: Box<dyn Output<O>>,
}

impl<K: KeyType, I, O, F: KeyedProcessFunction<K, I, O>> KeyedProcessOperator<K, I, O, F> {
    /// The operator of one subtask, owning the key groups of `backend`, on the task's
    /// wall clock.
    pub fn new(
        name: String,
        f: F,
        key_selector: Arc<dyn Fn(&I) -> K + Send + Sync>,
        backend: KeyedStateBackend<K>,
        out: Box<dyn Output<O>>,
    ) -> Result<Self, TaskError> {
        Self::with_processing_time(name, f, key_selector, backend, ProcessingTimeService::system(), out)
    }

    /// The operator of one subtask on the task's processing-time service.
    pub fn with_processing_time(
        name: String,
        f: F,
        key_selector: Arc<dyn Fn(&I) -> K + Send + Sync>,
        backend: KeyedStateBackend<K>,
        processing_time: ProcessingTimeService,
        out: Box<dyn Output<O>>,
    ) -> Result<Self, TaskError> {
        Self::restored(
            name,
            f,
            key_selector,
            (backend, TimerService::new()),
            processing_time,
            out,
        )
    }

    /// The operator of one subtask starting from restored state and timers.
    pub fn restored(
        name: String,
        mut f: F,
        key_selector: Arc<dyn Fn(&I) -> K + Send + Sync>,
        restored: (KeyedStateBackend<K>, TimerService<K, VoidNamespace>),
        processing_time: ProcessingTimeService,
        out: Box<dyn Output<O>>,
    ) -> Result<Self, TaskError> {
        f.open().map_err(|e| TaskError::user(&name, e))?;
        let info = SubtaskInfo {
            task: TaskInfo::default(),
            processing_time,
        };
        Ok(Self {
            name,
            f,
            key_selector,
            keyed: KeyedParts::new(restored, info),
            out,
        })
    }

    /// The same operator telling its function which subtask and attempt it runs in.
    pub fn with_task_info(mut self, task_info: TaskInfo) -> Self {
        self.keyed.info.task = task_info;
        self
    }

    fn fire(&mut self, timer: Timer<K, VoidNamespace>, domain: TimeDomain) -> Result<(), TaskError> {
        let output_ts = timer_output_timestamp(timer.timestamp, domain);
        let (mut ctx, _) = self.keyed.context(&self.name, timer.key, output_ts, Some(domain))?;
        let mut out = Collector::new(&mut *self.out, output_ts);
        let r = self.f.on_timer(timer.timestamp, &mut ctx, &mut out);
        out.finish(&self.name, r)
    }
}

impl<K: KeyType, I, O, F: KeyedProcessFunction<K, I, O>> weir_runtime::checkpoint::CheckpointedOperator
    for KeyedProcessOperator<K, I, O, F>
{
    fn snapshot_state(&mut self, _checkpoint_id: u64) -> Result<weir_state::OperatorSnapshot, TaskError> {
        crate::keyed_state::snapshot_keyed(&mut self.keyed.backend, &self.keyed.timers)
    }

    fn snapshot_state_async(
        &mut self,
        checkpoint_id: u64,
        format: weir_state::SnapshotFormat,
    ) -> Result<weir_state::PendingOperatorSnapshot, TaskError> {
        crate::keyed_state::snapshot_keyed_async(&mut self.keyed.backend, &self.keyed.timers, checkpoint_id, format)
    }

    fn notify_checkpoint_complete(&mut self, checkpoint_id: u64) -> Result<(), TaskError> {
        self.keyed.backend.notify_checkpoint_complete(checkpoint_id);
        Ok(())
    }
}

impl<K: KeyType, I, O, F: KeyedProcessFunction<K, I, O>> Output<I> for KeyedProcessOperator<K, I, O, F> {
    fn collect(&mut self, record: StreamRecord<I>) -> Result<(), TaskError> {
        let key = (self.key_selector)(&record.value);
        let (mut ctx, _) = self.keyed.context(&self.name, key, record.timestamp, None)?;
        let mut out = Collector::new(&mut *self.out, record.timestamp);
        let r = self.f.process_element(record.value, &mut ctx, &mut out);
        out.finish(&self.name, r)
    }

    fire_timers_and_forward!(keyed.timers, fire);
}
