//! Glue between operators of one chain and between a chain and the network.
//!
//! - [`Broadcasting`] copies every element to several outputs (an operator with more
//!   than one downstream).
//! - [`RecordWriterOutput`] ends a chain at a network edge: it serialises into the
//!   result partition of that edge; on end of input it flushes and sends
//!   `EndOfPartition`. As Flink's, it announces a watermark status only when it
//!   changes and sends no watermark while the stream is idle.
//! - [`Discarding`] is the output of a sink.

use super::context::Flushable;
use super::Output;
use crate::error::TaskError;
use crate::network::RecordWriter;
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;
use weir_core::element::WatermarkStatus;
use weir_core::{Event, StreamRecord, Watermark};

/// Copies every element to each of several outputs.
pub struct Broadcasting<T> {
    outputs: Vec<Box<dyn Output<T>>>,
}

impl<T> Broadcasting<T> {
    /// A fan-out to `outputs` (at least two).
    pub fn new(outputs: Vec<Box<dyn Output<T>>>) -> Self {
        Self { outputs }
    }
}

impl<T: Clone> Output<T> for Broadcasting<T> {
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        if let Some((last, rest)) = self.outputs.split_last_mut() {
            for o in rest {
                o.collect(record.clone())?;
            }
            last.collect(record)?;
        }
        Ok(())
    }

    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        for o in &mut self.outputs {
            o.emit_watermark(watermark)?;
        }
        Ok(())
    }

    fn end_input(&mut self) -> Result<(), TaskError> {
        for o in &mut self.outputs {
            o.end_input()?;
        }
        Ok(())
    }

    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        for o in &mut self.outputs {
            o.emit_watermark_status(status)?;
        }
        Ok(())
    }

    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        for o in &mut self.outputs {
            o.on_processing_time(now)?;
        }
        Ok(())
    }
}

/// The output of an operator with no downstream: drops everything.
pub struct Discarding;

impl<T> Output<T> for Discarding {
    #[inline]
    fn collect(&mut self, _record: StreamRecord<T>) -> Result<(), TaskError> {
        Ok(())
    }
    fn emit_watermark(&mut self, _watermark: Watermark) -> Result<(), TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        Ok(())
    }
}

/// Shared handle to a record writer, so the task can flush it on the buffer timeout.
pub struct SharedWriter<T>(pub Rc<RefCell<RecordWriter<T>>>);

impl<T: Serialize> Flushable for SharedWriter<T> {
    fn flush(&mut self) -> Result<(), TaskError> {
        Ok(self.0.borrow_mut().flush_all()?)
    }
    fn records_out(&self) -> u64 {
        self.0.borrow().records_out()
    }
    fn bytes_out(&self) -> u64 {
        self.0.borrow().bytes_out()
    }
    fn output_pool_usage(&self) -> crate::network::PoolUsage {
        self.0.borrow().pool_usage()
    }
    fn output_watermark(&self) -> i64 {
        self.0.borrow().output_watermark()
    }
    fn backpressured_time(&self) -> std::time::Duration {
        self.0.borrow().backpressured_time()
    }
    fn broadcast_event(&mut self, event: Event) -> Result<(), TaskError> {
        Ok(self.0.borrow_mut().broadcast_event(event)?)
    }
    fn broadcast_priority_event(&mut self, event: Event) -> Result<Vec<Vec<u8>>, TaskError> {
        Ok(self.0.borrow_mut().broadcast_priority_event(event)?)
    }
}

/// The end of a chain at a network edge.
pub struct RecordWriterOutput<T> {
    writer: Rc<RefCell<RecordWriter<T>>>,
    flush_every_record: bool,
    ended: bool,
    announced: WatermarkStatus,
}

impl<T: Serialize + 'static> RecordWriterOutput<T> {
    /// Wraps `writer`; with `flush_every_record` (buffer timeout 0) each record is
    /// handed to the network at once.
    pub fn new(writer: RecordWriter<T>, flush_every_record: bool) -> (Self, Rc<RefCell<dyn Flushable>>) {
        let writer = Rc::new(RefCell::new(writer));
        let flushable: Rc<RefCell<dyn Flushable>> = Rc::new(RefCell::new(SharedWriter(writer.clone())));
        (
            Self {
                writer,
                flush_every_record,
                ended: false,
                announced: WatermarkStatus::Active,
            },
            flushable,
        )
    }
}

impl<T: Serialize> Output<T> for RecordWriterOutput<T> {
    #[inline]
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        let mut w = self.writer.borrow_mut();
        w.emit(&record)?;
        if self.flush_every_record {
            w.flush_all()?;
        }
        Ok(())
    }

    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        if self.announced.is_idle() {
            return Ok(());
        }
        Ok(self.writer.borrow_mut().broadcast_event(Event::Watermark(watermark))?)
    }

    fn end_input(&mut self) -> Result<(), TaskError> {
        if !self.ended {
            self.ended = true;
            self.writer.borrow_mut().broadcast_event(Event::EndOfPartition)?;
        }
        Ok(())
    }

    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        if status == self.announced {
            return Ok(());
        }
        self.announced = status;
        Ok(self
            .writer
            .borrow_mut()
            .broadcast_event(Event::WatermarkStatus(status))?)
    }
}
