//! The registry: every option Weir reads, with Flink's key, type and default.
//!
//! This module is the one place where an option is declared. Each declaration produces
//! a `pub const` [`ConfigOption`] and an entry of [`ALL_OPTIONS`], so the list used to
//! print the registry and to detect unknown keys cannot miss an option.
//!
//! Weir departures from Flink's defaults, each deliberate:
//! - addresses (`rest.address`, `jobmanager.rpc.address`, `taskmanager.host`) default to
//!   the loopback address `127.0.0.1`, so a Weir process never listens on other
//!   interfaces unless told to;
//! - `taskmanager.memory.process.size` defaults to `1728m` and
//!   `jobmanager.memory.process.size` to `1600m` (Flink has no default but ships a
//!   `config.yaml` with these values; Weir ships no file);
//! - `cluster.dir` is Weir's own.

use std::time::Duration;

use crate::option::{ConfigOption, OptionInfo};
use crate::value::{MemorySize, RestartStrategyType};

macro_rules! config_options {
    ($( $(#[$attr:meta])* $name:ident : $ty:ty = ($key:literal, $default:expr, $desc:literal); )*) => {
        $(
            #[doc = concat!("`", $key, "`: ", $desc)]
            $(#[$attr])*
            pub const $name: ConfigOption<$ty> = ConfigOption::new($key, $default, $desc);
        )*

        /// Every option of the registry, in declaration order.
        pub static ALL_OPTIONS: &[OptionInfo] = &[$($name.info()),*];
    };
}

config_options! {
    // --- cluster processes -------------------------------------------------------------
    NUM_TASK_SLOTS: u32 = ("taskmanager.numberOfTaskSlots", Some("1"),
        "Number of task slots a TaskManager offers; each slot runs one parallel pipeline (one subtask of each vertex of a slot sharing group).");
    PARALLELISM_DEFAULT: u32 = ("parallelism.default", Some("1"),
        "Parallelism of operators and jobs that do not set one.");
    REST_ADDRESS: String = ("rest.address", Some("127.0.0.1"),
        "Address the REST endpoint binds to and that clients connect to. Weir defaults to the loopback address.");
    REST_PORT: u16 = ("rest.port", Some("8081"),
        "Port of the REST endpoint.");
    JOBMANAGER_RPC_ADDRESS: String = ("jobmanager.rpc.address", Some("127.0.0.1"),
        "Address of the JobManager's RPC endpoint, which TaskManagers connect to. Weir defaults to the loopback address.");
    JOBMANAGER_RPC_PORT: u16 = ("jobmanager.rpc.port", Some("6123"),
        "Port of the JobManager's RPC endpoint.");
    TASKMANAGER_RPC_PORT: String = ("taskmanager.rpc.port", Some("0"),
        "Port of the TaskManager's RPC endpoint: a port, a range like 50100-50200, or 0 for any free port.");
    TASKMANAGER_DATA_PORT: u16 = ("taskmanager.data.port", Some("0"),
        "Port of the TaskManager's data (shuffle) server; 0 picks a free port.");
    TASKMANAGER_HOST: String = ("taskmanager.host", Some("127.0.0.1"),
        "Address the TaskManager's servers bind to and advertise. Weir defaults to the loopback address.");
    HEARTBEAT_INTERVAL: Duration = ("heartbeat.interval", Some("10 s"),
        "Time between heartbeat requests from the sender to the receiver side.");
    HEARTBEAT_TIMEOUT: Duration = ("heartbeat.timeout", Some("50 s"),
        "Time without a heartbeat response after which the other side is considered lost.");
    SLOT_REQUEST_TIMEOUT: Duration = ("slot.request.timeout", Some("5 min"),
        "How long a slot request may stay pending before the job fails with NoResourceAvailableException.");
    SLOT_IDLE_TIMEOUT: Duration = ("slot.idle.timeout", Some("50 s"),
        "How long a free slot stays in the JobMaster's slot pool before it is given back.");
    CLUSTER_DIR: Option<String> = ("cluster.dir", None,
        "Weir only: directory where `weir start-cluster` keeps pid files and logs of the processes it starts. Defaults to $HOME/.weir/cluster when unset.");

    // --- pipeline and execution ----------------------------------------------------------
    BUFFER_TIMEOUT: Duration = ("execution.buffer-timeout.interval", Some("100 ms"),
        "Longest time a partially filled network buffer waits before it is flushed; 0 flushes after every record.");
    BUFFER_TIMEOUT_ENABLED: bool = ("execution.buffer-timeout.enabled", Some("true"),
        "Whether buffers are flushed on the buffer timeout; false flushes only full buffers (and on events).");
    MAX_PARALLELISM: i32 = ("pipeline.max-parallelism", Some("-1"),
        "Maximum parallelism (number of key groups) of jobs that do not set one; -1 derives it from the parallelism.");
    CHAINING_ENABLED: bool = ("pipeline.operator-chaining.enabled", Some("true"),
        "Whether chainable operators are fused into one task.");
    AUTO_WATERMARK_INTERVAL: Duration = ("pipeline.auto-watermark-interval", Some("200 ms"),
        "Interval of periodic watermark emission; 0 disables periodic watermarks.");
    CHECKPOINTING_INTERVAL: Option<Duration> = ("execution.checkpointing.interval", None,
        "Interval between checkpoints; unset disables checkpointing.");
    EXCEPTION_HISTORY_SIZE: u32 = ("web.exception-history-size", Some("16"),
        "Number of root failures kept in a job's exception history.");

    // --- network stack ------------------------------------------------------------------
    NETWORK_BUFFERS_PER_CHANNEL: u32 = ("taskmanager.network.memory.buffers-per-channel", Some("2"),
        "Exclusive buffers per input channel: a remote channel's initial credit.");
    NETWORK_FLOATING_BUFFERS_PER_GATE: u32 = ("taskmanager.network.memory.floating-buffers-per-gate", Some("8"),
        "Floating buffers per input gate, shared by its channels and granted on announced backlog.");
    NETWORK_MAX_BUFFERS_PER_CHANNEL: u32 = ("taskmanager.network.memory.max-buffers-per-channel", Some("10"),
        "Most buffers one output subpartition may hold, so that one skewed channel cannot take a whole pool.");
    MEMORY_SEGMENT_SIZE: MemorySize = ("taskmanager.memory.segment-size", Some("32kb"),
        "Size of a network buffer (memory segment).");

    // --- restart strategies -------------------------------------------------------------
    RESTART_STRATEGY_TYPE: Option<RestartStrategyType> = ("restart-strategy.type", None,
        "Restart strategy on failure: none/off/disable, fixed-delay/fixeddelay, failure-rate/failurerate, exponential-delay/exponentialdelay. Unset: disable without checkpointing, exponential-delay with its default settings when checkpointing is on.");
    RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS: i32 = ("restart-strategy.fixed-delay.attempts", Some("1"),
        "fixed-delay: number of restarts before the job fails.");
    RESTART_STRATEGY_FIXED_DELAY_DELAY: Duration = ("restart-strategy.fixed-delay.delay", Some("1 s"),
        "fixed-delay: delay between a failure and the restart.");
    RESTART_STRATEGY_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL: i32 = ("restart-strategy.failure-rate.max-failures-per-interval", Some("1"),
        "failure-rate: restarts allowed within one interval before the job fails.");
    RESTART_STRATEGY_FAILURE_RATE_INTERVAL: Duration = ("restart-strategy.failure-rate.failure-rate-interval", Some("1 min"),
        "failure-rate: the sliding interval over which failures are counted.");
    RESTART_STRATEGY_FAILURE_RATE_DELAY: Duration = ("restart-strategy.failure-rate.delay", Some("1 s"),
        "failure-rate: delay between a failure and the restart.");
    RESTART_STRATEGY_EXPONENTIAL_DELAY_INITIAL_BACKOFF: Duration = ("restart-strategy.exponential-delay.initial-backoff", Some("1 s"),
        "exponential-delay: delay before the first restart.");
    RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF: Duration = ("restart-strategy.exponential-delay.max-backoff", Some("1 min"),
        "exponential-delay: upper bound of the delay.");
    RESTART_STRATEGY_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER: f64 = ("restart-strategy.exponential-delay.backoff-multiplier", Some("1.5"),
        "exponential-delay: factor applied to the delay after every restart attempt (must be greater than 1).");
    RESTART_STRATEGY_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD: Duration = ("restart-strategy.exponential-delay.reset-backoff-threshold", Some("1 h"),
        "exponential-delay: failure-free time after which the delay and the attempt count start over.");
    RESTART_STRATEGY_EXPONENTIAL_DELAY_JITTER_FACTOR: f64 = ("restart-strategy.exponential-delay.jitter-factor", Some("0.1"),
        "exponential-delay: random share of the delay added or subtracted, in [0, 1].");
    RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS_BEFORE_RESET_BACKOFF: i32 = ("restart-strategy.exponential-delay.attempts-before-reset-backoff", Some("2147483647"),
        "exponential-delay: restart attempts before the job fails, counted since the last reset (default: unlimited).");

    // --- TaskManager memory ---------------------------------------------------------------
    TOTAL_PROCESS_MEMORY: MemorySize = ("taskmanager.memory.process.size", Some("1728m"),
        "Total memory of the TaskManager process, from which all components are derived unless flink.size or task.heap.size and managed.size are set.");
    TOTAL_FLINK_MEMORY: Option<MemorySize> = ("taskmanager.memory.flink.size", None,
        "Total Flink memory of the TaskManager: the process memory without JVM metaspace and overhead.");
    FRAMEWORK_HEAP_MEMORY: MemorySize = ("taskmanager.memory.framework.heap.size", Some("128m"),
        "Heap memory reserved for the TaskManager framework.");
    TASK_HEAP_MEMORY: Option<MemorySize> = ("taskmanager.memory.task.heap.size", None,
        "Heap memory for tasks; derived as the rest of total Flink memory when unset.");
    FRAMEWORK_OFF_HEAP_MEMORY: MemorySize = ("taskmanager.memory.framework.off-heap.size", Some("128m"),
        "Off-heap memory reserved for the TaskManager framework.");
    TASK_OFF_HEAP_MEMORY: MemorySize = ("taskmanager.memory.task.off-heap.size", Some("0"),
        "Off-heap memory for tasks.");
    MANAGED_MEMORY_FRACTION: f32 = ("taskmanager.memory.managed.fraction", Some("0.4"),
        "Share of total Flink memory used as managed memory, unless managed.size is set.");
    MANAGED_MEMORY_SIZE: Option<MemorySize> = ("taskmanager.memory.managed.size", None,
        "Managed memory (state backends, sorting); overrides managed.fraction.");
    NETWORK_MEMORY_FRACTION: f32 = ("taskmanager.memory.network.fraction", Some("0.1"),
        "Share of total Flink memory used for network buffers, clamped to [network.min, network.max].");
    NETWORK_MEMORY_MIN: MemorySize = ("taskmanager.memory.network.min", Some("64m"),
        "Lower bound of network memory.");
    NETWORK_MEMORY_MAX: MemorySize = ("taskmanager.memory.network.max", Some("1g"),
        "Upper bound of network memory.");
    JVM_METASPACE: MemorySize = ("taskmanager.memory.jvm-metaspace.size", Some("256m"),
        "JVM metaspace of the TaskManager. Used by Flink's model only: a Weir process has no metaspace and reports 0.");
    JVM_OVERHEAD_FRACTION: f32 = ("taskmanager.memory.jvm-overhead.fraction", Some("0.1"),
        "Share of total process memory reserved as overhead (native memory, thread stacks), clamped to [jvm-overhead.min, jvm-overhead.max].");
    JVM_OVERHEAD_MIN: MemorySize = ("taskmanager.memory.jvm-overhead.min", Some("192m"),
        "Lower bound of the overhead.");
    JVM_OVERHEAD_MAX: MemorySize = ("taskmanager.memory.jvm-overhead.max", Some("1g"),
        "Upper bound of the overhead.");

    // --- JobManager memory ----------------------------------------------------------------
    JOBMANAGER_TOTAL_PROCESS_MEMORY: MemorySize = ("jobmanager.memory.process.size", Some("1600m"),
        "Total memory of the JobManager process.");
}

/// The registry entry for `key`, if Weir knows the key.
pub fn find_option(key: &str) -> Option<&'static OptionInfo> {
    ALL_OPTIONS.iter().find(|info| info.key == key)
}

/// The registry as a Markdown table (key, type, default, description), for `weir
/// config --list`-style output and documentation.
pub fn options_markdown() -> String {
    let mut out = String::from("| key | type | default | description |\n|---|---|---|---|\n");
    for info in ALL_OPTIONS {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            info.key,
            info.type_name,
            info.default
                .map(|d| format!("`{d}`"))
                .unwrap_or_else(|| "(none)".to_string()),
            info.description.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_default_parses_as_its_type() {
        for info in ALL_OPTIONS {
            if let Some(default) = info.default {
                assert_eq!((info.check)(default), Ok(()), "default of {}", info.key);
            }
        }
    }

    #[test]
    fn keys_are_unique_and_every_option_is_documented() {
        let mut seen = BTreeSet::new();
        for info in ALL_OPTIONS {
            assert!(seen.insert(info.key), "duplicate key {}", info.key);
            assert!(!info.description.is_empty(), "{} has no description", info.key);
        }
        assert_eq!(seen.len(), ALL_OPTIONS.len());
    }

    #[test]
    fn the_registry_carries_flinks_keys_and_defaults() {
        let expect = [
            ("taskmanager.numberOfTaskSlots", "Integer", Some("1")),
            ("parallelism.default", "Integer", Some("1")),
            ("rest.address", "String", Some("127.0.0.1")),
            ("rest.port", "Integer", Some("8081")),
            ("jobmanager.rpc.port", "Integer", Some("6123")),
            ("heartbeat.timeout", "Duration", Some("50 s")),
            ("slot.request.timeout", "Duration", Some("5 min")),
            ("execution.buffer-timeout.interval", "Duration", Some("100 ms")),
            ("pipeline.max-parallelism", "Integer", Some("-1")),
            ("execution.checkpointing.interval", "Duration", None),
            ("taskmanager.memory.segment-size", "MemorySize", Some("32kb")),
            ("restart-strategy.type", "Enum", None),
            (
                "restart-strategy.exponential-delay.backoff-multiplier",
                "Double",
                Some("1.5"),
            ),
            ("taskmanager.memory.managed.fraction", "Float", Some("0.4")),
            ("taskmanager.memory.process.size", "MemorySize", Some("1728m")),
            ("jobmanager.memory.process.size", "MemorySize", Some("1600m")),
            ("web.exception-history-size", "Integer", Some("16")),
        ];
        for (key, type_name, default) in expect {
            let info = find_option(key).unwrap_or_else(|| panic!("{key} is not registered"));
            assert_eq!(info.type_name, type_name, "{key}");
            assert_eq!(info.default, default, "{key}");
        }
        assert!(find_option("state.backend.type").is_none());
    }

    #[test]
    fn the_markdown_table_lists_every_option() {
        let table = options_markdown();
        assert_eq!(table.lines().count(), ALL_OPTIONS.len() + 2);
        assert!(table.contains("| `rest.port` | Integer | `8081` |"));
        assert!(table.contains("| `cluster.dir` | String | (none) |"));
    }
}
