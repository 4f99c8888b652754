//! Starting a JobManager: the RPC server (ResourceManager, JobMasterGateway), the
//! optional REST server (Dispatcher), the action executor, heartbeats and the ticker.
//!
//! [`start_jobmanager`] starts everything on the current tokio runtime and returns once
//! both servers are bound, so that a caller (the `weir jobmanager` process, or the
//! MiniCluster of `weir local`) knows the addresses before anything connects.
//! [`run_jobmanager`] is the standalone process: its own runtime, REST always on.

use crate::jobmanager::JobManager;
use crate::metrics_source::JobManagerMetricSource;
use crate::rest::backend::JobManagerRest;
use crate::rpc::actions::{run_actions, run_heartbeats, run_ticker, run_watches, Clients};
use crate::rpc::service::JobManagerRpc;
use crate::settings::JobManagerSettings;
use std::net::SocketAddr;
use std::sync::Arc;
use thiserror::Error;
use tokio::task::JoinHandle;
use tonic::transport::server::TcpIncoming;
use weir_api::program::ProgramRegistry;
use weir_metrics::{start_prometheus_exporters, PrometheusExporter};
use weir_rpc::job_master_gateway_server::JobMasterGatewayServer;
use weir_rpc::resource_manager_server::ResourceManagerServer;

/// Why the JobManager could not start or stopped.
#[derive(Debug, Error)]
pub enum JobManagerError {
    /// A server could not bind.
    #[error("cannot bind {what} on {address}: {source}")]
    Bind {
        /// Which server.
        what: &'static str,
        /// The address.
        address: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The RPC server failed.
    #[error("rpc server: {0}")]
    Rpc(String),
}

/// Whether a JobManager serves the REST API on `rest.address:rest.port`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestEndpoint {
    /// Serve it (the standalone JobManager; a MiniCluster with `rest.port` configured).
    Serve,
    /// No REST server (the default MiniCluster: its client is in the same process).
    Disabled,
}

/// A JobManager serving on the tokio runtime it was started on. Its background tasks
/// end with that runtime.
pub struct RunningJobManager {
    jobmanager: Arc<JobManager>,
    rpc_address: SocketAddr,
    rest: Option<weir_rest::RestServerHandle>,
    rpc_server: JoinHandle<Result<(), JobManagerError>>,
    exporters: Vec<PrometheusExporter>,
}

impl RunningJobManager {
    /// The core: Dispatcher, ResourceManager and JobMasters.
    pub fn jobmanager(&self) -> &Arc<JobManager> {
        &self.jobmanager
    }

    /// Where the RPC endpoint (ResourceManager, JobMasterGateway) listens.
    pub fn rpc_address(&self) -> SocketAddr {
        self.rpc_address
    }

    /// Where the REST endpoint listens, when it is served.
    pub fn rest_address(&self) -> Option<SocketAddr> {
        self.rest.as_ref().map(|r| r.local_addr())
    }

    /// The metric reporters that started (each serving `/metrics`).
    pub fn metric_exporters(&self) -> &[PrometheusExporter] {
        &self.exporters
    }

    /// Waits until the RPC server stops (normally never) and returns its result.
    pub async fn serve_until_stopped(self) -> Result<(), JobManagerError> {
        let result = match self.rpc_server.await {
            Ok(r) => r,
            Err(e) => Err(JobManagerError::Rpc(format!(
                "the RPC server task ended abnormally: {e}"
            ))),
        };
        drop(self.rest);
        result
    }
}

/// Runs a JobManager until the process is killed. Prints one line with its addresses
/// (`JobManager rpc=<addr> rest=<addr>`, and `metrics.<name>=<url>` per started metric
/// reporter) once it serves.
pub fn run_jobmanager(settings: JobManagerSettings, registry: ProgramRegistry) -> Result<(), JobManagerError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("jm")
        .build()
        .map_err(JobManagerError::Runtime)?;
    runtime.block_on(async {
        let running = start_jobmanager(settings, registry, RestEndpoint::Serve).await?;
        let rest = running
            .rest_address()
            .map_or_else(|| "-".to_string(), |a| a.to_string());
        println!(
            "JobManager rpc={} rest={rest}{}",
            running.rpc_address(),
            weir_metrics::exporter::start_line_fields(running.metric_exporters())
        );
        running.serve_until_stopped().await
    })
}

/// Binds the servers of a JobManager on `settings.host:settings.rpc_port` (and REST on
/// `settings.rest_address:settings.rest_port` when `rest` says so) and starts serving on
/// the current tokio runtime.
pub async fn start_jobmanager(
    settings: JobManagerSettings,
    registry: ProgramRegistry,
    rest: RestEndpoint,
) -> Result<RunningJobManager, JobManagerError> {
    weir_filesystem::initialize(settings.object_stores.clone());
    let rpc_bind = format!("{}:{}", settings.host, settings.rpc_port);
    let rpc_listener = tokio::net::TcpListener::bind(&rpc_bind)
        .await
        .map_err(|source| JobManagerError::Bind {
            what: "RPC server",
            address: rpc_bind.clone(),
            source,
        })?;
    let rpc_address = rpc_listener.local_addr().map_err(|source| JobManagerError::Bind {
        what: "RPC server",
        address: rpc_bind,
        source,
    })?;
    let rest_bind = format!("{}:{}", settings.rest_address, settings.rest_port);
    let (reporters, host) = (settings.metric_reporters.clone(), settings.host.clone());
    let (internal_tls, rest_options) = (settings.internal_tls.clone(), settings.rest_server.clone());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let jm = Arc::new(JobManager::new(settings, registry, tx));
    let source = Arc::new(JobManagerMetricSource::new(jm.clone(), host.clone()));
    let exporters = start_prometheus_exporters(&reporters, &host, source).await;
    let rest = match rest {
        RestEndpoint::Serve => Some(
            weir_rest::RestServerHandle::start_with(
                rest_bind.clone(),
                Arc::new(JobManagerRest::new(jm.clone())),
                rest_options,
            )
            .await
            .map_err(|source| JobManagerError::Bind {
                what: "REST server",
                address: rest_bind,
                source,
            })?,
        ),
        RestEndpoint::Disabled => None,
    };
    let clients = Clients::new(internal_tls.clone());
    tokio::spawn(run_actions(jm.clone(), clients.clone(), rx));
    tokio::spawn(run_heartbeats(jm.clone(), clients.clone()));
    tokio::spawn(run_watches(jm.clone(), clients));
    tokio::spawn(run_ticker(jm.clone()));
    let service = JobManagerRpc::new(jm.clone());
    let mut server = tonic::transport::Server::builder();
    if let Some(tls) = weir_rpc::tls::server_tls(internal_tls.as_deref()) {
        server = server
            .tls_config(tls)
            .map_err(|e| JobManagerError::Rpc(format!("TLS: {e}")))?;
    }
    let rpc_server = tokio::spawn(async move {
        server
            .add_service(ResourceManagerServer::new(service.clone()))
            .add_service(JobMasterGatewayServer::new(service))
            .serve_with_incoming(TcpIncoming::from(rpc_listener).with_nodelay(Some(true)))
            .await
            .map_err(|e| JobManagerError::Rpc(e.to_string()))
    });
    Ok(RunningJobManager {
        jobmanager: jm,
        rpc_address,
        rest,
        rpc_server,
        exporters,
    })
}
