//! What a TaskManager is started with, read from the configuration at process start
//! (as Flink reads `taskmanager.*` options when the TaskManager starts).

use std::path::PathBuf;
use std::time::Duration;
use weir_runtime::network::NetworkConfig;

/// Start-up settings of a TaskManager.
#[derive(Debug, Clone)]
pub struct TaskManagerSettings {
    /// Stable id of this process (32 hex chars).
    pub resource_id: String,
    /// Host to bind the RPC and data servers to (and advertise).
    pub host: String,
    /// RPC port (0 = ephemeral).
    pub rpc_port: u16,
    /// Data port (0 = ephemeral).
    pub data_port: u16,
    /// `jobmanager.rpc.address:jobmanager.rpc.port`.
    pub jobmanager_rpc: String,
    /// `taskmanager.numberOfTaskSlots`.
    pub num_slots: u32,
    /// `heartbeat.interval`.
    pub heartbeat_interval: Duration,
    /// `heartbeat.timeout`.
    pub heartbeat_timeout: Duration,
    /// Memory components reported to the JobManager.
    pub memory: weir_rpc::MemoryConfiguration,
    /// Network buffers and credits.
    pub network: NetworkConfig,
    /// The file this process's output goes to, when it goes to one (a daemon of
    /// `weir start-cluster`); reported with each heartbeat.
    pub log_file: Option<PathBuf>,
}
