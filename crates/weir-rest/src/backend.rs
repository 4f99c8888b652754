//! The interface between the REST router and the JobManager.
//!
//! Owns [`RestBackend`]: one method per question the router asks, returning the
//! response types of this crate or a [`RestError`]. The JobManager implements it over
//! its own state (held behind a mutex); the router calls the methods directly on its
//! async tasks, so every method must be quick and must not block on I/O or on other
//! processes — it reads a snapshot of state, or records a request (cancel, submit)
//! and returns.
//!
//! Division of work: the backend answers about what exists; the router owns the HTTP
//! side — paths, the `/v1` prefix, parsing and validating ids, query parameters and
//! bodies, status codes and Flink's error texts, and applying `maxExceptions` and
//! `failureLabelFilter` to what [`RestBackend::job_exceptions`] returns.

use crate::error::RestError;
use crate::messages::accumulators::JobAccumulatorsInfo;
use crate::messages::attempts::SubtaskAttempt;
use crate::messages::checkpoint_config::CheckpointConfigInfo;
use crate::messages::checkpoints::{CheckpointDetails, CheckpointingStatistics};
use crate::messages::config::{ConfigEntry, DashboardConfig, JobConfig};
use crate::messages::environment::{EnvironmentInfo, LogInfo, LogListInfo};
use crate::messages::exceptions::JobExceptions;
use crate::messages::execution_result::JobExecutionResultResponse;
use crate::messages::jobs::{JobDetail, JobPlan, JobsList, JobsOverview};
use crate::messages::metrics::ComponentMetrics;
use crate::messages::overview::Overview;
use crate::messages::savepoints::{SavepointStatusResponse, TriggerResponse};
use crate::messages::status::JobStatus;
use crate::messages::submit::{JobSubmitRequest, JobSubmitResponse};
use crate::messages::taskmanagers::{TaskManagerDetail, TaskManagersList};
use crate::messages::vertex_detail::{JobVertexDetail, SubtaskDetail};
use crate::messages::vertex_subtasks::{JobVertexTaskManagers, SubtasksTimes};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use weir_core::ids::JobId;

/// The text of a TaskManager's log file, fetched from that TaskManager.
pub type LogFileFuture = Pin<Box<dyn Future<Output = Result<Vec<u8>, RestError>> + Send + 'static>>;

/// The task metrics a REST read is about to serve (see [`RestBackend::update_metrics`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetricsScope {
    /// The metrics of one job: its detail, vertices, subtasks and attempts.
    Job(JobId),
    /// The metrics of every job (`/jobs/metrics`).
    AllJobs,
}

/// A refresh of task metrics in progress; it completes when fresh values are in (or
/// could not be had: the values already held are served then).
pub type MetricsUpdate = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What the REST router asks the JobManager. All methods are synchronous and quick.
///
/// Errors: a method about one job returns [`RestError::JobNotFound`] for an unknown
/// job, one about a vertex [`RestError::vertex_not_found`] for an unknown vertex;
/// [`RestBackend::taskmanager_detail`] returns [`RestError::TaskManagerNotFound`]
/// for an unknown TaskManager. The router renders them as Flink does (and answers
/// the metric routes of an unknown job or vertex with no metrics, as Flink does).
pub trait RestBackend: Send + Sync + 'static {
    /// `GET /overview`: TaskManagers, slots and job counts.
    fn overview(&self) -> Overview;

    /// Called before a read of the metrics of `scope`: the one asynchronous question.
    /// A backend whose values are older than its update interval fetches fresh ones
    /// (Flink's MetricFetcher); the default has nothing to fetch.
    fn update_metrics(&self, _scope: MetricsScope) -> MetricsUpdate {
        Box::pin(std::future::ready(()))
    }

    /// `GET /config`: the dashboard configuration. Defaults to
    /// [`DashboardConfig::weir_default`].
    fn dashboard_config(&self) -> DashboardConfig {
        DashboardConfig::weir_default()
    }

    /// `GET /jobs/overview`: one entry per known job, running or finished.
    fn jobs_overview(&self) -> JobsOverview;

    /// `GET /jobs`: ids and statuses of the known jobs. Defaults to the ids and
    /// states of [`RestBackend::jobs_overview`].
    fn jobs(&self) -> JobsList {
        self.jobs_overview().to_jobs_list()
    }

    /// `GET /jobs/:jid`: the job's detail, or [`RestError::JobNotFound`].
    fn job_detail(&self, jid: JobId) -> Result<JobDetail, RestError>;

    /// `GET /jobs/:jid/plan`: the job's plan, or [`RestError::JobNotFound`]. Defaults
    /// to the `plan` of [`RestBackend::job_detail`].
    fn job_plan(&self, jid: JobId) -> Result<JobPlan, RestError> {
        self.job_detail(jid).map(|d| d.plan)
    }

    /// `GET /jobs/:jid/exceptions`: the job's failure history, newest first, or
    /// [`RestError::JobNotFound`]. `max_exceptions` is the client's `maxExceptions`,
    /// `None` when it gave none or gave a `failureLabelFilter` (a hint: the backend may
    /// stop collecting after that many entries and set `truncated`); the router
    /// applies the filter and the limit (default 20) to whatever is returned.
    fn job_exceptions(&self, jid: JobId, max_exceptions: Option<usize>) -> Result<JobExceptions, RestError>;

    /// `GET /jobs/:jid/config`: the job's execution configuration, or
    /// [`RestError::JobNotFound`].
    fn job_config(&self, jid: JobId) -> Result<JobConfig, RestError>;

    /// `GET /jobs/:jid/checkpoints`: the job's checkpoint counts, summary, latest
    /// checkpoints and recent history, or [`RestError::JobNotFound`].
    ///
    /// Defaults to what Flink 2.3 answers for a known job without checkpointing (200,
    /// [`CheckpointingStatistics::disabled`]); the job is looked up with
    /// [`RestBackend::job_detail`].
    fn job_checkpoints(&self, jid: JobId) -> Result<CheckpointingStatistics, RestError> {
        self.job_detail(jid).map(|_| CheckpointingStatistics::disabled())
    }

    /// `GET /jobs/:jid/checkpoints/config`: how the job checkpoints, or
    /// [`RestError::JobNotFound`].
    ///
    /// Defaults to what Flink 2.3 answers for a known job without checkpointing (200,
    /// [`CheckpointConfigInfo::disabled`]: interval `Long.MAX_VALUE`).
    fn job_checkpoints_config(&self, jid: JobId) -> Result<CheckpointConfigInfo, RestError> {
        self.job_detail(jid).map(|_| CheckpointConfigInfo::disabled())
    }

    /// `GET /jobs/:jid/checkpoints/details/:checkpointid`: one checkpoint with its
    /// per-vertex statistics; [`RestError::JobNotFound`] for an unknown job and
    /// [`RestError::checkpoint_not_found`] for a checkpoint the job does not know
    /// (never triggered, or no longer in the history). The router has already parsed
    /// the id.
    ///
    /// Defaults to the latter for every known job (a job without checkpointing has
    /// none).
    fn job_checkpoint_details(&self, jid: JobId, checkpoint_id: u64) -> Result<CheckpointDetails, RestError> {
        self.job_detail(jid)
            .and_then(|_| Err(RestError::checkpoint_not_found(checkpoint_id)))
    }

    /// `GET /jobs/:jid/vertices/:vid/backpressure`: back-pressure of a vertex's subtasks.
    /// Defaults to nothing measured (ratio 0, busy unknown) for each subtask of
    /// [`RestBackend::vertex_detail`].
    fn vertex_backpressure(&self, jid: JobId, vertex_id: &str) -> Result<crate::VertexBackPressure, RestError> {
        let detail = self.vertex_detail(jid, vertex_id)?;
        let unmeasured = vec![(0.0, 0.0, f64::NAN); detail.subtasks.len()];
        Ok(crate::VertexBackPressure::from_ratios(detail.now, &unmeasured))
    }

    /// `GET /taskmanagers`: every registered TaskManager.
    fn taskmanagers(&self) -> TaskManagersList;

    /// `GET /jobs/:jid/vertices/:vid`: one vertex with its subtasks' current attempts.
    /// Defaults to [`RestError::vertex_not_found`] for every vertex of a known job.
    fn vertex_detail(&self, jid: JobId, vertex_id: &str) -> Result<JobVertexDetail, RestError> {
        self.job_status(jid)?;
        Err(RestError::vertex_not_found(vertex_id))
    }

    /// `GET /jobs/:jid/vertices/:vid/subtasks/:idx`: the current attempt of one subtask;
    /// [`RestError::vertex_not_found`] for an unknown vertex and
    /// [`RestError::subtask_not_found`] for an index at or beyond its parallelism.
    /// Defaults to that subtask of [`RestBackend::vertex_detail`].
    fn subtask_detail(&self, jid: JobId, vertex_id: &str, subtask: u32) -> Result<SubtaskDetail, RestError> {
        self.vertex_detail(jid, vertex_id)?
            .subtasks
            .into_iter()
            .find(|s| s.subtask == subtask)
            .ok_or_else(|| RestError::subtask_not_found(vertex_id))
    }

    /// `GET /jobs/:jid/vertices/:vid/subtasks/:idx/attempts/:attempt` (and its
    /// `/accumulators`): attempt `attempt` of one subtask, the current one or an earlier
    /// one still kept; errors as [`RestBackend::subtask_detail`], and
    /// [`crate::messages::attempts::invalid_attempt`] for a number beyond the current attempt.
    /// Defaults to the current attempt of [`RestBackend::subtask_detail`] (with an empty
    /// attempt id) and that 404 for any other number.
    fn subtask_attempt(&self, jid: JobId, vid: &str, subtask: u32, attempt: u32) -> Result<SubtaskAttempt, RestError> {
        let detail = self.subtask_detail(jid, vid, subtask)?;
        if detail.attempt != attempt {
            return Err(crate::messages::attempts::invalid_attempt(i64::from(attempt)));
        }
        Ok(SubtaskAttempt {
            detail,
            attempt_id: String::new(),
        })
    }

    /// `GET /jobs/:jid/vertices/:vid/subtasktimes`: when each subtask entered each state.
    /// Defaults to [`SubtasksTimes::of`] the vertex's detail.
    fn vertex_subtask_times(&self, jid: JobId, vertex_id: &str) -> Result<SubtasksTimes, RestError> {
        self.vertex_detail(jid, vertex_id).map(|d| SubtasksTimes::of(&d))
    }

    /// `GET /jobs/:jid/vertices/:vid/taskmanagers`: the vertex's subtasks per
    /// TaskManager. Defaults to [`JobVertexTaskManagers::of`] the vertex's detail.
    fn vertex_taskmanagers(&self, jid: JobId, vertex_id: &str) -> Result<JobVertexTaskManagers, RestError> {
        self.vertex_detail(jid, vertex_id)
            .map(|d| JobVertexTaskManagers::of(&d))
    }

    /// The metrics of each subtask of a vertex (index = subtask), task-scoped names
    /// (`numRecordsIn`, `busyTimeMsPerSecond`, …), only those measured. Serves the
    /// vertex and subtask metric endpoints and `/watermarks`. Defaults to no metrics for
    /// each subtask of [`RestBackend::vertex_detail`].
    fn vertex_subtask_metrics(&self, jid: JobId, vertex_id: &str) -> Result<Vec<ComponentMetrics>, RestError> {
        self.vertex_detail(jid, vertex_id)
            .map(|d| vec![ComponentMetrics::new(); d.subtasks.len()])
    }

    /// `GET /jobs/:jid/status`. Defaults to the state of [`RestBackend::job_detail`].
    fn job_status(&self, jid: JobId) -> Result<JobStatus, RestError> {
        self.job_detail(jid).map(|d| d.state)
    }

    /// `GET /jobs/:jid/execution-result`: in progress until the job is globally
    /// terminal, then how it ended. Defaults to [`JobExecutionResultResponse::of`] the
    /// job's detail and status, with the newest entry of its exception history as the
    /// cause of a failed job.
    fn job_execution_result(&self, jid: JobId) -> Result<JobExecutionResultResponse, RestError> {
        let status = self.job_status(jid)?;
        let detail = self.job_detail(jid)?;
        let exceptions = match status {
            JobStatus::Failed => Some(self.job_exceptions(jid, Some(1))?),
            _ => None,
        };
        Ok(JobExecutionResultResponse::of(&detail, status, exceptions.as_ref()))
    }

    /// `GET /jobs/:jid/accumulators`. Defaults to none for a known job.
    fn job_accumulators(&self, jid: JobId) -> Result<JobAccumulatorsInfo, RestError> {
        self.job_status(jid).map(|_| JobAccumulatorsInfo::default())
    }

    /// The job-scoped metrics of every known job (`numRestarts`, `uptime`, …), for
    /// `/jobs/:jid/metrics` and `/jobs/metrics`. Defaults to none.
    fn job_metrics(&self) -> Vec<(JobId, ComponentMetrics)> {
        Vec::new()
    }

    /// The JobManager's metrics, for `/jobmanager/metrics`. Defaults to none.
    fn jobmanager_metrics(&self) -> ComponentMetrics {
        ComponentMetrics::new()
    }

    /// The metrics of every registered TaskManager by id, for
    /// `/taskmanagers/:tmid/metrics` and `/taskmanagers/metrics`. Defaults to none.
    fn taskmanager_metrics(&self) -> Vec<(String, ComponentMetrics)> {
        Vec::new()
    }

    /// `GET /jobmanager/environment`. Defaults to [`EnvironmentInfo::of_this_process`].
    fn jobmanager_environment(&self) -> EnvironmentInfo {
        EnvironmentInfo::of_this_process()
    }

    /// `GET /jobmanager/logs`: the files this process logs to (none when it logs to no
    /// file). Defaults to none.
    fn jobmanager_logs(&self) -> Vec<LogInfo> {
        Vec::new()
    }

    /// The paths of the files of [`RestBackend::jobmanager_logs`], for
    /// `/jobmanager/logs/:name` and `/jobmanager/log`; the router reads them. Defaults
    /// to none.
    fn jobmanager_log_files(&self) -> Vec<PathBuf> {
        Vec::new()
    }

    /// `GET /taskmanagers/:tmid/logs`: the log files a TaskManager reported, or
    /// [`RestError::taskexecutor_not_found`]. Defaults to none for a known TaskManager.
    fn taskmanager_logs(&self, id: &str) -> Result<LogListInfo, RestError> {
        match self.taskmanager_detail(id) {
            Ok(_) => Ok(LogListInfo::default()),
            Err(RestError::TaskManagerNotFound(_)) => Err(RestError::taskexecutor_not_found(id)),
            Err(e) => Err(e),
        }
    }

    /// `GET /taskmanagers/:tmid/logs/:filename` (`name` given) and `/taskmanagers/:tmid/log`
    /// (the main log): the file's bytes, fetched from the TaskManager without blocking
    /// the caller; [`RestError::taskexecutor_not_found`] for an unknown TaskManager,
    /// Flink's `The file <name> does not exist on the TaskExecutor.` (404) for a file it
    /// does not log to. Defaults to the latter.
    fn taskmanager_log_file(&self, id: &str, name: Option<&str>) -> LogFileFuture {
        let missing = RestError::no_such_taskmanager_file(name);
        let known = self.taskmanager_detail(id).is_ok();
        let unknown = RestError::taskexecutor_not_found(id);
        Box::pin(async move { Err(if known { missing } else { unknown }) })
    }

    /// `GET /taskmanagers/:tmid`: one TaskManager's detail, or
    /// [`RestError::TaskManagerNotFound`].
    fn taskmanager_detail(&self, id: &str) -> Result<TaskManagerDetail, RestError>;

    /// `GET /jobmanager/config`: the cluster configuration as key/value strings.
    fn jobmanager_config(&self) -> Vec<ConfigEntry>;

    /// `PATCH /jobs/:jid?mode=cancel`: starts cancelling the job and returns at once
    /// (the answer is 202; clients poll the job's status). As in Flink: an unknown job
    /// is [`RestError::JobNotFound`]; a job already CANCELED or CANCELLING is `Ok`; a
    /// FINISHED or FAILED job is [`RestError::job_already_terminal`].
    fn cancel_job(&self, jid: JobId) -> Result<(), RestError>;

    /// `POST /jobs`: accepts a job for execution and returns its new id at once (the
    /// answer is 202). The request has passed [`JobSubmitRequest::validate`]; an unknown
    /// program or bad arguments are [`RestError::BadRequest`].
    fn submit_job(&self, request: JobSubmitRequest) -> Result<JobSubmitResponse, RestError>;

    /// `POST /jobs/:jid/savepoints` and `POST /jobs/:jid/stop`: triggers a savepoint
    /// into `target_directory` (the configured one when `None`), stopping the job after
    /// it when `stop_drain` is set, and returns the trigger id (the answer is 202).
    fn trigger_savepoint(
        &self,
        jid: JobId,
        target_directory: Option<String>,
        stop_drain: Option<bool>,
    ) -> Result<TriggerResponse, RestError> {
        let _ = (target_directory, stop_drain);
        Err(RestError::JobNotFound(jid))
    }

    /// `GET /jobs/:jid/savepoints/:triggerid`: where the operation stands.
    fn savepoint_status(&self, jid: JobId, trigger_id: &str) -> Result<SavepointStatusResponse, RestError> {
        let _ = trigger_id;
        Err(RestError::JobNotFound(jid))
    }

    /// `POST /jobs/:jid/coordinators/:operatorid`: hands `request` to the coordinator
    /// of operator `operator` (32 lower-case hex digits). An unknown job is
    /// [`RestError::JobNotFound`], an operator without a coordinator
    /// [`crate::messages::coordination::no_coordinator`], an offset or version the coordinator
    /// cannot serve [`RestError::BadRequest`].
    fn coordination_request(
        &self,
        jid: JobId,
        operator: &str,
        request: crate::CoordinationRequest,
    ) -> Result<crate::CoordinationResponse, RestError> {
        let _ = (operator, request);
        Err(RestError::JobNotFound(jid))
    }
}
