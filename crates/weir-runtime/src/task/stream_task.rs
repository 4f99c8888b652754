//! The task loop: build the chain, then run it until its input ends, it fails or it is
//! cancelled, flushing network output at least every buffer timeout.

use crate::error::TaskError;
use crate::executor::ExecutableGraph;
use crate::network::{CancelToken, InputGate};
use crate::operator::{SourceStatus, TaskContext};
use crate::task::chain::{build_chain, Invokable, NetworkOutput};
use crate::task::input::InputStatus;
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
    /// The input gate (all input channels of all in-edges), if the vertex has input.
    pub input: Option<InputGate>,
    /// One writer per outgoing JobEdge.
    pub outputs: Vec<NetworkOutput>,
    /// Cancels the task.
    pub cancel: CancelToken,
}

/// What a finished task reports.
#[derive(Debug, Clone, Default)]
pub struct TaskOutcome {
    /// Records read from the network.
    pub records_in: u64,
}

/// Runs a subtask to completion on the calling thread; user panics become errors.
pub fn run_task(spec: TaskSpec) -> Result<TaskOutcome, TaskError> {
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

fn run_task_inner(spec: TaskSpec) -> Result<TaskOutcome, TaskError> {
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
        spec.outputs,
    )?;
    let timeout = (ctx.buffer_timeout_ms > 0).then(|| Duration::from_millis(ctx.buffer_timeout_ms as u64));
    let mut next_flush = timeout.map(|t| Instant::now() + t);
    let mut outcome = TaskOutcome::default();
    match invokable {
        Invokable::Source(mut driver) => loop {
            if spec.cancel.is_cancelled() {
                return Err(TaskError::Cancelled);
            }
            let status = driver.run_batch()?;
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
            let wait = match next_flush {
                Some(at) => Some(at.saturating_duration_since(Instant::now())),
                None => Some(Duration::from_millis(100)),
            };
            let status = processor.process(wait)?;
            maybe_flush(&ctx, timeout, &mut next_flush)?;
            if status == InputStatus::EndOfInput {
                outcome.records_in = processor.records_in();
                break;
            }
        },
    }
    ctx.flush_all()?;
    Ok(outcome)
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
