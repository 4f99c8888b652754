//! `WindowedStream`: a keyed stream cut into windows, waiting for its window function
//! (Flink's `WindowedStream`; `window_all` gives the non-keyed variant with parallelism 1).
//!
//! Settings the types cannot rule out (invalid assigner parameters, a non-merging
//! trigger with session windows) are recorded as pipeline errors, reported when the
//! job is built.

use super::assigners::WindowAssigner;
use super::contents::{AccumulatingContents, AggregateContents, ListContents, ReduceContents, WindowContents};
use super::functions::{AggregateFunction, PassThrough, ProcessWindowFunction};
use super::triggers::Trigger;
use super::window::Window;
use super::window_operator::{WindowOperator, WindowSpec};
use super::window_table_operator::{fits_window_table, WindowTableOperator};
use crate::datastream::DataStream;
use crate::functions::KeyType;
use crate::keyed_state::restore_keyed;
use crate::side_output::OutputTag;
use crate::watermark::generator::millis;
use std::sync::Arc;
use std::time::Duration;
use weir_graph::NodeKind;
use weir_runtime::checkpoint::CheckpointedOperator;
use weir_runtime::error::TaskError;
use weir_runtime::operator::factory::Data;
use weir_runtime::operator::metric_group::NUM_LATE_RECORDS_DROPPED;
use weir_runtime::operator::{register_checkpointed, OperatorFactory, Output, SideOutput, TaskContext};
use weir_state::heap::StateValue;

/// A keyed stream with a window assigner, trigger and lateness.
pub struct WindowedStream<K, T, W> {
    stream: DataStream<T>,
    key_selector: Arc<dyn Fn(&T) -> K + Send + Sync>,
    assigner: Arc<dyn WindowAssigner<T, W>>,
    trigger: Arc<dyn Trigger<K, T, W>>,
    allowed_lateness: i64,
    late_tag: Option<String>,
    non_parallel: bool,
}

/// Windows over a whole (non-keyed) stream: one window operator subtask.
pub type AllWindowedStream<T, W> = WindowedStream<(), T, W>;

/// The last path segment of a type's name, or `fallback` for closures.
fn function_name<F>(fallback: &str) -> String {
    let full = std::any::type_name::<F>();
    let base = full.split('<').next().unwrap_or(full);
    let last = base.rsplit("::").next().unwrap_or(base);
    if last.is_empty() || last.contains("closure") {
        fallback.to_string()
    } else {
        last.to_string()
    }
}

impl<K: KeyType, T: Data, W: Window> WindowedStream<K, T, W> {
    pub(crate) fn new<A: WindowAssigner<T, W>>(
        stream: DataStream<T>,
        key_selector: Arc<dyn Fn(&T) -> K + Send + Sync>,
        assigner: A,
        non_parallel: bool,
    ) -> Self {
        if let Err(e) = assigner.validate() {
            stream.builder.borrow_mut().errors.push(e);
        }
        let limits = stream.builder.borrow().limits;
        if let Err(e) = limits.check_windows_per_record(&assigner.describe(), assigner.windows_per_record()) {
            stream.builder.borrow_mut().errors.push(e);
        }
        let trigger = assigner.default_trigger::<K>();
        Self {
            stream,
            key_selector,
            assigner: Arc::new(assigner),
            trigger,
            allowed_lateness: 0,
            late_tag: None,
            non_parallel,
        }
    }

    /// Replaces the assigner's default trigger.
    pub fn trigger(mut self, trigger: impl Trigger<K, T, W>) -> Self {
        if self.assigner.is_merging() && !trigger.can_merge() {
            self.stream
                .builder
                .borrow_mut()
                .errors
                .push("A merging window assigner cannot be used with a trigger that does not support merging.".into());
        }
        self.trigger = Arc::new(trigger);
        self
    }

    /// Keeps window state `lateness` past the window's end, so that late elements
    /// re-fire it (event time only; default 0).
    pub fn allowed_lateness(mut self, lateness: Duration) -> Self {
        self.allowed_lateness = millis(lateness);
        self
    }

    /// Sends elements too late for all their windows to the side output `tag`
    /// (select it with `get_side_output` on the window's result).
    pub fn side_output_late_data(mut self, tag: &OutputTag<T>) -> Self {
        self.late_tag = Some(tag.id().to_string());
        self
    }

    fn spec(&self, function: &str) -> WindowSpec<K, T, W> {
        WindowSpec {
            name: format!(
                "Window({}, {}, {function})",
                self.assigner.describe(),
                self.trigger.describe()
            ),
            key_selector: self.key_selector.clone(),
            assigner: self.assigner.clone(),
            trigger: self.trigger.clone(),
            allowed_lateness: self.allowed_lateness,
        }
    }

    fn transform<O: Data>(&self, name: String, factory: OperatorFactory) -> DataStream<O> {
        let result = self.stream.transform(name, NodeKind::Operator, true, factory);
        if self.non_parallel {
            result.set_parallelism(1).set_max_parallelism(1)
        } else {
            result
        }
    }

    /// The window operator `build` makes per subtask from the task, the output and the
    /// late-data side output, registered for checkpoints and named `name`.
    fn transform_window<O: Data, Op: Output<T> + CheckpointedOperator + 'static>(
        &self,
        name: String,
        build: impl Fn(&TaskContext, Box<dyn Output<O>>, Option<SideOutput<T>>) -> Result<Op, TaskError>
            + Send
            + Sync
            + 'static,
    ) -> DataStream<O> {
        let late_tag = self.late_tag.clone();
        let factory = OperatorFactory::one_input_with_side_outputs::<T, O>(move |ctx, out, side| {
            let late = match &late_tag {
                Some(tag) => side.get::<T>(tag)?,
                None => None,
            };
            register_checkpointed(ctx, build(ctx, out, late)?)
        });
        self.transform(name, factory)
    }

    /// The window operator over keyed state and timers, for any windows.
    fn build<O: Data, C: WindowContents<K, T, O, W>>(
        &self,
        function: String,
        make_contents: impl Fn() -> C + Send + Sync + 'static,
    ) -> DataStream<O> {
        let spec = self.spec(&function);
        self.transform_window(spec.name.clone(), move |ctx, out, late| {
            let op = WindowOperator::restored(
                spec.clone(),
                make_contents(),
                restore_keyed(ctx)?,
                ctx.processing_time_service(),
                out,
                late,
            );
            Ok(op.with_late_records_dropped(ctx.operator_counter(NUM_LATE_RECORDS_DROPPED)))
        })
    }

    /// The operator for one accumulator per window: over a window table when the
    /// windows fit one ([`fits_window_table`]), else over keyed state.
    fn build_accumulating<O: Data, C: AccumulatingContents<K, T, O, W>>(
        &self,
        function: String,
        make_contents: impl Fn() -> C + Send + Sync + 'static,
    ) -> DataStream<O> {
        let spec = self.spec(&function);
        if !fits_window_table(&spec) {
            return self.build(function, make_contents);
        }
        self.transform_window(spec.name.clone(), move |ctx, out, late| {
            let op = WindowTableOperator::restored(
                spec.clone(),
                make_contents(),
                restore_keyed(ctx)?,
                ctx.processing_time_service(),
                out,
                late,
            )?;
            Ok(op.with_late_records_dropped(ctx.operator_counter(NUM_LATE_RECORDS_DROPPED)))
        })
    }

    /// Reduces each window's elements with `f`; a firing emits the reduced value.
    pub fn reduce(&self, f: impl Fn(T, T) -> T + Clone + Send + Sync + 'static) -> DataStream<T> {
        self.build_accumulating("ReduceFunction".into(), move || {
            ReduceContents::new(f.clone(), PassThrough)
        })
    }

    /// Reduces each window's elements with `f`; a firing passes the reduced value to
    /// `process` with the window's metadata.
    pub fn reduce_with_process<O: Data, P: ProcessWindowFunction<K, T, O, W>>(
        &self,
        f: impl Fn(T, T) -> T + Clone + Send + Sync + 'static,
        process: P,
    ) -> DataStream<O> {
        let name = format!("ReduceFunction, {}", function_name::<P>("ProcessWindowFunction"));
        self.build_accumulating(name, move || ReduceContents::new(f.clone(), process.clone()))
    }

    /// Aggregates each window's elements into an accumulator; a firing emits its result.
    pub fn aggregate<ACC, V, A>(&self, agg: A) -> DataStream<V>
    where
        ACC: StateValue + Send,
        V: Data,
        A: AggregateFunction<T, ACC, V>,
    {
        let name = function_name::<A>("AggregateFunction");
        self.build_accumulating(name, move || AggregateContents::new(agg.clone(), PassThrough))
    }

    /// Aggregates each window's elements; a firing passes the result to `process` with
    /// the window's metadata.
    pub fn aggregate_with_process<ACC, V, O, A, P>(&self, agg: A, process: P) -> DataStream<O>
    where
        ACC: StateValue + Send,
        V: 'static,
        O: Data,
        A: AggregateFunction<T, ACC, V>,
        P: ProcessWindowFunction<K, V, O, W>,
    {
        let name = format!(
            "{}, {}",
            function_name::<A>("AggregateFunction"),
            function_name::<P>("ProcessWindowFunction")
        );
        self.build_accumulating(name, move || AggregateContents::new(agg.clone(), process.clone()))
    }

    /// Keeps every element of each window; a firing passes them all to `process`.
    pub fn process<O: Data, P: ProcessWindowFunction<K, T, O, W>>(&self, process: P) -> DataStream<O> {
        let name = function_name::<P>("ProcessWindowFunction");
        self.build(name, move || ListContents::new(process.clone()))
    }
}
