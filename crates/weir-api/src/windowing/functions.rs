//! Window functions: what a firing window emits.
//!
//! - `reduce(f)`: the window keeps one value, `f(acc, element)`; a firing emits it.
//! - [`AggregateFunction`]: the window keeps an accumulator; a firing emits
//!   `get_result(acc)`.
//! - [`ProcessWindowFunction`]: gets the window's elements (or the reduced/aggregated
//!   value) with the key and the window's metadata (Flink's `ProcessWindowFunction`).
//!
//! Every record a window emits carries `window.max_timestamp()` as its timestamp.

use super::error::WindowError;
use super::window::Window;
use crate::functions::{Collector, KeyType};
use weir_runtime::error::UserError;
use weir_runtime::operator::ProcessingTimeService;
use weir_state::heap::{StateValue, ValueState};
use weir_state::{KeyedStateBackend, StateError, ValueStateDescriptor, VoidNamespace};

/// Incremental aggregation with an accumulator (Flink's `AggregateFunction`).
pub trait AggregateFunction<IN, ACC, OUT>: Clone + Send + Sync + 'static {
    /// A new, empty accumulator.
    fn create_accumulator(&self) -> ACC;
    /// Adds `value` to `accumulator`.
    fn add(&self, value: IN, accumulator: &mut ACC);
    /// The result of `accumulator`.
    fn get_result(&self, accumulator: &ACC) -> OUT;
    /// Merges two accumulators (for merging windows).
    fn merge(&self, a: ACC, b: ACC) -> ACC;
}

/// An [`AggregateFunction`] as the aggregator of an aggregating state, so that one
/// function serves a window and a state as in Flink:
/// `AggregatingStateDescriptor::new("avg", StateAggregateFunction(Average))`.
pub struct StateAggregateFunction<F>(pub F);

impl<IN, ACC, OUT, F: AggregateFunction<IN, ACC, OUT>> weir_state::StateAggregator<IN, ACC, OUT>
    for StateAggregateFunction<F>
{
    fn create_accumulator(&self) -> ACC {
        self.0.create_accumulator()
    }
    fn add(&self, value: IN, accumulator: &mut ACC) {
        self.0.add(value, accumulator)
    }
    fn get_result(&self, accumulator: &ACC) -> OUT {
        self.0.get_result(accumulator)
    }
}

/// What a [`ProcessWindowFunction`] knows about the firing window.
pub struct WindowContext<'a, K: KeyType, W: Window> {
    pub(crate) window: &'a W,
    pub(crate) watermark: i64,
    pub(crate) processing_time: &'a ProcessingTimeService,
    pub(crate) backend: &'a mut KeyedStateBackend<K>,
    pub(crate) merging: bool,
}

impl<K: KeyType, W: Window> WindowContext<'_, K, W> {
    /// The window being evaluated.
    pub fn window(&self) -> &W {
        self.window
    }

    /// The operator's current event-time watermark.
    pub fn current_watermark(&self) -> i64 {
        self.watermark
    }

    /// The task's current processing time.
    pub fn current_processing_time(&self) -> i64 {
        self.processing_time.current_processing_time()
    }

    /// Value state of the current key scoped to this window; not available with merging
    /// windows. Clear it in [`ProcessWindowFunction::clear`].
    pub fn window_state<V: StateValue>(
        &mut self,
        desc: &ValueStateDescriptor<V>,
    ) -> Result<ValueState<'_, K, W, V>, UserError> {
        if self.merging {
            return Err(WindowError::PerWindowStateOnMergingWindows.into());
        }
        Ok(self.backend.value(desc, self.window)?)
    }

    /// Value state of the current key across all its windows.
    pub fn global_state<V: StateValue>(
        &mut self,
        desc: &ValueStateDescriptor<V>,
    ) -> Result<ValueState<'_, K, VoidNamespace, V>, StateError> {
        self.backend.value(desc, &VoidNamespace)
    }
}

/// Processes the contents of a firing window (Flink's `ProcessWindowFunction`). One
/// instance is cloned per subtask. Window functions over all elements (`process`) get
/// them in arrival order; after `reduce` or `aggregate` they get the one result.
pub trait ProcessWindowFunction<K: KeyType, IN, OUT, W: Window>: Clone + Send + Sync + 'static {
    /// Evaluates the window of `key` with `elements`.
    fn process(
        &mut self,
        key: &K,
        ctx: &mut WindowContext<'_, K, W>,
        elements: Vec<IN>,
        out: &mut Collector<'_, OUT>,
    ) -> Result<(), UserError>;

    /// Evaluates a window whose contents are one value: the result of `reduce` or
    /// `aggregate`. The default hands it to [`process`](Self::process) in a `Vec`; a
    /// function may take it directly instead and spare that allocation per firing.
    fn process_one(
        &mut self,
        key: &K,
        ctx: &mut WindowContext<'_, K, W>,
        element: IN,
        out: &mut Collector<'_, OUT>,
    ) -> Result<(), UserError> {
        self.process(key, ctx, vec![element], out)
    }

    /// The window is purged for good: clear its per-window state.
    fn clear(&mut self, ctx: &mut WindowContext<'_, K, W>) -> Result<(), UserError> {
        let _ = ctx;
        Ok(())
    }
}

/// Emits every element as it is (the window function of `reduce` and `aggregate`
/// without a process function).
#[derive(Debug, Clone, Copy, Default)]
pub struct PassThrough;

impl<K: KeyType, IN: 'static, W: Window> ProcessWindowFunction<K, IN, IN, W> for PassThrough {
    fn process(
        &mut self,
        _key: &K,
        _ctx: &mut WindowContext<'_, K, W>,
        elements: Vec<IN>,
        out: &mut Collector<'_, IN>,
    ) -> Result<(), UserError> {
        for e in elements {
            out.collect(e);
        }
        Ok(())
    }

    fn process_one(
        &mut self,
        _key: &K,
        _ctx: &mut WindowContext<'_, K, W>,
        element: IN,
        out: &mut Collector<'_, IN>,
    ) -> Result<(), UserError> {
        out.collect(element);
        Ok(())
    }
}
