//! Side outputs: a second stream an operator emits, of another type than its main
//! output, selected downstream by a tag (Flink's `OutputTag`, e.g. late window data).
//!
//! In the StreamGraph a side output is an ordinary edge from the operator to a
//! pass-through *side-output node* whose factory carries the tag
//! ([`crate::operator::OperatorFactory::side_output`]). When a chain is wired, the
//! outputs behind side-output nodes are grouped by tag and shared: the operator gets a
//! [`SideOutput`] handle per tag for its records, and the operator's main output is
//! wrapped so that watermarks, watermark statuses, processing-time ticks and the end of
//! input reach every side output too — in order with the main stream, and even when the
//! operator never emits to a tag (its consumers must still see the stream end).
//!
//! Invariant: records reach a side output only through its [`SideOutput`] handle;
//! everything else reaches it only through the main output's fan-out.

use super::Output;
use crate::error::TaskError;
use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use weir_core::element::WatermarkStatus;
use weir_core::{StreamRecord, Watermark};

/// The shared output of one side-output tag.
pub(crate) type SharedOutput<T> = Rc<RefCell<Box<dyn Output<T>>>>;

/// The side outputs available to an operator while it is built, by tag.
#[derive(Default)]
pub struct SideOutputs {
    outputs: HashMap<String, Box<dyn Any>>,
}

impl SideOutputs {
    /// No side outputs.
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn insert<T: 'static>(&mut self, tag: String, output: SharedOutput<T>) {
        self.outputs.insert(tag, Box::new(output));
    }

    /// The records handle of side output `tag`, if the job consumes that tag; an error
    /// if it is consumed with another record type.
    pub fn get<T: 'static>(&self, tag: &str) -> Result<Option<SideOutput<T>>, TaskError> {
        match self.outputs.get(tag) {
            None => Ok(None),
            Some(any) => any
                .downcast_ref::<SharedOutput<T>>()
                .map(|o| Some(SideOutput(o.clone())))
                .ok_or_else(|| TaskError::Build(format!("side output '{tag}' is consumed with another record type"))),
        }
    }

    /// True when no tag is consumed.
    pub fn is_empty(&self) -> bool {
        self.outputs.is_empty()
    }
}

/// Where an operator sends the records of one side output.
pub struct SideOutput<T>(SharedOutput<T>);

impl<T> SideOutput<T> {
    /// A side output of its own (tests and operators used outside a chain); the stream's
    /// events must then be passed to `output` separately.
    pub fn new(output: Box<dyn Output<T>>) -> Self {
        Self(Rc::new(RefCell::new(output)))
    }

    /// Emits one record to the side output.
    pub fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        self.0.borrow_mut().collect(record)
    }
}

/// The non-record part of an output, whatever its record type.
pub(crate) trait EventSink {
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError>;
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError>;
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError>;
    fn end_input(&mut self) -> Result<(), TaskError>;
}

/// The events of a shared side output.
pub(crate) struct SharedEvents<T>(pub(crate) SharedOutput<T>);

impl<T> EventSink for SharedEvents<T> {
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.0.borrow_mut().emit_watermark(watermark)
    }
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        self.0.borrow_mut().emit_watermark_status(status)
    }
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        self.0.borrow_mut().on_processing_time(now)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.0.borrow_mut().end_input()
    }
}

/// A main output that also passes every event to the side outputs.
pub(crate) struct WithSideOutputEvents<T> {
    pub(crate) main: Box<dyn Output<T>>,
    pub(crate) sides: Vec<Box<dyn EventSink>>,
}

impl<T> Output<T> for WithSideOutputEvents<T> {
    #[inline]
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        self.main.collect(record)
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.main.emit_watermark(watermark)?;
        for s in &mut self.sides {
            s.emit_watermark(watermark)?;
        }
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.main.end_input()?;
        for s in &mut self.sides {
            s.end_input()?;
        }
        Ok(())
    }
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        self.main.emit_watermark_status(status)?;
        for s in &mut self.sides {
            s.emit_watermark_status(status)?;
        }
        Ok(())
    }
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        self.main.on_processing_time(now)?;
        for s in &mut self.sides {
            s.on_processing_time(now)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Log(Rc<RefCell<Vec<String>>>);

    impl Output<u32> for Log {
        fn collect(&mut self, r: StreamRecord<u32>) -> Result<(), TaskError> {
            self.0.borrow_mut().push(format!("r{}", r.value));
            Ok(())
        }
        fn emit_watermark(&mut self, w: Watermark) -> Result<(), TaskError> {
            self.0.borrow_mut().push(format!("w{}", w.0));
            Ok(())
        }
        fn end_input(&mut self) -> Result<(), TaskError> {
            self.0.borrow_mut().push("end".into());
            Ok(())
        }
    }

    #[test]
    fn side_output_gets_records_from_its_handle_and_events_from_the_main_output() {
        let main_log = Rc::new(RefCell::new(Vec::new()));
        let side_log = Rc::new(RefCell::new(Vec::new()));
        let shared: SharedOutput<u32> = Rc::new(RefCell::new(Box::new(Log(side_log.clone()))));
        let mut bag = SideOutputs::new();
        bag.insert("late".into(), shared.clone());
        let mut side = bag.get::<u32>("late").unwrap().unwrap();
        assert!(bag.get::<u32>("other").unwrap().is_none());
        assert!(bag.get::<String>("late").is_err());
        let mut main = WithSideOutputEvents {
            main: Box::new(Log(main_log.clone())),
            sides: vec![Box::new(SharedEvents(shared))],
        };
        main.collect(StreamRecord::new(1)).unwrap();
        side.collect(StreamRecord::new(2)).unwrap();
        main.emit_watermark(Watermark(5)).unwrap();
        main.end_input().unwrap();
        assert_eq!(*main_log.borrow(), vec!["r1", "w5", "end"]);
        assert_eq!(*side_log.borrow(), vec!["r2", "w5", "end"]);
    }
}
