//! What a JobManager is started with.

use std::path::PathBuf;
use std::time::Duration;
use weir_config::Configuration;
use weir_filesystem::ObjectStoreOptions;

/// Start-up settings of a JobManager.
#[derive(Debug, Clone)]
pub struct JobManagerSettings {
    /// Host to bind the RPC server to (`jobmanager.bind-host`, else
    /// `jobmanager.rpc.address`).
    pub host: String,
    /// `jobmanager.rpc.port` (0 = ephemeral).
    pub rpc_port: u16,
    /// Address to bind the REST server to (`rest.bind-address`, else `rest.address`).
    pub rest_address: String,
    /// `rest.port` (0 = ephemeral).
    pub rest_port: u16,
    /// `heartbeat.interval`.
    pub heartbeat_interval: Duration,
    /// `heartbeat.timeout`.
    pub heartbeat_timeout: Duration,
    /// `metrics.fetcher.update-interval`: task metrics older than this are fetched
    /// from the TaskManagers when REST reads them.
    pub metric_fetcher_update_interval: Duration,
    /// `slot.request.timeout`.
    pub slot_request_timeout: Duration,
    /// `web.exception-history-size`.
    pub exception_history_size: usize,
    /// `resourcemanager.taskmanager.max-slots`: most slots a TaskManager may declare.
    pub max_slots_per_taskmanager: u32,
    /// `jobmanager.submission.max-subtasks`: most subtasks one submitted job may have.
    pub max_submission_subtasks: u32,
    /// `jobmanager.submission.max-exchange-channels`: most input channels one
    /// submitted job may have.
    pub max_submission_channels: u64,
    /// The whole configuration (restart strategy, `/jobmanager/config`, job defaults).
    pub config: Configuration,
    /// The object store options (`s3.*`) for checkpoint and savepoint paths on object
    /// stores, installed process-wide when the JobManager starts.
    pub object_stores: ObjectStoreOptions,
    /// The file this process's output goes to, when it goes to one (a daemon of
    /// `weir start-cluster`); served by `/jobmanager/logs`.
    pub log_file: Option<PathBuf>,
    /// The Prometheus reporters to start (`metrics.reporter.<name>.*`), bound on `host`.
    pub metric_reporters: Vec<weir_metrics::PrometheusReporterConfig>,
    /// Mutual TLS for the RPC server and the clients of the TaskManagers
    /// (`security.ssl.internal.*`); `None`: plaintext.
    pub internal_tls: Option<std::sync::Arc<weir_security::InternalTls>>,
    /// How the REST endpoint serves: HTTPS (`security.ssl.rest.*`), CORS
    /// (`web.access-control-allow-origin`), connection limit and header timeout.
    pub rest_server: weir_rest::RestServerOptions,
}
