//! What a hostile peer without certificates sends: plaintext gRPC connections to a
//! cluster's RPC ports and the forged messages of the hostile-peer tests
//! (`tests/hostile_peers.rs`) and the red team (`examples/red_team/`), which includes
//! this file by path. Each message carries only what the REST API lists (job, attempt
//! and resource ids), never a secret the forger was not told.

use std::path::Path;
use std::time::Duration;

/// How long a forger waits for a connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A fencing token no JobMaster has.
pub const FORGED_TOKEN: &str = "00000000000000000000000000000000";

/// Runs `f` on a fresh single-threaded runtime (`None` when none can be built).
pub fn block_on<T>(f: impl std::future::Future<Output = T>) -> Option<T> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    Some(runtime.block_on(f))
}

/// A plaintext gRPC channel to `address`.
pub async fn channel(address: &str) -> Result<tonic::transport::Channel, Box<dyn std::error::Error + Send + Sync>> {
    Ok(weir_rpc::tls::endpoint(address, None, CONNECT_TIMEOUT)?
        .timeout(Duration::from_secs(10))
        .connect()
        .await?)
}

/// A registration of `slots` slots by a TaskManager that claims to run `binary`.
pub fn registration(
    resource_id: &str,
    rpc_address: &str,
    slots: u32,
    binary: String,
) -> weir_rpc::RegisterTaskExecutorRequest {
    weir_rpc::RegisterTaskExecutorRequest {
        resource_id: resource_id.into(),
        rpc_address: rpc_address.into(),
        data_address: "127.0.0.1:9".into(),
        num_slots: slots,
        version: env!("CARGO_PKG_VERSION").into(),
        binary,
        ..Default::default()
    }
}

/// What the stock `weir` binary says it is when it registers.
pub fn binary_identity() -> String {
    weir::programs::builtin_registry().identity()
}

/// A report that attempt `attempt` of job `job` FAILED.
pub fn failure_report(job: &str, attempt: &str) -> weir_rpc::TaskExecutionState {
    weir_rpc::TaskExecutionState {
        job_id: job.into(),
        attempt_id: attempt.into(),
        state: "FAILED".into(),
        failure_name: "Forged".into(),
        failure_message: "a forged failure".into(),
        job_master_id: FORGED_TOKEN.into(),
        ..Default::default()
    }
}

/// Attempt `attempt`'s acknowledgement of checkpoint 1 of job `job` with a state
/// handle naming `path`.
pub fn file_acknowledgement(job: &str, attempt: &str, path: &Path) -> weir_rpc::AcknowledgeCheckpointRequest {
    weir_rpc::AcknowledgeCheckpointRequest {
        job_id: job.into(),
        attempt_id: attempt.into(),
        checkpoint_id: 1,
        handle: Some(weir_rpc::StateHandle {
            kind: Some(weir_rpc::state_handle::Kind::File(weir_rpc::FileStateHandle {
                path: path.display().to_string(),
                size: 10,
            })),
        }),
        ..Default::default()
    }
}

/// A `ReleaseJob` of job `job` with a fencing token no JobMaster has.
pub fn release_job(job: &str) -> weir_rpc::ReleaseJobRequest {
    weir_rpc::ReleaseJobRequest {
        job_id: job.into(),
        below_generation: u32::MAX,
        job_master_id: FORGED_TOKEN.into(),
        keep_local_state: false,
    }
}

/// A `CancelTask` of attempt `attempt` of job `job` without a fencing token.
pub fn cancel_task(job: &str, attempt: &str) -> weir_rpc::CancelTaskRequest {
    weir_rpc::CancelTaskRequest {
        job_id: job.into(),
        attempt_id: attempt.into(),
        job_master_id: String::new(),
    }
}
