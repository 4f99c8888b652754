//! TaskManager responses: `GET /taskmanagers` and `GET /taskmanagers/:tmid`.
//!
//! Owns [`TaskManagersList`] (of [`TaskManagerInfo`]), [`TaskManagerDetail`] (the same
//! fields plus [`AllocatedSlot`]s and [`TaskManagerMetrics`]) and their parts
//! ([`ResourceProfileInfo`], [`HardwareDescription`], [`MemoryConfiguration`]).
//!
//! Units, as in Flink: a resource profile's memory is in **MiB** and its CPU a double;
//! hardware and memory configuration sizes are in **bytes**. `blocked` is omitted when
//! false (Flink's `NON_DEFAULT`).

use crate::serde_util::{display, is_false};
use serde::Serialize;
use std::collections::BTreeMap;
use weir_core::ids::JobId;

/// The body of `GET /taskmanagers`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskManagersList {
    /// Every registered TaskManager.
    pub taskmanagers: Vec<TaskManagerInfo>,
}

/// One TaskManager of [`TaskManagersList`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskManagerInfo {
    /// The TaskManager's id (Flink: `host:port-suffix`).
    pub id: String,
    /// The TaskManager's RPC address.
    pub path: String,
    /// The port of the TaskManager's data (shuffle) server.
    #[serde(rename = "dataPort")]
    pub data_port: i32,
    /// The JMX port, -1 when none (Weir: always -1).
    #[serde(rename = "jmxPort")]
    pub jmx_port: i32,
    /// When the last heartbeat arrived (Flink writes a timestamp in ms here despite the
    /// name).
    #[serde(rename = "timeSinceLastHeartbeat")]
    pub time_since_last_heartbeat: i64,
    /// Number of task slots.
    #[serde(rename = "slotsNumber")]
    pub slots_number: u32,
    /// Number of free slots.
    #[serde(rename = "freeSlots")]
    pub free_slots: u32,
    /// Number of subtasks deployed on the TaskManager.
    #[serde(rename = "assignedTasks")]
    pub assigned_tasks: u32,
    /// Resources of all slots.
    #[serde(rename = "totalResource")]
    pub total_resource: ResourceProfileInfo,
    /// Resources of the free slots.
    #[serde(rename = "freeResource")]
    pub free_resource: ResourceProfileInfo,
    /// The machine.
    pub hardware: HardwareDescription,
    /// The TaskManager's memory model.
    #[serde(rename = "memoryConfiguration")]
    pub memory_configuration: MemoryConfiguration,
    /// Whether the TaskManager is blocklisted; omitted when false.
    #[serde(skip_serializing_if = "is_false")]
    pub blocked: bool,
}

/// Resources of a slot or a set of slots; memory in MiB.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ResourceProfileInfo {
    /// CPU cores (a double, e.g. `2.0`).
    #[serde(rename = "cpuCores")]
    pub cpu_cores: f64,
    /// Task heap memory in MiB.
    #[serde(rename = "taskHeapMemory")]
    pub task_heap_memory: i64,
    /// Task off-heap memory in MiB.
    #[serde(rename = "taskOffHeapMemory")]
    pub task_off_heap_memory: i64,
    /// Managed memory in MiB.
    #[serde(rename = "managedMemory")]
    pub managed_memory: i64,
    /// Network memory in MiB.
    #[serde(rename = "networkMemory")]
    pub network_memory: i64,
    /// Other resources (e.g. GPUs) by name.
    #[serde(rename = "extendedResources")]
    pub extended_resources: BTreeMap<String, f64>,
}

/// The machine a TaskManager runs on; sizes in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct HardwareDescription {
    /// Number of CPU cores (an integer).
    #[serde(rename = "cpuCores")]
    pub cpu_cores: i32,
    /// Physical memory in bytes.
    #[serde(rename = "physicalMemory")]
    pub physical_memory: i64,
    /// Memory available to the process in bytes (Flink: the JVM's max heap).
    #[serde(rename = "freeMemory")]
    pub free_memory: i64,
    /// Managed memory in bytes.
    #[serde(rename = "managedMemory")]
    pub managed_memory: i64,
}

/// A TaskManager's memory model (Flink's `taskmanager.memory.*`); sizes in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct MemoryConfiguration {
    /// Framework heap.
    #[serde(rename = "frameworkHeap")]
    pub framework_heap: i64,
    /// Task heap.
    #[serde(rename = "taskHeap")]
    pub task_heap: i64,
    /// Framework off-heap.
    #[serde(rename = "frameworkOffHeap")]
    pub framework_off_heap: i64,
    /// Task off-heap.
    #[serde(rename = "taskOffHeap")]
    pub task_off_heap: i64,
    /// Network buffers.
    #[serde(rename = "networkMemory")]
    pub network_memory: i64,
    /// Managed memory.
    #[serde(rename = "managedMemory")]
    pub managed_memory: i64,
    /// JVM metaspace (Flink's; Weir reports its configured value).
    #[serde(rename = "jvmMetaspace")]
    pub jvm_metaspace: i64,
    /// JVM overhead (Flink's; Weir reports its configured value).
    #[serde(rename = "jvmOverhead")]
    pub jvm_overhead: i64,
    /// Total Flink memory.
    #[serde(rename = "totalFlinkMemory")]
    pub total_flink_memory: i64,
    /// Total process memory.
    #[serde(rename = "totalProcessMemory")]
    pub total_process_memory: i64,
}

/// The body of `GET /taskmanagers/:tmid`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskManagerDetail {
    /// The fields `GET /taskmanagers` lists for this TaskManager.
    #[serde(flatten)]
    pub info: TaskManagerInfo,
    /// One entry per allocated slot.
    #[serde(rename = "allocatedSlots")]
    pub allocated_slots: Vec<AllocatedSlot>,
    /// Memory and garbage collection metrics.
    pub metrics: TaskManagerMetrics,
}

/// One allocated slot of a [`TaskManagerDetail`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllocatedSlot {
    /// The job the slot is allocated to.
    #[serde(rename = "jobId", serialize_with = "display")]
    pub job_id: JobId,
    /// The slot's resources.
    pub resource: ResourceProfileInfo,
    /// Number of subtasks running in the slot.
    #[serde(rename = "assignedTasks")]
    pub assigned_tasks: u32,
}

/// `metrics` of a [`TaskManagerDetail`]: Flink's JVM and network-buffer metrics; sizes
/// in bytes. Weir maps its own process and buffer-pool numbers onto them and writes 0
/// where a JVM notion has no counterpart.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct TaskManagerMetrics {
    /// Heap in use.
    #[serde(rename = "heapUsed")]
    pub heap_used: i64,
    /// Heap committed.
    #[serde(rename = "heapCommitted")]
    pub heap_committed: i64,
    /// Maximum heap.
    #[serde(rename = "heapMax")]
    pub heap_max: i64,
    /// Non-heap in use.
    #[serde(rename = "nonHeapUsed")]
    pub non_heap_used: i64,
    /// Non-heap committed.
    #[serde(rename = "nonHeapCommitted")]
    pub non_heap_committed: i64,
    /// Maximum non-heap.
    #[serde(rename = "nonHeapMax")]
    pub non_heap_max: i64,
    /// Number of direct buffers.
    #[serde(rename = "directCount")]
    pub direct_count: i64,
    /// Direct memory in use.
    #[serde(rename = "directUsed")]
    pub direct_used: i64,
    /// Maximum direct memory.
    #[serde(rename = "directMax")]
    pub direct_max: i64,
    /// Number of mapped buffers.
    #[serde(rename = "mappedCount")]
    pub mapped_count: i64,
    /// Mapped memory in use.
    #[serde(rename = "mappedUsed")]
    pub mapped_used: i64,
    /// Maximum mapped memory.
    #[serde(rename = "mappedMax")]
    pub mapped_max: i64,
    /// Network buffers available.
    #[serde(rename = "nettyShuffleMemorySegmentsAvailable")]
    pub netty_shuffle_memory_segments_available: i64,
    /// Network buffers in use.
    #[serde(rename = "nettyShuffleMemorySegmentsUsed")]
    pub netty_shuffle_memory_segments_used: i64,
    /// Network buffers in total.
    #[serde(rename = "nettyShuffleMemorySegmentsTotal")]
    pub netty_shuffle_memory_segments_total: i64,
    /// Network buffer memory available.
    #[serde(rename = "nettyShuffleMemoryAvailable")]
    pub netty_shuffle_memory_available: i64,
    /// Network buffer memory in use.
    #[serde(rename = "nettyShuffleMemoryUsed")]
    pub netty_shuffle_memory_used: i64,
    /// Network buffer memory in total.
    #[serde(rename = "nettyShuffleMemoryTotal")]
    pub netty_shuffle_memory_total: i64,
    /// Garbage collectors (Weir: none).
    #[serde(rename = "garbageCollectors")]
    pub garbage_collectors: Vec<GarbageCollectorInfo>,
}

/// One garbage collector of [`TaskManagerMetrics`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GarbageCollectorInfo {
    /// The collector's name.
    pub name: String,
    /// Number of collections.
    pub count: i64,
    /// Milliseconds spent collecting.
    pub time: i64,
}
