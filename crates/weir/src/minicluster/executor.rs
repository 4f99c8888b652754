//! The executor of the DataStream API on the MiniCluster (Flink's
//! `LocalExecutor`/`PerJobMiniClusterFactory`): a pipeline built in this process by
//! closures is registered under a fresh job id in the process-local table of
//! in-process programs ([`weir_api::in_process`]), then submitted under that id to a
//! MiniCluster, whose JobManager and TaskExecutors find its code by the id. The job
//! runs exactly as on a cluster (scheduling, restarts, checkpoints, batch, exception
//! history); a failed or cancelled job is an error carrying its root exception: the
//! failing task and its cause (a panic's message included).
//!
//! Invariants:
//! - the in-process program stays registered until the job has ended and, for a
//!   per-job cluster, the cluster has shut down;
//! - a per-job cluster has exactly the slots the job needs
//!   ([`MiniClusterSpec::for_job`]) and the environment's configuration options;
//! - a shared cluster ([`MiniClusterExecutor::on`]) is never shut down by the
//!   executor, and a job needing more slots than it has is refused before it is
//!   submitted.

use super::cluster::{MiniCluster, MiniClusterSpec};
use std::sync::Arc;
use std::time::Instant;
use weir_api::executor::{ExecutionError, JobExecutionResult, Pipeline, PipelineExecutor};
use weir_api::in_process::{InProcessProgram, IN_PROCESS_PROGRAM};
use weir_config::Configuration;
use weir_core::ids::JobId;
use weir_graph::{total_slots_required, JobGraph};
use weir_rest::{JobStatus, JobSubmitRequest};

/// Where the executor runs jobs.
enum Target {
    /// A MiniCluster started for each job, with this base configuration.
    PerJob(Configuration),
    /// One MiniCluster that outlives the jobs.
    Shared(Arc<MiniCluster>),
}

/// Runs pipelines on a MiniCluster.
pub struct MiniClusterExecutor {
    target: Target,
}

impl MiniClusterExecutor {
    /// Starts a MiniCluster for each job (Flink's per-job MiniCluster), configured by
    /// `config` overridden by the environment's configuration options.
    pub fn per_job(config: Configuration) -> Self {
        Self {
            target: Target::PerJob(config),
        }
    }

    /// Runs every job on `cluster` (the environment's configuration options apply to
    /// the job, not to the cluster's TaskManagers).
    pub fn on(cluster: Arc<MiniCluster>) -> Self {
        Self {
            target: Target::Shared(cluster),
        }
    }

    fn run(&self, pipeline: &Pipeline, job: JobId, slots: u32) -> Result<JobExecutionResult, ExecutionError> {
        let unavailable = |e: anyhow::Error| ExecutionError::Unavailable {
            job_name: pipeline.job_name.clone(),
            reason: format!("{e:#}"),
        };
        match &self.target {
            Target::Shared(cluster) => {
                let offered = cluster.total_slots();
                if offered < slots {
                    return Err(ExecutionError::Unavailable {
                        job_name: pipeline.job_name.clone(),
                        reason: format!("the job needs {slots} slots but the MiniCluster offers {offered}"),
                    });
                }
                run_on(cluster, pipeline, job)
            }
            Target::PerJob(base) => {
                let mut config = base.clone();
                for (key, value) in &pipeline.configuration {
                    config.set_string(key.clone(), value.clone());
                }
                let spec = MiniClusterSpec::for_job(&config, slots).map_err(unavailable)?;
                let cluster =
                    MiniCluster::start(&config, spec, crate::programs::registry().clone()).map_err(unavailable)?;
                let result = run_on(&cluster, pipeline, job);
                cluster.shutdown();
                result
            }
        }
    }
}

impl PipelineExecutor for MiniClusterExecutor {
    fn execute(&self, pipeline: Pipeline) -> Result<JobExecutionResult, ExecutionError> {
        let job_graph =
            JobGraph::from_stream_graph(&pipeline.graph.stream_graph).map_err(|e| ExecutionError::Unavailable {
                job_name: pipeline.job_name.clone(),
                reason: e.to_string(),
            })?;
        let slots = total_slots_required(&job_graph);
        let job = JobId::random();
        let program =
            InProcessProgram::register(job, pipeline.graph.clone()).map_err(|e| ExecutionError::Unavailable {
                job_name: pipeline.job_name.clone(),
                reason: e.to_string(),
            })?;
        let result = self.run(&pipeline, job, slots);
        drop(program);
        result
    }
}

/// The submission of `pipeline`'s in-process program: its job settings and options.
fn request(pipeline: &Pipeline) -> JobSubmitRequest {
    let mut request = JobSubmitRequest::new(IN_PROCESS_PROGRAM);
    request.parallelism = Some(pipeline.execution.parallelism);
    request.max_parallelism = pipeline.execution.max_parallelism;
    request.job_name = Some(pipeline.job_name.clone());
    request.config = pipeline.configuration.clone();
    request
}

/// Submits `pipeline` to `cluster` as `job` and waits for its end.
fn run_on(cluster: &MiniCluster, pipeline: &Pipeline, job: JobId) -> Result<JobExecutionResult, ExecutionError> {
    let start = Instant::now();
    cluster
        .submit_as(request(pipeline), job)
        .map_err(|e| ExecutionError::Refused {
            job_name: pipeline.job_name.clone(),
            job_id: job,
            reason: format!("{e:#}"),
        })?;
    let result = cluster.wait_for_result(job).map_err(|e| ExecutionError::Unavailable {
        job_name: pipeline.job_name.clone(),
        reason: format!("{e:#}"),
    })?;
    match result.status {
        JobStatus::Finished => Ok(JobExecutionResult {
            job_id: job,
            duration: start.elapsed(),
        }),
        status => {
            let exception = result
                .root_exception
                .unwrap_or_else(|| "the job recorded no exception".to_string());
            Err(ExecutionError::JobFailed {
                job_name: pipeline.job_name.clone(),
                job_id: job,
                status: status.to_string(),
                cause: match result.failed_task {
                    Some(task) => format!("task {task} failed: {exception}"),
                    None => exception,
                },
            })
        }
    }
}
