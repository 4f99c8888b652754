//! `GroupAggregate`: a keyed process function keeping, per group key, the aggregates'
//! accumulators and the row it last emitted (keyed value state, so it checkpoints).
//! A group's first row is emitted as `+I`, a change as `-U` old / `+U` new, the
//! retraction of its last row as `-D`; an unchanged result emits nothing.
//!
//! In BATCH mode this is a hash aggregate: a row only updates its group's accumulators
//! in place (no result row is built per input row), the key's first row registers an
//! event-time timer at the end of time, which the final watermark fires, and the
//! group's final row goes out as `+I` (Flink's batch aggregate emits final results).

use super::acc::{self, Acc};
use crate::key::GroupKey;
use crate::plan::AggCall;
use crate::value::{Row, RowKind, Value};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use weir_api::prelude::*;

/// One group's state.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GroupState {
    accs: Vec<Acc>,
    rows: i64,
    emitted: Option<Vec<Value>>,
}

/// The aggregation of one group key (the first `keys` input columns).
#[derive(Clone)]
pub struct GroupAggFunction {
    /// The number of key columns.
    pub keys: usize,
    /// The aggregates.
    pub aggs: Arc<Vec<AggCall>>,
    /// The state's descriptor.
    pub desc: ValueStateDescriptor<GroupState>,
    /// BATCH (final rows only) or STREAMING (a changelog).
    pub mode: RuntimeModeHandle,
}

impl GroupAggFunction {
    /// The function for `aggs` over rows keyed by their first `keys` columns, in the
    /// runtime mode `mode` gives.
    pub fn new(keys: usize, aggs: Vec<AggCall>, mode: RuntimeModeHandle) -> Self {
        Self {
            keys,
            aggs: Arc::new(aggs),
            desc: ValueStateDescriptor::new("group-aggregate"),
            mode,
        }
    }

    /// Applies `row` to the accumulators of `state`.
    fn accumulate(&self, state: &mut GroupState, row: &Row) {
        if state.accs.is_empty() {
            state.accs = self.aggs.iter().map(acc::create).collect();
        }
        let retract = !row.kind.is_accumulate();
        for (call, a) in self.aggs.iter().zip(state.accs.iter_mut()) {
            acc::update(call, a, &row.values, retract);
        }
        state.rows += if retract { -1 } else { 1 };
    }

    /// The group's row: its key values, then the aggregates' results.
    fn result(&self, key: &[Value], state: &GroupState) -> Vec<Value> {
        let mut values = Vec::with_capacity(key.len() + self.aggs.len());
        values.extend_from_slice(key);
        values.extend(self.aggs.iter().zip(&state.accs).map(|(c, a)| acc::result(c, a)));
        values
    }

    /// Applies `row` to `state`; the changelog rows to emit.
    pub fn step(&self, state: &mut GroupState, row: &Row) -> Vec<Row> {
        self.accumulate(state, row);
        let mut out = Vec::new();
        if state.rows <= 0 {
            if let Some(old) = state.emitted.take() {
                out.push(Row {
                    kind: RowKind::Delete,
                    values: old,
                });
            }
            *state = GroupState::default();
            return out;
        }
        let values = self.result(&row.values[..self.keys], state);
        match state.emitted.replace(values.clone()) {
            None => out.push(Row::insert(values)),
            Some(old) if old == values => {}
            Some(old) => {
                out.push(Row {
                    kind: RowKind::UpdateBefore,
                    values: old,
                });
                out.push(Row {
                    kind: RowKind::UpdateAfter,
                    values,
                });
            }
        }
        out
    }
}

impl KeyedProcessFunction<GroupKey, Row, Row> for GroupAggFunction {
    fn process_element(
        &mut self,
        row: Row,
        ctx: &mut KeyedContext<'_, GroupKey>,
        out: &mut Collector<'_, Row>,
    ) -> Result<(), UserError> {
        if self.mode.is_batch() {
            let mut state = ctx.value_state(&self.desc)?;
            let existed = state.value_ref().is_some();
            let s = state.get_or_insert_with(GroupState::default);
            self.accumulate(s, &row);
            if s.rows <= 0 {
                state.clear();
            }
            if !existed {
                ctx.register_event_time_timer(i64::MAX)?;
            }
            return Ok(());
        }
        let mut state = ctx.value_state(&self.desc)?;
        let mut s = state.take().unwrap_or_default();
        let rows = self.step(&mut s, &row);
        if s.rows > 0 {
            state.update(s);
        }
        for r in rows {
            out.collect(r);
        }
        Ok(())
    }

    fn on_timer(
        &mut self,
        _timestamp: i64,
        ctx: &mut KeyedContext<'_, GroupKey>,
        out: &mut Collector<'_, Row>,
    ) -> Result<(), UserError> {
        let Some(state) = ctx.value_state(&self.desc)?.take() else {
            return Ok(());
        };
        if state.rows > 0 {
            let key = ctx.current_key().map(GroupKey::values).unwrap_or_default();
            out.collect(Row::insert(self.result(key, &state)));
        }
        Ok(())
    }
}
