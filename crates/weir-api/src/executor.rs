//! Running a built pipeline: the executor interface (Flink's `PipelineExecutor`).
//!
//! The API knows nothing of processes: [`StreamExecutionEnvironment::execute`] builds
//! the pipeline and hands it, as a [`Pipeline`], to a [`PipelineExecutor`] that some
//! crate above this one provides. The `weir` crate's MiniCluster is the one every
//! in-process run goes through (JobMaster, TaskExecutors, the same code as a cluster);
//! it installs itself as the process default ([`set_default_executor`]) in the `weir`
//! binary and `weir::main!`, and an environment can name its own with
//! [`StreamExecutionEnvironment::with_executor`].
//!
//! Invariant: an environment runs its jobs on its own executor when it has one, else on
//! the process default; with neither, `execute` fails with
//! [`ExecutionError::NoExecutor`] and runs nothing.
//!
//! [`StreamExecutionEnvironment::execute`]: crate::StreamExecutionEnvironment::execute
//! [`StreamExecutionEnvironment::with_executor`]: crate::StreamExecutionEnvironment::with_executor

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use thiserror::Error;
use weir_core::ids::JobId;
use weir_graph::ExecutionConfig;
use weir_runtime::executor::ExecutableGraph;

/// A pipeline ready to run: the checked graph with its operator code, the job settings
/// it was built with, and the job-level configuration options of its environment.
#[derive(Clone)]
pub struct Pipeline {
    /// The job's name.
    pub job_name: String,
    /// The StreamGraph and the code of its operators.
    pub graph: ExecutableGraph,
    /// The environment's job settings (parallelism, chaining, buffer timeout, mode).
    pub execution: ExecutionConfig,
    /// The auto-watermark interval in ms (`pipeline.auto-watermark-interval`).
    pub auto_watermark_interval_ms: i64,
    /// Configuration options the environment sets (Flink's keys, e.g.
    /// `restart-strategy.type`), as strings.
    pub configuration: BTreeMap<String, String>,
}

/// The outcome of a job that FINISHED.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobExecutionResult {
    /// The job's id.
    pub job_id: JobId,
    /// Wall-clock time from submission to the end of the job (Flink's net runtime).
    pub duration: Duration,
}

/// Why a pipeline did not run to FINISHED.
#[derive(Debug, Error)]
pub enum ExecutionError {
    /// Neither the environment nor the process has an executor.
    #[error(
        "no pipeline executor is installed: run on the MiniCluster with weir::minicluster::install() \
         (the weir binary and weir::main! install it) or StreamExecutionEnvironment::with_executor"
    )]
    NoExecutor,
    /// The executor could not start what runs the job.
    #[error("cannot run job '{job_name}': {reason}")]
    Unavailable {
        /// The job's name.
        job_name: String,
        /// What failed, with its causes.
        reason: String,
    },
    /// The JobManager refused the job.
    #[error("job '{job_name}' ({job_id}) was refused: {reason}")]
    Refused {
        /// The job's name.
        job_name: String,
        /// The id it was submitted under.
        job_id: JobId,
        /// The JobManager's reason.
        reason: String,
    },
    /// The job ended FAILED or CANCELED.
    #[error("Job execution failed: job '{job_name}' ({job_id}) {status}: {cause}")]
    JobFailed {
        /// The job's name.
        job_name: String,
        /// The job's id.
        job_id: JobId,
        /// FAILED or CANCELED.
        status: String,
        /// The root exception of the job's exception history: `task <name (i/n) -
        /// execution #k> failed: <error and its causes>`.
        cause: String,
    },
}

/// Runs pipelines (Flink's `PipelineExecutor`): submits one, waits for its end.
pub trait PipelineExecutor: Send + Sync {
    /// Runs `pipeline` to its end: `Ok` when the job FINISHED.
    fn execute(&self, pipeline: Pipeline) -> Result<JobExecutionResult, ExecutionError>;
}

static DEFAULT_EXECUTOR: RwLock<Option<Arc<dyn PipelineExecutor>>> = RwLock::new(None);

/// Makes `executor` the one environments without their own run on (replacing any
/// earlier default).
pub fn set_default_executor(executor: Arc<dyn PipelineExecutor>) {
    *DEFAULT_EXECUTOR.write().unwrap_or_else(|p| p.into_inner()) = Some(executor);
}

/// The process default executor, if one is installed.
pub fn default_executor() -> Option<Arc<dyn PipelineExecutor>> {
    DEFAULT_EXECUTOR.read().unwrap_or_else(|p| p.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ApiError, StreamExecutionEnvironment};
    use std::sync::Mutex;

    /// A job the executor received: its name, parallelism and configuration options.
    type Received = (String, u32, BTreeMap<String, String>);

    /// Records what it was asked to run.
    #[derive(Default)]
    struct Recording(Mutex<Vec<Received>>);

    impl PipelineExecutor for Recording {
        fn execute(&self, pipeline: Pipeline) -> Result<JobExecutionResult, ExecutionError> {
            self.0.lock().unwrap().push((
                pipeline.job_name,
                pipeline.execution.parallelism,
                pipeline.configuration,
            ));
            Ok(JobExecutionResult {
                job_id: JobId(7),
                duration: Duration::ZERO,
            })
        }
    }

    #[test]
    fn without_an_executor_execute_runs_nothing_and_says_how_to_get_one() {
        let env = StreamExecutionEnvironment::new();
        env.from_collection(vec![1u64]).discard();
        let err = env.execute("nowhere").unwrap_err();
        assert!(matches!(err, ApiError::Execution(ExecutionError::NoExecutor)), "{err}");
        assert!(
            err.to_string().starts_with(
                "no pipeline executor is installed: run on the MiniCluster with weir::minicluster::install()"
            ),
            "{err}"
        );
    }

    #[test]
    fn the_environments_executor_gets_the_built_pipeline_with_its_settings_and_options() {
        let recording = Arc::new(Recording::default());
        let mut env = StreamExecutionEnvironment::new().with_executor(recording.clone());
        env.set_parallelism(3)
            .set_config_option("restart-strategy.type", "none")
            .set_metrics_collection(false);
        env.from_collection(vec![1u64]).discard();
        let result = env.execute("recorded").unwrap();
        assert_eq!(result.job_id, JobId(7));
        let options: BTreeMap<String, String> = [
            ("metrics.collection.enabled", "false"),
            ("restart-strategy.type", "none"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(*recording.0.lock().unwrap(), vec![("recorded".to_string(), 3, options)]);
    }
}
