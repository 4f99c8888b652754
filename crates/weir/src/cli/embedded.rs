//! A JobManager in this process that the command line submits one job to and waits on:
//! the core of the MiniCluster of `weir local` (with TaskManagers beside it) and of
//! application mode (`weir jobmanager --application`, TaskManagers elsewhere).
//!
//! It owns the tokio runtime its servers run on (the MiniCluster starts its
//! TaskManagers on the same one): they live exactly as long as it does. Jobs go through
//! the Dispatcher's normal submission path, as `POST /jobs` does; a job built in this
//! process by closures is submitted under the id its program is registered by
//! ([`EmbeddedJobManager::submit_as`]).

use anyhow::{anyhow, bail, Context, Result};
use std::net::SocketAddr;
use std::time::Duration;
use weir_api::program::ProgramRegistry;
use weir_core::ids::JobId;
use weir_jobmanager::rest::backend::JobManagerRest;
use weir_jobmanager::{start_jobmanager, JobManagerSettings, RestEndpoint, RunningJobManager};
use weir_rest::{JobStatus, JobSubmitRequest, RestBackend};

/// How a job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobResult {
    /// FINISHED, FAILED or CANCELED.
    pub status: JobStatus,
    /// The newest entry of the job's exception history (for a failed job: why it
    /// failed, root cause last), if any.
    pub root_exception: Option<String>,
    /// The task that failure happened in (`name (i/n) - execution #k`); none for a
    /// global failure or without one.
    pub failed_task: Option<String>,
}

impl JobResult {
    /// Ok when the job FINISHED, else the error the command line reports (exit 1): the
    /// job's name, id, status and root cause on one line.
    pub fn into_outcome(self, job: JobId, job_name: &str) -> Result<()> {
        match (self.status, self.root_exception) {
            (JobStatus::Finished, _) => Ok(()),
            (status, Some(cause)) => bail!(
                "Job execution failed: job '{job_name}' ({job}) {status}: {}",
                cause.replace('\n', " | ")
            ),
            (status, None) => bail!("Job execution failed: job '{job_name}' ({job}) {status}"),
        }
    }
}

/// A JobManager in this process, with the runtime it runs on.
pub struct EmbeddedJobManager {
    runtime: tokio::runtime::Runtime,
    jobmanager: RunningJobManager,
    dispatcher: JobManagerRest,
}

impl EmbeddedJobManager {
    /// Starts a JobManager with `settings` on a runtime of its own (named `thread_name`).
    pub fn start(
        settings: JobManagerSettings,
        registry: ProgramRegistry,
        rest: RestEndpoint,
        thread_name: &str,
    ) -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name(thread_name)
            .build()
            .context("cannot start the JobManager's async runtime")?;
        let jobmanager = runtime
            .block_on(start_jobmanager(settings, registry, rest))
            .context("cannot start the JobManager")?;
        let dispatcher = JobManagerRest::new(jobmanager.jobmanager().clone());
        Ok(Self {
            runtime,
            jobmanager,
            dispatcher,
        })
    }

    /// The runtime the JobManager runs on (for servers started beside it).
    pub fn runtime(&self) -> &tokio::runtime::Runtime {
        &self.runtime
    }

    /// The running JobManager.
    pub fn jobmanager(&self) -> &RunningJobManager {
        &self.jobmanager
    }

    /// Where the REST endpoint listens, when it is served.
    pub fn rest_address(&self) -> Option<SocketAddr> {
        self.jobmanager.rest_address()
    }

    /// Submits a job through the Dispatcher, exactly as `POST /jobs` does.
    pub fn submit(&self, request: JobSubmitRequest) -> Result<JobId> {
        let program = request.program.clone();
        let response = self
            .dispatcher
            .submit_job(request)
            .map_err(|e| anyhow!("{e}"))
            .with_context(|| format!("the JobManager refused job '{program}'"))?;
        Ok(response.jobid)
    }

    /// Submits a job under the fixed id `job` (Flink's `$internal.pipeline.job-id`):
    /// the request is checked and read as `POST /jobs` reads it, then handed to the
    /// JobManager with that id.
    pub fn submit_as(&self, request: JobSubmitRequest, job: JobId) -> Result<JobId> {
        request.validate().map_err(|e| anyhow!("{e}"))?;
        let jobmanager = self.jobmanager.jobmanager();
        let mut submission =
            weir_jobmanager::dispatcher::invocation::from_submission(&jobmanager.settings.config, &request)?;
        submission.job_id = Some(job);
        jobmanager
            .submit(submission)
            .map_err(|e| anyhow!("{}", e.0))
            .with_context(|| format!("the JobManager refused job '{}'", request.program))
    }

    /// Waits until `job` reaches FINISHED, FAILED or CANCELED.
    pub fn wait_for_result(&self, job: JobId) -> Result<JobResult> {
        let jobmanager = self.jobmanager.jobmanager();
        let status = loop {
            let seen = jobmanager.wait_for(JOB_STATUS_WAIT, |st| match st.jobs.get(&job) {
                None => Some(None),
                Some(jm) if jm.status.is_globally_terminal() => Some(Some(jm.status)),
                Some(_) => None,
            });
            match seen {
                Some(None) => bail!("the JobManager does not know job {job}"),
                Some(Some(status)) => break status,
                None => {}
            }
        };
        let root = self
            .dispatcher
            .job_exceptions(job, Some(1))
            .map_err(|e| anyhow!("{e}"))
            .context("cannot read the job's exception history")?
            .exception_history
            .entries
            .into_iter()
            .next()
            .map(|e| e.exception);
        Ok(JobResult {
            status,
            failed_task: root.as_ref().and_then(|e| e.task_name.clone()),
            root_exception: root.map(|e| e.stacktrace),
        })
    }

    /// Stops every server and background task without waiting for them.
    pub fn shutdown(self) {
        let EmbeddedJobManager {
            runtime,
            jobmanager,
            dispatcher,
        } = self;
        drop(dispatcher);
        drop(jobmanager);
        runtime.shutdown_background();
    }
}

/// The longest one wait for a change of the JobManager's state lasts before the
/// waiter looks again (every change wakes it before).
pub const JOB_STATUS_WAIT: Duration = Duration::from_millis(500);
