//! The task loop (Flink's `StreamTask` with its mailbox): build the chain, restore
//! its state, then run it until its input ends, it fails or it is cancelled.
//!
//! One loop for sources and input tasks alike. Each round it processes one batch (a
//! source batch, or up to a batch of input waiting at most until the next flush or
//! wake-up), then its mailbox duties in order: control mails (checkpoint trigger,
//! notify complete/aborted), barrier outcomes of the input's alignment, due
//! processing-time wake-ups, and the buffer-timeout flush.
//!
//! A checkpoint (a trigger mail at a source, an aligned barrier at an input task)
//! snapshots every registered operator on this thread — the synchronous part: operator
//! state as bytes, keyed state frozen copy-on-write — then sends the barrier downstream
//! on every output channel, and hands the snapshot to a background thread that
//! encodes the frozen keyed state, stores it all and acknowledges;
//! records are processed again right after the barrier went out.
//!
//! An unaligned checkpoint (the first barrier of an unaligned checkpoint, or an
//! aligned one whose alignment timed out, and at a source a trigger of an unaligned
//! checkpoint) snapshots the same way but forwards the barrier as a priority event: it
//! overtakes the buffers queued in every subpartition, whose bytes become the
//! snapshot's output channel state (they are still sent). An input task keeps the
//! snapshot until the input processor's channel state is complete (every channel
//! delivered the barrier or ended); the recorded in-flight input data is then added to
//! the snapshot, which is stored and acknowledged with the size of both as
//! `persisted_data`. At most one unaligned snapshot waits at a time: a newer
//! checkpoint aborts the older one first.
//!
//! A restored task first queues the output channel state of its checkpoint on its
//! subpartitions, before its chain is built and anything else is written, and an input
//! task hands the input channel state to its input processor, which feeds it into the
//! channels' decoders before reading the network; unaligned channel state at another
//! parallelism, or for partitions and gates of another size, is refused.
//!
//! Checkpoints after tasks finish (Flink's FLIP-147): an input task whose upstream
//! tasks have all finished gets its triggers from the coordinator, as a source does;
//! it takes such a checkpoint once every input channel has ended, before it ends its
//! chain's input, so the snapshot holds everything the finished tasks sent. A task
//! restored as finished runs none of its operators (`finished_on_restore.rs`). A task
//! waits for its snapshot uploads before it finishes, so that its acknowledgements
//! reach the JobMaster before its FINISHED state.
//!
//! The final checkpoint (Flink's FLIP-147): in a job with periodic checkpoints, a task
//! whose input ended does not finish while one of its operators awaits a checkpoint
//! (a two-phase-commit sink holding its last transaction, `final_checkpoint.rs`): it
//! serves only its mailbox, takes the next checkpoint it is triggered for (its
//! upstream tasks have finished, so it is a root) without sending a barrier (its
//! outputs have ended), and finishes once the notifications let every operator go.
//!
//! At the end of input pending processing-time timers are dropped, not fired (as in
//! Flink, where a finished task quiesces its timer service).

mod checkpoint;
mod final_checkpoint;
mod finished_on_restore;

use crate::checkpoint::{BarrierOutcome, CheckpointResponder, EndOfInputTrigger, TaskRestore, TaskStateStorage};
use crate::error::TaskError;
use crate::executor::ExecutableGraph;
use crate::network::{CancelToken, InputGate, PoolUsage};
use crate::operator::{ProcessingTimeService, SourceStatus, TaskContext};
use crate::task::chain::{build_chain, Invokable, NetworkOutput};
use crate::task::chain_metrics::ChainMetrics;
use crate::task::input::{InputProcessor, InputStatus};
use crate::task::mailbox::{Mailbox, TaskMail};
use crate::task::metrics::{TaskMetrics, TaskMetricsSnapshot};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};
use weir_core::{CheckpointBarrier, CheckpointId};
use weir_graph::JobGraph;
use weir_state::PendingTaskSnapshot;

/// A task's part in checkpointing: where its control mails come from, where its
/// snapshots go and whom it tells.
pub struct TaskCheckpointing {
    /// Control mails (trigger, notify).
    pub mailbox: Mailbox,
    /// Where snapshots are stored.
    pub storage: TaskStateStorage,
    /// Receives acknowledgements and declines.
    pub responder: Arc<dyn CheckpointResponder>,
    /// The state to start from, if the task is restored.
    pub restore: Option<TaskRestore>,
    /// The job takes periodic checkpoints: a task whose input ended waits for one when
    /// an operator asks (a two-phase-commit sink, to commit its last transaction).
    pub final_checkpoint: bool,
}

/// Everything a subtask needs to run.
pub struct TaskSpec {
    /// The program: StreamGraph plus operator code.
    pub program: Arc<ExecutableGraph>,
    /// The compiled JobGraph.
    pub job_graph: Arc<JobGraph>,
    /// Index of the vertex in `job_graph.vertices`.
    pub vertex: usize,
    /// This subtask.
    pub subtask_index: u32,
    /// Execution attempt number.
    pub attempt_number: u32,
    /// The input gate (all input channels of the in-edges into input 0), if the vertex
    /// has input.
    pub input: Option<InputGate>,
    /// The second input's gate, for a two-input head.
    pub second_input: Option<InputGate>,
    /// One writer per outgoing JobEdge.
    pub outputs: Vec<NetworkOutput>,
    /// Cancels the task.
    pub cancel: CancelToken,
    /// Where the task publishes its live counters.
    pub metrics: Arc<TaskMetrics>,
    /// Checkpointing; none for a job without it.
    pub checkpointing: Option<TaskCheckpointing>,
    /// The store keyed operators spill their state to (`state.backend.type: rocksdb`);
    /// `None`: keyed state stays on the heap.
    pub keyed_state_store: Option<Arc<dyn weir_state::KeyedStateStoreFactory>>,
    /// Called once the chain is built and its state restored, just before the first
    /// record (Flink's INITIALIZING → RUNNING).
    pub on_running: Option<Box<dyn FnOnce() + Send>>,
    /// Where operators send events to their coordinators (none without a JobMaster).
    pub operator_events: Option<Arc<dyn crate::operator::coordination::OperatorEventGateway>>,
}

/// Runs a subtask to completion on the calling thread and returns its final counters
/// (also published to `spec.metrics`); user panics become errors.
pub fn run_task(spec: TaskSpec) -> Result<TaskMetricsSnapshot, TaskError> {
    match catch_unwind(AssertUnwindSafe(move || run_task_inner(spec))) {
        Ok(Err(TaskError::Network(e))) if e.is_cancelled() => Err(TaskError::Cancelled),
        Ok(result) => result,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "task panicked".to_string());
            Err(TaskError::Panicked(msg))
        }
    }
}

fn run_task_inner(mut spec: TaskSpec) -> Result<TaskMetricsSnapshot, TaskError> {
    let jv = spec
        .job_graph
        .vertices
        .get(spec.vertex)
        .ok_or_else(|| TaskError::Build(format!("no job vertex {}", spec.vertex)))?;
    let checkpointing = spec.checkpointing.take();
    if checkpointing
        .as_ref()
        .and_then(|c| c.restore.as_ref())
        .is_some_and(|r| r.finished)
    {
        if let Some(on_running) = spec.on_running.take() {
            on_running();
        }
        let inputs = [spec.input.take(), spec.second_input.take()]
            .into_iter()
            .flatten()
            .collect();
        finished_on_restore::run_finished_on_restore(std::mem::take(&mut spec.outputs), inputs, &spec.cancel)?;
        return Ok(spec.metrics.snapshot());
    }
    let mut restored = match checkpointing.as_ref().and_then(|c| c.restore.as_ref()) {
        Some(restore) => Some(restore.load(spec.subtask_index, jv.parallelism)?),
        None => None,
    };
    let channel_state = match restored.as_mut() {
        Some(r) => {
            let state = r.take_channel_state(&jv.name).map_err(|e| TaskError::Restore {
                checkpoint_id: r.checkpoint_id,
                reason: e.to_string(),
            })?;
            Some((r.checkpoint_id, state)).filter(|(_, s)| !s.is_empty())
        }
        None => None,
    };
    let channel_state = match channel_state {
        Some((checkpoint_id, state)) => {
            resend_output_channel_state(checkpoint_id, &jv.name, state.output, &mut spec.outputs)?;
            Some((checkpoint_id, state.input)).filter(|(_, s)| !s.is_empty())
        }
        None => None,
    };
    let ctx = TaskContext::new(
        spec.program.stream_graph.job_name.clone(),
        jv.name.clone(),
        spec.subtask_index,
        jv.parallelism,
        jv.max_parallelism,
        spec.attempt_number,
        spec.program.stream_graph.config.buffer_timeout_ms,
    )
    .with_restored_state(restored)
    .with_keyed_state_store(spec.keyed_state_store.take())
    .with_shared_state(checkpointing.as_ref().map(|c| {
        let storage: Arc<dyn weir_state::incremental::SharedStateTransfer> = Arc::new(c.storage.clone());
        storage
    }))
    .with_final_checkpoint(checkpointing.as_ref().is_some_and(|c| c.final_checkpoint))
    .with_metrics_collection(spec.metrics.collects())
    .with_operator_event_gateway(spec.operator_events.take());
    let invokable = build_chain(
        &spec.program,
        &spec.job_graph,
        spec.vertex,
        &ctx,
        spec.input.take(),
        spec.second_input.take(),
        std::mem::take(&mut spec.outputs),
    )?;
    let is_input_task = matches!(invokable, Invokable::Input(_));
    let mut task = TaskLoop {
        is_input_task,
        chain_metrics: ChainMetrics::of(&ctx, jv, is_input_task, &spec.metrics),
        ctx: &ctx,
        checkpointing,
        timeout: (ctx.buffer_timeout_ms > 0).then(|| Duration::from_millis(ctx.buffer_timeout_ms as u64)),
        next_flush: None,
        next_publish: Instant::now(),
        started: Instant::now(),
        idle: Duration::ZERO,
        metrics: &spec.metrics,
        cancel: &spec.cancel,
        timers: ctx.processing_time_service(),
        stop: None,
        pending_mail: None,
        unaligned: None,
        end_of_input_triggers: Vec::new(),
        uploads: Vec::new(),
        outputs_ended: false,
    };
    task.next_flush = task.timeout.map(|t| Instant::now() + t);
    if let Some(on_running) = spec.on_running.take() {
        on_running();
    }
    let records_in = match invokable {
        Invokable::Source(_) if channel_state.is_some() => {
            return Err(TaskError::Restore {
                checkpoint_id: channel_state.map_or(0, |(id, _)| id),
                reason: format!("'{}' is a source but its state holds in-flight input data", jv.name),
            });
        }
        Invokable::Source(mut driver) => {
            loop {
                task.check_cancelled()?;
                let status = match task.stop {
                    Some(_) => {
                        // Suspended by a stop-with-savepoint: only mail until it ends.
                        task.wait_for_mail(Duration::from_millis(10));
                        SourceStatus::More
                    }
                    None => driver.run_batch()?,
                };
                if let SourceStatus::Throttled(wait) = status {
                    task.wait_for_mail(task.wait_until_due(wait));
                }
                if task.publish_due() {
                    task.publish_now(InputCounters::SOURCE);
                }
                task.mailbox_duties(None)?;
                if let Some(now) = due_wakeup(&task.timers) {
                    driver.on_processing_time(now)?;
                }
                task.maybe_flush()?;
                if let Some(stop) = task.stop.filter(|s| s.completed) {
                    if stop.drain {
                        driver.finish()?;
                    } else {
                        driver.finish_without_drain()?;
                    }
                    break;
                }
                if status == SourceStatus::Finished {
                    driver.finish()?;
                    break;
                }
            }
            InputCounters::SOURCE
        }
        Invokable::Input(mut processor) => {
            if let Some((checkpoint_id, state)) = channel_state {
                processor.restore_channel_state(checkpoint_id, state)?;
            }
            loop {
                task.check_cancelled()?;
                let status = processor.process(Some(task.wait_until_due(Duration::from_millis(100))))?;
                task.idle += processor.take_idle_time();
                if task.publish_due() {
                    task.publish_now(InputCounters::of(processor.as_ref()));
                }
                while let Some(outcome) = processor.take_barrier_outcome() {
                    match outcome {
                        BarrierOutcome::Aligned(barrier) => {
                            task.checkpoint(barrier, processor.last_alignment_duration())?;
                        }
                        BarrierOutcome::Unaligned(barrier) => task.checkpoint_unaligned(barrier)?,
                        BarrierOutcome::ChannelStateComplete(id) => {
                            let state = processor.take_channel_state(id);
                            task.complete_unaligned(id, state, processor.last_alignment_duration());
                        }
                        BarrierOutcome::Aborted(id) => {
                            processor.discard_channel_state(id);
                            if task.unaligned.as_ref().is_some_and(|u| u.checkpoint_id == id) {
                                task.unaligned = None;
                            }
                            task.decline(
                                id,
                                "the checkpoint was subsumed by a newer one before its barriers were aligned",
                            );
                        }
                    }
                }
                task.mailbox_duties(None)?;
                for barrier in std::mem::take(&mut task.end_of_input_triggers) {
                    if processor.trigger_at_end_of_input(barrier) == EndOfInputTrigger::Refused {
                        task.decline(barrier.id, weir_core::checkpoint::DECLINE_TASK_CLOSING);
                    }
                }
                if status != InputStatus::EndOfInput {
                    if let Some(now) = due_wakeup(&task.timers) {
                        processor.on_processing_time(now)?;
                    }
                }
                task.maybe_flush()?;
                if status == InputStatus::EndOfInput {
                    break InputCounters::of(processor.as_ref());
                }
            }
        }
    };
    ctx.flush_all()?;
    task.outputs_ended = true;
    task.await_final_checkpoint(records_in)?;
    task.publish_now(records_in);
    task.wait_for_uploads();
    Ok(spec.metrics.snapshot())
}

/// How often a running task publishes its counters at most: often enough for the
/// heartbeat that carries them (every few hundred ms), rarely enough to cost nothing
/// per batch.
const PUBLISH_INTERVAL: Duration = Duration::from_millis(10);

/// A pool's usage in thousandths.
fn permille(usage: PoolUsage) -> u64 {
    (usage.fraction() * 1000.0).round() as u64
}

/// What the task read, for its metrics.
#[derive(Debug, Clone, Copy)]
struct InputCounters {
    records: u64,
    bytes: u64,
    watermark: i64,
    watermarks: Option<[i64; 2]>,
    pool: PoolUsage,
}

impl InputCounters {
    /// A source reads nothing from the network.
    const SOURCE: InputCounters = InputCounters {
        records: 0,
        bytes: 0,
        watermark: i64::MIN,
        watermarks: None,
        pool: PoolUsage { used: 0, size: 0 },
    };

    fn of(processor: &dyn InputProcessor) -> Self {
        Self {
            records: processor.records_in(),
            bytes: processor.bytes_in(),
            watermark: processor.input_watermark(),
            watermarks: processor.input_watermarks(),
            pool: processor.input_pool_usage(),
        }
    }
}

/// The loop's own state, apart from the chain it drives.
struct TaskLoop<'a> {
    /// The task reads network input (it is not a source).
    is_input_task: bool,
    chain_metrics: ChainMetrics,
    /// When the running task publishes its counters next.
    next_publish: Instant,
    ctx: &'a TaskContext,
    checkpointing: Option<TaskCheckpointing>,
    timeout: Option<Duration>,
    next_flush: Option<Instant>,
    started: Instant,
    idle: Duration,
    metrics: &'a TaskMetrics,
    cancel: &'a CancelToken,
    timers: ProcessingTimeService,
    /// A source suspended by the synchronous savepoint of a stop-with-savepoint.
    stop: Option<PendingStop>,
    /// A mail taken while waiting, processed by the next mailbox duties.
    pending_mail: Option<TaskMail>,
    /// The snapshot of the unaligned checkpoint whose channel state is being recorded.
    unaligned: Option<PendingUnaligned>,
    /// Checkpoints triggered at an input task, for its input processor.
    end_of_input_triggers: Vec<CheckpointBarrier>,
    /// Snapshot uploads still running.
    uploads: Vec<std::thread::JoinHandle<()>>,
    /// The chain's input ended and every output sent EndOfPartition: a checkpoint now
    /// (the final one) sends no barrier.
    outputs_ended: bool,
}

/// An unaligned checkpoint's snapshot, waiting for its channel state.
struct PendingUnaligned {
    checkpoint_id: CheckpointId,
    snapshot: PendingTaskSnapshot,
    sync_duration: Duration,
}

/// The stop-with-savepoint a suspended source waits on.
#[derive(Debug, Clone, Copy)]
struct PendingStop {
    savepoint: weir_core::CheckpointId,
    drain: bool,
    completed: bool,
}

impl TaskLoop<'_> {
    fn check_cancelled(&self) -> Result<(), TaskError> {
        if self.cancel.is_cancelled() {
            return Err(TaskError::Cancelled);
        }
        Ok(())
    }

    /// Publishes the task's counters if it collects metrics while it runs.
    /// Whether the running task should publish its counters now: at most every
    /// [`PUBLISH_INTERVAL`], and never while metrics are not collected (the task then
    /// publishes once, at its end).
    fn publish_due(&mut self) -> bool {
        if !self.metrics.collects() {
            return false;
        }
        let now = Instant::now();
        if now < self.next_publish {
            return false;
        }
        self.next_publish = now + PUBLISH_INTERVAL;
        true
    }

    fn publish_now(&self, input: InputCounters) {
        self.chain_metrics.publish(self.metrics, input.records);
        let backpressured = self.ctx.backpressured_time();
        let elapsed = self.started.elapsed();
        self.metrics.publish(TaskMetricsSnapshot {
            records_in: input.records,
            records_out: self.ctx.records_out(),
            bytes_in: input.bytes,
            bytes_out: self.ctx.bytes_out(),
            input_watermark: input.watermark,
            output_watermark: self.ctx.output_watermark(),
            busy_ms: elapsed
                .saturating_sub(self.idle)
                .saturating_sub(backpressured)
                .as_millis() as u64,
            idle_ms: self.idle.as_millis() as u64,
            backpressured_ms: backpressured.as_millis() as u64,
            in_pool_usage_permille: permille(input.pool),
            out_pool_usage_permille: permille(self.ctx.output_pool_usage()),
            input_watermarks: input.watermarks,
        });
    }

    /// Processes the waiting control mails, in order.
    fn mailbox_duties(&mut self, _now: Option<i64>) -> Result<(), TaskError> {
        loop {
            let mail = match self.pending_mail.take() {
                Some(mail) => mail,
                None => match self.checkpointing.as_ref().and_then(|c| c.mailbox.try_take()) {
                    Some(mail) => mail,
                    None => return Ok(()),
                },
            };
            match mail {
                // An input task is triggered only once its upstream tasks finished:
                // the checkpoint waits for the end of its input.
                TaskMail::TriggerCheckpoint(barrier) | TaskMail::StopWithSavepoint { barrier, .. }
                    if self.is_input_task =>
                {
                    self.end_of_input_triggers.push(barrier)
                }
                TaskMail::TriggerCheckpoint(barrier) => self.checkpoint(barrier, Duration::ZERO)?,
                TaskMail::StopWithSavepoint { barrier, drain } => {
                    self.checkpoint(barrier, Duration::ZERO)?;
                    self.stop = Some(PendingStop {
                        savepoint: barrier.id,
                        drain,
                        completed: false,
                    });
                }
                TaskMail::NotifyCheckpointComplete(id) => {
                    self.ctx.state().notify_complete(id)?;
                    if let Some(stop) = self.stop.as_mut().filter(|s| s.savepoint == id) {
                        stop.completed = true;
                    }
                }
                TaskMail::NotifyCheckpointAborted(id) => {
                    self.ctx.state().notify_aborted(id)?;
                    if self.stop.is_some_and(|s| s.savepoint == id) {
                        self.stop = None;
                    }
                }
            }
        }
    }

    /// How long the task may wait, at most `cap`, before the next output flush or
    /// processing-time timer is due.
    fn wait_until_due(&self, cap: Duration) -> Duration {
        let mut wait = match self.next_flush {
            Some(at) => at.saturating_duration_since(Instant::now()).min(cap),
            None => cap,
        };
        if let Some(at) = self.timers.next_wakeup() {
            let until = at.saturating_sub(self.timers.current_processing_time()).max(0) as u64;
            wait = wait.min(Duration::from_millis(until));
        }
        wait
    }

    /// Blocks until a mail arrives or `timeout` passes (a suspended or throttled
    /// source's wait), counted as idle time.
    fn wait_for_mail(&mut self, timeout: Duration) {
        let waited = Instant::now();
        match self.checkpointing.as_ref() {
            Some(cp) => self.pending_mail = cp.mailbox.take_timeout(timeout),
            None => std::thread::sleep(timeout),
        }
        self.idle += waited.elapsed();
    }

    fn maybe_flush(&mut self) -> Result<(), TaskError> {
        if let (Some(t), Some(at)) = (self.timeout, self.next_flush) {
            let now = Instant::now();
            if now >= at {
                self.ctx.flush_all()?;
                self.next_flush = Some(now + t);
            }
        }
        Ok(())
    }
}

/// Queues restored output channel state on the subpartitions it was recorded on, before
/// anything else is written there; state of a job edge the task does not produce, or
/// of a partition that now has another number of subpartitions, is refused.
fn resend_output_channel_state(
    checkpoint_id: CheckpointId,
    vertex: &str,
    state: Vec<weir_state::ResultSubpartitionState>,
    outputs: &mut [NetworkOutput],
) -> Result<(), TaskError> {
    for s in state {
        let fail = |reason: String| TaskError::Restore { checkpoint_id, reason };
        let output = outputs
            .iter_mut()
            .find(|o| o.job_edge == s.job_edge as usize)
            .ok_or_else(|| {
                fail(format!(
                    "'{vertex}' holds in-flight output data of job edge {}, which it does not produce",
                    s.job_edge
                ))
            })?;
        let subpartitions = output.writer.num_subpartitions();
        if s.subpartitions as usize != subpartitions || s.subpartition as usize >= subpartitions {
            return Err(fail(format!(
                "the unaligned checkpoint holds in-flight output data of '{vertex}' for subpartition {} of {} on job \
                 edge {}, but the partition now has {subpartitions} subpartitions: channel state is not \
                 redistributed when a consumer's parallelism changes",
                s.subpartition, s.subpartitions, s.job_edge
            )));
        }
        output.writer.add_recovered_data(s.subpartition as usize, &s.data)?;
    }
    Ok(())
}

/// The current processing time if a wake-up is due (taking the due ones).
fn due_wakeup(timers: &ProcessingTimeService) -> Option<i64> {
    let at = timers.next_wakeup()?;
    let now = timers.current_processing_time();
    (now >= at && timers.take_due(now)).then_some(now)
}
