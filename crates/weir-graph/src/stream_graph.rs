//! The StreamGraph: one node per operator, edges with a resolved partitioner.
//!
//! Built by the DataStream API (or the SQL planner) and submitted as it is: pure data,
//! serialisable, no closures. Operator code is found again by node id when the program
//! that built the graph is re-run (see DESIGN.md, "User code"). Invariants: node ids are
//! the indices of `nodes`; every edge's partitioner is concrete (the API resolves the
//! default forward/rebalance rule and rejects an explicit forward across different
//! parallelisms before a StreamGraph exists).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Index of a node in [`StreamGraph::nodes`].
pub type StreamNodeId = u32;

/// Flink's default slot sharing group.
pub const DEFAULT_SLOT_SHARING_GROUP: &str = "default";

/// Job-wide settings that the graphs depend on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionConfig {
    /// Default parallelism of operators that set none.
    pub parallelism: u32,
    /// Job-wide max parallelism (`pipeline.max-parallelism`); `None` means per-vertex default.
    pub max_parallelism: Option<u32>,
    /// `pipeline.operator-chaining.enabled`.
    pub chaining_enabled: bool,
    /// `execution.buffer-timeout.interval` in ms; 0 flushes after every record, -1 only when full.
    pub buffer_timeout_ms: i64,
    /// `execution.runtime-mode`, resolved: `STREAMING` or `BATCH` once the graph is built.
    #[serde(default)]
    pub runtime_mode: weir_core::RuntimeExecutionMode,
}

impl Default for ExecutionConfig {
    fn default() -> Self {
        Self {
            parallelism: 1,
            max_parallelism: None,
            chaining_enabled: true,
            buffer_timeout_ms: 100,
            runtime_mode: weir_core::RuntimeExecutionMode::Streaming,
        }
    }
}

/// How an operator may be chained (Flink's `ChainingStrategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ChainingStrategy {
    /// Chains with its predecessor and successors where the rules allow (default).
    Always,
    /// Starts a new chain; successors may chain to it (`start_new_chain`).
    Head,
    /// Never chained, neither to predecessor nor successor (`disable_chaining`).
    Never,
    /// Like `Head`, but a source may chain to it.
    HeadWithSources,
}

/// What kind of operator a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NodeKind {
    /// Produces records, has no input.
    Source,
    /// Takes one input (possibly the union of several edges) and produces output.
    Operator,
    /// Consumes records, produces nothing.
    Sink,
}

/// How records of an edge are distributed over the downstream subtasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Partitioner {
    /// To the same-index downstream subtask.
    Forward,
    /// Round-robin over all downstream subtasks from a random start.
    Rebalance,
    /// Round-robin over a local subset of downstream subtasks.
    Rescale,
    /// A uniformly random downstream subtask.
    Shuffle,
    /// Every downstream subtask.
    Broadcast,
    /// Always downstream subtask 0.
    Global,
    /// By key group of the record's key (`key_by`).
    Hash,
    /// A user partitioner.
    Custom,
}

impl Partitioner {
    /// The ship strategy name shown in plans (Flink's `toString()`).
    pub fn ship_strategy(&self) -> &'static str {
        match self {
            Partitioner::Forward => "FORWARD",
            Partitioner::Rebalance => "REBALANCE",
            Partitioner::Rescale => "RESCALE",
            Partitioner::Shuffle => "SHUFFLE",
            Partitioner::Broadcast => "BROADCAST",
            Partitioner::Global => "GLOBAL",
            Partitioner::Hash => "HASH",
            Partitioner::Custom => "CUSTOM",
        }
    }

    /// POINTWISE for forward and rescale, ALL_TO_ALL otherwise.
    pub fn distribution_pattern(&self) -> DistributionPattern {
        match self {
            Partitioner::Forward | Partitioner::Rescale => DistributionPattern::Pointwise,
            _ => DistributionPattern::AllToAll,
        }
    }
}

impl fmt::Display for Partitioner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.ship_strategy())
    }
}

/// How producer subtasks connect to consumer subtasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DistributionPattern {
    /// Each producer connects to a subset of consumers.
    Pointwise,
    /// Every producer connects to every consumer.
    AllToAll,
}

impl fmt::Display for DistributionPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DistributionPattern::Pointwise => "POINTWISE",
            DistributionPattern::AllToAll => "ALL_TO_ALL",
        })
    }
}

/// How a result is exchanged (Flink's `ResultPartitionType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ResultPartitionType {
    /// Consumed while it is produced, with back pressure (every edge of a streaming job).
    #[default]
    Pipelined,
    /// Produced completely, then consumed (every non-chained edge of a batch job): the
    /// producer and its consumers are in different pipelined regions.
    Blocking,
}

impl ResultPartitionType {
    /// Flink's name: `PIPELINED_BOUNDED` or `BLOCKING`.
    pub fn flink_name(self) -> &'static str {
        match self {
            ResultPartitionType::Pipelined => "PIPELINED_BOUNDED",
            ResultPartitionType::Blocking => "BLOCKING",
        }
    }

    /// The partition type of every non-chained edge of a job in `mode`.
    pub fn for_mode(mode: weir_core::RuntimeExecutionMode) -> Self {
        if mode.is_batch() {
            ResultPartitionType::Blocking
        } else {
            ResultPartitionType::Pipelined
        }
    }
}

/// One operator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamNode {
    /// Index in [`StreamGraph::nodes`].
    pub id: StreamNodeId,
    /// Display name, e.g. `Source: Generator`, `Map`, `Sink: Print to Std. Out`.
    pub name: String,
    /// Source, operator or sink.
    pub kind: NodeKind,
    /// Number of parallel subtasks.
    pub parallelism: u32,
    /// True when the user set the parallelism (`set_parallelism`), false when it is
    /// `parallelism.default` (Flink's `parallelismConfigured`): only the latter is
    /// decided by the adaptive batch scheduler.
    #[serde(default)]
    pub parallelism_configured: bool,
    /// Sources only: the splits the source knows at planning time (e.g. its files),
    /// which the adaptive batch scheduler takes as its parallelism.
    #[serde(default)]
    pub source_splits: Option<u32>,
    /// Max parallelism set on this operator, if any.
    pub max_parallelism: Option<u32>,
    /// How this operator may chain.
    pub chaining_strategy: ChainingStrategy,
    /// Slot sharing group name.
    pub slot_sharing_group: String,
    /// Stable user id for state mapping.
    pub uid: Option<String>,
    /// True when the operator is keyed (has keyed state and a key selector).
    pub keyed: bool,
}

impl StreamNode {
    /// The operator's stable id (Flink's `OperatorID`), under which its state is
    /// checkpointed: a hash of its `uid` when one is set, so that state maps across
    /// changed programs; else a hash of its position and name in the StreamGraph,
    /// stable for the same program.
    pub fn operator_id(&self) -> weir_core::ids::OperatorId {
        operator_id_of(self.id, &self.name, self.uid.as_deref())
    }
}

/// The operator id of stream node `node` named `name` with `uid` (see
/// [`StreamNode::operator_id`]); a chained operator of a JobGraph has the same.
pub fn operator_id_of(node: StreamNodeId, name: &str, uid: Option<&str>) -> weir_core::ids::OperatorId {
    let key = match uid {
        Some(uid) => format!("uid:{uid}"),
        None => format!("node:{node}:{name}"),
    };
    let bytes = key.as_bytes();
    let mut id = 0u128;
    for (i, seed) in [0x5745_4952u32, 0x6f70_6964, 0x6368_6b70, 0x7374_6174]
        .into_iter()
        .enumerate()
    {
        id |= (weir_core::murmur::murmur3_32(bytes, seed) as u128) << (32 * i);
    }
    weir_core::ids::OperatorId(id)
}

/// A connection from one node's output to another node's input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamEdge {
    /// Producing node.
    pub source: StreamNodeId,
    /// Consuming node.
    pub target: StreamNodeId,
    /// Channel selection.
    pub partitioner: Partitioner,
    /// Which input of the target the edge feeds: 0 for one-input operators and the
    /// first input of a two-input operator, 1 for its second input.
    #[serde(default)]
    pub input: u32,
}

/// The graph of operators a program builds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamGraph {
    /// The job's name.
    pub job_name: String,
    /// Job-wide settings.
    pub config: ExecutionConfig,
    /// Operators, indexed by id.
    pub nodes: Vec<StreamNode>,
    /// Connections, in creation order.
    pub edges: Vec<StreamEdge>,
}

impl StreamGraph {
    /// The node with `id`.
    pub fn node(&self, id: StreamNodeId) -> &StreamNode {
        &self.nodes[id as usize]
    }

    /// Edges into `id`, in creation order.
    pub fn in_edges(&self, id: StreamNodeId) -> impl Iterator<Item = &StreamEdge> {
        self.edges.iter().filter(move |e| e.target == id)
    }

    /// Edges out of `id`, in creation order.
    pub fn out_edges(&self, id: StreamNodeId) -> impl Iterator<Item = &StreamEdge> {
        self.edges.iter().filter(move |e| e.source == id)
    }

    /// A stable fingerprint of the graph (MurmurHash3 of its canonical JSON), checked on
    /// deployment so that a process whose binary builds a different graph refuses it.
    pub fn fingerprint(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        let a = weir_core::murmur::murmur3_32(&json, 0);
        let b = weir_core::murmur::murmur3_32(&json, 0x5eed);
        format!("{a:08x}{b:08x}")
    }
}
