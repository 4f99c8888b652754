//! Starting a JobManager process: the RPC server (ResourceManager, JobMasterGateway),
//! the REST server (Dispatcher), the action executor, heartbeats and the ticker.

use crate::actions::{run_actions, run_heartbeats, run_ticker, Clients};
use crate::jobmanager::JobManager;
use crate::rest_backend::JobManagerRest;
use crate::rpc_service::JobManagerRpc;
use crate::settings::JobManagerSettings;
use std::sync::Arc;
use thiserror::Error;
use weir_api::program::ProgramRegistry;
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

/// Runs a JobManager until the process is killed. Prints one line with its addresses
/// (`JobManager rpc=<addr> rest=<addr>`) once it serves.
pub fn run_jobmanager(settings: JobManagerSettings, registry: ProgramRegistry) -> Result<(), JobManagerError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("jm")
        .build()
        .map_err(JobManagerError::Runtime)?;
    runtime.block_on(serve(settings, registry))
}

async fn serve(settings: JobManagerSettings, registry: ProgramRegistry) -> Result<(), JobManagerError> {
    let rpc_bind = format!("{}:{}", settings.host, settings.rpc_port);
    let rpc_listener = tokio::net::TcpListener::bind(&rpc_bind)
        .await
        .map_err(|source| JobManagerError::Bind {
            what: "RPC server",
            address: rpc_bind.clone(),
            source,
        })?;
    let rpc_addr = rpc_listener.local_addr().map_err(|source| JobManagerError::Bind {
        what: "RPC server",
        address: rpc_bind,
        source,
    })?;
    let rest_bind = format!("{}:{}", settings.rest_address, settings.rest_port);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let jm = Arc::new(JobManager::new(settings, registry, tx));
    let rest = weir_rest::RestServerHandle::start(rest_bind.clone(), Arc::new(JobManagerRest::new(jm.clone())))
        .await
        .map_err(|source| JobManagerError::Bind {
            what: "REST server",
            address: rest_bind,
            source,
        })?;
    println!("JobManager rpc={} rest={}", rpc_addr, rest.local_addr());
    let clients = Clients::default();
    tokio::spawn(run_actions(jm.clone(), clients.clone(), rx));
    tokio::spawn(run_heartbeats(jm.clone(), clients));
    tokio::spawn(run_ticker(jm.clone()));
    let service = JobManagerRpc::new(jm);
    let result = tonic::transport::Server::builder()
        .add_service(ResourceManagerServer::new(service.clone()))
        .add_service(JobMasterGatewayServer::new(service))
        .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(rpc_listener))
        .await
        .map_err(|e| JobManagerError::Rpc(e.to_string()));
    drop(rest);
    result
}
