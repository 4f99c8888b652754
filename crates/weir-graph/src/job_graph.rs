//! The JobGraph: the StreamGraph after operator chaining.
//!
//! Owns [`JobGraph::from_stream_graph`], which applies Flink's chaining rules
//! (`StreamingJobGraphGenerator.isChainable`, flink-facts §2) and names chains with
//! Flink's `createChainedName`, and the resulting [`JobVertex`], [`JobEdge`] and
//! [`IntermediateDataSet`] types.
//!
//! Invariants of a JobGraph built here:
//! - every StreamNode belongs to exactly one vertex; a vertex's operators form a tree of
//!   chainable edges rooted at its `head`, listed in depth-first pre-order (head first,
//!   outputs in edge creation order), which is a topological order;
//! - `vertices` are in topological order: all source vertices first, then the others as
//!   they become ready, ties broken by head node id;
//! - every non-chained StreamEdge is exactly one [`JobEdge`] producing one
//!   [`IntermediateDataSet`]; `edges[i]` consumes `data_sets[i]`, both in StreamEdge
//!   creation order (which is also the input order of the consuming vertex);
//! - ids ([`JobVertexId`], [`IntermediateDataSetId`]) are MurmurHash3 digests of the
//!   graph's content, so compiling the same StreamGraph twice gives the same ids;
//! - every parallelism is in `1..=32768` and not above its vertex's max parallelism.
//!
//! Deliberate differences from Flink: a source is never chained *as an input* of a
//! multi-input operator (`"Op [Src1, Src2]"`), since StreamNodes have a single (union)
//! input; a `HEAD_WITH_SOURCES` operator fed by one source node is chained to it like an
//! `ALWAYS` operator, as Flink's `areOperatorsChainable` allows.

use crate::error::GraphError;
use crate::stream_graph::{
    ChainingStrategy, DistributionPattern, ExecutionConfig, NodeKind, Partitioner, ResultPartitionType, StreamEdge,
    StreamGraph, StreamNode, StreamNodeId,
};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use weir_core::error::CoreError;
use weir_core::ids::{IntermediateDataSetId, JobVertexId};
use weir_core::key_group::{check_parallelism, default_max_parallelism};
use weir_core::murmur::murmur3_32;

/// One operator inside a vertex's chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainedOperator {
    /// The StreamNode this operator is.
    pub node_id: StreamNodeId,
    /// The operator's own (unchained) name.
    pub name: String,
    /// The operator's stable user id, if one was set.
    pub uid: Option<String>,
}

impl ChainedOperator {
    /// The operator's id, as its StreamNode's [`StreamNode::operator_id`](crate::StreamNode::operator_id).
    pub fn operator_id(&self) -> weir_core::ids::OperatorId {
        crate::stream_graph::operator_id_of(self.node_id, &self.name, self.uid.as_deref())
    }
}

/// A chain of operators that runs as one task per subtask (Flink's `JobVertex`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobVertex {
    /// Deterministic id: a hash of the chain's node ids, uids and names.
    pub id: JobVertexId,
    /// The chained name, e.g. `Source: S -> Map -> Sink: P` or `A -> (B, C)`.
    pub name: String,
    /// Number of subtasks (equal for every chained operator); 0 while the adaptive
    /// batch scheduler has not decided it yet.
    pub parallelism: u32,
    /// True when any chained operator's parallelism was set by the user.
    #[serde(default)]
    pub parallelism_configured: bool,
    /// The head's [`StreamNode::source_splits`], for a source vertex.
    #[serde(default)]
    pub source_splits: Option<u32>,
    /// Resolved max parallelism: the head operator's explicit value, else
    /// `pipeline.max-parallelism`, else the largest explicit value among the chained
    /// operators, else `default_max_parallelism(parallelism)`.
    pub max_parallelism: u32,
    /// True when `max_parallelism` was set (by an operator or the job), false when it is
    /// the default. A restore must match a configured value exactly; a default one is
    /// replaced by the restored state's (flink-facts §1).
    pub max_parallelism_configured: bool,
    /// The chained operators in topological order, head first.
    pub operators: Vec<ChainedOperator>,
    /// The first operator of the chain.
    pub head: StreamNodeId,
    /// Slot sharing group shared by every chained operator.
    pub slot_sharing_group: String,
    /// The StreamEdges inside the chain as `(source, target)`, in chain order.
    pub chain_edges: Vec<(StreamNodeId, StreamNodeId)>,
    /// True when the vertex has no input (its head reads no other vertex).
    pub is_source: bool,
}

impl JobVertex {
    /// True when `node` is one of this vertex's operators.
    pub fn contains(&self, node: StreamNodeId) -> bool {
        self.operators.iter().any(|op| op.node_id == node)
    }
}

/// A connection between two vertices: one non-chained StreamEdge (Flink's `JobEdge`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobEdge {
    /// Index of the producing vertex in [`JobGraph::vertices`].
    pub source_vertex: usize,
    /// Index of the consuming vertex in [`JobGraph::vertices`].
    pub target_vertex: usize,
    /// The operator (inside the producing chain) that emits into this edge.
    pub source_node: StreamNodeId,
    /// The operator (head of the consuming chain) that reads this edge.
    pub target_node: StreamNodeId,
    /// Index of the StreamEdge in `StreamGraph::edges`.
    pub stream_edge: usize,
    /// The data set the producer writes and the consumer reads.
    pub data_set: IntermediateDataSetId,
    /// The partitioner, shown as the plan's ship strategy.
    pub ship_strategy: Partitioner,
    /// How producer subtasks connect to consumer subtasks.
    pub distribution: DistributionPattern,
    /// Which input of the consuming operator this edge feeds (0 or 1).
    pub target_input: u32,
    /// Pipelined, or blocking in a batch job.
    #[serde(default)]
    pub partition_type: ResultPartitionType,
}

/// The output of a vertex towards one consumer (Flink's `IntermediateDataSet`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntermediateDataSet {
    /// Deterministic id.
    pub id: IntermediateDataSetId,
    /// Index of the producing vertex.
    pub producer: usize,
    /// The operator inside the producing chain that writes it.
    pub producer_node: StreamNodeId,
    /// Index of the consuming vertex.
    pub consumer: usize,
    /// Index of the [`JobEdge`] that reads it (equal to this data set's own index).
    pub job_edge: usize,
}

/// The compiled job: chains of operators and the edges between them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobGraph {
    /// The job's name.
    pub job_name: String,
    /// Job-wide settings, copied from the StreamGraph.
    pub config: ExecutionConfig,
    /// Vertices in topological order (sources first, ties by head node id).
    pub vertices: Vec<JobVertex>,
    /// Edges in StreamEdge creation order.
    pub edges: Vec<JobEdge>,
    /// Data sets; `data_sets[i]` is the one `edges[i]` reads.
    pub data_sets: Vec<IntermediateDataSet>,
}

impl JobGraph {
    /// Compiles a StreamGraph: validates it, chains operators by Flink's rules and lays
    /// out vertices and edges (see the module doc for the invariants of the result).
    pub fn from_stream_graph(graph: &StreamGraph) -> Result<JobGraph, GraphError> {
        validate_structure(graph)?;
        validate_parallelism(graph)?;
        let topo = topological_node_order(graph)?;
        let nodes = &graph.nodes;
        let n = nodes.len();

        // Which edges chain; each node's chained parent edge and chained output edges.
        let chainable: Vec<bool> = graph.edges.iter().map(|e| is_chainable(graph, e)).collect();
        let mut has_chained_input = vec![false; n];
        let mut chained_outputs: Vec<Vec<StreamNodeId>> = vec![Vec::new(); n];
        for (edge, _) in graph.edges.iter().zip(&chainable).filter(|(_, c)| **c) {
            has_chained_input[edge.target as usize] = true;
            chained_outputs[edge.source as usize].push(edge.target);
        }

        // Chain names, bottom-up (createChainedName).
        let mut chained_names: Vec<String> = vec![String::new(); n];
        for &id in topo.iter().rev() {
            let own = &nodes[id as usize].name;
            let outs = &chained_outputs[id as usize];
            chained_names[id as usize] = match outs.len() {
                0 => own.clone(),
                1 => format!("{own} -> {}", chained_names[outs[0] as usize]),
                _ => {
                    let inner: Vec<&str> = outs.iter().map(|t| chained_names[*t as usize].as_str()).collect();
                    format!("{own} -> ({})", inner.join(", "))
                }
            };
        }

        // Chains: one per head, operators in depth-first pre-order.
        let mut chain_of = vec![usize::MAX; n];
        let mut chains: Vec<Chain> = Vec::new();
        for head in (0..n).filter(|i| !has_chained_input[*i]) {
            let mut chain = Chain {
                head: head as StreamNodeId,
                ops: Vec::new(),
                edges: Vec::new(),
            };
            let mut stack = vec![head as StreamNodeId];
            while let Some(id) = stack.pop() {
                chain_of[id as usize] = chains.len();
                chain.ops.push(id);
                for &t in &chained_outputs[id as usize] {
                    chain.edges.push((id, t));
                }
                stack.extend(chained_outputs[id as usize].iter().rev());
            }
            // Pre-order with edges recorded at their source; reorder edges by target
            // position so that they follow the operator order.
            let pos: BTreeMap<StreamNodeId, usize> = chain.ops.iter().enumerate().map(|(i, id)| (*id, i)).collect();
            chain
                .edges
                .sort_by_key(|(_, t)| pos.get(t).copied().unwrap_or(usize::MAX));
            chains.push(chain);
        }
        if let Some(stray) = chain_of.iter().position(|c| *c == usize::MAX) {
            // Only possible on a cycle of chainable edges, which topological_node_order
            // already rejects; kept as a guard rather than a panic.
            return Err(GraphError::Cycle {
                operators: vec![nodes[stray].name.clone()],
            });
        }

        // Vertex order over the chain DAG.
        let cross: Vec<(usize, &StreamEdge)> = graph.edges.iter().enumerate().filter(|(i, _)| !chainable[*i]).collect();
        let order = chain_order(graph, &chains, &chain_of, &cross)?;
        let mut vertex_of_chain = vec![0usize; chains.len()];
        for (v, c) in order.iter().enumerate() {
            vertex_of_chain[*c] = v;
        }

        let mut vertices = Vec::with_capacity(chains.len());
        for &c in &order {
            vertices.push(build_vertex(graph, &chains[c], &chained_names)?);
        }

        let mut edges = Vec::with_capacity(cross.len());
        let mut data_sets = Vec::with_capacity(cross.len());
        for (stream_edge, e) in cross {
            let source_vertex = vertex_of_chain[chain_of[e.source as usize]];
            let target_vertex = vertex_of_chain[chain_of[e.target as usize]];
            let id = data_set_id(vertices[source_vertex].id, e, stream_edge);
            data_sets.push(IntermediateDataSet {
                id,
                producer: source_vertex,
                producer_node: e.source,
                consumer: target_vertex,
                job_edge: edges.len(),
            });
            edges.push(JobEdge {
                source_vertex,
                target_vertex,
                source_node: e.source,
                target_node: e.target,
                stream_edge,
                data_set: id,
                ship_strategy: e.partitioner,
                distribution: e.partitioner.distribution_pattern(),
                target_input: e.input,
                partition_type: ResultPartitionType::for_mode(graph.config.runtime_mode),
            });
        }

        Ok(JobGraph {
            job_name: graph.job_name.clone(),
            config: graph.config.clone(),
            vertices,
            edges,
            data_sets,
        })
    }

    /// Index of the vertex that runs StreamNode `node`, if any.
    pub fn vertex_by_node(&self, node: StreamNodeId) -> Option<usize> {
        self.vertices.iter().position(|v| v.contains(node))
    }

    /// Index of the vertex with `id`, if any.
    pub fn vertex_by_id(&self, id: JobVertexId) -> Option<usize> {
        self.vertices.iter().position(|v| v.id == id)
    }

    /// Edges produced by vertex `vertex`, in creation order.
    pub fn out_edges(&self, vertex: usize) -> impl Iterator<Item = &JobEdge> {
        self.edges.iter().filter(move |e| e.source_vertex == vertex)
    }

    /// Edges consumed by vertex `vertex`, in creation order (its input order).
    pub fn in_edges(&self, vertex: usize) -> impl Iterator<Item = &JobEdge> {
        self.edges.iter().filter(move |e| e.target_vertex == vertex)
    }

    /// The data set with `id`, if any.
    pub fn data_set(&self, id: IntermediateDataSetId) -> Option<&IntermediateDataSet> {
        self.data_sets.iter().find(|d| d.id == id)
    }
}

/// Flink's `StreamingJobGraphGenerator.isChainable`: true when `edge` may be a direct
/// call inside one chain. All of: the target has exactly one in-edge (so no union);
/// chaining is enabled; both operators are in the same slot sharing group; the upstream
/// strategy is not `NEVER`; the downstream strategy is `ALWAYS`, or `HEAD_WITH_SOURCES`
/// with a source upstream; equal parallelism; the partitioner is `FORWARD`. An edge
/// naming an unknown node is never chainable.
pub fn is_chainable(graph: &StreamGraph, edge: &StreamEdge) -> bool {
    let (Some(up), Some(down)) = (
        graph.nodes.get(edge.source as usize),
        graph.nodes.get(edge.target as usize),
    ) else {
        return false;
    };
    graph.in_edges(edge.target).count() == 1
        && graph.config.chaining_enabled
        && up.slot_sharing_group == down.slot_sharing_group
        && are_operators_chainable(up, down)
        && up.parallelism == down.parallelism
        && edge.partitioner == Partitioner::Forward
}

/// Flink's `areOperatorsChainable` restricted to the chaining strategies.
fn are_operators_chainable(up: &StreamNode, down: &StreamNode) -> bool {
    let upstream_allows = match up.chaining_strategy {
        ChainingStrategy::Never => false,
        ChainingStrategy::Always | ChainingStrategy::Head | ChainingStrategy::HeadWithSources => true,
    };
    let downstream_allows = match down.chaining_strategy {
        ChainingStrategy::Never | ChainingStrategy::Head => false,
        ChainingStrategy::Always => true,
        ChainingStrategy::HeadWithSources => up.kind == NodeKind::Source,
    };
    upstream_allows && downstream_allows
}

/// A chain under construction.
struct Chain {
    head: StreamNodeId,
    ops: Vec<StreamNodeId>,
    edges: Vec<(StreamNodeId, StreamNodeId)>,
}

/// Node ids are indices, edges name existing nodes, uids are unique, forward edges keep
/// the parallelism.
fn validate_structure(graph: &StreamGraph) -> Result<(), GraphError> {
    if graph.nodes.is_empty() {
        return Err(GraphError::EmptyGraph);
    }
    for (index, node) in graph.nodes.iter().enumerate() {
        if node.id as usize != index {
            return Err(GraphError::NodeIdMismatch { index, id: node.id });
        }
    }
    let mut uids: BTreeMap<&str, StreamNodeId> = BTreeMap::new();
    for node in &graph.nodes {
        if let Some(uid) = node.uid.as_deref() {
            if uids.insert(uid, node.id).is_some() {
                return Err(GraphError::DuplicateUid { uid: uid.to_string() });
            }
        }
    }
    for (i, e) in graph.edges.iter().enumerate() {
        for node in [e.source, e.target] {
            if node as usize >= graph.nodes.len() {
                return Err(GraphError::UnknownNode { edge: i, node });
            }
        }
        let (up, down) = (&graph.nodes[e.source as usize], &graph.nodes[e.target as usize]);
        if e.partitioner == Partitioner::Forward && up.parallelism != down.parallelism {
            return Err(GraphError::ForwardParallelismMismatch {
                upstream: up.name.clone(),
                upstream_parallelism: up.parallelism,
                downstream: down.name.clone(),
                downstream_parallelism: down.parallelism,
            });
        }
    }
    Ok(())
}

/// Every operator's parallelism against Flink's bounds and its effective max
/// parallelism (its own, else the job-wide one).
fn validate_parallelism(graph: &StreamGraph) -> Result<(), GraphError> {
    if let Some(max) = graph.config.max_parallelism {
        check_parallelism(1, Some(max)).map_err(|e| map_core_error(e, "pipeline.max-parallelism"))?;
    }
    for node in &graph.nodes {
        let max = node.max_parallelism.or(graph.config.max_parallelism);
        check_parallelism(node.parallelism, max).map_err(|e| map_core_error(e, &node.name))?;
    }
    Ok(())
}

/// Attaches the operator name to a bounds error from `weir_core`.
fn map_core_error(error: CoreError, operator: &str) -> GraphError {
    let operator = operator.to_string();
    match error {
        CoreError::ParallelismOutOfBounds(p) => GraphError::ParallelismOutOfBounds {
            operator,
            parallelism: u32::try_from(p).unwrap_or(u32::MAX),
        },
        CoreError::MaxParallelismOutOfBounds(m) => GraphError::MaxParallelismOutOfBounds {
            operator,
            max_parallelism: u32::try_from(m).unwrap_or(u32::MAX),
        },
        CoreError::ParallelismAboveMax {
            parallelism,
            max_parallelism,
        } => GraphError::ParallelismAboveMax {
            operator,
            parallelism,
            max_parallelism,
        },
        other => GraphError::InvalidOperator {
            operator,
            reason: other.to_string(),
        },
    }
}

/// Kahn's algorithm over the nodes, smallest ready id first; a cycle is an error naming
/// the nodes that could not be ordered.
fn topological_node_order(graph: &StreamGraph) -> Result<Vec<StreamNodeId>, GraphError> {
    let n = graph.nodes.len();
    let mut indegree = vec![0usize; n];
    let mut outs: Vec<Vec<StreamNodeId>> = vec![Vec::new(); n];
    for e in &graph.edges {
        indegree[e.target as usize] += 1;
        outs[e.source as usize].push(e.target);
    }
    let mut ready: BinaryHeap<Reverse<StreamNodeId>> = (0..n)
        .filter(|i| indegree[*i] == 0)
        .map(|i| Reverse(i as StreamNodeId))
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(id)) = ready.pop() {
        order.push(id);
        for &t in &outs[id as usize] {
            indegree[t as usize] -= 1;
            if indegree[t as usize] == 0 {
                ready.push(Reverse(t));
            }
        }
    }
    if order.len() < n {
        let operators = (0..n)
            .filter(|i| indegree[*i] > 0)
            .map(|i| graph.nodes[i].name.clone())
            .collect();
        return Err(GraphError::Cycle { operators });
    }
    Ok(order)
}

/// Topological order of the chains: sources first, then by readiness, ties by head id.
fn chain_order(
    graph: &StreamGraph,
    chains: &[Chain],
    chain_of: &[usize],
    cross: &[(usize, &StreamEdge)],
) -> Result<Vec<usize>, GraphError> {
    let mut indegree = vec![0usize; chains.len()];
    let mut outs: Vec<Vec<usize>> = vec![Vec::new(); chains.len()];
    for (_, e) in cross {
        let (s, t) = (chain_of[e.source as usize], chain_of[e.target as usize]);
        indegree[t] += 1;
        outs[s].push(t);
    }
    // Key: (not a source, head id, chain index). Every source is ready at the start and
    // sorts before every non-source, so all sources come first.
    let key = |c: usize, source: bool| Reverse((!source, chains[c].head, c));
    let mut ready: BinaryHeap<Reverse<(bool, StreamNodeId, usize)>> = (0..chains.len())
        .filter(|c| indegree[*c] == 0)
        .map(|c| key(c, true))
        .collect();
    let mut order = Vec::with_capacity(chains.len());
    while let Some(Reverse((_, _, c))) = ready.pop() {
        order.push(c);
        for &t in &outs[c] {
            indegree[t] -= 1;
            if indegree[t] == 0 {
                ready.push(key(t, false));
            }
        }
    }
    if order.len() < chains.len() {
        let operators = (0..chains.len())
            .filter(|c| indegree[*c] > 0)
            .map(|c| graph.nodes[chains[c].head as usize].name.clone())
            .collect();
        return Err(GraphError::Cycle { operators });
    }
    Ok(order)
}

/// The vertex of one chain, with its resolved max parallelism and deterministic id.
fn build_vertex(graph: &StreamGraph, chain: &Chain, chained_names: &[String]) -> Result<JobVertex, GraphError> {
    let head = &graph.nodes[chain.head as usize];
    let parallelism = head.parallelism;
    let chained_max = chain
        .ops
        .iter()
        .filter_map(|id| graph.nodes[*id as usize].max_parallelism)
        .max();
    let (max_parallelism, max_parallelism_configured) =
        match head.max_parallelism.or(graph.config.max_parallelism).or(chained_max) {
            Some(m) => (m, true),
            None => (default_max_parallelism(parallelism), false),
        };
    if parallelism > max_parallelism {
        return Err(GraphError::ParallelismAboveMax {
            operator: head.name.clone(),
            parallelism,
            max_parallelism,
        });
    }
    let operators: Vec<ChainedOperator> = chain
        .ops
        .iter()
        .map(|id| {
            let node = &graph.nodes[*id as usize];
            ChainedOperator {
                node_id: node.id,
                name: node.name.clone(),
                uid: node.uid.clone(),
            }
        })
        .collect();
    Ok(JobVertex {
        id: vertex_id(&operators),
        name: chained_names[chain.head as usize].clone(),
        parallelism,
        parallelism_configured: chain
            .ops
            .iter()
            .any(|id| graph.nodes[*id as usize].parallelism_configured),
        source_splits: graph.nodes[chain.head as usize].source_splits,
        max_parallelism,
        max_parallelism_configured,
        operators,
        head: chain.head,
        slot_sharing_group: head.slot_sharing_group.clone(),
        chain_edges: chain.edges.clone(),
        is_source: graph.in_edges(chain.head).next().is_none(),
    })
}

/// A 128-bit digest: MurmurHash3_x86_32 of `bytes` under four fixed seeds.
fn digest128(bytes: &[u8]) -> u128 {
    const SEEDS: [u32; 4] = [0x5745_4952, 0x9747_b28c, 0x85eb_ca6b, 0xc2b2_ae35];
    SEEDS.iter().enumerate().fold(0u128, |acc, (i, seed)| {
        acc | (u128::from(murmur3_32(bytes, *seed)) << (32 * i))
    })
}

/// Appends a length-prefixed string, so that concatenations cannot collide.
fn put_str(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(&(s.len() as u64).to_le_bytes());
    buf.extend_from_slice(s.as_bytes());
}

/// The vertex id: a digest of each chained operator's node id, uid and name, in order.
fn vertex_id(operators: &[ChainedOperator]) -> JobVertexId {
    let mut buf = b"weir-job-vertex".to_vec();
    for op in operators {
        buf.extend_from_slice(&op.node_id.to_le_bytes());
        match &op.uid {
            Some(uid) => {
                buf.push(1);
                put_str(&mut buf, uid);
            }
            None => buf.push(0),
        }
        put_str(&mut buf, &op.name);
    }
    JobVertexId(digest128(&buf))
}

/// The data set id: a digest of the producing vertex id and the StreamEdge.
fn data_set_id(producer: JobVertexId, edge: &StreamEdge, stream_edge: usize) -> IntermediateDataSetId {
    let mut buf = b"weir-data-set".to_vec();
    buf.extend_from_slice(&producer.0.to_le_bytes());
    buf.extend_from_slice(&edge.source.to_le_bytes());
    buf.extend_from_slice(&edge.target.to_le_bytes());
    buf.extend_from_slice(&(stream_edge as u64).to_le_bytes());
    put_str(&mut buf, edge.partitioner.ship_strategy());
    IntermediateDataSetId(digest128(&buf))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::stream_graph::DEFAULT_SLOT_SHARING_GROUP;

    /// A node with Flink's defaults: ALWAYS, group "default", no uid, no max parallelism.
    pub(crate) fn node(id: StreamNodeId, name: &str, kind: NodeKind, parallelism: u32) -> StreamNode {
        StreamNode {
            id,
            name: name.to_string(),
            kind,
            parallelism,
            parallelism_configured: false,
            source_splits: None,
            max_parallelism: None,
            chaining_strategy: ChainingStrategy::Always,
            slot_sharing_group: DEFAULT_SLOT_SHARING_GROUP.to_string(),
            uid: None,
            keyed: false,
        }
    }

    /// A graph with default config from nodes and `(source, target, partitioner)` edges.
    pub(crate) fn graph(nodes: Vec<StreamNode>, edges: &[(u32, u32, Partitioner)]) -> StreamGraph {
        StreamGraph {
            job_name: "test job".to_string(),
            config: ExecutionConfig::default(),
            nodes,
            edges: edges
                .iter()
                .map(|(source, target, partitioner)| StreamEdge {
                    source: *source,
                    target: *target,
                    partitioner: *partitioner,
                    input: 0,
                })
                .collect(),
        }
    }

    /// Source(p) -> Map(p) with a forward edge.
    fn source_map(p: u32) -> StreamGraph {
        graph(
            vec![
                node(0, "Source: S", NodeKind::Source, p),
                node(1, "Map", NodeKind::Operator, p),
            ],
            &[(0, 1, Partitioner::Forward)],
        )
    }

    fn compile(g: &StreamGraph) -> JobGraph {
        match JobGraph::from_stream_graph(g) {
            Ok(jg) => jg,
            Err(e) => panic!("compilation failed: {e}"),
        }
    }

    fn names(jg: &JobGraph) -> Vec<&str> {
        jg.vertices.iter().map(|v| v.name.as_str()).collect()
    }

    /// The WordCount shape: Source -> FlatMap (forward), HASH, KeyedAgg -> Sink (forward).
    pub(crate) fn wordcount() -> StreamGraph {
        let mut agg = node(2, "KeyedAgg", NodeKind::Operator, 2);
        agg.keyed = true;
        graph(
            vec![
                node(0, "Source: Lines", NodeKind::Source, 2),
                node(1, "FlatMap", NodeKind::Operator, 2),
                agg,
                node(3, "Sink: Print", NodeKind::Sink, 2),
            ],
            &[
                (0, 1, Partitioner::Forward),
                (1, 2, Partitioner::Hash),
                (2, 3, Partitioner::Forward),
            ],
        )
    }

    #[test]
    fn forward_edges_with_equal_parallelism_chain_into_one_vertex() {
        let jg = compile(&source_map(2));
        assert_eq!(names(&jg), vec!["Source: S -> Map"]);
        assert!(jg.edges.is_empty());
        let v = &jg.vertices[0];
        assert_eq!(v.head, 0);
        assert_eq!(v.chain_edges, vec![(0, 1)]);
        assert!(v.is_source);
        assert_eq!(v.parallelism, 2);
    }

    #[test]
    fn disabled_chaining_gives_one_vertex_per_operator() {
        let mut g = source_map(2);
        g.config.chaining_enabled = false;
        let jg = compile(&g);
        assert_eq!(names(&jg), vec!["Source: S", "Map"]);
        assert_eq!(jg.edges.len(), 1);
        assert_eq!(jg.edges[0].ship_strategy, Partitioner::Forward);
        assert_eq!(jg.edges[0].distribution, DistributionPattern::Pointwise);
    }

    #[test]
    fn different_slot_sharing_groups_do_not_chain() {
        let mut g = source_map(2);
        g.nodes[1].slot_sharing_group = "x".to_string();
        let jg = compile(&g);
        assert_eq!(names(&jg), vec!["Source: S", "Map"]);
        assert_eq!(jg.vertices[1].slot_sharing_group, "x");
    }

    #[test]
    fn never_upstream_does_not_chain_to_its_successor() {
        let mut g = source_map(1);
        g.nodes[0].chaining_strategy = ChainingStrategy::Never;
        assert_eq!(names(&compile(&g)), vec!["Source: S", "Map"]);
    }

    #[test]
    fn never_downstream_does_not_chain_to_its_predecessor() {
        let mut g = source_map(1);
        g.nodes[1].chaining_strategy = ChainingStrategy::Never;
        assert_eq!(names(&compile(&g)), vec!["Source: S", "Map"]);
    }

    #[test]
    fn head_downstream_starts_a_new_chain_that_its_successors_join() {
        let g = graph(
            vec![
                node(0, "Source: S", NodeKind::Source, 1),
                StreamNode {
                    chaining_strategy: ChainingStrategy::Head,
                    ..node(1, "Map", NodeKind::Operator, 1)
                },
                node(2, "Sink: P", NodeKind::Sink, 1),
            ],
            &[(0, 1, Partitioner::Forward), (1, 2, Partitioner::Forward)],
        );
        let jg = compile(&g);
        assert_eq!(names(&jg), vec!["Source: S", "Map -> Sink: P"]);
    }

    #[test]
    fn head_with_sources_chains_to_a_source_upstream() {
        let mut g = source_map(3);
        g.nodes[1].chaining_strategy = ChainingStrategy::HeadWithSources;
        assert_eq!(names(&compile(&g)), vec!["Source: S -> Map"]);
    }

    #[test]
    fn head_with_sources_does_not_chain_to_a_non_source_upstream() {
        let mut g = graph(
            vec![
                node(0, "Source: S", NodeKind::Source, 1),
                node(1, "Map", NodeKind::Operator, 1),
                node(2, "Filter", NodeKind::Operator, 1),
            ],
            &[(0, 1, Partitioner::Forward), (1, 2, Partitioner::Forward)],
        );
        g.nodes[2].chaining_strategy = ChainingStrategy::HeadWithSources;
        assert_eq!(names(&compile(&g)), vec!["Source: S -> Map", "Filter"]);
    }

    #[test]
    fn different_parallelism_does_not_chain_and_rebalances() {
        let g = graph(
            vec![
                node(0, "Source: S", NodeKind::Source, 1),
                node(1, "Map", NodeKind::Operator, 4),
            ],
            &[(0, 1, Partitioner::Rebalance)],
        );
        let jg = compile(&g);
        assert_eq!(names(&jg), vec!["Source: S", "Map"]);
        assert_eq!(jg.edges[0].ship_strategy, Partitioner::Rebalance);
        assert_eq!(jg.edges[0].distribution, DistributionPattern::AllToAll);
    }

    #[test]
    fn non_forward_partitioner_with_equal_parallelism_does_not_chain() {
        for p in [
            Partitioner::Rebalance,
            Partitioner::Rescale,
            Partitioner::Shuffle,
            Partitioner::Broadcast,
            Partitioner::Global,
            Partitioner::Hash,
            Partitioner::Custom,
        ] {
            let mut g = source_map(2);
            g.edges[0].partitioner = p;
            let jg = compile(&g);
            assert_eq!(jg.vertices.len(), 2, "{p}");
            assert_eq!(jg.edges[0].ship_strategy, p);
        }
    }

    #[test]
    fn union_of_two_inputs_is_never_chained() {
        let g = graph(
            vec![
                node(0, "Source: A", NodeKind::Source, 1),
                node(1, "Source: B", NodeKind::Source, 1),
                node(2, "Map", NodeKind::Operator, 1),
            ],
            &[(0, 2, Partitioner::Forward), (1, 2, Partitioner::Forward)],
        );
        let jg = compile(&g);
        assert_eq!(names(&jg), vec!["Source: A", "Source: B", "Map"]);
        let map = jg.vertex_by_node(2).unwrap_or(usize::MAX);
        assert_eq!(map, 2);
        assert_eq!(jg.in_edges(map).map(|e| e.source_node).collect::<Vec<_>>(), vec![0, 1]);
        assert!(!jg.vertices[map].is_source);
    }

    #[test]
    fn the_same_stream_consumed_twice_is_a_union_and_not_chained() {
        let g = graph(
            vec![
                node(0, "Source: A", NodeKind::Source, 1),
                node(1, "Map", NodeKind::Operator, 1),
            ],
            &[(0, 1, Partitioner::Forward), (0, 1, Partitioner::Forward)],
        );
        let jg = compile(&g);
        assert_eq!(jg.vertices.len(), 2);
        assert_eq!(jg.edges.len(), 2);
        assert_ne!(jg.edges[0].data_set, jg.edges[1].data_set);
    }

    #[test]
    fn single_operator_chain_is_named_after_the_operator() {
        let g = graph(vec![node(0, "A", NodeKind::Source, 1)], &[]);
        assert_eq!(names(&compile(&g)), vec!["A"]);
    }

    #[test]
    fn chain_of_two_is_named_a_arrow_b() {
        let g = graph(
            vec![node(0, "A", NodeKind::Source, 1), node(1, "B", NodeKind::Sink, 1)],
            &[(0, 1, Partitioner::Forward)],
        );
        assert_eq!(names(&compile(&g)), vec!["A -> B"]);
    }

    #[test]
    fn chain_with_two_chained_outputs_is_named_with_parentheses() {
        let g = graph(
            vec![
                node(0, "A", NodeKind::Source, 1),
                node(1, "B", NodeKind::Sink, 1),
                node(2, "C", NodeKind::Sink, 1),
            ],
            &[(0, 1, Partitioner::Forward), (0, 2, Partitioner::Forward)],
        );
        let jg = compile(&g);
        assert_eq!(names(&jg), vec!["A -> (B, C)"]);
        let ops: Vec<_> = jg.vertices[0].operators.iter().map(|o| o.node_id).collect();
        assert_eq!(ops, vec![0, 1, 2]);
        assert_eq!(jg.vertices[0].chain_edges, vec![(0, 1), (0, 2)]);
    }

    #[test]
    fn forked_chains_nest_names_recursively() {
        // A -> (B -> D, C)
        let g = graph(
            vec![
                node(0, "A", NodeKind::Source, 1),
                node(1, "B", NodeKind::Operator, 1),
                node(2, "C", NodeKind::Sink, 1),
                node(3, "D", NodeKind::Sink, 1),
            ],
            &[
                (0, 1, Partitioner::Forward),
                (0, 2, Partitioner::Forward),
                (1, 3, Partitioner::Forward),
            ],
        );
        let jg = compile(&g);
        assert_eq!(names(&jg), vec!["A -> (B -> D, C)"]);
        let ops: Vec<_> = jg.vertices[0].operators.iter().map(|o| o.node_id).collect();
        assert_eq!(ops, vec![0, 1, 3, 2]);
        assert_eq!(jg.vertices[0].chain_edges, vec![(0, 1), (1, 3), (0, 2)]);
    }

    #[test]
    fn three_operator_chain_reads_source_map_sink() {
        let g = graph(
            vec![
                node(0, "Source: S", NodeKind::Source, 2),
                node(1, "Map", NodeKind::Operator, 2),
                node(2, "Sink: P", NodeKind::Sink, 2),
            ],
            &[(0, 1, Partitioner::Forward), (1, 2, Partitioner::Forward)],
        );
        let jg = compile(&g);
        assert_eq!(names(&jg), vec!["Source: S -> Map -> Sink: P"]);
        let ops: Vec<_> = jg.vertices[0].operators.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(ops, vec!["Source: S", "Map", "Sink: P"]);
    }

    #[test]
    fn wordcount_compiles_to_two_vertices_and_one_hash_edge() {
        let jg = compile(&wordcount());
        assert_eq!(names(&jg), vec!["Source: Lines -> FlatMap", "KeyedAgg -> Sink: Print"]);
        assert_eq!(jg.edges.len(), 1);
        let e = &jg.edges[0];
        assert_eq!((e.source_vertex, e.target_vertex), (0, 1));
        assert_eq!((e.source_node, e.target_node), (1, 2));
        assert_eq!(e.ship_strategy, Partitioner::Hash);
        assert_eq!(e.distribution, DistributionPattern::AllToAll);
        assert_eq!(jg.data_sets.len(), 1);
        assert_eq!(jg.data_sets[0].id, e.data_set);
        assert_eq!(jg.data_set(e.data_set).map(|d| d.producer), Some(0));
        assert_eq!(jg.out_edges(0).count(), 1);
        assert_eq!(jg.in_edges(0).count(), 0);
        assert_eq!(jg.in_edges(1).count(), 1);
        assert_eq!(jg.vertex_by_node(3), Some(1));
        assert_eq!(jg.vertex_by_node(9), None);
    }

    #[test]
    fn rebalance_is_all_to_all_and_rescale_is_pointwise() {
        let g = graph(
            vec![
                node(0, "Source: S", NodeKind::Source, 2),
                node(1, "Map", NodeKind::Operator, 4),
                node(2, "Sink: P", NodeKind::Sink, 2),
            ],
            &[(0, 1, Partitioner::Rebalance), (1, 2, Partitioner::Rescale)],
        );
        let jg = compile(&g);
        assert_eq!(jg.edges[0].distribution, DistributionPattern::AllToAll);
        assert_eq!(jg.edges[1].distribution, DistributionPattern::Pointwise);
        assert_eq!(jg.edges[1].ship_strategy, Partitioner::Rescale);
    }

    #[test]
    fn default_max_parallelism_is_resolved_per_vertex() {
        let g = graph(
            vec![
                node(0, "Source: S", NodeKind::Source, 1),
                node(1, "Map", NodeKind::Operator, 100),
            ],
            &[(0, 1, Partitioner::Rebalance)],
        );
        let jg = compile(&g);
        assert_eq!(jg.vertices[0].max_parallelism, 128);
        assert_eq!(jg.vertices[1].max_parallelism, 256);
        assert!(!jg.vertices[1].max_parallelism_configured);
    }

    #[test]
    fn explicit_max_parallelism_wins_over_job_wide_and_default() {
        let mut g = graph(
            vec![
                node(0, "Source: S", NodeKind::Source, 1),
                node(1, "Map", NodeKind::Operator, 2),
                node(2, "Sink: P", NodeKind::Sink, 2),
            ],
            &[(0, 1, Partitioner::Rebalance), (1, 2, Partitioner::Forward)],
        );
        g.config.max_parallelism = Some(64);
        g.nodes[1].max_parallelism = Some(16);
        let jg = compile(&g);
        assert_eq!(jg.vertices[0].max_parallelism, 64);
        assert_eq!(jg.vertices[1].max_parallelism, 16);
        assert!(jg.vertices[1].max_parallelism_configured);

        // Without a job-wide value, a chained operator's explicit value applies.
        g.config.max_parallelism = None;
        g.nodes[1].max_parallelism = None;
        g.nodes[2].max_parallelism = Some(32);
        let jg = compile(&g);
        assert_eq!(jg.vertices[0].max_parallelism, 128);
        assert_eq!(jg.vertices[1].max_parallelism, 32);
    }

    #[test]
    fn parallelism_out_of_bounds_is_rejected_with_flinks_message() {
        for p in [0, 32769] {
            let g = source_map(p);
            let err = JobGraph::from_stream_graph(&g).err();
            assert_eq!(
                err.map(|e| e.to_string()),
                Some(format!("Operator parallelism not within bounds: {p}"))
            );
        }
        assert!(JobGraph::from_stream_graph(&source_map(32768)).is_ok());
    }

    #[test]
    fn parallelism_above_explicit_max_parallelism_names_the_operator() {
        let mut g = source_map(8);
        g.nodes[1].max_parallelism = Some(4);
        match JobGraph::from_stream_graph(&g) {
            Err(GraphError::ParallelismAboveMax {
                operator,
                parallelism,
                max_parallelism,
            }) => {
                assert_eq!((operator.as_str(), parallelism, max_parallelism), ("Map", 8, 4));
            }
            other => panic!("unexpected {other:?}"),
        }
        let mut g = source_map(8);
        g.config.max_parallelism = Some(4);
        let msg = JobGraph::from_stream_graph(&g)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("'Source: S'"), "{msg}");
    }

    #[test]
    fn a_cycle_is_rejected() {
        let g = graph(
            vec![
                node(0, "Source: S", NodeKind::Source, 1),
                node(1, "A", NodeKind::Operator, 1),
                node(2, "B", NodeKind::Operator, 1),
            ],
            &[
                (0, 1, Partitioner::Forward),
                (1, 2, Partitioner::Rebalance),
                (2, 1, Partitioner::Rebalance),
            ],
        );
        match JobGraph::from_stream_graph(&g) {
            Err(GraphError::Cycle { operators }) => assert_eq!(operators, vec!["A", "B"]),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn malformed_graphs_are_rejected_not_panicked_on() {
        let empty = graph(vec![], &[]);
        assert_eq!(JobGraph::from_stream_graph(&empty).err(), Some(GraphError::EmptyGraph));

        let mut g = source_map(1);
        g.edges[0].target = 7;
        assert_eq!(
            JobGraph::from_stream_graph(&g).err(),
            Some(GraphError::UnknownNode { edge: 0, node: 7 })
        );

        let mut g = source_map(1);
        g.nodes[1].id = 5;
        assert!(matches!(
            JobGraph::from_stream_graph(&g),
            Err(GraphError::NodeIdMismatch { index: 1, id: 5 })
        ));

        let mut g = source_map(1);
        g.nodes[0].uid = Some("same".into());
        g.nodes[1].uid = Some("same".into());
        assert!(matches!(
            JobGraph::from_stream_graph(&g),
            Err(GraphError::DuplicateUid { .. })
        ));

        let mut g = source_map(1);
        g.nodes[1].parallelism = 2;
        let msg = JobGraph::from_stream_graph(&g)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            msg.starts_with("Forward partitioning does not allow change of parallelism."),
            "{msg}"
        );

        let mut g = source_map(1);
        g.config.max_parallelism = Some(0);
        assert!(matches!(
            JobGraph::from_stream_graph(&g),
            Err(GraphError::MaxParallelismOutOfBounds { max_parallelism: 0, .. })
        ));
    }

    #[test]
    fn vertex_and_data_set_ids_are_deterministic_across_compilations() {
        let a = compile(&wordcount());
        let b = compile(&wordcount());
        assert_eq!(a, b);
        assert_ne!(a.vertices[0].id, a.vertices[1].id);
        // A different uid gives a different vertex id.
        let mut g = wordcount();
        g.nodes[0].uid = Some("lines".into());
        let c = compile(&g);
        assert_ne!(c.vertices[0].id, a.vertices[0].id);
        assert_eq!(c.vertices[1].id, a.vertices[1].id);
        assert_eq!(c.vertex_by_id(c.vertices[1].id), Some(1));
    }

    #[test]
    fn vertices_are_topologically_ordered_with_sources_first() {
        // Node ids deliberately out of topological order.
        let g = graph(
            vec![
                node(0, "Sink: Out", NodeKind::Sink, 1),
                node(1, "Map", NodeKind::Operator, 2),
                node(2, "Source: B", NodeKind::Source, 1),
                node(3, "Source: A", NodeKind::Source, 1),
            ],
            &[
                (3, 1, Partitioner::Rebalance),
                (2, 1, Partitioner::Rebalance),
                (1, 0, Partitioner::Rebalance),
            ],
        );
        let jg = compile(&g);
        assert_eq!(names(&jg), vec!["Source: B", "Source: A", "Map", "Sink: Out"]);
        // Edges stay in creation order, which is the consumer's input order.
        let srcs: Vec<_> = jg.in_edges(2).map(|e| e.source_node).collect();
        assert_eq!(srcs, vec![3, 2]);
        for e in &jg.edges {
            assert!(e.source_vertex < e.target_vertex);
        }
    }

    #[test]
    fn job_graph_round_trips_through_json() {
        let jg = compile(&wordcount());
        let json = serde_json::to_string(&jg).unwrap_or_default();
        let back: Result<JobGraph, _> = serde_json::from_str(&json);
        assert_eq!(back.ok(), Some(jg));
    }
}
