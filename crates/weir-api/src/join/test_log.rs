//! What a join under test emitted: values with their timestamps, recorded by an
//! operator ([`Emitted`]).

use std::cell::RefCell;
use std::rc::Rc;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::error::TaskError;
use weir_runtime::operator::Output;

/// A value with the timestamp it was emitted with.
pub(crate) type Stamped<T> = (T, Option<i64>);

/// Records every emitted value with its timestamp; watermarks are not recorded.
#[derive(Clone)]
pub(crate) struct Emitted<T>(Rc<RefCell<Vec<Stamped<T>>>>);

impl<T> Default for Emitted<T> {
    fn default() -> Self {
        Self(Rc::default())
    }
}

impl<T> Emitted<T> {
    /// Everything emitted since the last call, in order.
    pub(crate) fn take(&self) -> Vec<Stamped<T>> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

impl<T: 'static> Output<T> for Emitted<T> {
    fn collect(&mut self, r: StreamRecord<T>) -> Result<(), TaskError> {
        self.0.borrow_mut().push((r.value, r.timestamp));
        Ok(())
    }
    fn emit_watermark(&mut self, _w: Watermark) -> Result<(), TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        Ok(())
    }
}
