//! Wiring one vertex's operator chain from the program's factories.
//!
//! Built tail first: each node gets as output the fan-out of its chained successors
//! and of the record writers of its network edges; the head is then either a source
//! driver or the target of an input processor reading the task's input gate.
//!
//! Successors that are side-output nodes (and network edges into them) are not joined
//! to the node's main output: they are grouped by tag and handed to the node's
//! operator as side outputs, while the main output passes them the stream's events.
//!
//! When the task collects metrics, each operator gets its metric group before it is
//! built, and its records are counted as [`crate::operator::metric_group`] describes.

use crate::error::TaskError;
use crate::executor::ExecutableGraph;
use crate::network::{InputGate, ResultPartitionWriter};
use crate::operator::factory::{BuiltOperator, Erased, SelectorContext};
use crate::operator::metric_group::OperatorMetricGroup;
use crate::operator::{OperatorFactory, SideOutputs, SourceDriver, TaskContext};
use crate::task::input::InputProcessor;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use weir_graph::{JobGraph, NodeKind, Partitioner, StreamNode, StreamNodeId};

/// The runnable form of a chain.
pub enum Invokable {
    /// A source chain.
    Source(Box<dyn SourceDriver>),
    /// A chain fed from the network.
    Input(Box<dyn InputProcessor>),
}

/// A network output of the chain: the JobEdge index it serves and its writer.
pub struct NetworkOutput {
    /// Index into `JobGraph::edges`.
    pub job_edge: usize,
    /// The producer side of this subtask's result partition for that edge.
    pub writer: ResultPartitionWriter,
}

/// Builds the chain of `vertex` for the subtask described by `ctx`.
pub fn build_chain(
    program: &ExecutableGraph,
    job_graph: &JobGraph,
    vertex: usize,
    ctx: &TaskContext,
    input: Option<InputGate>,
    second_input: Option<InputGate>,
    outputs: Vec<NetworkOutput>,
) -> Result<Invokable, TaskError> {
    let jv = job_graph
        .vertices
        .get(vertex)
        .ok_or_else(|| TaskError::Build(format!("no job vertex {vertex}")))?;
    let mut writers: HashMap<StreamNodeId, Vec<(usize, ResultPartitionWriter)>> = HashMap::new();
    for o in outputs {
        let edge = job_graph
            .edges
            .get(o.job_edge)
            .ok_or_else(|| TaskError::Build(format!("no job edge {}", o.job_edge)))?;
        writers
            .entry(edge.source_node)
            .or_default()
            .push((o.job_edge, o.writer));
    }
    let mut builder = ChainBuilder {
        program,
        job_graph,
        chain_edges: &jv.chain_edges,
        head: jv.head,
        ctx,
        writers,
    };
    let head = builder.build_node(jv.head)?;
    match head {
        BuiltOperator::Source(driver) => Ok(Invokable::Source(driver)),
        BuiltOperator::Operator(op) => {
            let gate = input.ok_or_else(|| TaskError::Build(format!("vertex {} has no input gate", jv.name)))?;
            let factory = program.factory(jv.head)?;
            Ok(Invokable::Input(match second_input {
                Some(second) => factory.two_input_processor(gate, second, op)?,
                None => factory.input_processor(gate, op)?,
            }))
        }
    }
}

/// A main network output of a node, built once the node's outputs are all known.
struct PendingNetworkOutput {
    job_edge: usize,
    writer: ResultPartitionWriter,
    selector: Erased,
}

struct ChainBuilder<'a> {
    program: &'a ExecutableGraph,
    job_graph: &'a JobGraph,
    chain_edges: &'a [(StreamNodeId, StreamNodeId)],
    head: StreamNodeId,
    ctx: &'a TaskContext,
    writers: HashMap<StreamNodeId, Vec<(usize, ResultPartitionWriter)>>,
}

impl ChainBuilder<'_> {
    fn build_node(&mut self, node: StreamNodeId) -> Result<BuiltOperator, TaskError> {
        let factory = self.program.factory(node)?.clone();
        let mut outputs: Vec<Erased> = Vec::new();
        // Outputs behind side-output nodes, by tag: the first such node's factory (all
        // carry the tag's record type) and the outputs to fan out.
        let mut side: BTreeMap<String, (OperatorFactory, Vec<Erased>)> = BTreeMap::new();
        // The chained operators among the main outputs.
        let mut main_successors: Vec<StreamNodeId> = Vec::new();
        let successors: Vec<StreamNodeId> = self
            .chain_edges
            .iter()
            .filter(|(s, _)| *s == node)
            .map(|(_, t)| *t)
            .collect();
        for succ in successors {
            let succ_factory = self.program.factory(succ)?.clone();
            match self.build_node(succ)? {
                BuiltOperator::Operator(op) => match succ_factory.side_output_tag() {
                    Some(tag) => side
                        .entry(tag.to_string())
                        .or_insert_with(|| (succ_factory.clone(), Vec::new()))
                        .1
                        .push(op),
                    None => {
                        outputs.push(op);
                        main_successors.push(succ);
                    }
                },
                BuiltOperator::Source(_) => {
                    return Err(TaskError::Build(format!(
                        "source node {succ} cannot be chained behind node {node}"
                    )))
                }
            }
        }
        // The main network outputs are built once it is known whether one of them is
        // the node's only output (then it counts the node's records out itself).
        let mut network: Vec<PendingNetworkOutput> = Vec::new();
        for (edge_index, (job_edge, writer)) in self.writers.remove(&node).unwrap_or_default().into_iter().enumerate() {
            let edge = &self.job_graph.edges[job_edge];
            let target = &self.job_graph.vertices[edge.target_vertex];
            let sel_ctx = SelectorContext {
                subtask_index: self.ctx.subtask_index,
                target_max_parallelism: target.max_parallelism,
                edge_index: edge_index as u32,
            };
            // A network edge into a side-output node carries the side output's type:
            // the side-output node (a pass-through of that type) serialises it.
            let target_factory = self.program.factory(edge.target_node)?.clone();
            let tag = target_factory.side_output_tag().map(str::to_string);
            let writing_factory = if tag.is_some() { &target_factory } else { &factory };
            let selector = match edge.ship_strategy {
                Partitioner::Hash | Partitioner::Custom => self
                    .program
                    .selector(edge.source_node, edge.target_node)?
                    .build(&sel_ctx),
                other => writing_factory.default_selector(other, &sel_ctx)?,
            };
            match tag {
                Some(tag) => {
                    let out = writing_factory.network_output(job_edge, writer, selector, self.ctx, None)?;
                    side.entry(tag)
                        .or_insert_with(|| (target_factory.clone(), Vec::new()))
                        .1
                        .push(out)
                }
                None => network.push(PendingNetworkOutput {
                    job_edge,
                    writer,
                    selector,
                }),
            }
        }
        let stream_node = self
            .program
            .stream_graph
            .nodes
            .get(node as usize)
            .ok_or_else(|| TaskError::Build(format!("no stream node {node}")))?;
        let only_output = outputs.len() + network.len() == 1 && side.is_empty();
        // The next operator's records in are this one's records out when it is the
        // only output.
        let next_group = match main_successors.as_slice() {
            [next] if only_output => self.ctx.operator_metric_group(*next),
            _ => None,
        };
        let shares_next = next_group.is_some();
        let group = self.metric_group(node, stream_node, &factory, next_group);
        let mut side_outputs = SideOutputs::new();
        let mut event_sinks = Vec::new();
        for (_tag, (side_factory, outs)) in side {
            let joined = side_factory.fan_out(outs, group.as_ref().map(|g| g.records_out.clone()))?;
            event_sinks.push(side_factory.share_side_output(joined, &mut side_outputs)?);
        }
        let records_out = group
            .as_ref()
            .filter(|_| !shares_next && stream_node.kind != NodeKind::Sink)
            .map(|g| g.records_out.clone());
        let output = match network.pop() {
            // The only output: the network output counts.
            Some(only) if only_output => {
                factory.network_output(only.job_edge, only.writer, only.selector, self.ctx, records_out)?
            }
            last => {
                for n in network.into_iter().chain(last) {
                    outputs.push(factory.network_output(n.job_edge, n.writer, n.selector, self.ctx, None)?);
                }
                factory.fan_out(outputs, records_out)?
            }
        };
        let output = factory.with_side_events(output, event_sinks)?;
        self.ctx.state().set_current_operator(stream_node.operator_id());
        // A source, the head of an input task (the task sets its records in), or no
        // metrics: nothing counts the records in here.
        let records_in = group.filter(|_| node != self.head).map(|g| g.records_in.clone());
        factory.build_with_side_outputs(self.ctx, output, &side_outputs, records_in)
    }

    /// The metric group of `node` if the task collects metrics and the node is an
    /// operator (a side-output node is not); its records out are the records in of
    /// `next`, its only output, when that is set.
    fn metric_group(
        &self,
        node: StreamNodeId,
        stream_node: &StreamNode,
        factory: &OperatorFactory,
        next: Option<Rc<OperatorMetricGroup>>,
    ) -> Option<Rc<OperatorMetricGroup>> {
        if !self.ctx.collects_metrics() || factory.side_output_tag().is_some() {
            return None;
        }
        let mut group = OperatorMetricGroup::new(stream_node.operator_id().to_string(), &stream_node.name);
        if let Some(next) = next {
            group.records_out = next.records_in.clone();
        }
        if stream_node.kind == NodeKind::Source {
            group.records_in = group.records_out.clone();
        }
        Some(self.ctx.add_operator_metric_group(node, group))
    }
}
