//! `WindowAggregate`: the window operator of the DataStream API over rows keyed by
//! their group key, with an aggregate function over the rows' accumulators and a
//! window function that emits `window_start, window_end, window_time, keys...,
//! aggregates...` once per window when the watermark passes its end (append-only).
//! CUMULATE windows have an assigner of their own ([`CumulativeWindows`]); SESSION
//! windows merge, and with them their accumulators.

use super::acc::{self, Acc};
use crate::plan::AggCall;
use crate::value::{Row, Value};
use std::sync::Arc;
use weir_api::prelude::*;
use weir_api::windowing::{AssignerContext, WindowAssigner, WindowError};

/// Aggregates rows into accumulators.
#[derive(Clone)]
pub struct RowAggregate {
    /// The aggregates.
    pub aggs: Arc<Vec<AggCall>>,
    /// The number of key columns (copied into the result).
    pub keys: usize,
}

/// The accumulators of one window and key, and the key's values.
pub type WindowAcc = (Vec<Value>, Vec<Acc>);

impl AggregateFunction<Row, WindowAcc, Vec<Value>> for RowAggregate {
    fn create_accumulator(&self) -> WindowAcc {
        (Vec::new(), self.aggs.iter().map(acc::create).collect())
    }
    fn add(&self, row: Row, a: &mut WindowAcc) {
        if a.0.is_empty() {
            a.0 = row.values[..self.keys].to_vec();
        }
        for (call, x) in self.aggs.iter().zip(a.1.iter_mut()) {
            acc::update(call, x, &row.values, !row.kind.is_accumulate());
        }
    }
    fn get_result(&self, a: &WindowAcc) -> Vec<Value> {
        let mut out = a.0.clone();
        out.extend(self.aggs.iter().zip(&a.1).map(|(c, x)| acc::result(c, x)));
        out
    }
    fn merge(&self, a: WindowAcc, b: WindowAcc) -> WindowAcc {
        let keys = if a.0.is_empty() { b.0 } else { a.0 };
        let accs = self
            .aggs
            .iter()
            .zip(a.1.into_iter().zip(b.1))
            .map(|(call, (x, y))| acc::merge(call, x, y))
            .collect();
        (keys, accs)
    }
}

/// Prepends the window's start, end and time to each result.
#[derive(Clone)]
pub struct EmitWindow;

impl ProcessWindowFunction<Vec<Value>, Vec<Value>, Row, TimeWindow> for EmitWindow {
    fn process(
        &mut self,
        _key: &Vec<Value>,
        ctx: &mut WindowContext<'_, Vec<Value>, TimeWindow>,
        results: Vec<Vec<Value>>,
        out: &mut Collector<'_, Row>,
    ) -> Result<(), UserError> {
        let w = ctx.window();
        for r in results {
            let mut values = Vec::with_capacity(r.len() + 3);
            values.push(Value::Timestamp(w.start()));
            values.push(Value::Timestamp(w.end()));
            values.push(Value::Timestamp(w.end() - 1));
            values.extend(r);
            out.collect(Row::insert(values));
        }
        Ok(())
    }
}

/// Flink's cumulative windows: windows `[start, start + step·k)` for k = 1..size/step,
/// where `start` is the element's `size`-aligned window start.
#[derive(Debug, Clone, Copy)]
pub struct CumulativeWindows {
    /// The step in ms.
    pub step: i64,
    /// The max size in ms.
    pub size: i64,
}

impl<T: 'static> WindowAssigner<T, TimeWindow> for CumulativeWindows {
    fn assign_windows(
        &self,
        _element: &T,
        timestamp: i64,
        _ctx: &AssignerContext<'_>,
        out: &mut Vec<TimeWindow>,
    ) -> Result<(), WindowError> {
        if timestamp == i64::MIN {
            return Err(WindowError::NoTimestamp);
        }
        let start = timestamp - timestamp.rem_euclid(self.size);
        let mut end = start + self.step;
        while end <= start + self.size {
            if end > timestamp {
                out.push(TimeWindow::new(start, end));
            }
            end += self.step;
        }
        Ok(())
    }
    fn default_trigger<K: KeyType>(&self) -> Arc<dyn Trigger<K, T, TimeWindow>> {
        Arc::new(EventTimeTrigger)
    }
    fn is_event_time(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        format!("CumulativeEventTimeWindows({}, {})", self.size, self.step)
    }
}
