//! The gauges of the blocking result partitions a TaskManager holds, which it reports
//! in its heartbeat's [`NetworkMemory`] (fields 4–6): their metric names and values,
//! shared by the TaskManager's metric reporters and the JobManager's REST API.
//!
//! They are Weir's own gauges (Flink writes blocking results to files and has none).
//! Invariant: a partition counts from its registration until it is released (during the
//! job once its consumers finished, or with the job).

use crate::NetworkMemory;

/// Blocking result partitions held (registered, not released).
pub const BLOCKING_PARTITIONS: &str = "Status.Shuffle.Blocking.Partitions";
/// Their bytes in memory, within the blocking partition memory budget.
pub const BLOCKING_MEMORY_BYTES: &str = "Status.Shuffle.Blocking.MemoryBytes";
/// Their bytes in spill files.
pub const BLOCKING_SPILLED_BYTES: &str = "Status.Shuffle.Blocking.SpilledBytes";

/// The blocking partition gauges of `n`, by name.
pub fn blocking_gauges(n: &NetworkMemory) -> [(&'static str, u64); 3] {
    [
        (BLOCKING_PARTITIONS, n.blocking_partitions),
        (BLOCKING_MEMORY_BYTES, n.blocking_memory_bytes),
        (BLOCKING_SPILLED_BYTES, n.blocking_spilled_bytes),
    ]
}
