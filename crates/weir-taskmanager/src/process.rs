//! Starting a TaskManager: network environment and data server, RPC server,
//! registration, report delivery.
//!
//! [`start_taskmanager`] binds both servers and starts serving on the current tokio
//! runtime, returning their addresses; registration with the ResourceManager runs in
//! the background from then on. [`run_taskmanager`] is the standalone process; on
//! SIGTERM or SIGINT it deletes its blocking partitions' spill files and exits.

use crate::error::TaskManagerError;
use crate::executor::TaskExecutor;
use crate::metrics_source::TaskManagerMetricSource;
use crate::registration::run_registration;
use crate::reporter::run_reporter;
use crate::rpc_service::TaskExecutorService;
use crate::settings::TaskManagerSettings;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::signal::unix::{signal, SignalKind};
use tokio::task::JoinHandle;
use tonic::transport::server::TcpIncoming;
use weir_api::program::ProgramRegistry;
use weir_metrics::{start_prometheus_exporters, PrometheusExporter};
use weir_rpc::task_executor_gateway_server::TaskExecutorGatewayServer;
use weir_runtime::network::NetworkEnvironment;

/// A TaskManager serving on the tokio runtime it was started on.
pub struct RunningTaskManager {
    executor: Arc<TaskExecutor>,
    rpc_address: SocketAddr,
    data_address: SocketAddr,
    rpc_server: JoinHandle<Result<(), TaskManagerError>>,
    exporters: Vec<PrometheusExporter>,
}

impl RunningTaskManager {
    /// The TaskExecutor (slots, running tasks).
    pub fn executor(&self) -> &Arc<TaskExecutor> {
        &self.executor
    }

    /// Where its `TaskExecutorGateway` listens.
    pub fn rpc_address(&self) -> SocketAddr {
        self.rpc_address
    }

    /// Where its data server listens.
    pub fn data_address(&self) -> SocketAddr {
        self.data_address
    }

    /// The metric reporters that started (each serving `/metrics`).
    pub fn metric_exporters(&self) -> &[PrometheusExporter] {
        &self.exporters
    }

    /// Waits until the RPC server stops (normally never) and returns its result.
    pub async fn serve_until_stopped(self) -> Result<(), TaskManagerError> {
        match self.rpc_server.await {
            Ok(r) => r,
            Err(e) => Err(TaskManagerError::Rpc(format!(
                "the RPC server task ended abnormally: {e}"
            ))),
        }
    }
}

/// Runs a TaskManager until it is stopped (SIGTERM or SIGINT) or
/// killed. Prints one line with its addresses
/// (`TaskManager <id> rpc=<addr> data=<addr> slots=<n>`, and `metrics.<name>=<url>` per
/// started metric reporter) once it serves.
pub fn run_taskmanager(settings: TaskManagerSettings, registry: ProgramRegistry) -> Result<(), TaskManagerError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("tm-rpc")
        .build()
        .map_err(TaskManagerError::Runtime)?;
    let stopped = runtime.block_on(async {
        let (id, slots) = (settings.resource_id.clone(), settings.num_slots);
        let running = start_taskmanager(settings, Arc::new(registry)).await?;
        println!(
            "TaskManager {id} rpc={} data={} slots={slots}{}",
            running.rpc_address(),
            running.data_address(),
            weir_metrics::exporter::start_line_fields(running.metric_exporters())
        );
        let executor = running.executor().clone();
        let mut terminate = signal(SignalKind::terminate()).map_err(TaskManagerError::Signal)?;
        let mut interrupt = signal(SignalKind::interrupt()).map_err(TaskManagerError::Signal)?;
        tokio::select! {
            served = running.serve_until_stopped() => served,
            _ = terminate.recv() => stop_on_signal(&executor, "SIGTERM"),
            _ = interrupt.recv() => stop_on_signal(&executor, "SIGINT"),
        }
    });
    // The process exits: its servers' tasks are dropped, not waited for.
    runtime.shutdown_background();
    stopped
}

/// A standalone TaskManager told to stop: its blocking partitions' spill files are
/// deleted before the process exits (as Flink's TaskManager deletes its temporary
/// directories in its shutdown hook), so a stopped TaskManager leaves none in
/// `io.tmp.dirs`.
fn stop_on_signal(executor: &TaskExecutor, signal: &str) -> Result<(), TaskManagerError> {
    tracing::info!(signal, "stopping: releasing the blocking partitions held");
    executor.release_all_partitions();
    Ok(())
}

/// Binds the data server and the RPC server on `settings.bind_host`, advertises them at
/// `settings.host` with the bound ports, and starts serving on the current tokio runtime; the TaskManager registers with `settings.jobmanager_rpc` in
/// the background (retrying until the ResourceManager answers).
pub async fn start_taskmanager(
    settings: TaskManagerSettings,
    registry: Arc<ProgramRegistry>,
) -> Result<RunningTaskManager, TaskManagerError> {
    weir_filesystem::initialize(settings.object_stores.clone());
    let network = NetworkEnvironment::new(settings.network.clone());
    let data_bind = format!("{}:{}", settings.bind_host, settings.data_port);
    let data_address = network.start_data_server(&data_bind)?;
    let rpc_bind = format!("{}:{}", settings.bind_host, settings.rpc_port);
    let listener = tokio::net::TcpListener::bind(&rpc_bind)
        .await
        .map_err(|source| TaskManagerError::Bind {
            what: "RPC server",
            address: rpc_bind.clone(),
            source,
        })?;
    let rpc_address = listener.local_addr().map_err(|source| TaskManagerError::Bind {
        what: "RPC server",
        address: rpc_bind,
        source,
    })?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let executor = TaskExecutor::new(settings.clone(), registry, network, tx);
    tokio::spawn(run_reporter(
        settings.jobmanager_rpc.clone(),
        settings.internal_tls.clone(),
        rx,
    ));
    tokio::spawn(run_registration(
        executor.clone(),
        advertised(&settings.host, rpc_address),
        advertised(&settings.host, data_address),
    ));
    let source = Arc::new(TaskManagerMetricSource::new(executor.clone(), settings.host.clone()));
    let exporters = start_prometheus_exporters(&settings.metric_reporters, &settings.bind_host, source).await;
    let service = TaskExecutorService::new(executor.clone());
    let mut server = tonic::transport::Server::builder();
    if let Some(tls) = weir_rpc::tls::server_tls(settings.internal_tls.as_deref()) {
        server = server
            .tls_config(tls)
            .map_err(|e| TaskManagerError::Rpc(format!("TLS: {e}")))?;
    }
    let rpc_server = tokio::spawn(async move {
        server
            .add_service(TaskExecutorGatewayServer::new(service))
            .serve_with_incoming(TcpIncoming::from(listener).with_nodelay(Some(true)))
            .await
            .map_err(|e| TaskManagerError::Rpc(e.to_string()))
    });
    Ok(RunningTaskManager {
        executor,
        rpc_address,
        data_address,
        rpc_server,
        exporters,
    })
}

/// `host:port` of a server bound at `bound`: what peers connect to. The bound address
/// itself when the host is the one it bound to (so a bracketed IPv6 stays intact).
fn advertised(host: &str, bound: SocketAddr) -> String {
    if bound.ip().to_string() == host {
        bound.to_string()
    } else {
        format!("{host}:{}", bound.port())
    }
}
