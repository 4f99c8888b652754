//! `WindowAggregate`: the window operator of the DataStream API over rows keyed by
//! their group key, with an aggregate function over the rows' accumulators and a
//! window function that emits `window_start, window_end, window_time, keys...,
//! aggregates...` once per window when the watermark passes its end (append-only).
//! CUMULATE windows have an assigner of their own ([`CumulativeWindows`]); SESSION
//! windows merge, and with them their accumulators.

use super::acc::{self, Acc};
use crate::key::GroupKey;
use crate::plan::AggCall;
use crate::value::{Row, Value};
use smallvec::SmallVec;
use std::sync::Arc;
use weir_api::prelude::*;
use weir_api::windowing::{AssignerContext, WindowAssigner, WindowError};

/// Aggregates rows into accumulators.
#[derive(Clone)]
pub struct RowAggregate {
    /// The aggregates.
    pub aggs: Arc<Vec<AggCall>>,
}

/// The accumulators of one window and key (the key itself is the window operator's
/// current key, so it is not copied into every window's state).
pub type WindowAcc = SmallVec<[Acc; 2]>;

/// The aggregates' results of one window and key.
pub type WindowResult = SmallVec<[Value; 2]>;

impl AggregateFunction<Row, WindowAcc, WindowResult> for RowAggregate {
    fn create_accumulator(&self) -> WindowAcc {
        self.aggs.iter().map(acc::create).collect()
    }
    fn add(&self, row: Row, a: &mut WindowAcc) {
        let retract = !row.kind.is_accumulate();
        for (call, x) in self.aggs.iter().zip(a.iter_mut()) {
            acc::update(call, x, &row.values, retract);
        }
    }
    fn get_result(&self, a: &WindowAcc) -> WindowResult {
        self.aggs.iter().zip(a).map(|(c, x)| acc::result(c, x)).collect()
    }
    fn merge(&self, a: WindowAcc, b: WindowAcc) -> WindowAcc {
        self.aggs
            .iter()
            .zip(a.into_iter().zip(b))
            .map(|(call, (x, y))| acc::merge(call, x, y))
            .collect()
    }
}

/// Emits `window_start, window_end, window_time, keys..., aggregates...` per result.
#[derive(Clone)]
pub struct EmitWindow;

impl ProcessWindowFunction<GroupKey, WindowResult, Row, TimeWindow> for EmitWindow {
    fn process(
        &mut self,
        key: &GroupKey,
        ctx: &mut WindowContext<'_, GroupKey, TimeWindow>,
        results: Vec<WindowResult>,
        out: &mut Collector<'_, Row>,
    ) -> Result<(), UserError> {
        let w = ctx.window();
        for r in results {
            let mut values = Vec::with_capacity(3 + key.values().len() + r.len());
            values.push(Value::Timestamp(w.start()));
            values.push(Value::Timestamp(w.end()));
            values.push(Value::Timestamp(w.end() - 1));
            values.extend(key.values().iter().cloned());
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
