//! The graphs of a job: the StreamGraph the API builds, the JobGraph compiled from it
//! by operator chaining, and the ExecutionGraph of parallel subtasks.
//!
//! - [`stream_graph`]: operators and partitioned edges, as built by the API.
//! - [`job_graph`]: Flink's operator chaining, giving vertices (chains) and edges over
//!   intermediate data sets, with deterministic ids.
//! - [`execution_graph`]: subtasks and their execution attempts, Flink's execution
//!   states, slot counting and the subtask wiring of each edge.
//! - [`pipelined_region`]: the subtasks that fail over together.
//! - [`scheduling_strategy`]: which regions to deploy next (stage by stage in batch).
//! - [`region_partition_release`]: which blocking partitions no region reads again.
//! - [`adaptive_parallelism`]: the adaptive batch scheduler's parallelism decision.
//! - [`adaptive_graph`]: which vertices it decides and how their inputs are wired.
//! - [`plan`]: the stable JSON (and text) of `weir plan`.
//! - [`error`]: the crate's error type, [`GraphError`].

#![warn(missing_docs)]

pub mod adaptive_graph;
pub mod adaptive_parallelism;
pub mod error;
pub mod execution_graph;
pub mod execution_state;
pub mod job_graph;
pub mod pipelined_region;
pub mod plan;
pub mod region_partition_release;
pub mod scheduling_strategy;
pub mod stream_graph;

pub use error::GraphError;
pub use execution_graph::*;
pub use job_graph::*;
pub use pipelined_region::{PipelinedRegions, ResultPartitionRef, SubtaskRef};
pub use plan::*;
pub use region_partition_release::RegionPartitionReleaseStrategy;
pub use scheduling_strategy::RegionSchedulingStrategy;
pub use stream_graph::*;
