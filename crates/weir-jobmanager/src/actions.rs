//! Carries out the JobMasters' actions over RPC, and heartbeats TaskManagers so that a
//! dead one is noticed by connection loss as well as by heartbeat timeout.

use crate::job_master::Action;
use crate::jobmanager::JobManager;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use tonic::transport::Channel;
use weir_core::ids::JobId;
use weir_graph::ExecutionState;
use weir_rpc::task_executor_gateway_client::TaskExecutorGatewayClient;
use weir_rpc::{CancelTaskRequest, JobManagerHeartbeat, ReleaseJobRequest};

/// TaskExecutor clients by RPC address.
#[derive(Default, Clone)]
pub struct Clients {
    clients: Arc<std::sync::Mutex<HashMap<String, TaskExecutorGatewayClient<Channel>>>>,
}

impl Clients {
    /// The client of `address` (connected lazily).
    pub fn get(&self, address: &str) -> Option<TaskExecutorGatewayClient<Channel>> {
        let mut map = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = map.get(address) {
            return Some(c.clone());
        }
        let channel = Channel::from_shared(format!("http://{address}"))
            .ok()?
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(30))
            .connect_lazy();
        let client = TaskExecutorGatewayClient::new(channel);
        map.insert(address.to_string(), client.clone());
        Some(client)
    }

    /// Forgets a client (its TaskManager is gone).
    pub fn remove(&self, address: &str) {
        self.clients.lock().unwrap_or_else(|p| p.into_inner()).remove(address);
    }
}

/// Executes actions as they come.
pub async fn run_actions(jm: Arc<JobManager>, clients: Clients, mut rx: UnboundedReceiver<Vec<Action>>) {
    while let Some(batch) = rx.recv().await {
        for action in batch {
            let (jm, clients) = (jm.clone(), clients.clone());
            // Deployments of one batch go out concurrently; each reports its own failure.
            tokio::spawn(async move { execute(jm, clients, action).await });
        }
    }
}

async fn execute(jm: Arc<JobManager>, clients: Clients, action: Action) {
    match action {
        Action::Deploy { rpc_address, tdd } => {
            let (job, attempt) = (tdd.job_id.clone(), tdd.attempt_id.clone());
            let result = match clients.get(&rpc_address) {
                Some(mut c) => c
                    .submit_task(*tdd)
                    .await
                    .map(|r| r.into_inner())
                    .map_err(|e| e.to_string()),
                None => Err(format!("bad TaskManager address {rpc_address}")),
            };
            let failure = match result {
                Ok(r) if r.accepted => None,
                Ok(r) => Some(r.rejection_reason),
                Err(e) => Some(format!("could not deploy to {rpc_address}: {e}")),
            };
            if let (Some(reason), Some(job)) = (failure, JobId::parse(&job)) {
                jm.task_state(
                    job,
                    &attempt,
                    ExecutionState::Failed,
                    Some(("weir.runtime.TaskDeploymentException".into(), reason)),
                );
            }
        }
        Action::Cancel {
            rpc_address,
            attempt_id,
        } => {
            if let Some(mut c) = clients.get(&rpc_address) {
                let _ = c
                    .cancel_task(CancelTaskRequest {
                        job_id: String::new(),
                        attempt_id,
                    })
                    .await;
            }
        }
        Action::ReleaseJob {
            job_id,
            below_generation,
            rpc_addresses,
        } => {
            for a in rpc_addresses {
                if let Some(mut c) = clients.get(&a) {
                    let _ = c
                        .release_job(ReleaseJobRequest {
                            job_id: job_id.clone(),
                            below_generation,
                        })
                        .await;
                }
            }
        }
    }
}

/// Heartbeats every registered TaskManager each interval; one whose RPC endpoint
/// refuses connections is lost at once.
pub async fn run_heartbeats(jm: Arc<JobManager>, clients: Clients) {
    let interval = jm.settings.heartbeat_interval;
    loop {
        tokio::time::sleep(interval).await;
        let tms: Vec<(String, String)> = jm
            .lock()
            .slots
            .iter()
            .map(|t| (t.registration.resource_id.clone(), t.registration.rpc_address.clone()))
            .collect();
        for (id, address) in tms {
            let (jm, clients) = (jm.clone(), clients.clone());
            tokio::spawn(async move {
                let Some(mut c) = clients.get(&address) else { return };
                let hb = c.heartbeat(JobManagerHeartbeat {
                    jobmanager_id: String::new(),
                });
                match tokio::time::timeout(Duration::from_secs(5), hb).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(status)) if status.code() == tonic::Code::Unavailable => {
                        clients.remove(&address);
                        jm.taskmanager_lost(
                            &id,
                            &format!("TaskManager with id {id} is no longer reachable: {}", status.message()),
                        );
                    }
                    _ => {}
                }
            });
        }
    }
}

/// Runs the JobManager's periodic decisions (heartbeat expiry, slot request timeouts,
/// due restarts) every 100 ms.
pub async fn run_ticker(jm: Arc<JobManager>) {
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        jm.tick();
    }
}
