//! What a JobManager is started with.

use std::path::PathBuf;
use std::time::Duration;
use weir_config::Configuration;

/// Start-up settings of a JobManager.
#[derive(Debug, Clone)]
pub struct JobManagerSettings {
    /// Host to bind the RPC and REST servers to.
    pub host: String,
    /// `jobmanager.rpc.port` (0 = ephemeral).
    pub rpc_port: u16,
    /// `rest.address`.
    pub rest_address: String,
    /// `rest.port` (0 = ephemeral).
    pub rest_port: u16,
    /// `heartbeat.interval`.
    pub heartbeat_interval: Duration,
    /// `heartbeat.timeout`.
    pub heartbeat_timeout: Duration,
    /// `slot.request.timeout`.
    pub slot_request_timeout: Duration,
    /// `web.exception-history-size`.
    pub exception_history_size: usize,
    /// The whole configuration (restart strategy, `/jobmanager/config`, job defaults).
    pub config: Configuration,
    /// The file this process's output goes to, when it goes to one (a daemon of
    /// `weir start-cluster`); served by `/jobmanager/logs`.
    pub log_file: Option<PathBuf>,
}
