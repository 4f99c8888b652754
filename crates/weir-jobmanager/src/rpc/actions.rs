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
use weir_rpc::{CancelTaskRequest, JobManagerHeartbeat, ReleaseJobRequest, ReleasePartitionsRequest, WatchRequest};

/// TaskExecutor clients by RPC address.
#[derive(Default, Clone)]
pub struct Clients {
    clients: Arc<std::sync::Mutex<HashMap<String, TaskExecutorGatewayClient<Channel>>>>,
    /// Mutual TLS of every connection, when internal SSL is on.
    tls: Option<Arc<weir_security::InternalTls>>,
}

impl Clients {
    /// No clients yet; each will connect with `tls` when given.
    pub fn new(tls: Option<Arc<weir_security::InternalTls>>) -> Self {
        Self {
            clients: Arc::default(),
            tls,
        }
    }

    /// The client of `address` (connected lazily).
    pub fn get(&self, address: &str) -> Option<TaskExecutorGatewayClient<Channel>> {
        let mut map = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = map.get(address) {
            return Some(c.clone());
        }
        let channel = weir_rpc::tls::endpoint(address, self.tls.as_deref(), Duration::from_secs(2))
            .ok()?
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
                Some(mut c) => match c.submit_task(*tdd).await {
                    Ok(r) => Ok(r.into_inner()),
                    Err(status) => {
                        if status.code() == tonic::Code::Unavailable {
                            // Its RPC endpoint refuses connections: the TaskManager is gone.
                            // Declare it lost first, so the restart does not pick its slots.
                            clients.remove(&rpc_address);
                            let lost = jm
                                .lock()
                                .slots
                                .iter()
                                .find(|t| t.registration.rpc_address == rpc_address)
                                .map(|t| t.registration.resource_id.clone());
                            if let Some(id) = lost {
                                jm.taskmanager_lost(
                                    &id,
                                    &format!("TaskManager with id {id} is no longer reachable: {}", status.message()),
                                );
                            }
                        }
                        Err(status.to_string())
                    }
                },
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
            job_master_id,
        } => {
            if let Some(mut c) = clients.get(&rpc_address) {
                let request = CancelTaskRequest {
                    job_id: String::new(),
                    attempt_id,
                    job_master_id,
                };
                // An unreachable TaskManager is lost soon; its tasks fail over then.
                if let Err(status) = c.cancel_task(request).await {
                    tracing::warn!(taskmanager = %rpc_address, "cannot cancel a task: {}", status.message());
                }
            }
        }
        Action::TriggerCheckpoint {
            rpc_address,
            job_id,
            attempt_id,
            barrier,
            drain,
        } => {
            let Some(mut c) = clients.get(&rpc_address) else { return };
            let request = weir_rpc::TriggerCheckpointRequest {
                job_id: job_id.clone(),
                attempt_id: attempt_id.clone(),
                checkpoint_id: barrier.id,
                timestamp: barrier.timestamp,
                snapshot_type: barrier.options.snapshot_type.flink_name().to_string(),
                mode: barrier.options.mode.flink_name().to_string(),
                drain,
                alignment: barrier.options.alignment.flink_name().to_string(),
                aligned_timeout_ms: barrier.options.aligned_timeout_ms,
                job_master_id: jm.job_master_id(&job_id),
            };
            if let Err(status) = c.trigger_checkpoint(request).await {
                if let Some(job) = JobId::parse(&job_id) {
                    jm.decline_checkpoint(
                        job,
                        &attempt_id,
                        barrier.id,
                        format!("{}: {}", crate::job_master::TRIGGER_NOT_DELIVERED, status.message()),
                    );
                }
            }
        }
        Action::NotifyCheckpoint {
            rpc_address,
            job_id,
            attempt_ids,
            checkpoint_id,
            completed,
        } => {
            let Some(mut c) = clients.get(&rpc_address) else { return };
            let request = weir_rpc::NotifyCheckpointRequest {
                job_master_id: jm.job_master_id(&job_id),
                job_id,
                attempt_ids,
                checkpoint_id,
                completed,
            };
            if let Err(status) = c.notify_checkpoint(request).await {
                tracing::warn!(
                    "checkpoint {checkpoint_id} notification to {rpc_address} failed: {}",
                    status.message()
                );
            }
        }
        Action::WriteCheckpointMetadata {
            job_id,
            checkpoint_id,
            metadata,
            target,
            savepoint,
        } => {
            let result = match target {
                None => Ok(None),
                Some(location) => tokio::task::spawn_blocking(move || {
                    let written = if savepoint {
                        weir_checkpoint::write_savepoint(&location, &metadata)
                    } else {
                        weir_checkpoint::write_metadata(&location, &metadata)
                    };
                    written.map(Some).map_err(|e| e.to_string())
                })
                .await
                .unwrap_or_else(|e| Err(format!("metadata writer panicked: {e}"))),
            };
            jm.checkpoint_metadata_written(job_id, checkpoint_id, result);
        }
        Action::DiscardCheckpoint { location } => {
            let outcome = tokio::task::spawn_blocking(move || {
                let r = weir_checkpoint::discard(&location);
                (location, r)
            })
            .await;
            match outcome {
                Ok((_, Ok(()))) => {}
                Ok((location, Err(e))) => tracing::warn!("cannot discard checkpoint {location}: {e}"),
                Err(e) => tracing::warn!("checkpoint discard panicked: {e}"),
            }
            crate::checkpoint::discards::finished();
        }
        Action::ReleasePartitions {
            rpc_address,
            job_id,
            partitions,
        } => {
            if let Some(mut c) = clients.get(&rpc_address) {
                let request = ReleasePartitionsRequest {
                    job_id: job_id.clone(),
                    partitions,
                    job_master_id: jm.job_master_id(&job_id),
                };
                // A TaskManager that cannot be told keeps them until the job's release
                // (or its loss): their memory and files are not lost, only held longer.
                if let Err(status) = c.release_partitions(request).await {
                    tracing::warn!(job = %job_id, taskmanager = %rpc_address, "cannot release blocking partitions: {}", status.message());
                }
            }
        }
        Action::ReleaseJob {
            job_id,
            below_generation,
            rpc_addresses,
            keep_local_state,
        } => {
            let job_master_id = jm.job_master_id(&job_id);
            for a in rpc_addresses {
                if let Some(mut c) = clients.get(&a) {
                    let request = ReleaseJobRequest {
                        job_id: job_id.clone(),
                        below_generation,
                        job_master_id: job_master_id.clone(),
                        keep_local_state,
                    };
                    // A TaskManager that cannot be told is lost soon and frees everything.
                    if let Err(status) = c.release_job(request).await {
                        tracing::warn!(job = %job_id, taskmanager = %a, "cannot release the job: {}", status.message());
                    }
                }
            }
        }
    }
}

/// (resource id, RPC address) of every registered TaskManager.
pub(crate) fn registered(jm: &JobManager) -> Vec<(String, String)> {
    jm.lock()
        .slots
        .iter()
        .map(|t| (t.registration.resource_id.clone(), t.registration.rpc_address.clone()))
        .collect()
}

/// Heartbeats every registered TaskManager each interval; one whose RPC endpoint
/// refuses connections is lost at once.
pub async fn run_heartbeats(jm: Arc<JobManager>, clients: Clients) {
    let interval = jm.settings.heartbeat_interval;
    loop {
        tokio::time::sleep(interval).await;
        for (id, address) in registered(&jm) {
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

/// Holds a `Watch` stream open to every registered TaskManager. The stream never
/// carries a message: it ends only when its connection breaks, which for a killed
/// TaskManager process is at once (the kernel closes its sockets), so the TaskManager is
/// declared lost without waiting for a heartbeat (as Flink's RPC system watches its
/// peers' connections).
pub async fn run_watches(jm: Arc<JobManager>, clients: Clients) {
    let mut watched: std::collections::HashSet<(String, String)> = std::collections::HashSet::new();
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<(String, String)>();
    loop {
        while let Ok(ended) = done_rx.try_recv() {
            watched.remove(&ended);
        }
        for tm in registered(&jm) {
            if watched.insert(tm.clone()) {
                let (jm, clients, done) = (jm.clone(), clients.clone(), done_tx.clone());
                tokio::spawn(async move {
                    watch(&jm, &clients, &tm.0, &tm.1).await;
                    // The receiver lives as long as this loop, which never ends.
                    done.send(tm).ok();
                });
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Watches one TaskManager until its connection breaks, then declares it lost if it is
/// still registered at that address.
async fn watch(jm: &JobManager, clients: &Clients, id: &str, address: &str) {
    let Some(mut client) = clients.get(address) else { return };
    let broken = match client
        .watch(WatchRequest {
            resource_id: id.to_string(),
        })
        .await
    {
        Ok(response) => {
            let mut stream = response.into_inner();
            loop {
                match stream.message().await {
                    Ok(Some(_)) => continue,
                    Ok(None) => break "the TaskManager closed its connection".to_string(),
                    Err(status) => break status.message().to_string(),
                }
            }
        }
        Err(status) if status.code() == tonic::Code::Unavailable => status.message().to_string(),
        // A TaskManager without the call: the heartbeats still watch it.
        Err(_) => return,
    };
    let still_registered = registered(jm).iter().any(|(i, a)| i == id && a == address);
    if still_registered {
        clients.remove(address);
        jm.taskmanager_lost(
            id,
            &format!("The connection to TaskManager with id {id} broke: {broken}"),
        );
    }
}

/// Runs the JobManager's periodic decisions (heartbeat expiry, slot request timeouts,
/// due restarts) every 100 ms.
pub async fn run_ticker(jm: Arc<JobManager>) {
    const PERIOD: Duration = Duration::from_millis(100);
    loop {
        // A pending restart is carried out when due, not at the next period.
        let sleep = jm.next_restart_in().map_or(PERIOD, |due| due.min(PERIOD));
        tokio::time::sleep(sleep).await;
        jm.tick();
    }
}
