//! The JobManager's REST view: Flink's response shapes filled from the JobMasters and
//! the slot table, and submissions and cancellations handed to the core. The answers
//! about one vertex are built in [`crate::rest::vertex`], the metrics in
//! [`crate::rest::metrics`]; the JobManager's log file is the one it was started with
//! (`JobManagerSettings::log_file`).

use crate::job_master::{JobMaster, SavepointRefused, SavepointRequest, SavepointStatus, NO_SAVEPOINT_DIRECTORY};
use crate::jobmanager::{now_ms, JobManager};
use crate::rest::checkpoints::{checkpoint_config_info, checkpoint_details, checkpointing_statistics};
use crate::rest::metrics as rest_metrics;
use crate::rest::taskmanager_logs;
use crate::rest::vertex as rest_vertex;
use crate::rpc::actions::Clients;
use crate::rpc::metric_fetcher::MetricFetcher;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use weir_core::ids::JobId;
use weir_rest::SubtaskAttempt;
use weir_rest::{
    AllocatedSlot, CheckpointConfigInfo, CheckpointDetails, CheckpointingStatistics, ComponentMetrics, ConfigEntry,
    ExceptionHistory, ExceptionInfo, ExecutionConfigInfo, ExecutionStateCounts, HardwareDescription, JobConfig,
    JobDetail, JobExceptions, JobOverview, JobPlan, JobStatus, JobStatusTimestamps, JobSubmitRequest,
    JobSubmitResponse, JobTaskCounts, JobType, JobVertexDetail, JobsOverview, LogFileFuture, LogInfo, LogListInfo,
    MemoryConfiguration, MetricsScope, MetricsUpdate, Overview, PlanInput, PlanNode, ResourceProfileInfo, RestBackend,
    RestError, RootExceptionInfo, SavepointStatusResponse, SchedulerType, TaskManagerDetail, TaskManagerInfo,
    TaskManagerMetrics, TaskManagersList, TriggerResponse, VertexBackPressure, VertexDetail, VertexMetrics,
};
use weir_rpc::process::{log_file, ProcessSampler};
use weir_rpc::LogFile;

/// The REST backend over a JobManager.
pub struct JobManagerRest {
    jm: Arc<JobManager>,
    /// Samples the JobManager's own process for `/jobmanager/metrics`.
    process: ProcessSampler,
    /// TaskManager clients, for reading their log files.
    clients: Clients,
    /// Fetches task metrics before REST serves stale ones.
    metric_fetcher: Arc<MetricFetcher>,
}

impl JobManagerRest {
    /// The REST view of `jm`.
    pub fn new(jm: Arc<JobManager>) -> Self {
        let clients = Clients::new(jm.settings.internal_tls.clone());
        let metric_fetcher = Arc::new(MetricFetcher::new(jm.clone(), clients.clone()));
        Self {
            jm,
            process: ProcessSampler::new(),
            clients,
            metric_fetcher,
        }
    }
}

fn counts(states: impl IntoIterator<Item = weir_graph::ExecutionState>) -> ExecutionStateCounts {
    ExecutionStateCounts::from_states(states)
}

fn end_and_duration(jm: &JobMaster, now: i64) -> (i64, i64) {
    match jm.end_ms {
        Some(end) => (end, end - jm.start_ms),
        None => (-1, now - jm.start_ms),
    }
}

fn all_states(jm: &JobMaster) -> Vec<weir_graph::ExecutionState> {
    jm.execution_graph
        .job_vertices
        .iter()
        .flat_map(|v| v.task_vertices.iter().map(|t| t.current.state))
        .collect()
}

fn overview_of(jm: &JobMaster, now: i64) -> JobOverview {
    let (end, duration) = end_and_duration(jm, now);
    JobOverview {
        jid: jm.job_id,
        name: jm.invocation.job_name.clone(),
        job_type: job_type(jm),
        scheduler_type: SchedulerType::Default,
        start_time: jm.start_ms,
        end_time: end,
        duration,
        state: jm.status,
        last_modification: jm.timestamps.values().copied().max().unwrap_or(jm.start_ms),
        tasks: JobTaskCounts::from_counts(counts(all_states(jm))),
        pending_operators: 0,
    }
}

/// A vertex's parallelism for REST: -1 while the adaptive batch scheduler has not
/// decided it (Flink shows the undecided value, `ExecutionConfig.PARALLELISM_DEFAULT`).
fn rest_parallelism(parallelism: u32) -> i64 {
    match parallelism {
        0 => -1,
        p => i64::from(p),
    }
}

fn plan_of(jm: &JobMaster) -> JobPlan {
    let g = &jm.job_graph;
    let nodes = g
        .vertices
        .iter()
        .enumerate()
        .map(|(vi, v)| PlanNode {
            id: v.id.to_string(),
            operator: String::new(),
            parallelism: rest_parallelism(v.parallelism),
            operator_strategy: String::new(),
            description: v.name.clone(),
            optimizer_properties: BTreeMap::new(),
            inputs: g
                .edges
                .iter()
                .filter(|e| e.target_vertex == vi)
                .enumerate()
                .map(|(num, e)| PlanInput {
                    id: g.vertices[e.source_vertex].id.to_string(),
                    num: num as u32,
                    exchange: e.partition_type.flink_name().to_ascii_lowercase(),
                    ship_strategy: e.ship_strategy.ship_strategy().into(),
                })
                .collect(),
        })
        .collect();
    JobPlan {
        jid: jm.job_id,
        name: jm.invocation.job_name.clone(),
        job_type: job_type(jm),
        nodes,
    }
}

fn detail_of(jm: &JobMaster, now: i64) -> JobDetail {
    let (end, duration) = end_and_duration(jm, now);
    let mut timestamps = JobStatusTimestamps::new();
    for (status, ts) in &jm.timestamps {
        timestamps.set(*status, *ts);
    }
    let vertices = jm
        .execution_graph
        .job_vertices
        .iter()
        .enumerate()
        .map(|(vi, ejv)| {
            let states: Vec<_> = ejv.task_vertices.iter().map(|t| t.current.state).collect();
            let start = ejv
                .task_vertices
                .iter()
                .filter_map(|t| t.current.state_timestamp(weir_graph::ExecutionState::Deploying))
                .min()
                .unwrap_or(-1);
            let all_terminal = states.iter().all(|s| s.is_terminal());
            let v_end = if all_terminal {
                ejv.task_vertices
                    .iter()
                    .filter_map(|t| t.current.state_timestamps.values().copied().max())
                    .max()
                    .unwrap_or(-1)
            } else {
                -1
            };
            let v_duration = if start < 0 {
                -1
            } else if v_end >= 0 {
                v_end - start
            } else {
                now - start
            };
            VertexDetail {
                id: ejv.id.to_string(),
                slot_sharing_group_id: ejv.slot_sharing_group.clone(),
                name: ejv.name.clone(),
                max_parallelism: ejv.max_parallelism,
                parallelism: rest_parallelism(ejv.parallelism),
                status: ejv.aggregate_state(),
                start_time: start,
                end_time: v_end,
                duration: v_duration,
                tasks: counts(states),
                metrics: {
                    let m = jm.vertex_metrics(vi);
                    VertexMetrics {
                        read_records: m.totals.records_in as i64,
                        read_records_complete: m.complete,
                        write_records: m.totals.records_out as i64,
                        write_records_complete: m.complete,
                        read_bytes: m.totals.bytes_in as i64,
                        read_bytes_complete: m.complete,
                        write_bytes: m.totals.bytes_out as i64,
                        write_bytes_complete: m.complete,
                        accumulated_backpressured_time: m.totals.backpressured_ms as i64,
                        accumulated_idle_time: m.totals.idle_ms as i64,
                        accumulated_busy_time: m.totals.busy_ms as f64,
                    }
                },
            }
        })
        .collect();
    JobDetail {
        jid: jm.job_id,
        application_id: jm.job_id,
        name: jm.invocation.job_name.clone(),
        is_stoppable: false,
        state: jm.status,
        job_type: job_type(jm),
        scheduler_type: SchedulerType::Default,
        start_time: jm.start_ms,
        end_time: end,
        duration,
        max_parallelism: -1,
        now,
        timestamps,
        vertices,
        status_counts: counts(all_states(jm)),
        plan: plan_of(jm),
        pending_operators: 0,
    }
}

fn resource(total: &weir_rpc::MemoryConfiguration, cpu: f64) -> ResourceProfileInfo {
    ResourceProfileInfo {
        cpu_cores: cpu,
        task_heap_memory: total.task_heap as i64,
        task_off_heap_memory: total.task_off_heap as i64,
        managed_memory: total.managed_memory as i64,
        network_memory: total.network_memory as i64,
        extended_resources: BTreeMap::new(),
    }
}

fn scale(r: &ResourceProfileInfo, num: u32, den: u32) -> ResourceProfileInfo {
    let f = |v: i64| if den == 0 { 0 } else { v * num as i64 / den as i64 };
    ResourceProfileInfo {
        cpu_cores: if den == 0 {
            0.0
        } else {
            r.cpu_cores * num as f64 / den as f64
        },
        task_heap_memory: f(r.task_heap_memory),
        task_off_heap_memory: f(r.task_off_heap_memory),
        managed_memory: f(r.managed_memory),
        network_memory: f(r.network_memory),
        extended_resources: BTreeMap::new(),
    }
}

/// A log file as the REST API lists it.
fn log_info(f: &LogFile) -> LogInfo {
    LogInfo {
        name: f.name.clone(),
        size: f.size,
        mtime: f.mtime_ms,
    }
}

/// Flink's `timeSinceLastHeartbeat` holds the time of the last heartbeat (ms since the epoch).
fn taskmanager_info(e: &crate::resource_manager::slot_table::TaskManagerEntry, assigned: u32) -> TaskManagerInfo {
    let r = &e.registration;
    let m = &r.memory;
    let total = resource(m, r.num_slots as f64);
    let free = scale(&total, e.free_slots(), r.num_slots);
    let data_port = r
        .data_address
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or(-1);
    TaskManagerInfo {
        id: r.resource_id.clone(),
        path: r.rpc_address.clone(),
        data_port,
        jmx_port: -1,
        time_since_last_heartbeat: e.last_heartbeat_ms,
        slots_number: r.num_slots,
        free_slots: e.free_slots(),
        assigned_tasks: assigned,
        total_resource: total,
        free_resource: free,
        hardware: HardwareDescription {
            cpu_cores: r.hardware.cpu_cores as i32,
            physical_memory: r.hardware.physical_memory as i64,
            free_memory: r.hardware.free_memory as i64,
            managed_memory: m.managed_memory as i64,
        },
        memory_configuration: MemoryConfiguration {
            framework_heap: m.framework_heap as i64,
            task_heap: m.task_heap as i64,
            framework_off_heap: m.framework_off_heap as i64,
            task_off_heap: m.task_off_heap as i64,
            network_memory: m.network_memory as i64,
            managed_memory: m.managed_memory as i64,
            jvm_metaspace: m.jvm_metaspace as i64,
            jvm_overhead: m.jvm_overhead as i64,
            total_flink_memory: m.total_flink_memory as i64,
            total_process_memory: m.total_process_memory as i64,
        },
        blocked: false,
    }
}

/// Running tasks per TaskManager, over every job.
fn assigned_tasks(jobs: &BTreeMap<JobId, JobMaster>, resource_id: &str) -> u32 {
    let mut n = 0;
    for jm in jobs.values() {
        for v in &jm.execution_graph.job_vertices {
            for t in &v.task_vertices {
                let id = t.current.attempt_id.to_string();
                if !t.current.state.is_terminal()
                    && jm.attempt_location(&id).is_some_and(|s| s.resource_id == resource_id)
                {
                    n += 1;
                }
            }
        }
    }
    n
}

impl RestBackend for JobManagerRest {
    fn update_metrics(&self, scope: MetricsScope) -> MetricsUpdate {
        let fetcher = self.metric_fetcher.clone();
        Box::pin(async move { fetcher.update(scope).await })
    }

    fn overview(&self) -> Overview {
        let st = self.jm.lock();
        let count = |s: JobStatus| st.jobs.values().filter(|j| j.status == s).count() as u32;
        Overview {
            taskmanagers: st.slots.num_taskmanagers() as u32,
            slots_total: st.slots.total_slots(),
            slots_available: st.slots.free_slots(),
            jobs_running: st.jobs.values().filter(|j| !j.is_globally_terminal()).count() as u32,
            jobs_finished: count(JobStatus::Finished),
            jobs_cancelled: count(JobStatus::Canceled),
            jobs_failed: count(JobStatus::Failed),
            flink_version: weir_rest::FLINK_API_VERSION.into(),
            flink_commit: concat!("weir-", env!("CARGO_PKG_VERSION")).into(),
            slots_free_and_blocked: 0,
            taskmanagers_blocked: 0,
        }
    }

    fn jobs_overview(&self) -> JobsOverview {
        let now = now_ms();
        let st = self.jm.lock();
        let mut jobs: Vec<JobOverview> = st.jobs.values().map(|j| overview_of(j, now)).collect();
        jobs.sort_by_key(|j| std::cmp::Reverse(j.start_time));
        JobsOverview { jobs }
    }

    fn job_detail(&self, jid: JobId) -> Result<JobDetail, RestError> {
        let st = self.jm.lock();
        st.jobs
            .get(&jid)
            .map(|j| detail_of(j, now_ms()))
            .ok_or(RestError::JobNotFound(jid))
    }

    fn job_exceptions(&self, jid: JobId, _max_exceptions: Option<usize>) -> Result<JobExceptions, RestError> {
        let st = self.jm.lock();
        let jm = st.jobs.get(&jid).ok_or(RestError::JobNotFound(jid))?;
        let limit = self.jm.settings.exception_history_size;
        let total = jm.exceptions.len();
        let entries = jm
            .exceptions
            .iter()
            .rev()
            .take(limit)
            .map(|e| RootExceptionInfo {
                exception: ExceptionInfo {
                    exception_name: e.exception_name.clone(),
                    stacktrace: e.stacktrace.clone(),
                    timestamp: e.timestamp,
                    failure_labels: BTreeMap::new(),
                    task_name: e.task_name.clone(),
                    endpoint: e.endpoint.clone(),
                    task_manager_id: e.taskmanager_id.clone(),
                },
                concurrent_exceptions: Vec::new(),
            })
            .collect();
        Ok(JobExceptions {
            exception_history: ExceptionHistory {
                entries,
                truncated: total > limit,
            },
        })
    }

    fn job_status(&self, jid: JobId) -> Result<JobStatus, RestError> {
        self.jm.job_status(jid).ok_or(RestError::JobNotFound(jid))
    }

    fn vertex_detail(&self, jid: JobId, vertex_id: &str) -> Result<JobVertexDetail, RestError> {
        let st = self.jm.lock();
        let jm = st.jobs.get(&jid).ok_or(RestError::JobNotFound(jid))?;
        rest_vertex::vertex_detail(&st, jm, vertex_id, now_ms())
    }

    fn subtask_attempt(&self, jid: JobId, vid: &str, subtask: u32, attempt: u32) -> Result<SubtaskAttempt, RestError> {
        let st = self.jm.lock();
        let jm = st.jobs.get(&jid).ok_or(RestError::JobNotFound(jid))?;
        crate::rest::attempts::subtask_attempt(&st, jm, vid, subtask, attempt, now_ms())
    }

    fn vertex_backpressure(&self, jid: JobId, vertex_id: &str) -> Result<VertexBackPressure, RestError> {
        let st = self.jm.lock();
        let jm = st.jobs.get(&jid).ok_or(RestError::JobNotFound(jid))?;
        rest_vertex::vertex_backpressure(jm, vertex_id, now_ms())
    }

    fn vertex_subtask_metrics(&self, jid: JobId, vertex_id: &str) -> Result<Vec<ComponentMetrics>, RestError> {
        let st = self.jm.lock();
        let jm = st.jobs.get(&jid).ok_or(RestError::JobNotFound(jid))?;
        rest_vertex::subtask_metrics(jm, vertex_id, now_ms())
    }

    fn job_metrics(&self) -> Vec<(JobId, ComponentMetrics)> {
        let now = now_ms();
        let st = self.jm.lock();
        st.jobs
            .iter()
            .map(|(jid, jm)| (*jid, rest_metrics::job_metrics(jm, now)))
            .collect()
    }

    fn jobmanager_metrics(&self) -> ComponentMetrics {
        let process = self.process.sample();
        let st = self.jm.lock();
        rest_metrics::jobmanager_metrics(&st, &process)
    }

    fn taskmanager_metrics(&self) -> Vec<(String, ComponentMetrics)> {
        let st = self.jm.lock();
        st.slots
            .iter()
            .map(|tm| {
                (
                    tm.registration.resource_id.clone(),
                    rest_metrics::taskmanager_metrics(tm),
                )
            })
            .collect()
    }

    fn jobmanager_logs(&self) -> Vec<LogInfo> {
        let files = self.jobmanager_log_files();
        files.iter().filter_map(|f| log_file(f)).map(|f| log_info(&f)).collect()
    }

    fn jobmanager_log_files(&self) -> Vec<PathBuf> {
        self.jm.settings.log_file.iter().cloned().collect()
    }

    fn taskmanager_logs(&self, id: &str) -> Result<LogListInfo, RestError> {
        let st = self.jm.lock();
        let tm = st.slots.get(id).ok_or_else(|| RestError::taskexecutor_not_found(id))?;
        Ok(LogListInfo {
            logs: tm.status.logs.iter().map(log_info).collect(),
        })
    }

    fn taskmanager_log_file(&self, id: &str, name: Option<&str>) -> LogFileFuture {
        let address = self
            .jm
            .lock()
            .slots
            .get(id)
            .map(|tm| tm.registration.rpc_address.clone());
        let client = address.as_deref().and_then(|a| self.clients.get(a));
        let (id, name) = (id.to_string(), name.map(str::to_string));
        Box::pin(async move {
            match (address, client) {
                (None, _) => Err(RestError::taskexecutor_not_found(&id)),
                (Some(a), None) => Err(RestError::Internal(format!("bad TaskManager address {a}"))),
                (Some(_), Some(client)) => taskmanager_logs::fetch(client, name).await,
            }
        })
    }

    fn job_config(&self, jid: JobId) -> Result<JobConfig, RestError> {
        let st = self.jm.lock();
        let jm = st.jobs.get(&jid).ok_or(RestError::JobNotFound(jid))?;
        Ok(JobConfig {
            jid,
            name: jm.invocation.job_name.clone(),
            execution_config: ExecutionConfigInfo {
                restart_strategy: jm.restart_strategy_description(),
                job_parallelism: jm.invocation.parallelism as i32,
                object_reuse_mode: false,
                user_config: jm.invocation.args.clone(),
            },
        })
    }

    fn job_checkpoints(&self, jid: JobId) -> Result<CheckpointingStatistics, RestError> {
        let st = self.jm.lock();
        let jm = st.jobs.get(&jid).ok_or(RestError::JobNotFound(jid))?;
        Ok(jm
            .checkpoint_coordinator()
            .map_or_else(CheckpointingStatistics::disabled, checkpointing_statistics))
    }

    fn job_checkpoints_config(&self, jid: JobId) -> Result<CheckpointConfigInfo, RestError> {
        let st = self.jm.lock();
        let jm = st.jobs.get(&jid).ok_or(RestError::JobNotFound(jid))?;
        Ok(jm
            .checkpoint_coordinator()
            .map_or_else(CheckpointConfigInfo::disabled, |c| checkpoint_config_info(c.config())))
    }

    fn job_checkpoint_details(&self, jid: JobId, checkpoint_id: u64) -> Result<CheckpointDetails, RestError> {
        let st = self.jm.lock();
        let jm = st.jobs.get(&jid).ok_or(RestError::JobNotFound(jid))?;
        match jm.checkpoint_coordinator() {
            Some(c) => checkpoint_details(c, checkpoint_id),
            None => Err(RestError::checkpoint_not_found(checkpoint_id)),
        }
    }

    fn taskmanagers(&self) -> TaskManagersList {
        let st = self.jm.lock();
        TaskManagersList {
            taskmanagers: st
                .slots
                .iter()
                .map(|e| taskmanager_info(e, assigned_tasks(&st.jobs, &e.registration.resource_id)))
                .collect(),
        }
    }

    fn taskmanager_detail(&self, id: &str) -> Result<TaskManagerDetail, RestError> {
        let st = self.jm.lock();
        let e = st
            .slots
            .get(id)
            .ok_or_else(|| RestError::TaskManagerNotFound(id.to_string()))?;
        let info = taskmanager_info(e, assigned_tasks(&st.jobs, id));
        let per_slot = scale(&info.total_resource, 1, e.registration.num_slots);
        let allocated_slots = e
            .slots
            .iter()
            .flatten()
            .map(|job| AllocatedSlot {
                job_id: *job,
                resource: per_slot.clone(),
                assigned_tasks: 0,
            })
            .collect();
        Ok(TaskManagerDetail {
            info,
            allocated_slots,
            metrics: TaskManagerMetrics::default(),
        })
    }

    fn jobmanager_config(&self) -> Vec<ConfigEntry> {
        self.jm
            .settings
            .config
            .to_map_hiding_secrets()
            .into_iter()
            .map(|(k, v)| ConfigEntry::new(k, v))
            .collect()
    }

    fn cancel_job(&self, jid: JobId) -> Result<(), RestError> {
        match self.jm.cancel(jid) {
            None => Err(RestError::JobNotFound(jid)),
            Some(Err(status)) => Err(RestError::job_already_terminal(status)),
            Some(Ok(())) => Ok(()),
        }
    }

    fn trigger_savepoint(
        &self,
        jid: JobId,
        target_directory: Option<String>,
        stop_drain: Option<bool>,
    ) -> Result<TriggerResponse, RestError> {
        let request = SavepointRequest {
            target_directory,
            stop_drain,
        };
        match self.jm.trigger_savepoint(jid, request) {
            None => Err(RestError::JobNotFound(jid)),
            Some(Err(SavepointRefused::NoDirectory)) => Err(RestError::BadRequest(NO_SAVEPOINT_DIRECTORY.to_string())),
            Some(Err(SavepointRefused::NotPossible(message))) => Err(RestError::Conflict(message)),
            Some(Ok(request_id)) => Ok(TriggerResponse { request_id }),
        }
    }

    fn savepoint_status(&self, jid: JobId, trigger_id: &str) -> Result<SavepointStatusResponse, RestError> {
        let op = self
            .jm
            .savepoint_operation(jid, trigger_id)
            .ok_or(RestError::JobNotFound(jid))?
            .ok_or_else(|| {
                RestError::NotFound(format!(
                    "There is no savepoint operation with trigger id {trigger_id} for job {jid}."
                ))
            })?;
        Ok(match op.status {
            SavepointStatus::InProgress => SavepointStatusResponse::in_progress(),
            SavepointStatus::Completed { location } => SavepointStatusResponse::completed(&location),
            SavepointStatus::Failed { message } => SavepointStatusResponse::failed(&message),
        })
    }

    fn submit_job(&self, request: JobSubmitRequest) -> Result<JobSubmitResponse, RestError> {
        let submission = crate::dispatcher::invocation::from_submission(&self.jm.settings.config, &request)
            .map_err(|e| RestError::BadRequest(e.to_string()))?;
        let jobid = self.jm.submit(submission).map_err(|e| RestError::BadRequest(e.0))?;
        Ok(JobSubmitResponse { jobid })
    }

    fn coordination_request(
        &self,
        jid: JobId,
        operator: &str,
        request: weir_rest::CoordinationRequest,
    ) -> Result<weir_rest::CoordinationResponse, RestError> {
        self.jm.collect_request(jid, operator, request)
    }
}

/// Flink's job type: BATCH for a job built in batch runtime mode.
fn job_type(jm: &JobMaster) -> JobType {
    if jm.job_graph.config.runtime_mode.is_batch() {
        JobType::Batch
    } else {
        JobType::Streaming
    }
}
