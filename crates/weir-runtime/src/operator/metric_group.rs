//! The metrics of each operator of a chain (Flink's operator metric group): the records
//! it took in and emitted, and counters an operator adds by Flink's name (a window's
//! `numLateRecordsDropped`).
//!
//! Counters live on the task thread as plain cells; the task publishes their values
//! with its own counters at most every 10 ms ([`crate::task::metrics`]), so counting is
//! one increment per record and operator. Records are counted by [`CountingOutput`],
//! put by the chain builder in front of an operator (its records in) and behind it (its
//! records out). Where one counter serves two places it is shared, not doubled: an
//! operator whose only output is the next operator of its chain counts its records out
//! with that operator's records in; a source's records in are its records out (Flink's
//! FLIP-33 source metrics); the head of a task reading the network counts nothing
//! itself, the task sets its records in from the records the task read.
//!
//! A [`CountingOutput`] wraps the concrete type it counts for wherever the chain builder
//! knows it (an operator built from [`super::OperatorFactory::one_input_operator`], a
//! network output, a fan-out), so the increment is inlined into the one dynamic call
//! that hands a record from one operator to the next, as Flink's `ChainingOutput`
//! counts inline; around an already boxed output it costs a second dynamic call.

use super::Output;
use crate::error::TaskError;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use weir_core::element::WatermarkStatus;
use weir_core::{StreamRecord, Watermark};

/// Flink's name of the counter of elements an event-time operator dropped for being
/// late (window operators, interval joins).
pub const NUM_LATE_RECORDS_DROPPED: &str = "numLateRecordsDropped";

/// How many characters of an operator's name its metrics carry (Flink truncates
/// operator names in metric scopes to 80).
pub const OPERATOR_NAME_MAX_LENGTH: usize = 80;

/// A count kept on the task thread, shared by the places that add to it and the task
/// that publishes it.
#[derive(Debug, Clone, Default)]
pub struct Counter(Rc<Cell<u64>>);

impl Counter {
    /// Adds one.
    #[inline]
    pub fn inc(&self) {
        self.0.set(self.0.get().wrapping_add(1));
    }

    /// Sets the count (the head of an input task, from the task's records read).
    pub fn set(&self, value: u64) {
        self.0.set(value);
    }

    /// The count.
    pub fn get(&self) -> u64 {
        self.0.get()
    }
}

/// One operator's metrics in a subtask.
#[derive(Debug)]
pub struct OperatorMetricGroup {
    /// The operator's id (hex), Flink's `operator_id` scope variable.
    pub operator_id: String,
    /// The operator's name as its metrics carry it (at most
    /// [`OPERATOR_NAME_MAX_LENGTH`] characters), Flink's `operator_name`.
    pub operator_name: String,
    /// Records the operator took in (`numRecordsIn`).
    pub records_in: Counter,
    /// Records the operator emitted, to its main and side outputs (`numRecordsOut`).
    pub records_out: Counter,
    /// Further counters by Flink's name, in the order they were added.
    counters: RefCell<Vec<(&'static str, Counter)>>,
}

impl OperatorMetricGroup {
    /// The group of operator `operator_id` named `name` (truncated as Flink does).
    pub fn new(operator_id: String, name: &str) -> Self {
        Self {
            operator_id,
            operator_name: name.chars().take(OPERATOR_NAME_MAX_LENGTH).collect(),
            records_in: Counter::default(),
            records_out: Counter::default(),
            counters: RefCell::new(Vec::new()),
        }
    }

    /// The counter `name` of this operator, added on first use.
    pub fn counter(&self, name: &'static str) -> Counter {
        let mut counters = self.counters.borrow_mut();
        if let Some((_, c)) = counters.iter().find(|(n, _)| *n == name) {
            return c.clone();
        }
        let c = Counter::default();
        counters.push((name, c.clone()));
        c
    }

    /// The further counters' names and values now.
    pub fn counter_values(&self) -> Vec<(&'static str, u64)> {
        self.counters.borrow().iter().map(|(n, c)| (*n, c.get())).collect()
    }
}

/// Counts the records passing to `inner` (a concrete output or operator, or a
/// `Box<dyn Output<T>>`); everything else passes untouched.
pub struct CountingOutput<O> {
    inner: O,
    count: Counter,
}

impl<O> CountingOutput<O> {
    /// Counts the records handed to `inner` in `count`.
    pub fn new(inner: O, count: Counter) -> Self {
        Self { inner, count }
    }
}

impl<T, O: Output<T>> Output<T> for CountingOutput<O> {
    #[inline]
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        self.count.inc();
        self.inner.collect(record)
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.inner.emit_watermark(watermark)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.inner.end_input()
    }
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        self.inner.emit_watermark_status(status)
    }
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        self.inner.on_processing_time(now)
    }
    #[inline]
    fn prefetch(&mut self, record: &StreamRecord<T>) {
        self.inner.prefetch(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::chaining::Discarding;

    #[test]
    fn a_counting_output_counts_records_and_nothing_else() {
        let count = Counter::default();
        let mut out: Box<dyn Output<u32>> = Box::new(CountingOutput::new(Discarding, count.clone()));
        out.collect(StreamRecord::new(1)).unwrap();
        out.emit_watermark(Watermark(5)).unwrap();
        out.collect(StreamRecord::new(2)).unwrap();
        out.end_input().unwrap();
        assert_eq!(count.get(), 2);
    }

    #[test]
    fn an_operator_keeps_one_counter_per_name_and_a_name_of_at_most_80_characters() {
        let long = "x".repeat(100);
        let g = OperatorMetricGroup::new("ab".into(), &long);
        assert_eq!(g.operator_name.len(), OPERATOR_NAME_MAX_LENGTH);
        let late = g.counter("numLateRecordsDropped");
        late.inc();
        g.counter("numLateRecordsDropped").inc();
        assert_eq!(g.counter_values(), vec![("numLateRecordsDropped", 2)]);
    }
}
