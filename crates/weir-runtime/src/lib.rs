//! Weir's runtime: what runs a job's subtasks.
//!
//! - [`network`]: network buffers, result partitions, input gates, credit-based flow
//!   control, record writers and readers.
//! - [`partitioner`]: channel selection for each ship strategy.
//! - [`operator`]: the type-erased interface between the API's operators and the
//!   runtime ([`operator::Output`], [`operator::OperatorFactory`]) and the chain glue.
//! - [`checkpoint`]: barrier alignment, the chain's registered state, acknowledgements.
//! - [`task`]: one subtask: its operator chain on one thread in a mailbox-style loop.
//! - [`executor`]: the executable graph (StreamGraph plus operator code) that the
//!   TaskExecutors deploy subtasks of.

#![warn(missing_docs)]

pub mod checkpoint;
pub mod error;
pub mod executor;
pub mod network;
pub mod operator;
pub mod partitioner;
pub mod task;
#[cfg(test)]
mod test_support;

pub use error::TaskError;
