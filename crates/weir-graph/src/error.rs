//! Errors of graph compilation and of the execution lifecycle.
//!
//! Owns [`GraphError`], the one error type of this crate. Where Flink has a message for
//! the same condition, the variant's message is Flink's text (so that users and tests
//! can recognise it); the variant's fields carry the details (which operator, which
//! states) for programs.

use crate::execution_state::ExecutionState;
use crate::stream_graph::StreamNodeId;
use thiserror::Error;

/// Everything that can go wrong when compiling a StreamGraph into a JobGraph, or when
/// driving executions through their lifecycle.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GraphError {
    /// The StreamGraph has no nodes (Flink's wording).
    #[error("No operators defined in streaming topology. Cannot execute.")]
    EmptyGraph,

    /// A node's `id` is not its index in `StreamGraph::nodes`.
    #[error("stream node at index {index} has id {id}; node ids must equal their index")]
    NodeIdMismatch {
        /// Position of the node in `nodes`.
        index: usize,
        /// The id the node claims.
        id: StreamNodeId,
    },

    /// An edge names a node that does not exist.
    #[error("stream edge #{edge} references unknown node {node}")]
    UnknownNode {
        /// Index of the edge in `StreamGraph::edges`.
        edge: usize,
        /// The missing node id.
        node: StreamNodeId,
    },

    /// Two operators share a uid (Flink's wording).
    #[error(
        "Hash collision on user-specified ID \"{uid}\". Most likely cause is a non-unique ID. \
         Please check that all IDs specified via `uid(String)` are unique."
    )]
    DuplicateUid {
        /// The uid used more than once.
        uid: String,
    },

    /// A parallelism outside `1..=32768` (Flink's wording).
    #[error("Operator parallelism not within bounds: {parallelism}")]
    ParallelismOutOfBounds {
        /// Name of the offending operator.
        operator: String,
        /// The parallelism it asked for.
        parallelism: u32,
    },

    /// A max parallelism outside `1..=32768` (Flink's wording).
    #[error("Maximum operator parallelism not within bounds: {max_parallelism}")]
    MaxParallelismOutOfBounds {
        /// Name of the offending operator, or `pipeline.max-parallelism` for the job-wide
        /// setting.
        operator: String,
        /// The max parallelism it asked for.
        max_parallelism: u32,
    },

    /// An operator's parallelism is above its (explicit or job-wide) max parallelism.
    #[error(
        "The parallelism {parallelism} of operator '{operator}' is higher than its maximum \
         parallelism {max_parallelism}. Please lower the parallelism or raise the maximum \
         parallelism."
    )]
    ParallelismAboveMax {
        /// Name of the offending operator.
        operator: String,
        /// Its parallelism.
        parallelism: u32,
        /// The max parallelism it exceeds.
        max_parallelism: u32,
    },

    /// Any other bounds problem reported by `weir_core` for an operator.
    #[error("invalid operator '{operator}': {reason}")]
    InvalidOperator {
        /// Name of the offending operator.
        operator: String,
        /// What is wrong.
        reason: String,
    },

    /// An explicit forward edge between operators of different parallelism (Flink's
    /// wording).
    #[error(
        "Forward partitioning does not allow change of parallelism. Upstream operation: \
         {upstream} parallelism: {upstream_parallelism}, downstream operation: {downstream} \
         parallelism: {downstream_parallelism} You must use another partitioning strategy, \
         such as broadcast, rebalance, shuffle or global."
    )]
    ForwardParallelismMismatch {
        /// Upstream operator name.
        upstream: String,
        /// Upstream parallelism.
        upstream_parallelism: u32,
        /// Downstream operator name.
        downstream: String,
        /// Downstream parallelism.
        downstream_parallelism: u32,
    },

    /// The StreamGraph is not acyclic.
    #[error("the stream graph has a cycle through the operators: {}", .operators.join(", "))]
    Cycle {
        /// Names of the operators on (or downstream of) the cycle, by node id.
        operators: Vec<String>,
    },

    /// An execution was asked to make a transition its lifecycle forbids.
    #[error("illegal execution state transition from {from} to {to}")]
    IllegalTransition {
        /// The current state.
        from: ExecutionState,
        /// The requested state.
        to: ExecutionState,
    },

    /// A subtask was reset while its current execution was still live (Flink's wording).
    #[error("Cannot reset a vertex that is in non-terminal state {state}")]
    ResetNonTerminal {
        /// The state of the current execution.
        state: ExecutionState,
    },
}
