//! Registration with the ResourceManager and heartbeats.
//!
//! The TaskManager registers, then heartbeats every `heartbeat.interval` with the
//! instance id its registration was answered with (Flink's `InstanceID`; the
//! ResourceManager ignores a heartbeat without it) and its slot report, the live counters of its tasks, and its process metrics: CPU, memory and
//! threads sampled from `/proc/self`, its network buffer pool, and its log file. If the
//! JobManager does not know it (it restarted) it registers again; if the JobManager
//! cannot be reached for `heartbeat.timeout`, every task is cancelled and every slot
//! freed (the JobManager has failed them over) before registering again. Reports to
//! the JobMaster go through [`crate::reporter`].

use crate::executor::TaskExecutor;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::transport::Channel;
use weir_rpc::process::{log_file, ProcessSampler};
use weir_rpc::resource_manager_client::ResourceManagerClient;
use weir_rpc::{Hardware, RegisterTaskExecutorRequest, TaskExecutorHeartbeat};
use weir_security::InternalTls;

async fn try_connect(address: &str, tls: Option<&InternalTls>) -> Result<Channel, tonic::transport::Error> {
    weir_rpc::tls::endpoint(address, tls, Duration::from_secs(2))?
        .connect()
        .await
}

fn hardware() -> Hardware {
    let cpu_cores = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    let (physical, free) = meminfo();
    Hardware {
        cpu_cores,
        physical_memory: physical,
        free_memory: free,
    }
}

/// Total and available memory from /proc/meminfo, in bytes (0 when unknown).
fn meminfo() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map(|kib| kib * 1024)
            .unwrap_or(0)
    };
    (field("MemTotal:"), field("MemAvailable:"))
}

/// Registers and heartbeats forever.
pub async fn run_registration(executor: Arc<TaskExecutor>, rpc_address: String, data_address: String) {
    let settings = executor.settings().clone();
    let process = ProcessSampler::new();
    let mut unreachable = false;
    loop {
        let channel = match try_connect(&settings.jobmanager_rpc, settings.internal_tls.as_deref()).await {
            Ok(channel) => channel,
            Err(e) => {
                if !std::mem::replace(&mut unreachable, true) {
                    tracing::warn!("cannot connect to the JobManager at {}: {e:?}", settings.jobmanager_rpc);
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
                continue;
            }
        };
        unreachable = false;
        let mut client = ResourceManagerClient::new(channel);
        let request = RegisterTaskExecutorRequest {
            resource_id: settings.resource_id.clone(),
            rpc_address: rpc_address.clone(),
            data_address: data_address.clone(),
            num_slots: settings.num_slots,
            memory: Some(settings.memory),
            hardware: Some(hardware()),
            version: env!("CARGO_PKG_VERSION").to_string(),
            binary: executor.binary_identity(),
        };
        let instance_id = match client.register_task_executor(request).await {
            Ok(r) if r.get_ref().accepted => {
                tracing::info!("registered at ResourceManager {}", settings.jobmanager_rpc);
                r.into_inner().instance_id
            }
            Ok(r) => {
                tracing::error!("registration refused: {}", r.get_ref().rejection_reason);
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            Err(e) => {
                tracing::warn!("registration failed: {e}");
                tokio::time::sleep(Duration::from_millis(300)).await;
                continue;
            }
        };
        let mut last_ok = Instant::now();
        loop {
            tokio::time::sleep(settings.heartbeat_interval).await;
            let hb = TaskExecutorHeartbeat {
                resource_id: settings.resource_id.clone(),
                slots: executor.slot_report(),
                task_metrics: executor.metrics_report(),
                process: Some(process.sample()),
                network: Some(executor.network_memory()),
                logs: settings.log_file.as_deref().and_then(log_file).into_iter().collect(),
                instance_id: instance_id.clone(),
            };
            match client.heartbeat(hb).await {
                Ok(r) if r.get_ref().known => last_ok = Instant::now(),
                Ok(_) => {
                    tracing::warn!("the ResourceManager does not know this TaskManager; registering again");
                    executor.release_all();
                    break;
                }
                Err(e) => {
                    if last_ok.elapsed() > settings.heartbeat_timeout {
                        tracing::warn!(
                            "JobManager unreachable for {:?} ({e}); releasing all tasks",
                            settings.heartbeat_timeout
                        );
                        executor.release_all();
                        break;
                    }
                }
            }
        }
    }
}
