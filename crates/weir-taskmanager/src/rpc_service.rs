//! The `TaskExecutorGateway` RPC service: how JobMasters deploy, cancel and release.

use crate::executor::TaskExecutor;
use std::sync::Arc;
use tonic::{Request, Response, Status};
use weir_rpc::task_executor_gateway_server::TaskExecutorGateway;
use weir_rpc::{
    Ack, CancelTaskRequest, HeartbeatResponse, JobManagerHeartbeat, ReleaseJobRequest, SubmitTaskResponse,
    TaskDeploymentDescriptor,
};

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
        self.executor.cancel(&request.into_inner().attempt_id);
        Ok(Response::new(Ack {}))
    }

    async fn release_job(&self, request: Request<ReleaseJobRequest>) -> Result<Response<Ack>, Status> {
        let r = request.into_inner();
        let executor = self.executor.clone();
        tokio::task::spawn_blocking(move || executor.release_job(&r.job_id, r.below_generation))
            .await
            .map_err(|e| Status::internal(format!("release panicked: {e}")))?;
        Ok(Response::new(Ack {}))
    }

    async fn heartbeat(&self, _request: Request<JobManagerHeartbeat>) -> Result<Response<HeartbeatResponse>, Status> {
        Ok(Response::new(HeartbeatResponse { known: true }))
    }
}
