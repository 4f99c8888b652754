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

pub mod chaining;
pub mod context;
pub mod factory;

pub use context::TaskContext;
pub use factory::{OperatorFactory, SelectorFactory};

use crate::error::TaskError;
use weir_core::{StreamRecord, Watermark};

/// Receives a stream: what an operator emits to, and what an operator is to the one
/// before it.
pub trait Output<T> {
    /// One record.
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError>;
    /// The event-time watermark advanced.
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError>;
    /// No more input will come: flush what is buffered and end the output in turn.
    fn end_input(&mut self) -> Result<(), TaskError>;
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
}

/// Whether a source has more to emit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceStatus {
    /// Call again.
    More,
    /// The (bounded) source is exhausted.
    Finished,
}

/// A source: emits records in batches, so that the task can look at its mailbox
/// (cancellation, output flushing) between batches.
pub trait SourceFunction<T> {
    /// Emits a batch of records to `output` (a few hundred to a few thousand).
    fn poll_next(&mut self, output: &mut dyn Output<T>) -> Result<SourceStatus, TaskError>;
}

/// A running source chain: the source with its chained operators behind it.
pub trait SourceDriver {
    /// Emits one batch through the chain.
    fn run_batch(&mut self) -> Result<SourceStatus, TaskError>;
    /// The source ended: emit the MAX watermark and end the chain's input.
    fn finish(&mut self) -> Result<(), TaskError>;
}

/// Drives a [`SourceFunction`] into its chain.
pub struct SourceChain<T> {
    source: Box<dyn SourceFunction<T>>,
    output: Box<dyn Output<T>>,
}

impl<T> SourceChain<T> {
    /// Joins a source to the head of its chain.
    pub fn new(source: Box<dyn SourceFunction<T>>, output: Box<dyn Output<T>>) -> Self {
        Self { source, output }
    }
}

impl<T> SourceDriver for SourceChain<T> {
    fn run_batch(&mut self) -> Result<SourceStatus, TaskError> {
        self.source.poll_next(&mut self.output)
    }

    fn finish(&mut self) -> Result<(), TaskError> {
        self.output.emit_watermark(Watermark::MAX)?;
        self.output.end_input()
    }
}
