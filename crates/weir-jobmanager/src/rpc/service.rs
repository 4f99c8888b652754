//! The JobManager's gRPC services: `ResourceManager` (registration, heartbeats) and
//! `JobMasterGateway` (task state reports, checkpoint reports, collect sink batches,
//! each refused without the job's JobMaster fencing token).

use crate::coordination::collect_coordinator::{CollectError, OfferOutcome};
use crate::coordination::collect_results::CollectBatchRefused;
use crate::job_master::{AttemptMetrics, MetricsReport, OperatorMetrics};
use crate::jobmanager::JobManager;
use crate::resource_manager::peer_validation::{
    check_registration, sanitize_logs, sanitize_network, sanitize_process, sanitize_task_metrics, ReportProblem,
};
use crate::resource_manager::slot_table::{HeartbeatOutcome, TaskManagerRegistration, TaskManagerStatus};
use std::sync::Arc;
use tonic::{Request, Response, Status};
use weir_core::ids::JobId;
use weir_graph::ExecutionState;
use weir_rpc::job_master_gateway_server::JobMasterGateway;
use weir_rpc::resource_manager_server::ResourceManager;
use weir_rpc::{
    Ack, HeartbeatResponse, RegisterTaskExecutorRequest, RegisterTaskExecutorResponse, TaskExecutionState,
    TaskExecutorHeartbeat, TaskMetricsReport,
};

/// Shared state files one checkpoint acknowledgement may name (a subtask's RocksDB
/// stores hold a few hundred at most).
const MAX_SHARED_FILES_PER_ACK: usize = 100_000;

/// Serves both services over the JobManager core.
#[derive(Clone)]
pub struct JobManagerRpc {
    jm: Arc<JobManager>,
}

impl JobManagerRpc {
    /// The services of `jm`.
    pub fn new(jm: Arc<JobManager>) -> Self {
        Self { jm }
    }

    /// Refuses `what` (a report of job `job_id`) unless it carries the fencing token of
    /// the job's JobMaster, which only the TaskManagers it deployed to were given (as
    /// Flink fences `JobMasterGateway` calls by `JobMasterId`). A report of a job this
    /// JobManager does not know passes: it changes nothing.
    fn check_fencing(&self, job_id: &str, token: &str, what: &str) -> Result<(), Status> {
        let expected = self.jm.job_master_id(job_id);
        if expected.is_empty() || expected == token {
            return Ok(());
        }
        tracing::warn!("refused a {what} of job {job_id} without its JobMaster's fencing token (forged or stale)");
        Err(Status::permission_denied(format!(
            "{what} of job {job_id} refused: it does not carry the fencing token of the job's JobMaster"
        )))
    }
}

/// Parses Flink's execution state names.
pub fn parse_execution_state(s: &str) -> Option<ExecutionState> {
    ExecutionState::ALL.into_iter().find(|st| st.as_str() == s)
}

/// Hands the live counters a TaskManager reported (in a heartbeat or an answer to the
/// metric fetcher) to their JobMasters, after bounding them; what was implausible is
/// added to `problems`. Reports of unknown jobs or attempts are dropped.
pub(crate) fn accept_live_task_metrics(
    jm: &JobManager,
    reports: Vec<TaskMetricsReport>,
    problems: &mut Vec<ReportProblem>,
) {
    for mut m in reports {
        sanitize_task_metrics(&mut m, problems);
        let Some(job) = JobId::parse(&m.job_id) else { continue };
        jm.task_metrics(
            job,
            &m.attempt_id,
            AttemptMetrics {
                records_in: m.records_in,
                records_out: m.records_out,
                busy_ms: m.busy_ms,
                idle_ms: m.idle_ms,
                backpressured_ms: m.backpressured_ms,
                bytes_in: m.bytes_in,
                bytes_out: m.bytes_out,
                input_watermark: m.input_watermark,
                output_watermark: m.output_watermark,
                in_pool_usage_permille: m.in_pool_usage_permille.min(1000),
                out_pool_usage_permille: m.out_pool_usage_permille.min(1000),
                input_watermarks: [m.input1_watermark, m.input2_watermark],
                operators: m.operators.into_iter().map(OperatorMetrics::from_report).collect(),
            },
            MetricsReport::Live,
        );
    }
}

#[tonic::async_trait]
impl ResourceManager for JobManagerRpc {
    async fn register_task_executor(
        &self,
        request: Request<RegisterTaskExecutorRequest>,
    ) -> Result<Response<RegisterTaskExecutorResponse>, Status> {
        let r = request.into_inner();
        let interval = self.jm.settings.heartbeat_interval.as_millis() as u64;
        let timeout = self.jm.settings.heartbeat_timeout.as_millis() as u64;
        let binary = self.jm.binary_identity();
        if let Err(refused) = check_registration(&r, &binary, self.jm.settings.max_slots_per_taskmanager) {
            // The operator's log names what was expected; the peer is not told.
            tracing::warn!(
                "TaskManager registration from {:.64} at {:.256} refused: {refused} (this JobManager's binary: {binary})",
                r.resource_id,
                r.rpc_address,
            );
            return Ok(Response::new(RegisterTaskExecutorResponse {
                accepted: false,
                rejection_reason: refused.to_string(),
                heartbeat_interval_ms: interval,
                heartbeat_timeout_ms: timeout,
                instance_id: String::new(),
            }));
        }
        tracing::info!(
            "TaskManager {} registered with {} slots ({})",
            r.resource_id,
            r.num_slots,
            r.rpc_address
        );
        let instance_id = self.jm.register_taskmanager(TaskManagerRegistration {
            resource_id: r.resource_id,
            rpc_address: r.rpc_address,
            data_address: r.data_address,
            num_slots: r.num_slots,
            memory: r.memory.unwrap_or_default(),
            hardware: r.hardware.unwrap_or_default(),
        });
        Ok(Response::new(RegisterTaskExecutorResponse {
            accepted: true,
            rejection_reason: String::new(),
            heartbeat_interval_ms: interval,
            heartbeat_timeout_ms: timeout,
            instance_id,
        }))
    }

    async fn heartbeat(&self, request: Request<TaskExecutorHeartbeat>) -> Result<Response<HeartbeatResponse>, Status> {
        let hb = request.into_inner();
        let mut problems = Vec::new();
        let status = TaskManagerStatus {
            process: hb.process.map(|p| sanitize_process(p, &mut problems)),
            network: hb.network.and_then(|n| sanitize_network(n, &mut problems)),
            logs: sanitize_logs(hb.logs, &mut problems),
        };
        let outcome = self.jm.taskmanager_heartbeat(&hb.resource_id, &hb.instance_id, status);
        if outcome == HeartbeatOutcome::WrongInstance {
            tracing::warn!(
                "heartbeat for TaskManager {:.64} ignored: it does not carry the instance id of its live registration",
                hb.resource_id
            );
        }
        let known = outcome == HeartbeatOutcome::Accepted;
        if known {
            accept_live_task_metrics(&self.jm, hb.task_metrics, &mut problems);
        }
        if known && !problems.is_empty() {
            let reasons: Vec<String> = problems.iter().take(8).map(ToString::to_string).collect();
            tracing::warn!(
                "heartbeat of TaskManager {}: {} implausible values not believed: {}",
                hb.resource_id,
                problems.len(),
                reasons.join("; ")
            );
        }
        Ok(Response::new(HeartbeatResponse { known }))
    }
}

#[tonic::async_trait]
impl JobMasterGateway for JobManagerRpc {
    async fn update_task_execution_state(&self, request: Request<TaskExecutionState>) -> Result<Response<Ack>, Status> {
        let mut r = request.into_inner();
        let job =
            JobId::parse(&r.job_id).ok_or_else(|| Status::invalid_argument(format!("bad job id '{}'", r.job_id)))?;
        let state = parse_execution_state(&r.state)
            .ok_or_else(|| Status::invalid_argument(format!("unknown execution state '{}'", r.state)))?;
        self.check_fencing(&r.job_id, &r.job_master_id, "task state report")?;
        if state == ExecutionState::Finished {
            self.jm.task_metrics(
                job,
                &r.attempt_id,
                AttemptMetrics {
                    records_in: r.records_in,
                    records_out: r.records_out,
                    busy_ms: r.busy_ms,
                    idle_ms: r.idle_ms,
                    backpressured_ms: r.backpressured_ms,
                    bytes_in: r.bytes_in,
                    bytes_out: r.bytes_out,
                    input_watermark: r.input_watermark,
                    output_watermark: r.output_watermark,
                    // A finished task holds no buffers.
                    in_pool_usage_permille: 0,
                    out_pool_usage_permille: 0,
                    input_watermarks: [r.input1_watermark, r.input2_watermark],
                    operators: std::mem::take(&mut r.operators)
                        .into_iter()
                        .map(OperatorMetrics::from_report)
                        .collect(),
                },
                MetricsReport::Final,
            );
        }
        if state == ExecutionState::Finished && !r.result_partition_bytes.is_empty() {
            let partitions = std::mem::take(&mut r.result_partition_bytes)
                .into_iter()
                .map(|p| (p.job_edge, p.subpartition_bytes))
                .collect();
            self.jm.result_partition_bytes(job, &r.attempt_id, partitions);
        }
        if let (ExecutionState::Failed, Some(missing)) = (state, r.missing_partition.as_ref()) {
            self.jm.missing_partition(job, &r.attempt_id, missing);
        }
        let failure = (state == ExecutionState::Failed).then_some((r.failure_name, r.failure_message));
        self.jm.task_state(job, &r.attempt_id, state, failure);
        Ok(Response::new(Ack {}))
    }

    async fn acknowledge_checkpoint(
        &self,
        request: Request<weir_rpc::AcknowledgeCheckpointRequest>,
    ) -> Result<Response<Ack>, Status> {
        let r = request.into_inner();
        let job =
            JobId::parse(&r.job_id).ok_or_else(|| Status::invalid_argument(format!("bad job id '{}'", r.job_id)))?;
        self.check_fencing(&r.job_id, &r.job_master_id, "checkpoint acknowledgement")?;
        let handle = match &r.handle {
            Some(h) => Some(h.to_domain().ok_or_else(|| {
                Status::invalid_argument(format!(
                    "checkpoint {} acknowledged with an empty state handle",
                    r.checkpoint_id
                ))
            })?),
            None => None,
        };
        if r.shared_state.len() > MAX_SHARED_FILES_PER_ACK {
            return Err(Status::invalid_argument(format!(
                "checkpoint {} acknowledged with {} shared state files (at most {MAX_SHARED_FILES_PER_ACK})",
                r.checkpoint_id,
                r.shared_state.len()
            )));
        }
        let ack = weir_checkpoint::SnapshotReport {
            checkpoint_id: r.checkpoint_id,
            handle,
            state_size: r.state_size,
            sync_duration_ms: r.sync_duration_ms,
            async_duration_ms: r.async_duration_ms,
            alignment_duration_ms: r.alignment_duration_ms,
            persisted_data: r.persisted_data,
            union_state: r.union_state,
            shared_state: r
                .shared_state
                .iter()
                .map(|f| weir_core::checkpoint::SharedStateFile {
                    path: f.path.clone(),
                    size: f.size,
                })
                .collect(),
            checkpointed_size: r.checkpointed_size,
        };
        self.jm.acknowledge_checkpoint(job, &r.attempt_id, ack);
        Ok(Response::new(Ack {}))
    }

    async fn decline_checkpoint(
        &self,
        request: Request<weir_rpc::DeclineCheckpointRequest>,
    ) -> Result<Response<Ack>, Status> {
        let r = request.into_inner();
        let job =
            JobId::parse(&r.job_id).ok_or_else(|| Status::invalid_argument(format!("bad job id '{}'", r.job_id)))?;
        self.check_fencing(&r.job_id, &r.job_master_id, "checkpoint decline")?;
        self.jm
            .decline_checkpoint(job, &r.attempt_id, r.checkpoint_id, r.reason);
        Ok(Response::new(Ack {}))
    }

    async fn send_collect_batch(
        &self,
        request: Request<weir_rpc::CollectBatch>,
    ) -> Result<Response<weir_rpc::CollectBatchResponse>, Status> {
        let r = request.into_inner();
        let job =
            JobId::parse(&r.job_id).ok_or_else(|| Status::invalid_argument(format!("bad job id '{}'", r.job_id)))?;
        if !(r.operator_id.len() == 32 && r.operator_id.bytes().all(|b| b.is_ascii_hexdigit())) {
            return Err(Status::invalid_argument(format!("bad operator id '{}'", r.operator_id)));
        }
        self.check_fencing(&r.job_id, &r.job_master_id, "collect batch")?;
        let operator = r.operator_id.to_ascii_lowercase();
        let offer = weir_core::collect_batch::CollectBatch {
            subtask_index: r.subtask_index,
            parallelism: r.parallelism,
            attempt_number: r.attempt_number,
            offset: r.offset,
            rows: r.rows,
            end_of_results: r.end_of_results,
            buffer_bytes: r.buffer_bytes,
        };
        match self.jm.offer_collect_batch(job, &operator, &r.attempt_id, offer) {
            Ok(outcome) => Ok(Response::new(weir_rpc::CollectBatchResponse {
                accepted: outcome == OfferOutcome::Accepted,
            })),
            Err(e @ CollectBatchRefused::Coordinator(CollectError::InvalidBatch { .. })) => {
                Err(Status::invalid_argument(e.to_string()))
            }
            Err(e) => Err(Status::failed_precondition(e.to_string())),
        }
    }
}
