//! The metric names Weir reports, spelled as Flink's `MetricNames` and metric groups
//! spell them, by the component that has them. Which of them a component reports, and
//! which it leaves out because Weir does not measure it yet, is said where the values
//! are gathered (the JobManager's `rest_metrics`).
//!
//! A Weir process has no JVM. Where Flink's name describes the JVM process as a whole,
//! Weir reports the same quantity of its own process under that name:
//! `Status.JVM.CPU.Load` (the share of all available cores used recently, 0..1),
//! `Status.JVM.CPU.Time` (CPU time of the process in nanoseconds) and
//! `Status.JVM.Threads.Count` (OS threads). The resident set size has no Flink
//! counterpart (Flink reports heap and non-heap pools, which a Rust process does not
//! have); Weir reports it as [`PROCESS_RSS`].

/// Records a subtask read (task scope).
pub const NUM_RECORDS_IN: &str = "numRecordsIn";
/// Records a subtask wrote.
pub const NUM_RECORDS_OUT: &str = "numRecordsOut";
/// Records read per second.
pub const NUM_RECORDS_IN_PER_SECOND: &str = "numRecordsInPerSecond";
/// Records written per second.
pub const NUM_RECORDS_OUT_PER_SECOND: &str = "numRecordsOutPerSecond";
/// Bytes of network buffers a subtask read.
pub const NUM_BYTES_IN: &str = "numBytesIn";
/// Bytes of records a subtask wrote to the network.
pub const NUM_BYTES_OUT: &str = "numBytesOut";
/// Bytes read per second.
pub const NUM_BYTES_IN_PER_SECOND: &str = "numBytesInPerSecond";
/// Bytes written per second.
pub const NUM_BYTES_OUT_PER_SECOND: &str = "numBytesOutPerSecond";
/// Milliseconds per second a subtask was busy.
pub const BUSY_TIME_MS_PER_SECOND: &str = "busyTimeMsPerSecond";
/// Milliseconds per second a subtask waited for input.
pub const IDLE_TIME_MS_PER_SECOND: &str = "idleTimeMsPerSecond";
/// Milliseconds per second a subtask waited for an output buffer.
pub const BACK_PRESSURED_TIME_MS_PER_SECOND: &str = "backPressuredTimeMsPerSecond";
/// Milliseconds a subtask was busy in total.
pub const ACCUMULATED_BUSY_TIME: &str = "accumulateBusyTimeMs";
/// Milliseconds a subtask waited for input in total.
pub const ACCUMULATED_IDLE_TIME: &str = "accumulateIdleTimeMs";
/// Milliseconds a subtask waited for output buffers in total.
pub const ACCUMULATED_BACK_PRESSURED_TIME: &str = "accumulateBackPressuredTimeMs";
/// The watermark a subtask's input is at: the least over its input channels.
pub const CURRENT_INPUT_WATERMARK: &str = "currentInputWatermark";
/// The last watermark a subtask sent downstream.
pub const CURRENT_OUTPUT_WATERMARK: &str = "currentOutputWatermark";
/// How far a source subtask's watermark is behind the current time, in ms (Flink's
/// FLIP-33 source metric; see [`crate::lag`]).
pub const WATERMARK_LAG: &str = "watermarkLag";
/// The watermark of a two-input task's first input (operator scope: its head
/// operator's, as Flink registers it).
pub const CURRENT_INPUT_1_WATERMARK: &str = "currentInput1Watermark";
/// The watermark of a two-input task's second input (operator scope).
pub const CURRENT_INPUT_2_WATERMARK: &str = "currentInput2Watermark";
/// Elements a window operator or interval join dropped as late (operator scope; not
/// those within the allowed lateness, nor those sent to a late-data side output).
pub const NUM_LATE_RECORDS_DROPPED: &str = "numLateRecordsDropped";

/// Used share of a subtask's input buffers (its gates' receive buffers; local
/// channels read the producer's buffers and count for nothing), 0..1.
pub const IN_POOL_USAGE: &str = "Shuffle.Netty.Input.Buffers.inPoolUsage";
/// Used share of a subtask's output buffers (its result partitions' pools), 0..1.
pub const OUT_POOL_USAGE: &str = "Shuffle.Netty.Output.Buffers.outPoolUsage";
/// Flink's older name of [`IN_POOL_USAGE`], still registered beside it.
pub const LEGACY_IN_POOL_USAGE: &str = "buffers.inPoolUsage";
/// Flink's older name of [`OUT_POOL_USAGE`], still registered beside it.
pub const LEGACY_OUT_POOL_USAGE: &str = "buffers.outPoolUsage";

/// Restarts of a job, global and of regions (job scope).
pub const NUM_RESTARTS: &str = "numRestarts";
/// Flink's deprecated alias of [`NUM_RESTARTS`] (the same count).
pub const FULL_RESTARTS: &str = "fullRestarts";
/// Milliseconds a job has been running without interruption; 0 while not running, -1
/// once terminal.
pub const UPTIME: &str = "uptime";
/// Milliseconds of the current outage of a failing or restarting job; 0 while running,
/// -1 once terminal.
pub const DOWNTIME: &str = "downtime";

/// Checkpoints triggered since the job started (job scope, with checkpointing on).
pub const TOTAL_NUMBER_OF_CHECKPOINTS: &str = "totalNumberOfCheckpoints";
/// Checkpoints in progress.
pub const NUMBER_OF_IN_PROGRESS_CHECKPOINTS: &str = "numberOfInProgressCheckpoints";
/// Checkpoints completed.
pub const NUMBER_OF_COMPLETED_CHECKPOINTS: &str = "numberOfCompletedCheckpoints";
/// Checkpoints failed.
pub const NUMBER_OF_FAILED_CHECKPOINTS: &str = "numberOfFailedCheckpoints";
/// End-to-end duration of the latest completed checkpoint in ms; -1 before the first.
pub const LAST_CHECKPOINT_DURATION: &str = "lastCheckpointDuration";
/// Bytes the latest completed checkpoint stored (its checkpointed size: less than the
/// full size for an incremental one); -1 before the first.
pub const LAST_CHECKPOINT_SIZE: &str = "lastCheckpointSize";
/// Full state size of the latest completed checkpoint in bytes (larger than
/// `lastCheckpointSize` for an incremental one); -1 before the first.
pub const LAST_CHECKPOINT_FULL_SIZE: &str = "lastCheckpointFullSize";
/// Bytes of in-flight data the latest completed checkpoint persisted; -1 before the first.
pub const LAST_CHECKPOINT_PERSISTED_DATA: &str = "lastCheckpointPersistedData";
/// Id of the latest completed checkpoint; -1 before the first.
pub const LAST_COMPLETED_CHECKPOINT_ID: &str = "lastCompletedCheckpointId";
/// When the job last restored a checkpoint (epoch ms); -1 before the first restore.
pub const LAST_CHECKPOINT_RESTORE_TIMESTAMP: &str = "lastCheckpointRestoreTimestamp";

/// Registered TaskManagers (JobManager scope).
pub const NUM_REGISTERED_TASK_MANAGERS: &str = "numRegisteredTaskManagers";
/// Free slots.
pub const TASK_SLOTS_AVAILABLE: &str = "taskSlotsAvailable";
/// All slots.
pub const TASK_SLOTS_TOTAL: &str = "taskSlotsTotal";
/// Jobs not globally terminal.
pub const NUM_RUNNING_JOBS: &str = "numRunningJobs";

/// The process's recent CPU use, a share of all available cores (JobManager and
/// TaskManager scope).
pub const CPU_LOAD: &str = "Status.JVM.CPU.Load";
/// The process's CPU time in nanoseconds.
pub const CPU_TIME: &str = "Status.JVM.CPU.Time";
/// The process's threads.
pub const THREADS_COUNT: &str = "Status.JVM.Threads.Count";
/// The process's resident set size in bytes (Weir's; Flink has no such metric).
pub const PROCESS_RSS: &str = "Status.ProcessTree.Memory.RSS";

/// Free network buffers of a TaskManager (TaskManager scope).
pub const NETWORK_AVAILABLE_SEGMENTS: &str = "Status.Shuffle.Netty.AvailableMemorySegments";
/// Network buffers in use.
pub const NETWORK_USED_SEGMENTS: &str = "Status.Shuffle.Netty.UsedMemorySegments";
/// All network buffers.
pub const NETWORK_TOTAL_SEGMENTS: &str = "Status.Shuffle.Netty.TotalMemorySegments";
/// Bytes of free network buffers.
pub const NETWORK_AVAILABLE_MEMORY: &str = "Status.Shuffle.Netty.AvailableMemory";
/// Bytes of network buffers in use.
pub const NETWORK_USED_MEMORY: &str = "Status.Shuffle.Netty.UsedMemory";
/// Bytes of all network buffers.
pub const NETWORK_TOTAL_MEMORY: &str = "Status.Shuffle.Netty.TotalMemory";
