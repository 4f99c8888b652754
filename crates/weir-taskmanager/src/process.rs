//! Starting a TaskManager process: network environment and data server, RPC server,
//! registration, report delivery.

use crate::error::TaskManagerError;
use crate::executor::TaskExecutor;
use crate::registration::{run_registration, run_reporter};
use crate::rpc_service::TaskExecutorService;
use crate::settings::TaskManagerSettings;
use std::sync::Arc;
use weir_api::program::ProgramRegistry;
use weir_rpc::task_executor_gateway_server::TaskExecutorGatewayServer;
use weir_runtime::network::NetworkEnvironment;

/// Runs a TaskManager until the process is killed. Prints one line with its addresses
/// (`TaskManager <id> rpc=<addr> data=<addr>`) once it serves.
pub fn run_taskmanager(settings: TaskManagerSettings, registry: ProgramRegistry) -> Result<(), TaskManagerError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("tm-rpc")
        .build()
        .map_err(TaskManagerError::Runtime)?;
    runtime.block_on(serve(settings, registry))
}

async fn serve(settings: TaskManagerSettings, registry: ProgramRegistry) -> Result<(), TaskManagerError> {
    let network = NetworkEnvironment::new(settings.network.clone());
    let data_bind = format!("{}:{}", settings.host, settings.data_port);
    let data_addr = network.start_data_server(&data_bind)?;
    let rpc_bind = format!("{}:{}", settings.host, settings.rpc_port);
    let listener = tokio::net::TcpListener::bind(&rpc_bind)
        .await
        .map_err(|source| TaskManagerError::Bind {
            what: "RPC server",
            address: rpc_bind.clone(),
            source,
        })?;
    let rpc_addr = listener.local_addr().map_err(|source| TaskManagerError::Bind {
        what: "RPC server",
        address: rpc_bind,
        source,
    })?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let executor = TaskExecutor::new(settings.clone(), Arc::new(registry), network, tx);
    println!(
        "TaskManager {} rpc={} data={} slots={}",
        settings.resource_id, rpc_addr, data_addr, settings.num_slots
    );
    tokio::spawn(run_reporter(settings.jobmanager_rpc.clone(), rx));
    tokio::spawn(run_registration(
        executor.clone(),
        rpc_addr.to_string(),
        data_addr.to_string(),
    ));
    tonic::transport::Server::builder()
        .add_service(TaskExecutorGatewayServer::new(TaskExecutorService::new(executor)))
        .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
        .await
        .map_err(|e| TaskManagerError::Rpc(e.to_string()))
}
