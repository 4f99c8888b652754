//! The `TaskExecutorGateway` RPC service: how JobMasters deploy, cancel and release.
//! Job-scoped requests must carry the fencing token of the JobMaster that deployed the
//! job ([`crate::fencing`]).

use crate::executor::TaskExecutor;
use std::sync::Arc;
use tonic::{Request, Response, Status};
use weir_rpc::task_executor_gateway_server::TaskExecutorGateway;
use weir_rpc::{
    Ack, CancelTaskRequest, HeartbeatResponse, JobManagerHeartbeat, NotifyCheckpointRequest, QueryMetricsRequest,
    QueryMetricsResponse, ReadLogFileRequest, ReadLogFileResponse, ReleaseJobRequest, ReleasePartitionsRequest,
    SubmitTaskResponse, TaskDeploymentDescriptor, TriggerCheckpointRequest, WatchEvent, WatchRequest,
};
use weir_runtime::task::mailbox::TaskMail;

/// A refused job-scoped request: the peer is not the JobMaster that deployed the job.
fn refused(e: crate::fencing::FencingError) -> Status {
    tracing::warn!("refused a job-scoped request: {e}");
    Status::permission_denied(e.to_string())
}

/// Serves the gateway over a [`TaskExecutor`].
pub struct TaskExecutorService {
    executor: Arc<TaskExecutor>,
}

impl TaskExecutorService {
    /// The service of `executor`.
    pub fn new(executor: Arc<TaskExecutor>) -> Self {
        Self { executor }
    }
}

#[tonic::async_trait]
impl TaskExecutorGateway for TaskExecutorService {
    async fn submit_task(
        &self,
        request: Request<TaskDeploymentDescriptor>,
    ) -> Result<Response<SubmitTaskResponse>, Status> {
        let tdd = request.into_inner();
        let executor = self.executor.clone();
        let result = tokio::task::spawn_blocking(move || executor.submit(tdd))
            .await
            .map_err(|e| Status::internal(format!("deployment panicked: {e}")))?;
        Ok(Response::new(match result {
            Ok(()) => SubmitTaskResponse {
                accepted: true,
                rejection_reason: String::new(),
            },
            Err(reason) => SubmitTaskResponse {
                accepted: false,
                rejection_reason: reason,
            },
        }))
    }

    async fn cancel_task(&self, request: Request<CancelTaskRequest>) -> Result<Response<Ack>, Status> {
        let r = request.into_inner();
        self.executor
            .check_attempt_fencing(&r.attempt_id, &r.job_master_id)
            .map_err(refused)?;
        self.executor.cancel(&r.attempt_id);
        Ok(Response::new(Ack {}))
    }

    async fn release_job(&self, request: Request<ReleaseJobRequest>) -> Result<Response<Ack>, Status> {
        let r = request.into_inner();
        self.executor
            .check_job_fencing(&r.job_id, &r.job_master_id)
            .map_err(refused)?;
        let executor = self.executor.clone();
        tokio::task::spawn_blocking(move || executor.release_job(&r.job_id, r.below_generation, r.keep_local_state))
            .await
            .map_err(|e| Status::internal(format!("release panicked: {e}")))?;
        Ok(Response::new(Ack {}))
    }

    async fn release_partitions(&self, request: Request<ReleasePartitionsRequest>) -> Result<Response<Ack>, Status> {
        let r = request.into_inner();
        self.executor
            .check_job_fencing(&r.job_id, &r.job_master_id)
            .map_err(refused)?;
        let executor = self.executor.clone();
        tokio::task::spawn_blocking(move || executor.release_partitions(&r.job_id, &r.partitions))
            .await
            .map_err(|e| Status::internal(format!("release panicked: {e}")))?;
        Ok(Response::new(Ack {}))
    }

    type WatchStream = tokio_stream::Pending<Result<WatchEvent, Status>>;

    async fn watch(&self, _request: Request<WatchRequest>) -> Result<Response<Self::WatchStream>, Status> {
        Ok(Response::new(tokio_stream::pending()))
    }

    async fn read_log_file(
        &self,
        request: Request<ReadLogFileRequest>,
    ) -> Result<Response<ReadLogFileResponse>, Status> {
        let r = request.into_inner();
        let files: Vec<_> = self.executor.settings().log_file.iter().cloned().collect();
        let read =
            tokio::task::spawn_blocking(move || crate::log_files::read_chunk(&files, &r.name, r.offset, r.max_bytes))
                .await
                .map_err(|e| Status::internal(format!("reading the log file stopped: {e}")))?;
        read.map(Response::new)
            .map_err(|e| Status::internal(format!("cannot read the log file: {e}")))
    }

    async fn query_metrics(
        &self,
        _request: Request<QueryMetricsRequest>,
    ) -> Result<Response<QueryMetricsResponse>, Status> {
        Ok(Response::new(QueryMetricsResponse {
            task_metrics: self.executor.metrics_report(),
        }))
    }

    async fn heartbeat(&self, _request: Request<JobManagerHeartbeat>) -> Result<Response<HeartbeatResponse>, Status> {
        Ok(Response::new(HeartbeatResponse { known: true }))
    }

    async fn trigger_checkpoint(&self, request: Request<TriggerCheckpointRequest>) -> Result<Response<Ack>, Status> {
        let r = request.into_inner();
        self.executor
            .check_attempt_fencing(&r.attempt_id, &r.job_master_id)
            .map_err(refused)?;
        let wire = weir_rpc::convert::WireOptions {
            snapshot_type: &r.snapshot_type,
            mode: &r.mode,
            alignment: &r.alignment,
            aligned_timeout_ms: r.aligned_timeout_ms,
        };
        let barrier = weir_rpc::convert::barrier_from_wire(r.checkpoint_id, r.timestamp, wire)
            .map_err(Status::invalid_argument)?;
        let mail = if barrier.options.snapshot_type == weir_core::SnapshotType::SyncSavepoint {
            TaskMail::StopWithSavepoint {
                barrier,
                drain: r.drain,
            }
        } else {
            TaskMail::TriggerCheckpoint(barrier)
        };
        if !self.executor.send_mail(&r.attempt_id, mail) {
            return Err(Status::not_found(format!(
                "task {} of job {} is not running on this TaskManager",
                r.attempt_id, r.job_id
            )));
        }
        Ok(Response::new(Ack {}))
    }

    async fn notify_checkpoint(&self, request: Request<NotifyCheckpointRequest>) -> Result<Response<Ack>, Status> {
        let r = request.into_inner();
        let mail = if r.completed {
            TaskMail::NotifyCheckpointComplete(r.checkpoint_id)
        } else {
            TaskMail::NotifyCheckpointAborted(r.checkpoint_id)
        };
        self.executor
            .check_job_fencing(&r.job_id, &r.job_master_id)
            .map_err(refused)?;
        for attempt in &r.attempt_ids {
            self.executor
                .check_attempt_fencing(attempt, &r.job_master_id)
                .map_err(refused)?;
        }
        for attempt in &r.attempt_ids {
            // A task that finished or failed meanwhile has nothing to commit or abort.
            self.executor.send_mail(attempt, mail);
        }
        Ok(Response::new(Ack {}))
    }
}
