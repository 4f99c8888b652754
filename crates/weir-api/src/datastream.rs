//! `DataStream<T>`: a stream of `T` and the transformations on it.

use crate::builder::GraphBuilder;
use crate::operators::{FilterOperator, FlatMapOperator, MapOperator};
use crate::side_output::OutputTag;
use crate::watermark::{TimestampsAndWatermarksOperator, WatermarkStrategy};
use crate::windowing::{AllWindowedStream, Window, WindowAssigner, WindowedStream};
use std::cell::RefCell;
use std::fmt::Display;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use weir_connectors::sink::{CollectHandle, CollectSink, DiscardSink, FileSink, PrintSink, TwoPhaseCommitOperator};
use weir_graph::{ChainingStrategy, NodeKind, Partitioner, StreamNodeId};
use weir_runtime::operator::factory::Data;
use weir_runtime::operator::{OperatorFactory, Output, SelectorFactory, TaskContext};
use weir_runtime::TaskError;

/// One producer feeding the next transformation, with how its records are distributed.
#[derive(Clone)]
pub(crate) struct StreamInput {
    pub node: StreamNodeId,
    pub partitioner: Option<Partitioner>,
    pub selector: Option<SelectorFactory>,
}

/// Adds the edges from `inputs` into input `input` of node `target`.
fn connect_inputs(b: &mut GraphBuilder, inputs: &[StreamInput], target: StreamNodeId, input: u32) {
    for i in inputs {
        b.edges.push(crate::builder::PendingEdge {
            source: i.node,
            target,
            partitioner: i.partitioner,
            input,
        });
        if let Some(sel) = &i.selector {
            b.selectors.insert((i.node, target), sel.clone());
        }
    }
}

/// A stream of `T`: the output of an operator, a re-partitioned stream, or a union.
pub struct DataStream<T> {
    pub(crate) builder: Rc<RefCell<GraphBuilder>>,
    pub(crate) inputs: Vec<StreamInput>,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for DataStream<T> {
    fn clone(&self) -> Self {
        Self {
            builder: self.builder.clone(),
            inputs: self.inputs.clone(),
            _t: PhantomData,
        }
    }
}

/// The handle of a sink, to set its parallelism, name, uid, ….
pub struct DataStreamSink {
    builder: Rc<RefCell<GraphBuilder>>,
    node: StreamNodeId,
}

macro_rules! node_settings {
    () => {
        /// Sets the operator's parallelism.
        pub fn set_parallelism(self, parallelism: u32) -> Self {
            self.with_node("set_parallelism", |n| n.parallelism = Some(parallelism))
        }

        /// Sets the operator's max parallelism (number of key groups).
        pub fn set_max_parallelism(self, max_parallelism: u32) -> Self {
            self.with_node("set_max_parallelism", |n| {
                n.max_parallelism = Some(max_parallelism)
            })
        }

        /// Names the operator.
        pub fn name(self, name: impl Into<String>) -> Self {
            let name = name.into();
            self.with_node("name", move |n| n.name = name)
        }

        /// Gives the operator a stable id for state mapping.
        pub fn uid(self, uid: impl Into<String>) -> Self {
            let uid = uid.into();
            self.with_node("uid", move |n| n.uid = Some(uid))
        }

        /// Never chains this operator to its predecessor or successors.
        pub fn disable_chaining(self) -> Self {
            self.with_node("disable_chaining", |n| {
                n.chaining_strategy = ChainingStrategy::Never
            })
        }

        /// Starts a new chain at this operator.
        pub fn start_new_chain(self) -> Self {
            self.with_node("start_new_chain", |n| {
                n.chaining_strategy = ChainingStrategy::Head
            })
        }

        /// Puts the operator into a slot sharing group.
        pub fn slot_sharing_group(self, group: impl Into<String>) -> Self {
            let group = group.into();
            self.with_node("slot_sharing_group", move |n| n.slot_sharing_group = Some(group))
        }
    };
}

impl DataStreamSink {
    fn with_node(self, _what: &str, f: impl FnOnce(&mut crate::builder::PendingNode)) -> Self {
        if let Some(n) = self.builder.borrow_mut().nodes.get_mut(self.node as usize) {
            f(n);
        }
        self
    }

    node_settings!();
}

impl<T: Data> DataStream<T> {
    pub(crate) fn from_node(builder: Rc<RefCell<GraphBuilder>>, node: StreamNodeId) -> Self {
        Self {
            builder,
            inputs: vec![StreamInput {
                node,
                partitioner: None,
                selector: None,
            }],
            _t: PhantomData,
        }
    }

    /// Declares whether this source ends (Flink's `Source::getBoundedness`); only
    /// sources have a boundedness, setting it elsewhere is a build error.
    pub fn set_boundedness(self, boundedness: crate::builder::Boundedness) -> Self {
        self.with_source("set_boundedness", |n| n.boundedness = boundedness)
    }

    /// Declares how many splits this source has, known when the job is planned (e.g.
    /// the files it reads). In BATCH mode the adaptive batch scheduler runs a source
    /// whose parallelism nobody set with that many subtasks, at most its max (Flink's
    /// dynamic source parallelism inference); elsewhere it changes nothing.
    pub fn set_source_splits(self, splits: u32) -> Self {
        self.with_source("set_source_splits", |n| n.source_splits = Some(splits.max(1)))
    }

    /// [`Self::with_node`] for a setting only sources have; a build error elsewhere.
    fn with_source(self, what: &str, f: impl FnOnce(&mut crate::builder::PendingNode)) -> Self {
        let not_a_source = self.inputs.len() != 1
            || self
                .builder
                .borrow()
                .nodes
                .get(self.inputs[0].node as usize)
                .map(|n| n.kind)
                != Some(NodeKind::Source);
        if not_a_source {
            self.builder
                .borrow_mut()
                .errors
                .push(format!("{what} applies to a source only"));
            return self;
        }
        self.with_node(what, f)
    }

    fn with_node(self, what: &str, f: impl FnOnce(&mut crate::builder::PendingNode)) -> Self {
        {
            let mut b = self.builder.borrow_mut();
            match self.inputs.as_slice() {
                [single] if single.partitioner.is_none() => {
                    if let Some(n) = b.nodes.get_mut(single.node as usize) {
                        f(n);
                    }
                }
                _ => b.errors.push(format!(
                    "{what}() applies to an operator, not to a union or re-partitioned stream"
                )),
            }
        }
        self
    }

    node_settings!();

    /// Adds a one-input operator fed by this stream.
    pub fn transform<O: Data>(
        &self,
        name: impl Into<String>,
        kind: NodeKind,
        keyed: bool,
        factory: OperatorFactory,
    ) -> DataStream<O> {
        let mut b = self.builder.borrow_mut();
        let id = b.add_node(name, kind, factory);
        b.nodes[id as usize].keyed = keyed;
        connect_inputs(&mut b, &self.inputs, id, 0);
        drop(b);
        DataStream::from_node(self.builder.clone(), id)
    }

    /// Adds a two-input operator fed by this stream (input 0) and `other` (input 1).
    pub fn transform_two_input<B: Data, O: Data>(
        &self,
        other: &DataStream<B>,
        name: impl Into<String>,
        keyed: bool,
        factory: OperatorFactory,
    ) -> DataStream<O> {
        let mut b = self.builder.borrow_mut();
        let id = b.add_node(name, NodeKind::Operator, factory);
        b.nodes[id as usize].keyed = keyed;
        connect_inputs(&mut b, &self.inputs, id, 0);
        connect_inputs(&mut b, &other.inputs, id, 1);
        drop(b);
        DataStream::from_node(self.builder.clone(), id)
    }

    pub(crate) fn repartition(&self, partitioner: Partitioner, selector: Option<SelectorFactory>) -> DataStream<T> {
        let inputs = self
            .inputs
            .iter()
            .map(|i| StreamInput {
                node: i.node,
                partitioner: Some(partitioner),
                selector: selector.clone(),
            })
            .collect();
        DataStream {
            builder: self.builder.clone(),
            inputs,
            _t: PhantomData,
        }
    }

    /// Applies `f` to every record.
    pub fn map<O: Data>(&self, f: impl Fn(T) -> O + Clone + Send + Sync + 'static) -> DataStream<O> {
        let factory =
            OperatorFactory::one_input_operator::<T, O, _>(move |_ctx, out| Ok(MapOperator::new(f.clone(), out)));
        self.transform("Map", NodeKind::Operator, false, factory)
    }

    /// Keeps the records for which `f` is true.
    pub fn filter(&self, f: impl Fn(&T) -> bool + Clone + Send + Sync + 'static) -> DataStream<T> {
        let factory =
            OperatorFactory::one_input_operator::<T, T, _>(move |_ctx, out| Ok(FilterOperator::new(f.clone(), out)));
        self.transform("Filter", NodeKind::Operator, false, factory)
    }

    /// Emits every element of `f(record)`.
    pub fn flat_map<O: Data, It: IntoIterator<Item = O> + 'static>(
        &self,
        f: impl Fn(T) -> It + Clone + Send + Sync + 'static,
    ) -> DataStream<O> {
        let factory =
            OperatorFactory::one_input_operator::<T, O, _>(move |_ctx, out| Ok(FlatMapOperator::new(f.clone(), out)));
        self.transform("Flat Map", NodeKind::Operator, false, factory)
    }

    /// Assigns timestamps and generates watermarks mid-pipeline (Flink's
    /// `assignTimestampsAndWatermarks`); upstream watermarks are replaced, except the
    /// MAX watermark that ends bounded input.
    pub fn assign_timestamps_and_watermarks(&self, strategy: WatermarkStrategy<T>) -> DataStream<T> {
        let interval = {
            let mut b = self.builder.borrow_mut();
            if let Err(e) = strategy.validate() {
                b.errors.push(e);
            }
            b.watermark_interval.clone()
        };
        let factory = OperatorFactory::one_input::<T, T>(move |ctx, out| {
            Ok(Box::new(TimestampsAndWatermarksOperator::new(
                strategy.clone(),
                interval.get(),
                ctx.processing_time_service(),
                out,
            )))
        });
        self.transform("Timestamps/Watermarks", NodeKind::Operator, false, factory)
    }

    /// Windows over the whole stream (Flink's `windowAll`): one window operator subtask
    /// sees every record; the key is `()`.
    pub fn window_all<W: Window, A: WindowAssigner<T, W>>(&self, assigner: A) -> AllWindowedStream<T, W> {
        let keyed = self.key_by(|_: &T| ());
        WindowedStream::new(keyed.stream(), keyed.key_selector(), assigner, true)
    }

    /// The side output `tag` of this operator (e.g. a window's late data), as a stream.
    pub fn get_side_output<X: Data>(&self, tag: &OutputTag<X>) -> DataStream<X> {
        let parallelism = {
            let b = self.builder.borrow();
            match self.inputs.as_slice() {
                [single] if single.partitioner.is_none() => {
                    b.nodes.get(single.node as usize).and_then(|n| n.parallelism)
                }
                _ => None,
            }
        };
        if !matches!(self.inputs.as_slice(), [single] if single.partitioner.is_none()) {
            self.builder
                .borrow_mut()
                .errors
                .push("get_side_output() applies to an operator, not to a union or re-partitioned stream".into());
        }
        let side: DataStream<X> = self.transform(
            format!("SideOutput({})", tag.id()),
            NodeKind::Operator,
            false,
            OperatorFactory::side_output::<X>(tag.id()),
        );
        if let Some(n) = side.inputs.first() {
            if let Some(node) = side.builder.borrow_mut().nodes.get_mut(n.node as usize) {
                node.parallelism = parallelism;
            }
        }
        side
    }

    /// Merges this stream with others of the same type.
    pub fn union(&self, others: &[DataStream<T>]) -> DataStream<T> {
        let mut inputs = self.inputs.clone();
        for o in others {
            inputs.extend(o.inputs.iter().cloned());
        }
        DataStream {
            builder: self.builder.clone(),
            inputs,
            _t: PhantomData,
        }
    }

    /// Sends each record to the same-index downstream subtask (parallelisms must match).
    pub fn forward(&self) -> DataStream<T> {
        self.repartition(Partitioner::Forward, None)
    }
    /// Round-robin over all downstream subtasks.
    pub fn rebalance(&self) -> DataStream<T> {
        self.repartition(Partitioner::Rebalance, None)
    }
    /// Round-robin over a local subset of downstream subtasks.
    pub fn rescale(&self) -> DataStream<T> {
        self.repartition(Partitioner::Rescale, None)
    }
    /// A uniformly random downstream subtask per record.
    pub fn shuffle(&self) -> DataStream<T> {
        self.repartition(Partitioner::Shuffle, None)
    }
    /// Every record to every downstream subtask.
    pub fn broadcast(&self) -> DataStream<T> {
        self.repartition(Partitioner::Broadcast, None)
    }
    /// Every record to downstream subtask 0.
    pub fn global(&self) -> DataStream<T> {
        self.repartition(Partitioner::Global, None)
    }
    /// A user partitioner: `f(record, number_of_channels)` picks the subtask.
    pub fn partition_custom(&self, f: impl Fn(&T, usize) -> usize + Send + Sync + 'static) -> DataStream<T> {
        self.repartition(Partitioner::Custom, Some(SelectorFactory::custom::<T>(Arc::new(f))))
    }

    /// A sink built per subtask by `build`.
    pub fn add_sink(
        &self,
        name: impl Into<String>,
        build: impl Fn(&TaskContext) -> Result<Box<dyn Output<T>>, TaskError> + Send + Sync + 'static,
    ) -> DataStreamSink {
        let factory = OperatorFactory::one_input::<T, ()>(move |ctx, _out| build(ctx));
        let s: DataStream<()> = self.transform(name, NodeKind::Sink, false, factory);
        DataStreamSink {
            builder: self.builder.clone(),
            node: s.inputs[0].node,
        }
    }

    /// Prints every record to stdout, prefixed `N> ` when the sink runs with parallelism > 1.
    pub fn print(&self) -> DataStreamSink
    where
        T: Display,
    {
        self.add_sink_operator("Sink: Print to Std. Out", |ctx| {
            Ok(PrintSink::new(ctx.subtask_index, ctx.parallelism))
        })
    }

    /// Writes one line per record into part files under `dir` (created if missing):
    /// committed files are `dir/part-<writer>-<seq>`, files still being written or
    /// waiting for their checkpoint are hidden (`.part-…`). With checkpointing on, the
    /// output is exactly-once: a part file is committed when the checkpoint covering
    /// it completes, and a failover deletes what was written after the restored
    /// checkpoint ([`FileSink`]). Everything is committed when the input ends; without
    /// checkpointing only then.
    pub fn write_as_text(&self, dir: impl Into<PathBuf>) -> DataStreamSink
    where
        T: Display,
    {
        let dir = dir.into();
        self.add_sink("Sink: Text File", move |ctx| {
            let sink = FileSink::create(&dir)?;
            TwoPhaseCommitOperator::<T, FileSink>::build(ctx, sink)
        })
    }

    /// A sink of concrete type `S` built per subtask by `build` (its records-in count
    /// is inlined into its own call).
    fn add_sink_operator<S: Output<T> + 'static>(
        &self,
        name: &str,
        build: impl Fn(&TaskContext) -> Result<S, TaskError> + Send + Sync + 'static,
    ) -> DataStreamSink {
        let factory = OperatorFactory::one_input_operator::<T, (), S>(move |ctx, _out| build(ctx));
        let s: DataStream<()> = self.transform(name, NodeKind::Sink, false, factory);
        DataStreamSink {
            builder: self.builder.clone(),
            node: s.inputs[0].node,
        }
    }

    /// Drops every record.
    pub fn discard(&self) -> DataStreamSink {
        self.add_sink_operator("Sink: Discard", |_ctx| Ok(DiscardSink::default()))
    }

    /// Collects every record in memory (for tests; in-process runs only).
    pub fn collect(&self) -> CollectHandle<T> {
        let handle = CollectHandle::new();
        let h = handle.clone();
        self.add_sink_operator("Sink: Collect", move |_ctx| Ok(CollectSink::new(h.clone())));
        handle
    }
}
