//! The producer side of an exchange: a task's output as a result partition with one
//! subpartition per consumer (Flink's `io.network.partition`).
//!
//! - [`record_writer`]: typed records serialised into buffers, channel chosen by the
//!   partitioner.
//! - [`result_partition`]: the `ResultPartitionWriter`,
//!   a pipelined partition's buffers and in-band events queued per subpartition, with
//!   backpressure when its pool is exhausted.
//! - [`subpartition`]: the state a subpartition shares with its one reader (an
//!   in-process gate, or a data-server connection through
//!   `availability`'s listener trait), bounded by its credit and event window.
//! - [`blocking_partition`]: a producer's whole output kept for BLOCKING edges, in
//!   memory within a budget and in spill files beyond; `stored_subpartition` reads a
//!   finished one back.
//! - [`partition_id`] names a partition cluster-wide; `registry` is the process's
//!   table of partitions a consumer may request.

pub(crate) mod availability;
pub mod blocking_partition;
pub mod partition_id;
pub mod record_writer;
pub(crate) mod registry;
pub mod result_partition;
pub(crate) mod stored_subpartition;
pub mod subpartition;
