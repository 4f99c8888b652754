//! The TaskExecutor's core: slots, running tasks and the code of each job.
//!
//! Deploying a task rebuilds the job's program once per job — or, for a job built by
//! closures in this process, finds it by the job's id (`ProgramRegistry::build_job`) —
//! (and refuses the task if the build's StreamGraph fingerprint differs from the
//! JobManager's), creates and
//! registers the task's result partitions, and starts the task thread, which connects
//! its input channels (local or remote, waiting for producers that deploy later), runs
//! the chain, and reports every state change to the JobMaster.

use crate::attempt_ref::AttemptRef;
use crate::checkpointing::{task_checkpointing, Report};
use crate::metric_reports::{input_watermarks, operator_reports, watermark};
use crate::settings::TaskManagerSettings;
use crate::task_identity::{RunningTaskMetrics, TaskIdentity};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::mpsc::UnboundedSender;
use weir_api::program::{ProgramInvocation, ProgramRegistry};
use weir_core::ids::JobId;
use weir_graph::JobGraph;
use weir_rpc::{
    NetworkMemory, ResultPartitionBytes, ResultPartitionType, SlotStatus, TaskDeploymentDescriptor, TaskExecutionState,
    TaskMetricsReport,
};
use weir_runtime::executor::ExecutableGraph;
use weir_runtime::network::{BlockingPartition, CancelToken, ChannelSpec, NetworkEnvironment, PartitionId};
use weir_runtime::task::chain::NetworkOutput;
use weir_runtime::task::mailbox::{Mailbox, MailboxSender, TaskMail};
use weir_runtime::task::metrics::TaskMetrics;
use weir_runtime::task::{run_task, TaskSpec};
use weir_runtime::TaskError;

/// The code of one job on this TaskManager.
struct JobCode {
    program: Arc<ExecutableGraph>,
    job_graph: Arc<JobGraph>,
    /// Where its keyed operators keep state (the job's own backend, or this
    /// TaskManager's).
    state_backend: crate::state_backends::StateBackend,
}

struct RunningTask {
    job_id: String,
    slot: u32,
    identity: TaskIdentity,
    generation: u32,
    cancel: CancelToken,
    metrics: Arc<TaskMetrics>,
    mailbox: MailboxSender,
}

#[derive(Default)]
struct ExecutorState {
    slots: Vec<Option<String>>,
    tasks: HashMap<String, RunningTask>,
    jobs: HashMap<String, Arc<JobCode>>,
    /// The deploying JobMaster's fencing token of each job.
    fencing: crate::fencing::JobFencing,
}

/// What the report of a FAILED attempt says.
#[derive(Default)]
struct FailureReport {
    /// The exception name.
    name: String,
    /// The message chain.
    message: String,
    /// The consumed partition it found missing, when that is the cause.
    missing_partition: Option<PartitionId>,
}

/// What a deployment prepared for its task thread.
struct PreparedTask {
    specs: [Vec<ChannelSpec>; 2],
    outputs: Vec<NetworkOutput>,
    /// The task's blocking result partitions by job edge, whose bytes FINISHED reports.
    blocking: Vec<(u32, Arc<BlockingPartition>)>,
    cancel: CancelToken,
    metrics: Arc<TaskMetrics>,
    checkpointing: Option<weir_runtime::task::TaskCheckpointing>,
}

/// Runs the tasks the JobManager deploys here.
pub struct TaskExecutor {
    settings: TaskManagerSettings,
    registry: Arc<ProgramRegistry>,
    network: Arc<NetworkEnvironment>,
    state: Mutex<ExecutorState>,
    reports: UnboundedSender<Report>,
    operator_events: Option<crate::operator_events::OperatorEventClient>,
}

/// The wire form of a program invocation, read back.
pub fn invocation_from_proto(p: &weir_rpc::ProgramInvocation) -> ProgramInvocation {
    ProgramInvocation {
        program: p.program.clone(),
        args: p.args.clone().into_iter().collect(),
        parallelism: p.parallelism,
        max_parallelism: (p.max_parallelism > 0).then_some(p.max_parallelism),
        chaining_enabled: p.chaining_enabled,
        buffer_timeout_ms: p.buffer_timeout_ms,
        auto_watermark_interval_ms: p.auto_watermark_interval_ms,
        runtime_mode: weir_core::RuntimeExecutionMode::parse(&p.runtime_mode).unwrap_or_default(),
        job_name: p.job_name.clone(),
        // Checked by the JobManager when it accepted the job.
        limits: Default::default(),
        state_backend: p.state_backend.clone().into_iter().collect(),
    }
}

fn partition_id(p: &weir_rpc::ResultPartitionId) -> PartitionId {
    PartitionId {
        job_id: p.job_id.clone(),
        job_edge: p.job_edge,
        producer_subtask: p.producer_subtask,
        attempt: p.attempt,
    }
}

fn partition_id_to_proto(p: &PartitionId) -> weir_rpc::ResultPartitionId {
    weir_rpc::ResultPartitionId {
        job_id: p.job_id.clone(),
        job_edge: p.job_edge,
        producer_subtask: p.producer_subtask,
        attempt: p.attempt,
    }
}

/// The consumed partition a task failed for lack of, if that is its cause.
fn missing_partition(e: &TaskError) -> Option<&PartitionId> {
    match e {
        TaskError::Network(n) => n.missing_partition(),
        _ => None,
    }
}

/// What a failed task reports: the exception name (Flink's
/// `PartitionNotFoundException` for a missing consumed partition), its message, and the
/// missing partition.
fn describe_failure(e: &TaskError) -> FailureReport {
    if let Some(missing) = missing_partition(e) {
        return FailureReport {
            name: "weir.runtime.io.network.partition.PartitionNotFoundException".to_string(),
            message: e.to_string(),
            missing_partition: Some(missing.clone()),
        };
    }
    let name = match e {
        TaskError::User { .. } => "weir.runtime.UserFunctionException",
        TaskError::Panicked(_) => "weir.runtime.TaskPanicException",
        TaskError::Network(_) => "weir.runtime.io.network.NetworkException",
        TaskError::Io { .. } | TaskError::Storage(_) => "java.io.IOException",
        TaskError::Codec(_) => "weir.runtime.SerializationException",
        TaskError::Build(_) => "weir.runtime.TaskBuildException",
        TaskError::Cancelled => "weir.runtime.CancelTaskException",
        TaskError::Restore { .. } => "weir.runtime.state.StateRestoreException",
    };
    FailureReport {
        name: name.to_string(),
        message: e.to_string(),
        missing_partition: None,
    }
}

impl TaskExecutor {
    /// A TaskExecutor with `settings.num_slots` free slots.
    pub fn new(
        settings: TaskManagerSettings,
        registry: Arc<ProgramRegistry>,
        network: Arc<NetworkEnvironment>,
        reports: UnboundedSender<Report>,
    ) -> Arc<Self> {
        let state = ExecutorState {
            slots: vec![None; settings.num_slots as usize],
            ..Default::default()
        };
        let operator_events = crate::operator_events::OperatorEventClient::connect_lazy(
            &settings.jobmanager_rpc,
            settings.internal_tls.as_deref(),
        );
        Arc::new(Self {
            settings,
            registry,
            network,
            state: Mutex::new(state),
            reports,
            operator_events,
        })
    }

    /// The start-up settings.
    pub fn settings(&self) -> &TaskManagerSettings {
        &self.settings
    }

    /// The identity of this process's binary (its programs), which registration sends.
    pub fn binary_identity(&self) -> String {
        self.registry.identity()
    }

    fn lock(&self) -> MutexGuard<'_, ExecutorState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Which job holds each slot.
    pub fn slot_report(&self) -> Vec<SlotStatus> {
        self.lock()
            .slots
            .iter()
            .enumerate()
            .map(|(i, j)| SlotStatus {
                slot_index: i as u32,
                job_id: j.clone().unwrap_or_default(),
            })
            .collect()
    }

    /// Number of tasks running now.
    pub fn running_tasks(&self) -> usize {
        self.lock().tasks.len()
    }

    fn report(&self, attempt: &AttemptRef, state: &str, failure: Option<FailureReport>) {
        self.report_with_counts(attempt, state, failure, &TaskMetrics::new(), &[]);
    }

    /// Releases every blocking partition this TaskManager holds (deleting their spill
    /// files): the TaskManager shuts down.
    pub fn release_all_partitions(&self) {
        self.network
            .release_all_blocking_partitions("the TaskManager that held it shut down");
    }

    /// The network buffer pool now (Flink's `Status.Shuffle.Netty.*` metrics) and the
    /// blocking partitions held.
    pub fn network_memory(&self) -> NetworkMemory {
        let blocking = self.network.blocking_partition_bytes();
        NetworkMemory {
            total_segments: self.network.total_buffers() as u64,
            available_segments: self.network.available_buffers() as u64,
            segment_size: self.network.buffer_pool().segment_size() as u64,
            blocking_partitions: blocking.partitions,
            blocking_memory_bytes: blocking.memory,
            blocking_spilled_bytes: blocking.spilled,
        }
    }

    /// Live counters of every running task.
    pub fn metrics_report(&self) -> Vec<TaskMetricsReport> {
        self.lock()
            .tasks
            .iter()
            .map(|(attempt, t)| {
                let s = t.metrics.snapshot();
                let [input1_watermark, input2_watermark] = input_watermarks(&s);
                TaskMetricsReport {
                    job_id: t.job_id.clone(),
                    attempt_id: attempt.clone(),
                    records_in: s.records_in,
                    records_out: s.records_out,
                    busy_ms: s.busy_ms,
                    idle_ms: s.idle_ms,
                    backpressured_ms: s.backpressured_ms,
                    bytes_in: s.bytes_in,
                    bytes_out: s.bytes_out,
                    input_watermark: watermark(s.input_watermark),
                    output_watermark: watermark(s.output_watermark),
                    in_pool_usage_permille: permille_u32(s.in_pool_usage_permille),
                    out_pool_usage_permille: permille_u32(s.out_pool_usage_permille),
                    operators: operator_reports(t.metrics.operators()),
                    input1_watermark,
                    input2_watermark,
                }
            })
            .collect()
    }

    /// Every running task with its live counters, for the metric reporters.
    pub fn running_task_metrics(&self) -> Vec<RunningTaskMetrics> {
        self.lock()
            .tasks
            .values()
            .map(|t| RunningTaskMetrics {
                identity: t.identity.clone(),
                task: t.metrics.snapshot(),
                operators: t.metrics.operators(),
            })
            .collect()
    }

    fn report_with_counts(
        &self,
        attempt: &AttemptRef,
        state: &str,
        failure: Option<FailureReport>,
        metrics: &TaskMetrics,
        blocking: &[(u32, Arc<BlockingPartition>)],
    ) {
        let FailureReport {
            name: failure_name,
            message: failure_message,
            missing_partition,
        } = failure.unwrap_or_default();
        let counts = metrics.snapshot();
        let [input1_watermark, input2_watermark] = input_watermarks(&counts);
        let sent = self.reports.send(Report::State(Box::new(TaskExecutionState {
            job_id: attempt.job_id.clone(),
            attempt_id: attempt.attempt_id.clone(),
            job_master_id: attempt.job_master_id.clone(),
            state: state.to_string(),
            failure_name,
            failure_message,
            resource_id: self.settings.resource_id.clone(),
            records_in: counts.records_in,
            records_out: counts.records_out,
            busy_ms: counts.busy_ms,
            idle_ms: counts.idle_ms,
            backpressured_ms: counts.backpressured_ms,
            bytes_in: counts.bytes_in,
            bytes_out: counts.bytes_out,
            input_watermark: watermark(counts.input_watermark),
            output_watermark: watermark(counts.output_watermark),
            operators: operator_reports(metrics.operators()),
            input1_watermark,
            input2_watermark,
            result_partition_bytes: blocking
                .iter()
                .map(|(job_edge, partition)| ResultPartitionBytes {
                    job_edge: *job_edge,
                    subpartition_bytes: partition.subpartition_bytes(),
                })
                .collect(),
            missing_partition: missing_partition.as_ref().map(partition_id_to_proto),
        })));
        if sent.is_err() {
            // Only when the process shuts down: the JobManager then notices the lost
            // TaskManager by its broken RPC endpoint and fails the attempt over.
            tracing::warn!(
                "state report {state} of attempt {} (job {}) dropped: the TaskManager is shutting down",
                attempt.attempt_id,
                attempt.job_id
            );
        }
    }

    fn job_code(&self, tdd: &TaskDeploymentDescriptor) -> Result<Arc<JobCode>, String> {
        if let Some(code) = self.lock().jobs.get(&tdd.job_id) {
            return Ok(code.clone());
        }
        let invocation = tdd
            .program
            .as_ref()
            .map(invocation_from_proto)
            .ok_or("deployment without a program")?;
        let job = JobId::parse(&tdd.job_id).ok_or_else(|| format!("malformed job id '{}'", tdd.job_id))?;
        let program = self
            .registry
            .build_job(job, &invocation)
            .map_err(|e| format!("cannot build program '{}': {e}", invocation.program))?;
        let fingerprint = program.stream_graph.fingerprint();
        if fingerprint != tdd.fingerprint {
            return Err(format!(
                "this TaskManager's build of program '{}' gives a different StreamGraph (fingerprint {fingerprint}, the JobManager's is {}): is it running the same binary?",
                invocation.program, tdd.fingerprint
            ));
        }
        let job_graph = JobGraph::from_stream_graph(&program.stream_graph).map_err(|e| e.to_string())?;
        let state_backend = self
            .settings
            .state_backends
            .for_job(&invocation.state_backend)
            .map_err(|e| format!("cannot open the state backend of job {}: {e}", tdd.job_id))?;
        let code = Arc::new(JobCode {
            program: Arc::new(program),
            job_graph: Arc::new(job_graph),
            state_backend,
        });
        self.lock().jobs.insert(tdd.job_id.clone(), code.clone());
        Ok(code)
    }

    /// Deploys a task; an error is the rejection reason.
    pub fn submit(self: &Arc<Self>, tdd: TaskDeploymentDescriptor) -> Result<(), String> {
        {
            let mut st = self.lock();
            let live = st.tasks.values().any(|t| t.job_id == tdd.job_id);
            st.fencing
                .admit_deployment(&tdd.job_id, &tdd.job_master_id, live)
                .map_err(|e| e.to_string())?;
            let slot = st.slots.get_mut(tdd.slot_index as usize).ok_or_else(|| {
                format!(
                    "slot {} does not exist (this TaskManager has {})",
                    tdd.slot_index, self.settings.num_slots
                )
            })?;
            match slot {
                Some(job) if *job != tdd.job_id => return Err(format!("slot {} is held by job {job}", tdd.slot_index)),
                _ => *slot = Some(tdd.job_id.clone()),
            }
            if st.tasks.contains_key(&tdd.attempt_id) {
                return Err(format!("attempt {} is already deployed", tdd.attempt_id));
            }
        }
        let code = with_decided_parallelism(self.job_code(&tdd)?, &tdd.vertex_parallelism)?;
        let vertex = tdd.vertex_index as usize;
        if vertex >= code.job_graph.vertices.len() {
            return Err(format!("job has no vertex {vertex}"));
        }
        let cancel = CancelToken::new();
        let metrics = Arc::new(TaskMetrics::with_collection(self.settings.metrics_collection));
        let mut outputs = Vec::new();
        let mut blocking = Vec::new();
        for out in &tdd.outputs {
            let pid = out
                .partition
                .as_ref()
                .map(partition_id)
                .ok_or("output without a partition id")?;
            let writer = if out.partition_type() == ResultPartitionType::Blocking {
                let (writer, partition) = self
                    .network
                    .create_blocking_result_partition(out.num_subpartitions as usize, pid.to_string(), cancel.clone())
                    .map_err(|e| e.to_string())?;
                self.network
                    .register_blocking_partition(pid.clone(), partition.clone())
                    .map_err(|e| e.to_string())?;
                blocking.push((pid.job_edge, partition));
                writer
            } else {
                let (writer, handles) = self
                    .network
                    .create_result_partition(out.num_subpartitions as usize, cancel.clone())
                    .map_err(|e| e.to_string())?;
                self.network
                    .register_partition(pid.clone(), handles)
                    .map_err(|e| e.to_string())?;
                writer
            };
            outputs.push(NetworkOutput {
                job_edge: pid.job_edge as usize,
                writer,
            });
        }
        let mut specs: [Vec<ChannelSpec>; 2] = [Vec::new(), Vec::new()];
        for i in &tdd.inputs {
            let Some(partition) = i.partition.as_ref().map(partition_id) else {
                continue;
            };
            let spec = if i.local {
                ChannelSpec::Local {
                    partition,
                    subpartition: i.subpartition,
                }
            } else {
                ChannelSpec::Remote {
                    address: i.producer_data_address.clone(),
                    partition,
                    subpartition: i.subpartition,
                }
            };
            specs[(i.input_index as usize).min(1)].push(spec);
        }
        let (mailbox_tx, mailbox) = Mailbox::new();
        let checkpointing = task_checkpointing(
            &tdd,
            &code.job_graph.vertices[vertex].id.to_string(),
            mailbox,
            self.reports.clone(),
        )?;
        let identity = TaskIdentity {
            job_id: tdd.job_id.clone(),
            job_name: tdd.program.as_ref().map(|p| p.job_name.clone()).unwrap_or_default(),
            vertex_id: code.job_graph.vertices[vertex].id.to_string(),
            task_name: code.job_graph.vertices[vertex].name.clone(),
            subtask_index: tdd.subtask_index,
            attempt_id: tdd.attempt_id.clone(),
            attempt_number: tdd.attempt_number,
            is_source: code.job_graph.vertices[vertex].is_source,
        };
        self.lock().tasks.insert(
            tdd.attempt_id.clone(),
            RunningTask {
                job_id: tdd.job_id.clone(),
                slot: tdd.slot_index,
                identity,
                generation: tdd.generation,
                cancel: cancel.clone(),
                metrics: metrics.clone(),
                mailbox: mailbox_tx,
            },
        );
        let me = self.clone();
        let name = format!(
            "{} ({}/{})",
            code.job_graph.vertices[vertex].name,
            tdd.subtask_index + 1,
            code.job_graph.vertices[vertex].parallelism
        );
        let spawned = std::thread::Builder::new().name(name).spawn(move || {
            me.run(
                tdd,
                code,
                PreparedTask {
                    specs,
                    outputs,
                    blocking,
                    cancel,
                    metrics,
                    checkpointing,
                },
            )
        });
        if let Err(e) = spawned {
            return Err(format!("cannot start task thread: {e}"));
        }
        Ok(())
    }

    fn run(self: Arc<Self>, tdd: TaskDeploymentDescriptor, code: Arc<JobCode>, task: PreparedTask) {
        let PreparedTask {
            specs,
            outputs,
            blocking,
            cancel,
            metrics,
            checkpointing,
        } = task;
        let (job, attempt) = (tdd.job_id.clone(), tdd.attempt_id.clone());
        let reported = AttemptRef::of(&tdd);
        self.report(&reported, "INITIALIZING", None);
        let result = (|| {
            let [first, second] = specs;
            let gate = |specs: Vec<ChannelSpec>| {
                if specs.is_empty() {
                    Ok(None)
                } else {
                    self.network
                        .create_input_gate_from_specs(specs, cancel.clone())
                        .map(Some)
                }
            };
            let input = gate(first)?;
            let second_input = gate(second)?;
            let reporter = self.clone();
            let running = reported.clone();
            run_task(TaskSpec {
                program: code.program.clone(),
                job_graph: code.job_graph.clone(),
                vertex: tdd.vertex_index as usize,
                subtask_index: tdd.subtask_index,
                attempt_number: tdd.attempt_number,
                input,
                second_input,
                outputs,
                cancel: cancel.clone(),
                metrics: metrics.clone(),
                checkpointing,
                keyed_state_store: code.state_backend.clone(),
                on_running: Some(Box::new(move || reporter.report(&running, "RUNNING", None))),
                operator_events: self.operator_events.as_ref().map(|c| {
                    Arc::new(c.for_attempt(reported.clone()))
                        as Arc<dyn weir_runtime::operator::coordination::OperatorEventGateway>
                }),
            })
        })();
        {
            // A slot without tasks is free again: a batch job's next stage, or whichever
            // job the JobManager gives it to, may take it.
            let mut st = self.lock();
            st.tasks.remove(&attempt);
            if !st.tasks.values().any(|t| t.slot == tdd.slot_index) {
                if let Some(slot) = st.slots.get_mut(tdd.slot_index as usize) {
                    *slot = None;
                }
            }
        }
        match result {
            Ok(_) => self.report_with_counts(&reported, "FINISHED", None, &metrics, &blocking),
            Err(TaskError::Cancelled) => self.report(&reported, "CANCELED", None),
            Err(TaskError::Network(e)) if e.is_cancelled() || e.is_peer_gone() || cancel.is_cancelled() => {
                self.report(&reported, "CANCELED", None)
            }
            Err(e) => {
                tracing::warn!("task {attempt} of job {job} failed: {e}");
                self.report(&reported, "FAILED", Some(describe_failure(&e)))
            }
        }
    }

    /// Hands a control mail to a running attempt; false when it is not running here.
    pub fn send_mail(&self, attempt_id: &str, mail: TaskMail) -> bool {
        match self.lock().tasks.get(attempt_id) {
            Some(t) => t.mailbox.send(mail).is_ok(),
            None => false,
        }
    }

    /// Refuses a job-scoped request of `job_id` without the fencing token of the
    /// JobMaster that deployed the job here.
    pub fn check_job_fencing(&self, job_id: &str, token: &str) -> Result<(), crate::fencing::FencingError> {
        self.lock().fencing.check(job_id, token)
    }

    /// [`TaskExecutor::check_job_fencing`] for the job of `attempt_id`; passes when the
    /// attempt is not here (nothing to affect).
    pub fn check_attempt_fencing(&self, attempt_id: &str, token: &str) -> Result<(), crate::fencing::FencingError> {
        let st = self.lock();
        match st.tasks.get(attempt_id) {
            Some(t) => st.fencing.check(&t.job_id, token),
            None => Ok(()),
        }
    }

    /// Cancels one attempt.
    pub fn cancel(&self, attempt_id: &str) {
        if let Some(t) = self.lock().tasks.get(attempt_id) {
            t.cancel.cancel();
        }
    }

    /// Cancels the tasks of a job's generations below `below_generation` and drops
    /// their partitions; once no task of the job is left, frees its slots and code,
    /// and its local state copies unless `keep_local_state` (the job restarts).
    pub fn release_job(&self, job_id: &str, below_generation: u32, keep_local_state: bool) {
        let mut st = self.lock();
        for t in st
            .tasks
            .values()
            .filter(|t| t.job_id == job_id && t.generation < below_generation)
        {
            t.cancel.cancel();
        }
        let newer = st
            .tasks
            .values()
            .any(|t| t.job_id == job_id && t.generation >= below_generation);
        if !newer {
            for s in st.slots.iter_mut() {
                if s.as_deref() == Some(job_id) {
                    *s = None;
                }
            }
            st.jobs.remove(job_id);
            st.fencing.forget(job_id);
            if !keep_local_state {
                self.settings.state_backends.release_local_copies(job_id);
            }
        }
        drop(st);
        self.network.release_job_partitions_before(job_id, below_generation);
    }

    /// Releases blocking partitions of `job_id` whose consumers all finished (the
    /// JobMaster's release during the job): their memory goes back to the budget and
    /// their spill files are deleted. Returns how many were released; partitions of
    /// another job, or not held here, are skipped.
    pub fn release_partitions(&self, job_id: &str, partitions: &[weir_rpc::ResultPartitionId]) -> usize {
        let mut released = 0;
        for p in partitions.iter().filter(|p| p.job_id == job_id) {
            let id = partition_id(p);
            if self
                .network
                .release_blocking_partition(&id, "released by the JobManager once every consumer of it finished")
            {
                tracing::info!(partition = %id, "released a blocking partition: its consumers finished");
                released += 1;
            }
        }
        released
    }

    /// The JobManager is gone: cancel everything and free every slot.
    pub fn release_all(&self) {
        let jobs: Vec<String> = {
            let st = self.lock();
            let mut jobs: Vec<String> = st.slots.iter().flatten().cloned().collect();
            jobs.extend(st.tasks.values().map(|t| t.job_id.clone()));
            jobs.sort();
            jobs.dedup();
            jobs
        };
        for j in jobs {
            self.release_job(&j, u32::MAX, false);
        }
    }
}

/// The job's code with the parallelism and max parallelism the JobManager's adaptive
/// batch scheduler decided applied to its JobGraph (unchanged without decisions).
fn with_decided_parallelism(
    code: Arc<JobCode>,
    decided: &[weir_rpc::VertexParallelism],
) -> Result<Arc<JobCode>, String> {
    if decided.is_empty() {
        return Ok(code);
    }
    let mut job_graph = (*code.job_graph).clone();
    for d in decided {
        let vertex = job_graph.vertices.get_mut(d.vertex_index as usize).ok_or_else(|| {
            format!(
                "the deployment decides vertex {}, which the job does not have",
                d.vertex_index
            )
        })?;
        vertex.parallelism = d.parallelism;
        vertex.max_parallelism = d.max_parallelism;
    }
    Ok(Arc::new(JobCode {
        program: code.program.clone(),
        job_graph: Arc::new(job_graph),
        state_backend: code.state_backend.clone(),
    }))
}

/// A task's watermark for a report: absent before the first (`i64::MIN`).
fn permille_u32(value: u64) -> u32 {
    value.min(1000) as u32
}
