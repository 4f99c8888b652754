//! The operators behind the API's transformations. Each is an `Output` of its input
//! type and owns the output it emits to; chained operators call each other directly.

use crate::functions::{Collector, KeyType, KeyedContext, KeyedProcessFunction};
use std::marker::PhantomData;
use std::sync::Arc;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::error::TaskError;
use weir_runtime::operator::Output;
use weir_state::{HeapKeyedStateBackend, TimerService, VoidNamespace};

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
}

/// Runs a [`KeyedProcessFunction`] with keyed state and event-time timers.
pub struct KeyedProcessOperator<K: KeyType, I, O, F> {
    name: String,
    f: F,
    key_selector: Arc<dyn Fn(&I) -> K + Send + Sync>,
    backend: HeapKeyedStateBackend<K>,
    timers: TimerService<K, VoidNamespace>,
    out: Box<dyn Output<O>>,
}

impl<K: KeyType, I, O, F: KeyedProcessFunction<K, I, O>> KeyedProcessOperator<K, I, O, F> {
    /// The operator of one subtask, owning the key groups of `backend`.
    pub fn new(
        name: String,
        mut f: F,
        key_selector: Arc<dyn Fn(&I) -> K + Send + Sync>,
        backend: HeapKeyedStateBackend<K>,
        out: Box<dyn Output<O>>,
    ) -> Result<Self, TaskError> {
        f.open().map_err(|e| TaskError::user(&name, e))?;
        Ok(Self {
            name,
            f,
            key_selector,
            backend,
            timers: TimerService::new(),
            out,
        })
    }

    fn fire_timers(&mut self, watermark: i64) -> Result<(), TaskError> {
        while let Some(timer) = self.timers.advance_and_pop(watermark) {
            self.backend
                .set_current_key(timer.key)
                .map_err(|e| TaskError::user(&self.name, e))?;
            let mut ctx = KeyedContext {
                backend: &mut self.backend,
                timers: &mut self.timers,
                timestamp: Some(timer.timestamp),
            };
            let mut out = Collector::new(&mut *self.out, Some(timer.timestamp));
            let r = self.f.on_timer(timer.timestamp, &mut ctx, &mut out);
            if let Some(e) = out.into_error() {
                return Err(e);
            }
            r.map_err(|e| TaskError::user(&self.name, e))?;
        }
        Ok(())
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
        };
        let mut out = Collector::new(&mut *self.out, record.timestamp);
        let r = self.f.process_element(record.value, &mut ctx, &mut out);
        if let Some(e) = out.into_error() {
            return Err(e);
        }
        r.map_err(|e| TaskError::user(&self.name, e))
    }

    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.fire_timers(watermark.0)?;
        self.out.emit_watermark(watermark)
    }

    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.end_input()
    }
}
