//! The TaskManager's operator event gateway: a task's operators send their events to
//! the JobMaster over `JobMasterGateway` (one lazily connected client per
//! TaskManager); a task thread blocks on the call on the TaskManager's runtime. A
//! transient failure (JobManager unreachable) is retried like a state report.

use crate::attempt_ref::AttemptRef;
use crate::reporter::{is_permanent, MAX_ATTEMPTS, RETRY_DELAY};
use tonic::transport::Channel;
use weir_rpc::job_master_gateway_client::JobMasterGatewayClient;
use weir_rpc::CollectBatch;
use weir_runtime::operator::coordination::{CollectBatchEvent, OperatorEventGateway};

/// The client every task of this TaskManager shares.
#[derive(Clone)]
pub struct OperatorEventClient {
    client: JobMasterGatewayClient<Channel>,
    runtime: tokio::runtime::Handle,
}

impl OperatorEventClient {
    /// A client of the JobManager at `jobmanager_rpc`, on the current tokio runtime;
    /// `None` (logged) outside one or for an address that is not one.
    pub fn connect_lazy(jobmanager_rpc: &str, tls: Option<&weir_security::InternalTls>) -> Option<Self> {
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        match weir_rpc::tls::endpoint(jobmanager_rpc, tls, std::time::Duration::from_secs(2)) {
            Ok(e) => Some(Self {
                client: JobMasterGatewayClient::new(e.connect_lazy()),
                runtime,
            }),
            Err(e) => {
                tracing::error!("operator events cannot reach the JobManager at {jobmanager_rpc}: {e}");
                None
            }
        }
    }

    /// The gateway of one attempt.
    pub fn for_attempt(&self, attempt: AttemptRef) -> AttemptEventGateway {
        AttemptEventGateway {
            client: self.clone(),
            attempt,
        }
    }
}

/// Sends one attempt's operator events.
pub struct AttemptEventGateway {
    client: OperatorEventClient,
    attempt: AttemptRef,
}

impl OperatorEventGateway for AttemptEventGateway {
    fn send_collect_batch(&self, event: &CollectBatchEvent) -> Result<bool, String> {
        let batch = &event.batch;
        let request = CollectBatch {
            job_id: self.attempt.job_id.clone(),
            attempt_id: self.attempt.attempt_id.clone(),
            job_master_id: self.attempt.job_master_id.clone(),
            operator_id: event.operator_id.to_string(),
            subtask_index: batch.subtask_index,
            parallelism: batch.parallelism,
            attempt_number: batch.attempt_number,
            offset: batch.offset,
            rows: batch.rows.clone(),
            end_of_results: batch.end_of_results,
            buffer_bytes: batch.buffer_bytes,
        };
        let mut client = self.client.client.clone();
        self.client.runtime.block_on(async move {
            let mut last = None;
            for _ in 0..MAX_ATTEMPTS {
                match client.send_collect_batch(request.clone()).await {
                    Ok(r) => return Ok(r.into_inner().accepted),
                    Err(s) if is_permanent(s.code()) || s.code() == tonic::Code::FailedPrecondition => {
                        return Err(s.message().to_string())
                    }
                    Err(s) => {
                        last = Some(s);
                        tokio::time::sleep(RETRY_DELAY).await;
                    }
                }
            }
            Err(format!(
                "the JobManager did not take the collect batch: {}",
                last.map(|s| s.to_string()).unwrap_or_default()
            ))
        })
    }
}
