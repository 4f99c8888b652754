//! Running jobs: the program's executable graph and the in-process cluster.

pub mod local;

pub use local::{JobExecutionResult, LocalExecutor};

use crate::error::TaskError;
use crate::operator::{OperatorFactory, SelectorFactory};
use std::collections::HashMap;
use weir_graph::{StreamGraph, StreamNodeId};

/// A StreamGraph together with the code of its operators: what running a program
/// produces, on the client and again on every process that runs its tasks.
#[derive(Clone)]
pub struct ExecutableGraph {
    /// The pure-data graph.
    pub stream_graph: StreamGraph,
    /// One factory per node, indexed by node id.
    pub factories: Vec<OperatorFactory>,
    /// Selectors for HASH and CUSTOM edges, by (source node, target node).
    pub selectors: HashMap<(StreamNodeId, StreamNodeId), SelectorFactory>,
}

impl ExecutableGraph {
    /// The factory of `node`.
    pub fn factory(&self, node: StreamNodeId) -> Result<&OperatorFactory, TaskError> {
        self.factories
            .get(node as usize)
            .ok_or_else(|| TaskError::Build(format!("no operator registered for stream node {node}")))
    }

    /// The selector of the edge `source -> target`.
    pub fn selector(&self, source: StreamNodeId, target: StreamNodeId) -> Result<&SelectorFactory, TaskError> {
        self.selectors
            .get(&(source, target))
            .ok_or_else(|| TaskError::Build(format!("no partitioner registered for edge {source} -> {target}")))
    }
}
