//! The operators behind the API's transformations. Each is an `Output` of its input
//! type and owns the output it emits to; chained operators call each other directly.
//! Every operator forwards watermarks, watermark statuses and processing-time ticks.

use crate::functions::{Collector, KeyType, KeyedContext, KeyedProcessFunction, TaskInfo};
use std::marker::PhantomData;
use std::sync::Arc;
use weir_core::element::WatermarkStatus;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::error::TaskError;
use weir_runtime::operator::{Output, ProcessingTimeService};
use weir_state::{HeapKeyedStateBackend, TimeDomain, Timer, TimerService, VoidNamespace};

/// Forwards watermark statuses and processing-time ticks to `self.out`.
macro_rules! forward_events {
    () => {
        fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
            self.out.emit_watermark_status(status)
        }
        fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
            self.out.on_processing_time(now)
        }
    };
}

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
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.out.emit_watermark(watermark)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.end_input()
    }
    forward_events!();
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
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.out.emit_watermark(watermark)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.end_input()
    }
    forward_events!();
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
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.out.emit_watermark(watermark)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.end_input()
    }
    forward_events!();
}

/// Runs a [`KeyedProcessFunction`] with keyed state and event-time and
/// processing-time timers.
pub struct KeyedProcessOperator<K: KeyType, I, O, F> {
    name: String,
    f: F,
    key_selector: Arc<dyn Fn(&I) -> K + Send + Sync>,
    backend: HeapKeyedStateBackend<K>,
    timers: TimerService<K, VoidNamespace>,
    processing_time: ProcessingTimeService,
    task_info: TaskInfo,
    out: Box<dyn Output<O>>,
}

impl<K: KeyType, I, O, F: KeyedProcessFunction<K, I, O>> KeyedProcessOperator<K, I, O, F> {
    /// The operator of one subtask, owning the key groups of `backend`, on the task's
    /// wall clock.
    pub fn new(
        name: String,
        f: F,
        key_selector: Arc<dyn Fn(&I) -> K + Send + Sync>,
        backend: HeapKeyedStateBackend<K>,
        out: Box<dyn Output<O>>,
    ) -> Result<Self, TaskError> {
        Self::with_processing_time(name, f, key_selector, backend, ProcessingTimeService::system(), out)
    }

    /// The operator of one subtask on the task's processing-time service.
    pub fn with_processing_time(
        name: String,
        f: F,
        key_selector: Arc<dyn Fn(&I) -> K + Send + Sync>,
        backend: HeapKeyedStateBackend<K>,
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
        (backend, timers): (HeapKeyedStateBackend<K>, TimerService<K, VoidNamespace>),
        processing_time: ProcessingTimeService,
        out: Box<dyn Output<O>>,
    ) -> Result<Self, TaskError> {
        f.open().map_err(|e| TaskError::user(&name, e))?;
        if let Some(at) = timers.next_processing_time_timer() {
            processing_time.register_wakeup(at);
        }
        Ok(Self {
            name,
            f,
            key_selector,
            backend,
            timers,
            processing_time,
            task_info: TaskInfo::default(),
            out,
        })
    }

    /// The same operator telling its function which subtask and attempt it runs in.
    pub fn with_task_info(mut self, task_info: TaskInfo) -> Self {
        self.task_info = task_info;
        self
    }

    fn fire(&mut self, timer: Timer<K, VoidNamespace>, domain: TimeDomain) -> Result<(), TaskError> {
        self.backend
            .set_current_key(timer.key)
            .map_err(|e| TaskError::user(&self.name, e))?;
        // Flink: an event-time timer's output carries its timestamp; a processing-time
        // timer's output carries none.
        let output_ts = (domain == TimeDomain::EventTime).then_some(timer.timestamp);
        let mut ctx = KeyedContext {
            backend: &mut self.backend,
            timers: &mut self.timers,
            timestamp: output_ts,
            processing_time: &self.processing_time,
            time_domain: Some(domain),
            task_info: &self.task_info,
        };
        let mut out = Collector::new(&mut *self.out, output_ts);
        let r = self.f.on_timer(timer.timestamp, &mut ctx, &mut out);
        if let Some(e) = out.into_error() {
            return Err(e);
        }
        r.map_err(|e| TaskError::user(&self.name, e))
    }
}

impl<K: KeyType, I, O, F: KeyedProcessFunction<K, I, O>> weir_runtime::checkpoint::CheckpointedOperator
    for KeyedProcessOperator<K, I, O, F>
{
    fn snapshot_state(&mut self, _checkpoint_id: u64) -> Result<weir_state::OperatorSnapshot, TaskError> {
        crate::keyed_state::snapshot_keyed(&self.backend, &self.timers)
    }
}

impl<K: KeyType, I, O, F: KeyedProcessFunction<K, I, O>> Output<I> for KeyedProcessOperator<K, I, O, F> {
    fn collect(&mut self, record: StreamRecord<I>) -> Result<(), TaskError> {
        let key = (self.key_selector)(&record.value);
        self.backend
            .set_current_key(key)
            .map_err(|e| TaskError::user(&self.name, e))?;
        let mut ctx = KeyedContext {
            backend: &mut self.backend,
            timers: &mut self.timers,
            timestamp: record.timestamp,
            processing_time: &self.processing_time,
            time_domain: None,
            task_info: &self.task_info,
        };
        let mut out = Collector::new(&mut *self.out, record.timestamp);
        let r = self.f.process_element(record.value, &mut ctx, &mut out);
        if let Some(e) = out.into_error() {
            return Err(e);
        }
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
