//! How a window keeps its elements and what a firing emits (Flink's window state plus
//! `InternalWindowFunction`).
//!
//! Contents live in keyed state of the current key, in the namespace of the window's
//! *state window* (for merging windows the window whose state holds the merged
//! contents). Three kinds:
//!
//! - [`ReduceContents`]: one value, reduced on every element.
//! - [`AggregateContents`]: one accumulator.
//! - [`ListContents`]: every element, in arrival order.
//!
//! A firing with no contents emits nothing (Flink skips `null` contents).

use super::functions::{AggregateFunction, ProcessWindowFunction, WindowContext};
use super::window::Window;
use crate::functions::{Collector, KeyType};
use std::marker::PhantomData;
use weir_runtime::error::UserError;
use weir_runtime::operator::ProcessingTimeService;
use weir_state::heap::StateValue;
use weir_state::{
    KeyedStateBackend, ListState, ListStateDescriptor, ListStateHandle, StateError, ValueState, ValueStateDescriptor,
    ValueStateHandle,
};

mod accumulating;
pub use accumulating::AccumulatingContents;

/// The window being emitted: the key, the window (metadata) and where its contents are.
pub struct Firing<'a, K, W> {
    /// The key.
    pub key: &'a K,
    /// The window, as the function sees it.
    pub window: &'a W,
    /// The namespace holding the contents.
    pub state_window: &'a W,
    /// The operator's watermark.
    pub watermark: i64,
    /// The task's clock, read when the function asks.
    pub processing_time: &'a ProcessingTimeService,
    /// True with a merging assigner.
    pub merging: bool,
}

/// Keeps a window's elements and evaluates them when it fires.
pub trait WindowContents<K: KeyType, T, O, W: Window>: Send + 'static {
    /// Adds `value` to the contents of `state_window`.
    fn add(&mut self, backend: &mut KeyedStateBackend<K>, state_window: &W, value: T) -> Result<(), UserError>;

    /// Emits the window's result to `out`, if it has contents. With `take` the
    /// contents are moved out and removed (a firing at the window's cleanup time, after
    /// which they would be cleared anyway): one lookup instead of two, and no copy.
    fn emit(
        &mut self,
        backend: &mut KeyedStateBackend<K>,
        firing: &Firing<'_, K, W>,
        out: &mut Collector<'_, O>,
        take: bool,
    ) -> Result<(), UserError>;

    /// Removes the contents of `state_window` (purge, cleanup).
    fn clear_contents(&mut self, backend: &mut KeyedStateBackend<K>, state_window: &W) -> Result<(), UserError>;

    /// The window is gone: lets the window function clear its per-window state.
    fn clear_function(
        &mut self,
        backend: &mut KeyedStateBackend<K>,
        firing: &Firing<'_, K, W>,
    ) -> Result<(), UserError>;

    /// Moves the contents of `sources` into `target` (merging windows).
    fn merge(&mut self, backend: &mut KeyedStateBackend<K>, target: &W, sources: &[W]) -> Result<(), UserError>;

    /// Loads the contents of `state_window` of `key` (in key group `kg`) into the cache
    /// ahead of an access (see [`KeyedStateBackend::prefetch_value_of`]); changes
    /// nothing.
    fn prefetch(&self, backend: &KeyedStateBackend<K>, key: &K, kg: u32, state_window: &W);
}

/// The contents' value state of the current key in `state_window`, through its handle
/// (declared in `backend` on first use).
#[inline]
fn value_state<'b, K: KeyType, W: Window, V: StateValue>(
    handle: &mut Option<ValueStateHandle<V>>,
    backend: &'b mut KeyedStateBackend<K>,
    desc: &ValueStateDescriptor<V>,
    state_window: &W,
) -> Result<ValueState<'b, K, W, V>, StateError> {
    let h = match *handle {
        Some(h) => h,
        None => *handle.insert(backend.value_handle::<W, V>(desc)?),
    };
    backend.value_of(h, state_window)
}

/// One value per window in keyed state (the reduced value or the accumulator), with
/// its state handle resolved at first use: what [`ReduceContents`] and
/// [`AggregateContents`] share.
struct ValueSlot<V> {
    desc: ValueStateDescriptor<V>,
    handle: Option<ValueStateHandle<V>>,
}

impl<V: StateValue> ValueSlot<V> {
    fn new() -> Self {
        Self {
            desc: ValueStateDescriptor::new("window-contents"),
            handle: None,
        }
    }

    /// The value of the current key in `state_window`.
    #[inline]
    fn state<'b, K: KeyType, W: Window>(
        &mut self,
        backend: &'b mut KeyedStateBackend<K>,
        state_window: &W,
    ) -> Result<ValueState<'b, K, W, V>, StateError> {
        value_state(&mut self.handle, backend, &self.desc, state_window)
    }

    fn clear<K: KeyType, W: Window>(
        &mut self,
        backend: &mut KeyedStateBackend<K>,
        state_window: &W,
    ) -> Result<(), UserError> {
        self.state(backend, state_window)?.clear();
        Ok(())
    }

    #[inline]
    fn prefetch<K: KeyType, W: Window>(&self, backend: &KeyedStateBackend<K>, key: &K, kg: u32, w: &W) {
        if let Some(h) = self.handle {
            backend.prefetch_value_of(h, key, kg, w);
        }
    }

    /// Moves the values of `sources` into `target`: `combine(earlier, later)` folds the
    /// sources in order, then combines the target's own value with the fold.
    fn merge<K: KeyType, W: Window>(
        &mut self,
        backend: &mut KeyedStateBackend<K>,
        target: &W,
        sources: &[W],
        mut combine: impl FnMut(V, V) -> V,
    ) -> Result<(), UserError> {
        let mut acc: Option<V> = None;
        for w in sources {
            if let Some(v) = self.state(backend, w)?.take() {
                acc = Some(match acc {
                    Some(a) => combine(a, v),
                    None => v,
                });
            }
        }
        if let Some(v) = acc {
            let mut s = self.state(backend, target)?;
            let merged = match s.take() {
                Some(t) => combine(t, v),
                None => v,
            };
            s.update(merged);
        }
        Ok(())
    }
}

/// The contents' list state of the current key in `state_window`, through its handle.
#[inline]
fn list_state<'b, K: KeyType, W: Window, V: StateValue>(
    handle: &mut Option<ListStateHandle<V>>,
    backend: &'b mut KeyedStateBackend<K>,
    desc: &ListStateDescriptor<V>,
    state_window: &W,
) -> Result<ListState<'b, K, W, V>, StateError> {
    let h = match *handle {
        Some(h) => h,
        None => *handle.insert(backend.list_handle::<W, V>(desc)?),
    };
    backend.list_of(h, state_window)
}

/// What the window function is told of `firing`.
fn window_context<'c, K: KeyType, W: Window>(
    backend: &'c mut KeyedStateBackend<K>,
    firing: &Firing<'c, K, W>,
) -> WindowContext<'c, K, W> {
    WindowContext {
        window: firing.window,
        watermark: firing.watermark,
        processing_time: firing.processing_time,
        backend,
        merging: firing.merging,
    }
}

fn call_process<K: KeyType, V, O, W: Window, P: ProcessWindowFunction<K, V, O, W>>(
    process: &mut P,
    backend: &mut KeyedStateBackend<K>,
    firing: &Firing<'_, K, W>,
    elements: Vec<V>,
    out: &mut Collector<'_, O>,
) -> Result<(), UserError> {
    let mut ctx = window_context(backend, firing);
    process.process(firing.key, &mut ctx, elements, out)
}

/// [`call_process`] of the one value of reduced or aggregated contents.
fn call_process_one<K: KeyType, V, O, W: Window, P: ProcessWindowFunction<K, V, O, W>>(
    process: &mut P,
    backend: &mut KeyedStateBackend<K>,
    firing: &Firing<'_, K, W>,
    element: V,
    out: &mut Collector<'_, O>,
) -> Result<(), UserError> {
    let mut ctx = window_context(backend, firing);
    process.process_one(firing.key, &mut ctx, element, out)
}

fn clear_process<K: KeyType, V, O, W: Window, P: ProcessWindowFunction<K, V, O, W>>(
    process: &mut P,
    backend: &mut KeyedStateBackend<K>,
    firing: &Firing<'_, K, W>,
) -> Result<(), UserError> {
    let mut ctx = window_context(backend, firing);
    process.clear(&mut ctx)
}

/// One reduced value per window, then a process function over it.
pub struct ReduceContents<T, F, P> {
    f: F,
    process: P,
    slot: ValueSlot<T>,
}

impl<T: StateValue, F, P> ReduceContents<T, F, P> {
    /// Reduces with `f`, evaluates with `process`.
    pub fn new(f: F, process: P) -> Self {
        Self {
            f,
            process,
            slot: ValueSlot::new(),
        }
    }
}

impl<K, T, O, W, F, P> WindowContents<K, T, O, W> for ReduceContents<T, F, P>
where
    K: KeyType,
    T: StateValue + Send,
    W: Window,
    F: Fn(T, T) -> T + Send + 'static,
    P: ProcessWindowFunction<K, T, O, W>,
{
    fn add(&mut self, backend: &mut KeyedStateBackend<K>, state_window: &W, value: T) -> Result<(), UserError> {
        let mut s = self.slot.state(backend, state_window)?;
        let next = match s.take() {
            Some(acc) => (self.f)(acc, value),
            None => value,
        };
        s.update(next);
        Ok(())
    }

    fn emit(
        &mut self,
        backend: &mut KeyedStateBackend<K>,
        firing: &Firing<'_, K, W>,
        out: &mut Collector<'_, O>,
        take: bool,
    ) -> Result<(), UserError> {
        let mut state = self.slot.state(backend, firing.state_window)?;
        let Some(v) = (if take { state.take() } else { state.value() }) else {
            return Ok(());
        };
        call_process_one(&mut self.process, backend, firing, v, out)
    }

    fn clear_contents(&mut self, backend: &mut KeyedStateBackend<K>, state_window: &W) -> Result<(), UserError> {
        self.slot.clear(backend, state_window)
    }

    fn clear_function(
        &mut self,
        backend: &mut KeyedStateBackend<K>,
        firing: &Firing<'_, K, W>,
    ) -> Result<(), UserError> {
        clear_process(&mut self.process, backend, firing)
    }

    #[inline]
    fn prefetch(&self, backend: &KeyedStateBackend<K>, key: &K, kg: u32, state_window: &W) {
        self.slot.prefetch(backend, key, kg, state_window);
    }

    fn merge(&mut self, backend: &mut KeyedStateBackend<K>, target: &W, sources: &[W]) -> Result<(), UserError> {
        let f = &self.f;
        self.slot.merge(backend, target, sources, f)
    }
}

/// One accumulator per window, then a process function over its result.
pub struct AggregateContents<ACC, V, A, P> {
    agg: A,
    process: P,
    slot: ValueSlot<ACC>,
    _v: PhantomData<fn() -> V>,
}

impl<ACC: StateValue, V, A, P> AggregateContents<ACC, V, A, P> {
    /// Aggregates with `agg`, evaluates the result with `process`.
    pub fn new(agg: A, process: P) -> Self {
        Self {
            agg,
            process,
            slot: ValueSlot::new(),
            _v: PhantomData,
        }
    }
}

impl<K, T, ACC, V, O, W, A, P> WindowContents<K, T, O, W> for AggregateContents<ACC, V, A, P>
where
    K: KeyType,
    ACC: StateValue + Send,
    V: 'static,
    W: Window,
    A: AggregateFunction<T, ACC, V>,
    P: ProcessWindowFunction<K, V, O, W>,
{
    #[inline]
    fn add(&mut self, backend: &mut KeyedStateBackend<K>, state_window: &W, value: T) -> Result<(), UserError> {
        let mut s = self.slot.state(backend, state_window)?;
        let acc = s.get_or_insert_with(|| self.agg.create_accumulator());
        self.agg.add(value, acc);
        Ok(())
    }

    fn emit(
        &mut self,
        backend: &mut KeyedStateBackend<K>,
        firing: &Firing<'_, K, W>,
        out: &mut Collector<'_, O>,
        take: bool,
    ) -> Result<(), UserError> {
        let mut state = self.slot.state(backend, firing.state_window)?;
        let result = if take {
            state.take().map(|acc| self.agg.get_result(&acc))
        } else {
            state.value_ref().map(|acc| self.agg.get_result(acc))
        };
        let Some(result) = result else {
            return Ok(());
        };
        call_process_one(&mut self.process, backend, firing, result, out)
    }

    fn clear_contents(&mut self, backend: &mut KeyedStateBackend<K>, state_window: &W) -> Result<(), UserError> {
        self.slot.clear(backend, state_window)
    }

    fn clear_function(
        &mut self,
        backend: &mut KeyedStateBackend<K>,
        firing: &Firing<'_, K, W>,
    ) -> Result<(), UserError> {
        clear_process(&mut self.process, backend, firing)
    }

    #[inline]
    fn prefetch(&self, backend: &KeyedStateBackend<K>, key: &K, kg: u32, state_window: &W) {
        self.slot.prefetch(backend, key, kg, state_window);
    }

    fn merge(&mut self, backend: &mut KeyedStateBackend<K>, target: &W, sources: &[W]) -> Result<(), UserError> {
        let agg = &self.agg;
        self.slot.merge(backend, target, sources, |a, b| agg.merge(a, b))
    }
}

/// Every element of the window, in arrival order, for a process function.
pub struct ListContents<T, P> {
    process: P,
    desc: ListStateDescriptor<T>,
    handle: Option<ListStateHandle<T>>,
}

impl<T, P> ListContents<T, P> {
    /// Evaluates all elements with `process`.
    pub fn new(process: P) -> Self {
        Self {
            process,
            desc: ListStateDescriptor::new("window-contents"),
            handle: None,
        }
    }
}

impl<K, T, O, W, P> WindowContents<K, T, O, W> for ListContents<T, P>
where
    K: KeyType,
    T: StateValue + Send,
    W: Window,
    P: ProcessWindowFunction<K, T, O, W>,
{
    fn add(&mut self, backend: &mut KeyedStateBackend<K>, state_window: &W, value: T) -> Result<(), UserError> {
        list_state(&mut self.handle, backend, &self.desc, state_window)?.add(value);
        Ok(())
    }

    fn emit(
        &mut self,
        backend: &mut KeyedStateBackend<K>,
        firing: &Firing<'_, K, W>,
        out: &mut Collector<'_, O>,
        take: bool,
    ) -> Result<(), UserError> {
        let mut state = list_state(&mut self.handle, backend, &self.desc, firing.state_window)?;
        let elements = if take { state.take() } else { state.get().to_vec() };
        if elements.is_empty() {
            return Ok(());
        }
        call_process(&mut self.process, backend, firing, elements, out)
    }

    fn clear_contents(&mut self, backend: &mut KeyedStateBackend<K>, state_window: &W) -> Result<(), UserError> {
        list_state(&mut self.handle, backend, &self.desc, state_window)?.clear();
        Ok(())
    }

    fn clear_function(
        &mut self,
        backend: &mut KeyedStateBackend<K>,
        firing: &Firing<'_, K, W>,
    ) -> Result<(), UserError> {
        clear_process(&mut self.process, backend, firing)
    }

    #[inline]
    fn prefetch(&self, backend: &KeyedStateBackend<K>, key: &K, kg: u32, state_window: &W) {
        if let Some(h) = self.handle {
            backend.prefetch_list_of(h, key, kg, state_window);
        }
    }

    fn merge(&mut self, backend: &mut KeyedStateBackend<K>, target: &W, sources: &[W]) -> Result<(), UserError> {
        let mut all = Vec::new();
        for w in sources {
            all.extend(list_state(&mut self.handle, backend, &self.desc, w)?.take());
        }
        list_state(&mut self.handle, backend, &self.desc, target)?.add_all(all);
        Ok(())
    }
}
