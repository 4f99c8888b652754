//! Type-erased operator factories: how the runtime builds a chain of generic operators.
//!
//! The API registers one [`OperatorFactory`] per StreamGraph node. A factory knows the
//! node's input type `I` and output type `O`; the runtime does not. While a task wires
//! its chain (once, on its own thread, tail first) outputs and operators pass through
//! `Box<dyn Any>` holding a `Box<dyn Output<T>>`; a type mismatch there is a bug in the
//! program's graph and is reported as [`TaskError::Build`], never a panic.
//!
//! A *side-output node* ([`OperatorFactory::side_output`]) is a pass-through of its
//! record type carrying a tag; the chain builder hands the outputs behind such nodes to
//! the producing operator as [`SideOutputs`] instead of joining them to its main output
//! (see [`super::side_output`]).

use super::chaining::{Broadcasting, Discarding, RecordWriterOutput};
use super::context::TaskContext;
use super::metric_group::{Counter, CountingOutput};
use super::side_output::{EventSink, SharedEvents, SharedOutput, SideOutputs, WithSideOutputEvents};
use super::{
    CoElement, Output, SharedSource, SourceChain, SourceDriver, SourceFunction, SourceState, SOURCE_POSITIONS,
};
use crate::error::TaskError;
use crate::network::{InputGate, RecordReader, RecordWriter, ResultPartitionWriter};
use crate::partitioner::{selector_for, ChannelSelector, CustomPartitioner, KeyGroupStreamPartitioner};
use crate::task::input::{InputProcessor, StreamInputProcessor};
use crate::task::two_input::TwoInputProcessor;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;
use weir_graph::Partitioner;

/// What a record type must be to travel through Weir.
pub trait Data: Serialize + DeserializeOwned + Clone + Send + Sync + 'static {}
impl<T: Serialize + DeserializeOwned + Clone + Send + Sync + 'static> Data for T {}

/// A type-erased value: a `Box<dyn Output<T>>`, a `Box<dyn ChannelSelector<T>>`, ….
pub type Erased = Box<dyn Any>;

/// What building a node gives.
pub enum BuiltOperator {
    /// A source with its chain behind it.
    Source(Box<dyn SourceDriver>),
    /// An operator: a `Box<dyn Output<I>>` in a box.
    Operator(Erased),
}

/// Builds the source function of a source node.
pub type SourceBuilder<O> = dyn Fn(&TaskContext) -> Result<Box<dyn SourceFunction<O>>, TaskError> + Send + Sync;
/// Builds an operator given the output it emits to.
pub type OperatorBuilder<I, O> =
    dyn Fn(&TaskContext, Box<dyn Output<O>>) -> Result<Box<dyn Output<I>>, TaskError> + Send + Sync;
/// Builds an operator given its main output and the side outputs the job consumes.
pub type SideOutputOperatorBuilder<I, O> =
    dyn Fn(&TaskContext, Box<dyn Output<O>>, &SideOutputs) -> Result<Box<dyn Output<I>>, TaskError> + Send + Sync;

/// Builds a one-input operator given its main output, its side outputs and the counter
/// of its records in (none for the head of a task, or without metrics), the count
/// already joined to the operator.
type CountedOperatorBuilder<I, O> = dyn Fn(&TaskContext, Box<dyn Output<O>>, &SideOutputs, Option<Counter>) -> Result<Box<dyn Output<I>>, TaskError>
    + Send
    + Sync;

/// What building a node's operator gives.
type Built = Result<BuiltOperator, TaskError>;

trait ErasedFactory: Send + Sync {
    /// Builds the node's operator; `count` counts the records handed to it.
    fn build(&self, ctx: &TaskContext, output: Erased, side: &SideOutputs, count: Option<Counter>) -> Built;
    fn side_output_tag(&self) -> Option<&str> {
        None
    }
    fn share_side_output(&self, _output: Erased, _bag: &mut SideOutputs) -> Result<Box<dyn EventSink>, TaskError> {
        Err(TaskError::Build(
            "only a side-output node can be shared as a side output".into(),
        ))
    }
    fn input_processor(&self, gate: InputGate, head: Erased) -> Result<Box<dyn InputProcessor>, TaskError>;
    fn two_input_processor(
        &self,
        _first: InputGate,
        _second: InputGate,
        _head: Erased,
    ) -> Result<Box<dyn InputProcessor>, TaskError> {
        Err(TaskError::Build("this operator has one input, not two".into()))
    }
}

/// What the runtime does with a node's output type `O` without knowing it: fan-out,
/// network output, channel selectors, side-event wrapping.
trait OutputOps: Send + Sync {
    fn fan_out(&self, outputs: Vec<Erased>, count: Option<Counter>) -> Result<Erased, TaskError>;
    fn with_side_events(&self, output: Erased, sinks: Vec<Box<dyn EventSink>>) -> Result<Erased, TaskError>;
    fn network_output(
        &self,
        job_edge: usize,
        writer: ResultPartitionWriter,
        selector: Erased,
        ctx: &TaskContext,
        count: Option<Counter>,
    ) -> Result<Erased, TaskError>;
    fn default_selector(&self, partitioner: Partitioner, ctx: &SelectorContext) -> Result<Erased, TaskError>;
}

struct TypedOutput<O>(PhantomData<fn() -> O>);

impl<O: Data> OutputOps for TypedOutput<O> {
    fn fan_out(&self, outputs: Vec<Erased>, count: Option<Counter>) -> Result<Erased, TaskError> {
        fan_out_typed::<O>(outputs, count)
    }
    fn with_side_events(&self, output: Erased, sinks: Vec<Box<dyn EventSink>>) -> Result<Erased, TaskError> {
        with_side_events_typed::<O>(output, sinks)
    }
    fn network_output(
        &self,
        job_edge: usize,
        writer: ResultPartitionWriter,
        selector: Erased,
        ctx: &TaskContext,
        count: Option<Counter>,
    ) -> Result<Erased, TaskError> {
        network_output_typed::<O>(job_edge, writer, selector, ctx, count)
    }
    fn default_selector(&self, partitioner: Partitioner, ctx: &SelectorContext) -> Result<Erased, TaskError> {
        default_selector_typed::<O>(partitioner, ctx)
    }
}

/// `output` boxed, counting the records handed to it in `count` if there is one; the
/// count is inlined into `output`'s own call when `O` is a concrete type.
fn counted<T, O: Output<T> + 'static>(output: O, count: Option<Counter>) -> Box<dyn Output<T>> {
    match count {
        Some(count) => Box::new(CountingOutput::new(output, count)),
        None => Box::new(output),
    }
}

/// [`counted`] for an output that is already boxed: left as it is without a count.
fn counted_boxed<T: 'static>(output: Box<dyn Output<T>>, count: Option<Counter>) -> Box<dyn Output<T>> {
    match count {
        Some(count) => Box::new(CountingOutput::new(output, count)),
        None => output,
    }
}

fn output_ops<O: Data>() -> Arc<dyn OutputOps> {
    Arc::new(TypedOutput::<O>(PhantomData))
}

/// Builds the operators of one StreamGraph node, whatever its record types.
#[derive(Clone)]
pub struct OperatorFactory {
    inner: Arc<dyn ErasedFactory>,
    output: Arc<dyn OutputOps>,
}

fn downcast<T: 'static>(value: Erased, what: &str) -> Result<T, TaskError> {
    value
        .downcast::<T>()
        .map(|b| *b)
        .map_err(|_| TaskError::Build(format!("{what} has an unexpected record type")))
}

struct SourceFactory<O> {
    builder: Arc<SourceBuilder<O>>,
}

struct OneInputFactory<I, O> {
    builder: Arc<CountedOperatorBuilder<I, O>>,
}

/// Builds a two-input operator given the output it emits to.
pub type TwoInputOperatorBuilder<A, B, O> =
    dyn Fn(&TaskContext, Box<dyn Output<O>>) -> Result<Box<dyn Output<CoElement<A, B>>>, TaskError> + Send + Sync;

struct TwoInputFactory<A, B, O> {
    builder: Arc<TwoInputOperatorBuilder<A, B, O>>,
}

struct SideOutputFactory<T> {
    tag: String,
    _t: PhantomData<fn(T) -> T>,
}

fn with_side_events_typed<O: Data>(output: Erased, sinks: Vec<Box<dyn EventSink>>) -> Result<Erased, TaskError> {
    if sinks.is_empty() {
        return Ok(output);
    }
    let main = downcast::<Box<dyn Output<O>>>(output, "an output")?;
    let out: Box<dyn Output<O>> = Box::new(WithSideOutputEvents { main, sides: sinks });
    Ok(Box::new(out))
}

fn fan_out_typed<O: Data>(outputs: Vec<Erased>, count: Option<Counter>) -> Result<Erased, TaskError> {
    let mut typed: Vec<Box<dyn Output<O>>> = Vec::with_capacity(outputs.len());
    for o in outputs {
        typed.push(downcast::<Box<dyn Output<O>>>(o, "an output")?);
    }
    let out: Box<dyn Output<O>> = match typed.len() {
        0 => counted(Discarding, count),
        1 => counted_boxed(
            typed
                .pop()
                .ok_or_else(|| TaskError::Build("empty output list".into()))?,
            count,
        ),
        _ => counted(Broadcasting::new(typed), count),
    };
    Ok(Box::new(out))
}

fn network_output_typed<O: Data>(
    job_edge: usize,
    writer: ResultPartitionWriter,
    selector: Erased,
    ctx: &TaskContext,
    count: Option<Counter>,
) -> Result<Erased, TaskError> {
    let selector = downcast::<Box<dyn ChannelSelector<O>>>(selector, "a channel selector")?;
    let (output, flushable) = RecordWriterOutput::new(RecordWriter::new(writer, selector), ctx.buffer_timeout_ms == 0);
    ctx.register_flushable(job_edge, flushable);
    Ok(Box::new(counted(output, count)))
}

fn default_selector_typed<O: Data>(partitioner: Partitioner, ctx: &SelectorContext) -> Result<Erased, TaskError> {
    let sel: Box<dyn ChannelSelector<O>> = selector_for::<O>(partitioner, ctx.seed())
        .ok_or_else(|| TaskError::Build(format!("a {partitioner} edge needs a selector from the program")))?;
    Ok(Box::new(sel))
}

fn input_processor_typed<I: Data>(gate: InputGate, head: Erased) -> Result<Box<dyn InputProcessor>, TaskError> {
    let head = downcast::<Box<dyn Output<I>>>(head, "the chain head")?;
    Ok(Box::new(StreamInputProcessor::new(RecordReader::<I>::new(gate), head)))
}

impl<O: Data> ErasedFactory for SourceFactory<O> {
    fn build(&self, ctx: &TaskContext, output: Erased, _side: &SideOutputs, _count: Option<Counter>) -> Built {
        let output = downcast::<Box<dyn Output<O>>>(output, "a source's output")?;
        let mut source = (self.builder)(ctx)?;
        // A source in the checkpoint restores even when it was dealt no positions
        // (after rescaling): it must not start its input over.
        if let Some(mut restored) = ctx.state().restored(ctx.key_group_range()) {
            source.restore_position(restored.list.remove(SOURCE_POSITIONS).unwrap_or_default())?;
        }
        let shared: SharedSource<O> = Rc::new(RefCell::new(source));
        ctx.state()
            .register(Rc::new(RefCell::new(SourceState(shared.clone()))))?;
        Ok(BuiltOperator::Source(Box::new(SourceChain::shared(shared, output))))
    }
    fn input_processor(&self, _gate: InputGate, _head: Erased) -> Result<Box<dyn InputProcessor>, TaskError> {
        Err(TaskError::Build("a source has no network input".into()))
    }
}

impl<T: Data> ErasedFactory for SideOutputFactory<T> {
    fn build(&self, _ctx: &TaskContext, output: Erased, _side: &SideOutputs, count: Option<Counter>) -> Built {
        // A pass-through: the node's operator is its output.
        let output = downcast::<Box<dyn Output<T>>>(output, "a side output's output")?;
        Ok(BuiltOperator::Operator(Box::new(counted_boxed(output, count))))
    }
    fn side_output_tag(&self) -> Option<&str> {
        Some(&self.tag)
    }
    fn share_side_output(&self, output: Erased, bag: &mut SideOutputs) -> Result<Box<dyn EventSink>, TaskError> {
        let output = downcast::<Box<dyn Output<T>>>(output, "a side output")?;
        let shared: SharedOutput<T> = Rc::new(RefCell::new(output));
        bag.insert(self.tag.clone(), shared.clone());
        Ok(Box::new(SharedEvents(shared)))
    }
    fn input_processor(&self, gate: InputGate, head: Erased) -> Result<Box<dyn InputProcessor>, TaskError> {
        input_processor_typed::<T>(gate, head)
    }
}

impl<I: Data, O: Data> ErasedFactory for OneInputFactory<I, O> {
    fn build(&self, ctx: &TaskContext, output: Erased, side: &SideOutputs, count: Option<Counter>) -> Built {
        let output = downcast::<Box<dyn Output<O>>>(output, "an operator's output")?;
        let op = (self.builder)(ctx, output, side, count)?;
        Ok(BuiltOperator::Operator(Box::new(op)))
    }
    fn input_processor(&self, gate: InputGate, head: Erased) -> Result<Box<dyn InputProcessor>, TaskError> {
        input_processor_typed::<I>(gate, head)
    }
}

impl<A: Data, B: Data, O: Data> ErasedFactory for TwoInputFactory<A, B, O> {
    fn build(&self, ctx: &TaskContext, output: Erased, _side: &SideOutputs, count: Option<Counter>) -> Built {
        let output = downcast::<Box<dyn Output<O>>>(output, "a two-input operator's output")?;
        let op = (self.builder)(ctx, output)?;
        Ok(BuiltOperator::Operator(Box::new(counted_boxed(op, count))))
    }
    fn input_processor(&self, _gate: InputGate, _head: Erased) -> Result<Box<dyn InputProcessor>, TaskError> {
        Err(TaskError::Build("a two-input operator needs two input gates".into()))
    }
    fn two_input_processor(
        &self,
        first: InputGate,
        second: InputGate,
        head: Erased,
    ) -> Result<Box<dyn InputProcessor>, TaskError> {
        let head = downcast::<Box<dyn Output<CoElement<A, B>>>>(head, "the two-input chain head")?;
        Ok(Box::new(TwoInputProcessor::new(
            RecordReader::<A>::new(first),
            RecordReader::<B>::new(second),
            head,
        )))
    }
}

impl OperatorFactory {
    /// A two-input node taking `A` on its first input and `B` on its second, emitting
    /// `O`; the operator receives both as [`CoElement`]s.
    pub fn two_input<A: Data, B: Data, O: Data>(
        builder: impl Fn(&TaskContext, Box<dyn Output<O>>) -> Result<Box<dyn Output<CoElement<A, B>>>, TaskError>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        Self {
            inner: Arc::new(TwoInputFactory::<A, B, O> {
                builder: Arc::new(builder),
            }),
            output: output_ops::<O>(),
        }
    }

    /// Reads `A` records from `first` and `B` records from `second` into `head` (a
    /// `Box<dyn Output<CoElement<A, B>>>`).
    pub fn two_input_processor(
        &self,
        first: InputGate,
        second: InputGate,
        head: Erased,
    ) -> Result<Box<dyn InputProcessor>, TaskError> {
        self.inner.two_input_processor(first, second, head)
    }

    /// A source node emitting `O`.
    pub fn source<O: Data>(
        builder: impl Fn(&TaskContext) -> Result<Box<dyn SourceFunction<O>>, TaskError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            inner: Arc::new(SourceFactory::<O> {
                builder: Arc::new(builder),
            }),
            output: output_ops::<O>(),
        }
    }

    /// A one-input node taking `I` and emitting `O` (a sink emits `()` to nothing).
    pub fn one_input<I: Data, O: Data>(
        builder: impl Fn(&TaskContext, Box<dyn Output<O>>) -> Result<Box<dyn Output<I>>, TaskError> + Send + Sync + 'static,
    ) -> Self {
        Self::one_input_with_side_outputs::<I, O>(move |ctx, out, _side| builder(ctx, out))
    }

    /// A one-input node whose operator may also emit to side outputs (by tag).
    pub fn one_input_with_side_outputs<I: Data, O: Data>(
        builder: impl Fn(&TaskContext, Box<dyn Output<O>>, &SideOutputs) -> Result<Box<dyn Output<I>>, TaskError>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        Self::one_input_counted::<I, O>(move |ctx, out, side, records_in| {
            Ok(counted_boxed(builder(ctx, out, side)?, records_in))
        })
    }

    /// A one-input node whose builder gives the operator's concrete type `Op`: when
    /// the operator's records in are counted, the count is inlined into the operator's
    /// own call instead of a second dynamic call in front of it. The hot operators
    /// (`map`, `filter`, `flat_map`, the simple sinks) are built this way.
    pub fn one_input_operator<I: Data, O: Data, Op: Output<I> + 'static>(
        builder: impl Fn(&TaskContext, Box<dyn Output<O>>) -> Result<Op, TaskError> + Send + Sync + 'static,
    ) -> Self {
        Self::one_input_counted::<I, O>(move |ctx, out, _side, records_in| Ok(counted(builder(ctx, out)?, records_in)))
    }

    fn one_input_counted<I: Data, O: Data>(
        builder: impl Fn(&TaskContext, Box<dyn Output<O>>, &SideOutputs, Option<Counter>) -> Result<Box<dyn Output<I>>, TaskError>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        Self {
            inner: Arc::new(OneInputFactory::<I, O> {
                builder: Arc::new(builder),
            }),
            output: output_ops::<O>(),
        }
    }

    /// The pass-through node that selects side output `tag` of type `T` of the node
    /// before it.
    pub fn side_output<T: Data>(tag: impl Into<String>) -> Self {
        Self {
            inner: Arc::new(SideOutputFactory::<T> {
                tag: tag.into(),
                _t: PhantomData,
            }),
            output: output_ops::<T>(),
        }
    }

    /// The tag, if this is a side-output node.
    pub fn side_output_tag(&self) -> Option<&str> {
        self.inner.side_output_tag()
    }

    /// Builds the node's operator emitting to `output` (a `Box<dyn Output<O>>`).
    pub fn build(&self, ctx: &TaskContext, output: Erased) -> Result<BuiltOperator, TaskError> {
        self.inner.build(ctx, output, &SideOutputs::new(), None)
    }

    /// Builds the node's operator emitting to `output` and to the side outputs `side`,
    /// counting the records handed to it in `records_in` (a source has no input and
    /// ignores it).
    pub fn build_with_side_outputs(
        &self,
        ctx: &TaskContext,
        output: Erased,
        side: &SideOutputs,
        records_in: Option<Counter>,
    ) -> Result<BuiltOperator, TaskError> {
        self.inner.build(ctx, output, side, records_in)
    }

    /// Joins several `Box<dyn Output<O>>` into one (none: discard; one: itself),
    /// counting the records handed to it in `count`.
    pub fn fan_out(&self, outputs: Vec<Erased>, count: Option<Counter>) -> Result<Erased, TaskError> {
        self.output.fan_out(outputs, count)
    }

    /// Side-output node only: shares `output` (its fanned-out consumers) under its tag
    /// in `bag`, returning the sink that passes it the stream's events.
    pub(crate) fn share_side_output(
        &self,
        output: Erased,
        bag: &mut SideOutputs,
    ) -> Result<Box<dyn EventSink>, TaskError> {
        self.inner.share_side_output(output, bag)
    }

    /// Wraps `output` (a `Box<dyn Output<O>>`) so that its events also reach `sinks`.
    pub(crate) fn with_side_events(&self, output: Erased, sinks: Vec<Box<dyn EventSink>>) -> Result<Erased, TaskError> {
        self.output.with_side_events(output, sinks)
    }

    /// A `Box<dyn Output<O>>` serialising into `writer`, the partition of job edge
    /// `job_edge`, choosing channels with `selector` (a `Box<dyn ChannelSelector<O>>`),
    /// counting the records handed to it in `count`.
    pub fn network_output(
        &self,
        job_edge: usize,
        writer: ResultPartitionWriter,
        selector: Erased,
        ctx: &TaskContext,
        count: Option<Counter>,
    ) -> Result<Erased, TaskError> {
        self.output.network_output(job_edge, writer, selector, ctx, count)
    }

    /// The channel selector of a partitioner that needs nothing from the program.
    pub fn default_selector(&self, partitioner: Partitioner, ctx: &SelectorContext) -> Result<Erased, TaskError> {
        self.output.default_selector(partitioner, ctx)
    }

    /// Reads `I` records from `gate` into `head` (a `Box<dyn Output<I>>`).
    pub fn input_processor(&self, gate: InputGate, head: Erased) -> Result<Box<dyn InputProcessor>, TaskError> {
        self.inner.input_processor(gate, head)
    }
}

/// Where a channel selector will run.
#[derive(Debug, Clone, Copy)]
pub struct SelectorContext {
    /// The producing subtask.
    pub subtask_index: u32,
    /// Max parallelism of the consuming vertex (for key groups).
    pub target_max_parallelism: u32,
    /// Index of the edge among the producer's outputs.
    pub edge_index: u32,
}

impl SelectorContext {
    /// A seed for random partitioners, distinct per subtask and edge.
    pub fn seed(&self) -> u64 {
        weir_core::ids::splitmix64(((self.subtask_index as u64) << 32) ^ self.edge_index as u64 ^ 0x5745_4952)
    }
}

/// A user partitioner: `f(record, number_of_channels) -> channel`.
pub type CustomPartitionFn<T> = Arc<dyn Fn(&T, usize) -> usize + Send + Sync>;

/// Builds the channel selector of an edge that needs program code (HASH, CUSTOM).
#[derive(Clone)]
pub struct SelectorFactory {
    inner: Arc<dyn Fn(&SelectorContext) -> Erased + Send + Sync>,
}

impl SelectorFactory {
    /// Key-group hash partitioning of `T` by a key hash.
    pub fn key_groups<T: Data>(key_hash: Arc<dyn Fn(&T) -> i32 + Send + Sync>) -> Self {
        Self {
            inner: Arc::new(move |ctx: &SelectorContext| {
                let sel: Box<dyn ChannelSelector<T>> = Box::new(KeyGroupStreamPartitioner::new(
                    key_hash.clone(),
                    ctx.target_max_parallelism,
                ));
                Box::new(sel) as Erased
            }),
        }
    }

    /// A user partitioner: `f(record, number_of_channels) -> channel`.
    pub fn custom<T: Data>(f: CustomPartitionFn<T>) -> Self {
        Self {
            inner: Arc::new(move |_ctx: &SelectorContext| {
                let sel: Box<dyn ChannelSelector<T>> = Box::new(CustomPartitioner::new(f.clone()));
                Box::new(sel) as Erased
            }),
        }
    }

    /// Builds the selector (a `Box<dyn ChannelSelector<T>>`).
    pub fn build(&self, ctx: &SelectorContext) -> Erased {
        (self.inner)(ctx)
    }
}
