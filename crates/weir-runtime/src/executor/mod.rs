//! The program's executable graph: a StreamGraph with the code of its operators, what
//! every process that runs a job's tasks builds (or, for a program built in-process by
//! closures, finds) before deploying them. Jobs run through the JobMaster and
//! TaskExecutors (`weir-jobmanager`, `weir-taskmanager`; the MiniCluster of the `weir`
//! crate runs them in one process); this crate runs one subtask ([`crate::task`]).

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
