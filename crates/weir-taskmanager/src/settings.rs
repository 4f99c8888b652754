//! What a TaskManager is started with, read from the configuration at process start
//! (as Flink reads `taskmanager.*` options when the TaskManager starts).

use std::path::PathBuf;
use std::time::Duration;
use weir_filesystem::ObjectStoreOptions;
use weir_metrics::PrometheusReporterConfig;
use weir_runtime::network::NetworkConfig;

/// Start-up settings of a TaskManager.
#[derive(Debug, Clone)]
pub struct TaskManagerSettings {
    /// Stable id of this process (32 hex chars).
    pub resource_id: String,
    /// Host the TaskManager advertises to the JobManager and to its peers.
    pub host: String,
    /// Host to bind the RPC and data servers to (`taskmanager.bind-host`, default
    /// `host`; e.g. `0.0.0.0` in a container).
    pub bind_host: String,
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
    /// The object store options (`s3.*`) for state files on object stores, installed
    /// process-wide when the TaskManager starts.
    pub object_stores: ObjectStoreOptions,
    /// The file this process's output goes to, when it goes to one (a daemon of
    /// `weir start-cluster`); reported with each heartbeat.
    pub log_file: Option<PathBuf>,
    /// The Prometheus reporters to start (`metrics.reporter.<name>.*`), bound on
    /// `bind_host`.
    pub metric_reporters: Vec<PrometheusReporterConfig>,
    /// Whether tasks collect their metrics while they run
    /// (`metrics.collection.enabled`).
    pub metrics_collection: bool,
    /// Mutual TLS for the RPC server and the client of the JobManager
    /// (`security.ssl.internal.*`; the data plane's is in `network`); `None`: plaintext.
    pub internal_tls: Option<std::sync::Arc<weir_security::InternalTls>>,
    /// Where keyed operators keep state that does not fit their cache
    /// (`state.backend.type: rocksdb`, or none for `hashmap`): the TaskManager's own
    /// backend and those jobs ask for.
    pub state_backends: std::sync::Arc<crate::state_backends::StateBackends>,
}
