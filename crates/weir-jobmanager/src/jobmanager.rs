//! The JobManager's core: Dispatcher, ResourceManager and the JobMasters, behind one
//! lock. Every entry point (an RPC, a REST call, the periodic tick) takes the lock,
//! lets the state machines decide, and hands the resulting actions to the I/O shell.

use crate::dispatcher::invocation::JobSubmission;
use crate::failover::restart_strategy::RestartBackoffTimeStrategy;
use crate::job_master::adaptive_batch::{adaptive_options, prepare_job_graph};
use crate::job_master::{Action, JobMaster, SavepointOperation, SavepointRefused, SavepointRequest};
use crate::resource_manager::slot_table::{SlotTable, TaskManagerRegistration};
use crate::settings::JobManagerSettings;
use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc::UnboundedSender;
use weir_api::program::ProgramRegistry;
use weir_core::ids::JobId;
use weir_graph::{ExecutionState, JobGraph};

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Everything the lock protects.
pub struct State {
    /// Registered TaskManagers and slots.
    pub slots: SlotTable,
    /// Every job, running or archived.
    pub jobs: BTreeMap<JobId, JobMaster>,
}

/// The JobManager.
pub struct JobManager {
    state: Mutex<State>,
    registry: ProgramRegistry,
    /// Start-up settings.
    pub settings: JobManagerSettings,
    actions: UnboundedSender<Vec<Action>>,
    /// Signalled after every change of the state (each emits its actions), for
    /// [`JobManager::wait_for`].
    changed: Condvar,
    /// The collect sinks' coordinators.
    pub(crate) collect: crate::coordination::collect_coordinator::CollectCoordinators,
}

/// Why a submission was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmissionError(pub String);

impl JobManager {
    /// The identity of this process's binary (its programs); a TaskManager must run
    /// the same one to register.
    pub fn binary_identity(&self) -> String {
        self.registry.identity()
    }

    /// A JobManager handing its actions to `actions`.
    pub fn new(settings: JobManagerSettings, registry: ProgramRegistry, actions: UnboundedSender<Vec<Action>>) -> Self {
        Self {
            state: Mutex::new(State {
                slots: SlotTable::new(),
                jobs: BTreeMap::new(),
            }),
            registry,
            settings,
            actions,
            changed: Condvar::new(),
            collect: Default::default(),
        }
    }

    /// Locks the state.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn emit(&self, actions: Vec<Action>) {
        if !actions.is_empty() {
            let _ = self.actions.send(actions);
        }
        self.changed.notify_all();
    }

    /// Waits up to `max` until `ready` finds what it looks for in the state (a job's
    /// end, registered slots), woken by every change rather than polling; `None` when
    /// it did not within `max`.
    pub fn wait_for<T>(&self, max: Duration, mut ready: impl FnMut(&State) -> Option<T>) -> Option<T> {
        let deadline = Instant::now().checked_add(max);
        let mut st = self.lock();
        loop {
            if let Some(found) = ready(&st) {
                return Some(found);
            }
            let left = match deadline {
                Some(end) => end.checked_duration_since(Instant::now()).filter(|d| !d.is_zero())?,
                None => Duration::from_secs(3600),
            };
            st = match self.changed.wait_timeout(st, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// A TaskManager registered (again); returns the fresh instance id its heartbeats
    /// must carry.
    pub fn register_taskmanager(&self, registration: TaskManagerRegistration) -> String {
        let now = now_ms();
        let id = registration.resource_id.clone();
        let instance_id = crate::secret_id::fresh_secret_id();
        let mut actions = Vec::new();
        let mut st = self.lock();
        let lost = st.slots.register_instance(registration, instance_id.clone(), now);
        let State { slots, jobs } = &mut *st;
        for job in lost {
            if let Some(jm) = jobs.get_mut(&job) {
                actions.extend(jm.on_taskmanager_lost(&id, "it registered again (restarted)", slots, now));
            }
        }
        for jm in jobs.values_mut() {
            actions.extend(jm.tick(slots, now));
        }
        drop(st);
        self.emit(actions);
        instance_id
    }

    /// A heartbeat from a TaskManager with what it reported about its process.
    pub fn taskmanager_heartbeat(
        &self,
        resource_id: &str,
        instance_id: &str,
        status: crate::resource_manager::slot_table::TaskManagerStatus,
    ) -> crate::resource_manager::slot_table::HeartbeatOutcome {
        self.lock().slots.heartbeat(resource_id, instance_id, status, now_ms())
    }

    /// The fencing token of job `job_id`'s JobMaster (empty for an unknown job, which
    /// TaskManagers holding its tasks refuse).
    pub fn job_master_id(&self, job_id: &str) -> String {
        JobId::parse(job_id)
            .and_then(|job| self.lock().jobs.get(&job).map(|jm| jm.job_master_id.clone()))
            .unwrap_or_default()
    }

    /// A TaskManager is gone: heartbeat timeout or connection loss.
    pub fn taskmanager_lost(&self, resource_id: &str, cause: &str) {
        let now = now_ms();
        let mut st = self.lock();
        let State { slots, jobs } = &mut *st;
        // Jobs fail over first (while the slot table still knows where their tasks ran).
        let mut actions = Vec::new();
        for jm in jobs.values_mut() {
            actions.extend(jm.on_taskmanager_lost(resource_id, cause, slots, now));
        }
        slots.remove(resource_id);
        drop(st);
        tracing::warn!("TaskManager {resource_id} lost: {cause}");
        self.emit(actions);
        self.run_due_restarts();
    }

    /// Restarts the jobs whose restart is due now (a 0 s delay restarts within the
    /// failure's own decision instead of at the next tick).
    pub fn run_due_restarts(&self) {
        let now = now_ms();
        let mut st = self.lock();
        let State { slots, jobs } = &mut *st;
        let mut actions = Vec::new();
        for jm in jobs.values_mut() {
            if jm.restart_due_at().is_some_and(|at| at <= now) {
                actions.extend(jm.tick(slots, now));
            }
        }
        drop(st);
        self.emit(actions);
    }

    /// How long until the earliest pending restart is due (zero when overdue).
    pub fn next_restart_in(&self) -> Option<std::time::Duration> {
        let now = now_ms();
        self.lock()
            .jobs
            .values()
            .filter_map(JobMaster::restart_due_at)
            .min()
            .map(|at| std::time::Duration::from_millis(at.saturating_sub(now).max(0) as u64))
    }

    /// Counters reported by a task (live with a heartbeat, or final with FINISHED).
    pub fn task_metrics(
        &self,
        job: JobId,
        attempt_id: &str,
        metrics: crate::job_master::AttemptMetrics,
        report: crate::job_master::MetricsReport,
    ) {
        if let Some(jm) = self.lock().jobs.get_mut(&job) {
            jm.record_metrics(attempt_id, metrics, report, now_ms());
        }
    }

    /// A task acknowledged a checkpoint.
    pub fn acknowledge_checkpoint(&self, job: JobId, attempt_id: &str, ack: weir_checkpoint::SnapshotReport) {
        self.with_job(job, |jm, slots, now| {
            jm.acknowledge_checkpoint(attempt_id, ack, slots, now)
        });
    }

    /// A task declined a checkpoint.
    pub fn decline_checkpoint(&self, job: JobId, attempt_id: &str, checkpoint_id: u64, reason: String) {
        tracing::info!("job {job}: checkpoint {checkpoint_id} declined by {attempt_id}: {reason}");
        self.with_job(job, |jm, slots, now| {
            jm.decline_checkpoint(attempt_id, checkpoint_id, reason, slots, now)
        });
    }

    /// The I/O shell finished writing a checkpoint's `_metadata`.
    pub fn checkpoint_metadata_written(&self, job: JobId, checkpoint_id: u64, result: Result<Option<String>, String>) {
        if let Err(e) = &result {
            tracing::warn!("job {job}: checkpoint {checkpoint_id} could not be finalized: {e}");
        }
        self.with_job(job, |jm, slots, now| {
            jm.checkpoint_metadata_written(checkpoint_id, result, slots, now)
        });
    }

    /// Runs `f` on job `job`'s JobMaster under the lock and emits its actions.
    fn with_job(&self, job: JobId, f: impl FnOnce(&mut JobMaster, &mut SlotTable, i64) -> Vec<Action>) {
        let now = now_ms();
        let mut st = self.lock();
        let State { slots, jobs } = &mut *st;
        let actions = match jobs.get_mut(&job) {
            Some(jm) => f(jm, slots, now),
            None => Vec::new(),
        };
        drop(st);
        self.emit(actions);
    }

    /// A FINISHED task reported the bytes per subpartition of its blocking results.
    pub fn result_partition_bytes(&self, job: JobId, attempt_id: &str, partitions: Vec<(u32, Vec<u64>)>) {
        self.with_job(job, |jm, _, _| {
            jm.record_result_bytes(attempt_id, partitions);
            Vec::new()
        });
    }

    /// A FAILED task reported the consumed partition it found missing.
    pub fn missing_partition(&self, job: JobId, attempt_id: &str, partition: &weir_rpc::ResultPartitionId) {
        self.with_job(job, |jm, _, _| {
            jm.record_missing_partition(attempt_id, partition);
            Vec::new()
        });
    }

    /// A task reported a state change.
    pub fn task_state(&self, job: JobId, attempt_id: &str, state: ExecutionState, failure: Option<(String, String)>) {
        let now = now_ms();
        let mut st = self.lock();
        let State { slots, jobs } = &mut *st;
        let actions = match jobs.get_mut(&job) {
            Some(jm) => jm.on_task_state(attempt_id, state, failure, slots, now),
            None => Vec::new(),
        };
        drop(st);
        self.emit(actions);
        self.run_due_restarts();
    }

    /// Periodic work: expired heartbeats, slot timeouts, due restarts.
    pub fn tick(&self) {
        let now = now_ms();
        let timeout = self.settings.heartbeat_timeout.as_millis() as i64;
        let expired = self.lock().slots.expired(now, timeout);
        for tm in expired {
            self.taskmanager_lost(&tm, &format!("Heartbeat of TaskManager with id {tm} timed out."));
        }
        let mut st = self.lock();
        let State { slots, jobs } = &mut *st;
        let mut actions = Vec::new();
        for jm in jobs.values_mut() {
            actions.extend(jm.tick(slots, now));
        }
        drop(st);
        self.emit(actions);
    }

    /// Accepts a job: builds its program (found by the job's id when it was built
    /// in-process, else by name), compiles its graphs, starts its JobMaster with the
    /// restart strategy and checkpointing of the job's configuration. The job runs under
    /// the submission's fixed id (refused when a job has it already) or a fresh one.
    pub fn submit(&self, submission: JobSubmission) -> Result<JobId, SubmissionError> {
        let JobSubmission {
            invocation,
            config,
            savepoint_path,
            allow_non_restored_state,
            job_id,
        } = submission;
        let job_id = job_id.unwrap_or_else(JobId::random);
        if self.lock().jobs.contains_key(&job_id) {
            return Err(SubmissionError(format!("a job with id {job_id} already exists")));
        }
        let program = self
            .registry
            .build_job(job_id, &invocation)
            .map_err(|e| SubmissionError(e.to_string()))?;
        let mut job_graph =
            JobGraph::from_stream_graph(&program.stream_graph).map_err(|e| SubmissionError(e.to_string()))?;
        let limits = (
            self.settings.max_submission_subtasks,
            self.settings.max_submission_channels,
        );
        crate::dispatcher::submission_limits::check_submission_size(&job_graph, limits.0, limits.1)
            .map_err(|e| SubmissionError(e.to_string()))?;
        let adaptive = adaptive_options(&config, &job_graph, invocation.parallelism)
            .map_err(|e| SubmissionError(e.to_string()))?
            .map(|options| prepare_job_graph(&mut job_graph, &options));
        let fingerprint = program.stream_graph.fingerprint();
        let mut checkpoint_config =
            weir_checkpoint::CheckpointConfig::from_config(&config).map_err(|e| SubmissionError(e.to_string()))?;
        if job_graph.config.runtime_mode.is_batch() {
            // As Flink: no periodic checkpoints in BATCH mode (a failure reruns regions
            // from their blocking inputs instead).
            checkpoint_config.interval = None;
        }
        let restart = RestartBackoffTimeStrategy::from_config(&config, checkpoint_config.is_enabled(), job_id.0 as u64)
            .map_err(|e| SubmissionError(e.to_string()))?;
        let vertices = crate::job_master::vertex_infos(&job_graph, &program.stream_graph);
        let now = now_ms();
        let mut jm = JobMaster::new(
            job_id,
            invocation,
            fingerprint,
            job_graph,
            restart,
            self.settings.slot_request_timeout.as_millis() as i64,
            now,
        );
        if let Some(adaptive) = adaptive {
            jm.enable_adaptive_batch(adaptive);
        }
        jm.set_failover_strategy(
            config
                .get(&weir_config::options::FAILOVER_STRATEGY)
                .map_err(|e| SubmissionError(e.to_string()))?,
        );
        jm.set_partition_release_during_job_execution(
            config
                .get(&weir_config::options::PARTITION_RELEASE_DURING_JOB_EXECUTION)
                .map_err(|e| SubmissionError(e.to_string()))?,
        );
        // Every job has a coordinator: savepoints need one even without periodic
        // checkpoints.
        jm.enable_checkpointing(checkpoint_config, vertices);
        if let Some(path) = savepoint_path {
            let metadata = weir_checkpoint::read_metadata(&path).map_err(|e| SubmissionError(e.to_string()))?;
            jm.restore_from_savepoint(metadata, &path, allow_non_restored_state, now)
                .map_err(|e| SubmissionError(e.to_string()))?;
        }
        let mut st = self.lock();
        let actions = jm.start(&mut st.slots, now);
        st.jobs.insert(job_id, jm);
        drop(st);
        self.emit(actions);
        tracing::info!("job {job_id} submitted");
        Ok(job_id)
    }

    /// Triggers a savepoint (a stop-with-savepoint when `request.stop_drain` is set) of
    /// `job`; the trigger id to poll, or `None` when the job does not exist.
    pub fn trigger_savepoint(&self, job: JobId, request: SavepointRequest) -> Option<Result<String, SavepointRefused>> {
        let now = now_ms();
        let trigger_id = JobId::random().to_string();
        let mut st = self.lock();
        let State { slots, jobs } = &mut *st;
        let jm = jobs.get_mut(&job)?;
        let result = jm.trigger_savepoint(trigger_id.clone(), request, slots, now);
        drop(st);
        Some(result.map(|actions| {
            self.emit(actions);
            trigger_id
        }))
    }

    /// The savepoint operation `trigger_id` of `job`: `None` when the job does not
    /// exist, `Some(None)` when it has no such operation.
    pub fn savepoint_operation(&self, job: JobId, trigger_id: &str) -> Option<Option<SavepointOperation>> {
        let st = self.lock();
        let jm = st.jobs.get(&job)?;
        Some(jm.savepoint_operation(trigger_id).cloned())
    }

    /// The status of a job; `None` if it does not exist.
    pub fn job_status(&self, job: JobId) -> Option<weir_core::JobStatus> {
        self.lock().jobs.get(&job).map(|jm| jm.status)
    }

    /// Cancels a job; `None` if it does not exist.
    pub fn cancel(&self, job: JobId) -> Option<Result<(), weir_core::JobStatus>> {
        let now = now_ms();
        let mut st = self.lock();
        let State { slots, jobs } = &mut *st;
        let jm = jobs.get_mut(&job)?;
        if jm.is_globally_terminal() {
            return Some(Err(jm.status));
        }
        let actions = jm.cancel(slots, now);
        drop(st);
        self.emit(actions);
        Some(Ok(()))
    }
}
