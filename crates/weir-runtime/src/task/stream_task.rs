//! The task loop: build the chain, then run it until its input ends, it fails or it is
//! cancelled, flushing network output at least every buffer timeout.
//!
//! Processing time: the chain's operators register wake-ups with the task's
//! [`ProcessingTimeService`]; between batches the loop calls `on_processing_time(now)`
//! down the chain once one is due, on this thread. An input task waits for input at
//! most until the next flush or wake-up; a source task checks after every batch. At
//! the end of input pending processing-time timers are dropped, not fired (as in
//! Flink, where a finished task quiesces its timer service).

use crate::error::TaskError;
use crate::executor::ExecutableGraph;
use crate::network::{CancelToken, InputGate};
use crate::operator::{ProcessingTimeService, SourceStatus, TaskContext};
use crate::task::chain::{build_chain, Invokable, NetworkOutput};
use crate::task::input::InputStatus;
use crate::task::metrics::{TaskMetrics, TaskMetricsSnapshot};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};
use weir_graph::JobGraph;

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

fn run_task_inner(spec: TaskSpec) -> Result<TaskMetricsSnapshot, TaskError> {
    let jv = spec
        .job_graph
        .vertices
        .get(spec.vertex)
        .ok_or_else(|| TaskError::Build(format!("no job vertex {}", spec.vertex)))?;
    let ctx = TaskContext::new(
        spec.program.stream_graph.job_name.clone(),
        jv.name.clone(),
        spec.subtask_index,
        jv.parallelism,
        jv.max_parallelism,
        spec.attempt_number,
        spec.program.stream_graph.config.buffer_timeout_ms,
    );
    let invokable = build_chain(
        &spec.program,
        &spec.job_graph,
        spec.vertex,
        &ctx,
        spec.input,
        spec.second_input,
        spec.outputs,
    )?;
    let timeout = (ctx.buffer_timeout_ms > 0).then(|| Duration::from_millis(ctx.buffer_timeout_ms as u64));
    let mut next_flush = timeout.map(|t| Instant::now() + t);
    let mut records_in = 0;
    let started = Instant::now();
    let mut idle = Duration::ZERO;
    let publish = |records_in: u64, idle: Duration| {
        let backpressured = ctx.backpressured_time();
        let elapsed = started.elapsed();
        spec.metrics.publish(TaskMetricsSnapshot {
            records_in,
            records_out: ctx.records_out(),
            busy_ms: elapsed.saturating_sub(idle).saturating_sub(backpressured).as_millis() as u64,
            idle_ms: idle.as_millis() as u64,
            backpressured_ms: backpressured.as_millis() as u64,
        });
    };
    let timers = ctx.processing_time_service();
    match invokable {
        Invokable::Source(mut driver) => loop {
            if spec.cancel.is_cancelled() {
                return Err(TaskError::Cancelled);
            }
            let status = driver.run_batch()?;
            publish(0, idle);
            if let Some(now) = due_wakeup(&timers) {
                driver.on_processing_time(now)?;
            }
            maybe_flush(&ctx, timeout, &mut next_flush)?;
            if status == SourceStatus::Finished {
                driver.finish()?;
                break;
            }
        },
        Invokable::Input(mut processor) => loop {
            if spec.cancel.is_cancelled() {
                return Err(TaskError::Cancelled);
            }
            let mut wait = match next_flush {
                Some(at) => at.saturating_duration_since(Instant::now()),
                None => Duration::from_millis(100),
            };
            if let Some(at) = timers.next_wakeup() {
                let until = at.saturating_sub(timers.current_processing_time()).max(0) as u64;
                wait = wait.min(Duration::from_millis(until));
            }
            let waited = Instant::now();
            let status = processor.process(Some(wait))?;
            if status == InputStatus::NothingAvailable {
                idle += waited.elapsed();
            }
            publish(processor.records_in(), idle);
            if status != InputStatus::EndOfInput {
                if let Some(now) = due_wakeup(&timers) {
                    processor.on_processing_time(now)?;
                }
            }
            maybe_flush(&ctx, timeout, &mut next_flush)?;
            if status == InputStatus::EndOfInput {
                records_in = processor.records_in();
                break;
            }
        },
    }
    ctx.flush_all()?;
    publish(records_in, idle);
    Ok(spec.metrics.snapshot())
}

/// The current processing time if a wake-up is due (taking the due ones).
fn due_wakeup(timers: &ProcessingTimeService) -> Option<i64> {
    let at = timers.next_wakeup()?;
    let now = timers.current_processing_time();
    (now >= at && timers.take_due(now)).then_some(now)
}

fn maybe_flush(
    ctx: &TaskContext,
    timeout: Option<Duration>,
    next_flush: &mut Option<Instant>,
) -> Result<(), TaskError> {
    if let (Some(t), Some(at)) = (timeout, *next_flush) {
        let now = Instant::now();
        if now >= at {
            ctx.flush_all()?;
            *next_flush = Some(now + t);
        }
    }
    Ok(())
}
