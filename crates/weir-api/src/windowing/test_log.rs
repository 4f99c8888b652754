//! A test output that logs what a window operator emits: `value@timestamp` per record,
//! `W<time>` per watermark.

use std::cell::RefCell;
use std::fmt::Debug;
use std::rc::Rc;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::error::TaskError;
use weir_runtime::operator::Output;

/// The log, shared by clones.
#[derive(Clone, Default)]
pub(crate) struct Log(Rc<RefCell<Vec<String>>>);

impl Log {
    /// The lines logged since the last take.
    pub(crate) fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

impl<T: Debug> Output<T> for Log {
    fn collect(&mut self, r: StreamRecord<T>) -> Result<(), TaskError> {
        self.0.borrow_mut().push(format!("{:?}@{:?}", r.value, r.timestamp));
        Ok(())
    }
    fn emit_watermark(&mut self, w: Watermark) -> Result<(), TaskError> {
        self.0.borrow_mut().push(format!("W{}", w.0));
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        Ok(())
    }
}
