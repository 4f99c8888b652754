//! The interface between operators and the runtime.
//!
//! An operator is an [`Output`] of its input type: the runtime (or the operator before
//! it in the chain) hands it records, watermarks and the end of input by calling it
//! directly — chained operators are plain calls, no queue and no serialisation. An
//! operator owns the `Box<dyn Output<O>>` it emits to: the next operator of its chain,
//! a [`chaining::Broadcasting`] fan-out, or a [`chaining::RecordWriterOutput`] that
//! serialises into a result partition.
//!
//! Because a job's operators are generic Rust values and the runtime is not, the
//! runtime builds chains through [`factory::OperatorFactory`], which hides the types
//! behind `Box<dyn Any>` only while a chain is being wired; every record afterwards
//! travels through typed trait objects.
//!
//! Besides records, watermarks and the end of input, an output carries the
//! watermark status (idle/active) and the task's processing-time ticks
//! (`on_processing_time(now)`, called on the task thread when a wake-up registered with
//! the task's [`ProcessingTimeService`] is due). Both have default implementations that
//! do nothing, so sinks need not care; every operator that emits forwards them.

pub mod chaining;
pub mod context;
pub mod coordination;
pub mod factory;
pub mod metric_group;
pub mod processing_time;
pub mod shared;
pub mod side_output;

pub use context::TaskContext;
pub use factory::{OperatorFactory, SelectorFactory};
pub use processing_time::{ManualClock, ProcessingTimeService};
pub use shared::{register_checkpointed, SharedOperator};
pub use side_output::{SideOutput, SideOutputs};

use crate::error::TaskError;
use weir_core::element::WatermarkStatus;
use weir_core::{StreamRecord, Watermark};

/// An element of a two-input operator's stream: from its first or its second input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoElement<A, B> {
    /// From the first input.
    First(A),
    /// From the second input.
    Second(B),
}

/// Receives a stream: what an operator emits to, and what an operator is to the one
/// before it.
pub trait Output<T> {
    /// One record.
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError>;
    /// The event-time watermark advanced.
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError>;
    /// No more input will come: flush what is buffered and end the output in turn.
    fn end_input(&mut self) -> Result<(), TaskError>;
    /// The stream became idle or active again. Operators forward it; the default (for
    /// sinks) ignores it.
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        let _ = status;
        Ok(())
    }
    /// A processing-time wake-up of the task is due: fire the processing-time timers
    /// `<= now`, then forward. The default (for sinks) ignores it.
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        let _ = now;
        Ok(())
    }
    /// A hint from the task's input: `record` is collected after the one collected
    /// next, so a keyed operator may start loading the state it will touch (the
    /// loads overlap with the work on the record before). Changes nothing observable;
    /// the default ignores it.
    #[inline]
    fn prefetch(&mut self, record: &StreamRecord<T>) {
        let _ = record;
    }
}

impl<T, O: Output<T> + ?Sized> Output<T> for Box<O> {
    #[inline]
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        (**self).collect(record)
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        (**self).emit_watermark(watermark)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        (**self).end_input()
    }
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        (**self).emit_watermark_status(status)
    }
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        (**self).on_processing_time(now)
    }
    #[inline]
    fn prefetch(&mut self, record: &StreamRecord<T>) {
        (**self).prefetch(record)
    }
}

/// Whether a source has more to emit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceStatus {
    /// Call again.
    More,
    /// Nothing may go out yet (a throttled source): call again after at most this
    /// long. The task waits on its mailbox meanwhile, and the wait counts as idle time.
    Throttled(std::time::Duration),
    /// The (bounded) source is exhausted.
    Finished,
}

/// A source: emits records in batches, so that the task can look at its mailbox
/// (cancellation, output flushing) between batches.
pub trait SourceFunction<T> {
    /// Emits a batch of records to `output` (a few hundred to a few thousand).
    fn poll_next(&mut self, output: &mut dyn Output<T>) -> Result<SourceStatus, TaskError>;
    /// A processing-time wake-up is due (e.g. periodic watermark emission); the source
    /// may emit watermarks or a status to `output`. The chained operators are called
    /// after it.
    fn on_processing_time(&mut self, now: i64, output: &mut dyn Output<T>) -> Result<(), TaskError> {
        let _ = (now, output);
        Ok(())
    }
    /// The source's position for a checkpoint, as list-state elements (one per split:
    /// which split and how far it was read). The default, for sources that cannot
    /// resume, is none: such a source replays from its beginning after a restore.
    fn snapshot_position(&mut self) -> Result<Vec<Vec<u8>>, TaskError> {
        Ok(Vec::new())
    }
    /// Resumes from positions written by [`snapshot_position`](Self::snapshot_position),
    /// called once before the first `poll_next` of a restored task.
    fn restore_position(&mut self, positions: Vec<Vec<u8>>) -> Result<(), TaskError> {
        let _ = positions;
        Ok(())
    }
}

/// Name of the list state holding a source's positions.
pub const SOURCE_POSITIONS: &str = "source-positions";

/// A source shared between its chain and the task's state registry.
pub type SharedSource<T> = std::rc::Rc<std::cell::RefCell<Box<dyn SourceFunction<T>>>>;

/// Snapshots a source's positions as operator list state.
pub struct SourceState<T>(pub SharedSource<T>);

impl<T> crate::checkpoint::CheckpointedOperator for SourceState<T> {
    fn snapshot_state(&mut self, _checkpoint_id: u64) -> Result<weir_state::OperatorSnapshot, TaskError> {
        let positions = self.0.borrow_mut().snapshot_position()?;
        // Recorded even when empty: a source without splits must restore as one.
        let mut s = weir_state::OperatorSnapshot::default();
        s.list.insert(SOURCE_POSITIONS.to_string(), positions);
        Ok(s)
    }
}

/// A running source chain: the source with its chained operators behind it.
pub trait SourceDriver {
    /// Emits one batch through the chain.
    fn run_batch(&mut self) -> Result<SourceStatus, TaskError>;
    /// The source ended: emit the MAX watermark and end the chain's input.
    fn finish(&mut self) -> Result<(), TaskError>;
    /// The job stops with a savepoint without draining: end the chain's input without
    /// the MAX watermark, so event-time windows and timers do not fire.
    fn finish_without_drain(&mut self) -> Result<(), TaskError>;
    /// A processing-time wake-up is due: call the source, then the chain.
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        let _ = now;
        Ok(())
    }
}

/// Drives a [`SourceFunction`] into its chain.
pub struct SourceChain<T> {
    source: SharedSource<T>,
    output: Box<dyn Output<T>>,
}

impl<T> SourceChain<T> {
    /// Joins a source to the head of its chain.
    pub fn new(source: Box<dyn SourceFunction<T>>, output: Box<dyn Output<T>>) -> Self {
        Self::shared(std::rc::Rc::new(std::cell::RefCell::new(source)), output)
    }

    /// Joins a source that the task's state registry also holds to its chain.
    pub fn shared(source: SharedSource<T>, output: Box<dyn Output<T>>) -> Self {
        Self { source, output }
    }
}

impl<T> SourceDriver for SourceChain<T> {
    fn run_batch(&mut self) -> Result<SourceStatus, TaskError> {
        // The chain head itself, not its box: one dynamic call per record.
        self.source.borrow_mut().poll_next(&mut *self.output)
    }

    /// Ends the stream as Flink's sources do: an idle source becomes active again (a
    /// watermark is never emitted while idle), then the MAX watermark, then the end.
    fn finish(&mut self) -> Result<(), TaskError> {
        self.output.emit_watermark_status(WatermarkStatus::Active)?;
        self.output.emit_watermark(Watermark::MAX)?;
        self.output.end_input()
    }

    fn finish_without_drain(&mut self) -> Result<(), TaskError> {
        self.output.end_input()
    }

    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        self.source.borrow_mut().on_processing_time(now, &mut self.output)?;
        self.output.on_processing_time(now)
    }
}
