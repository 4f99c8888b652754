//! An operator shared between its chain and the task's state registry: the chain
//! calls it through [`SharedOperator`], the registry snapshots it between two calls.
//! Both run on the task thread, so the `RefCell` is never contended.

use super::{Output, TaskContext};
use crate::checkpoint::CheckpointedOperator;
use crate::error::TaskError;
use std::cell::RefCell;
use std::rc::Rc;
use weir_core::element::WatermarkStatus;
use weir_core::{StreamRecord, Watermark};

/// The chain's handle of a shared operator.
pub struct SharedOperator<Op>(Rc<RefCell<Op>>);

impl<I, Op: Output<I>> Output<I> for SharedOperator<Op> {
    #[inline]
    fn collect(&mut self, record: StreamRecord<I>) -> Result<(), TaskError> {
        self.0.borrow_mut().collect(record)
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.0.borrow_mut().emit_watermark(watermark)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.0.borrow_mut().end_input()
    }
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        self.0.borrow_mut().emit_watermark_status(status)
    }
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        self.0.borrow_mut().on_processing_time(now)
    }
    #[inline]
    fn prefetch(&mut self, record: &StreamRecord<I>) {
        self.0.borrow_mut().prefetch(record)
    }
}

/// Registers `operator` (the one being built) with the task's state registry and
/// returns its handle for the chain.
pub fn register_checkpointed<I, Op>(ctx: &TaskContext, operator: Op) -> Result<Box<dyn Output<I>>, TaskError>
where
    Op: Output<I> + CheckpointedOperator + 'static,
    I: 'static,
{
    let shared = Rc::new(RefCell::new(operator));
    ctx.state().register(shared.clone())?;
    Ok(Box::new(SharedOperator(shared)))
}
