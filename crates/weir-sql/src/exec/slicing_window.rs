//! `WindowAggregate` for TUMBLE, HOP and CUMULATE (Flink's slicing window aggregate,
//! `SlicingWindowOperator`): one keyed operator whose state is a table of group keys →
//! typed accumulators per slice end, and whose only timers are the ends of the
//! windows still to fire, one per window end for the whole operator (not per key).
//!
//! A row goes to the one slice holding its timestamp (see [`super::slice_assigner`])
//! and updates its key's accumulators in place. A row whose every window has fired
//! (the last window holding its slice ends at or before `watermark + 1`) is dropped
//! and counted in `numLateRecordsDropped`; a row of a HOP/CUMULATE slice some of whose
//! windows fired goes to the slice and counts for the windows still to fire only, as
//! the per-window operator did. When a watermark passes `end - 1` of a pending window,
//! the window's slices are merged (HOP, CUMULATE) and every key of it is emitted in
//! one pass, in ascending key order (the order of the per-key timers of the general
//! window operator), as `window_start, window_end, window_time, keys..., aggregates...`
//! with the timestamp `end - 1`; a slice is dropped once the last window holding it
//! has fired. In BATCH mode the final MAX watermark fires every window.
//!
//! Invariants: every slice has at least one pending window end (else it was dropped
//! or never made); every pending window end has at least one slice in its range;
//! pending window ends are all past the watermark (`end - 1 > watermark`).

use super::slice_assigner::SliceAssigner;
use super::slice_snapshot::{self, RestoredSlices};
use super::slice_table::SliceTable;
use crate::plan::AggCall;
use crate::value::{Row, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use weir_api::windowing::WindowError;
use weir_core::element::WatermarkStatus;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::checkpoint::CheckpointedOperator;
use weir_runtime::error::TaskError;
use weir_runtime::operator::metric_group::Counter;
use weir_runtime::operator::Output;
use weir_state::OperatorSnapshot;

/// The latest slices whose key index is kept when a new slice comes (an older one's
/// is released for the new slice to reuse: rows of a stream mostly go to its latest
/// slices).
const INDEXED_SLICES: usize = 4;

/// What defines one window aggregation.
#[derive(Debug, Clone)]
pub struct WindowAggSpec {
    /// The operator's name (for errors).
    pub name: String,
    /// How windows are sliced.
    pub assigner: SliceAssigner,
    /// The number of leading key columns of an input row.
    pub keys: usize,
    /// The aggregate calls over the input row.
    pub aggs: Arc<Vec<AggCall>>,
    /// The columns of `window_start, window_end, window_time, keys..., aggregates...`
    /// an output row holds, in order (a projection after the aggregate, compiled into
    /// it); `None` for all of them.
    pub projection: Option<Vec<usize>>,
}

/// The slicing window aggregate of one subtask.
pub struct SlicingWindowOperator {
    spec: WindowAggSpec,
    slices: BTreeMap<i64, SliceTable>,
    /// Ends of the windows still to fire.
    pending: BTreeSet<i64>,
    /// The table of the last slice fired, kept for the next slice's (which then
    /// neither allocates nor grows).
    spare: Option<SliceTable>,
    watermark: i64,
    max_parallelism: u32,
    out: Box<dyn Output<Row>>,
    late_records_dropped: Counter,
}

impl SlicingWindowOperator {
    /// The operator of one subtask of a job with `max_parallelism` key groups, starting
    /// from `restored` state.
    pub fn new(
        spec: WindowAggSpec,
        restored: RestoredSlices,
        max_parallelism: u32,
        out: Box<dyn Output<Row>>,
        late_records_dropped: Counter,
    ) -> Self {
        let RestoredSlices { slices, watermark } = restored;
        let mut op = Self {
            spec,
            slices: BTreeMap::new(),
            pending: BTreeSet::new(),
            spare: None,
            watermark,
            max_parallelism,
            out,
            late_records_dropped,
        };
        for (slice_end, table) in slices {
            if !op.all_windows_fired(slice_end) {
                op.register_windows(slice_end);
                op.slices.insert(slice_end, table);
            }
        }
        op
    }

    /// Slices held, for tests of cleanup.
    pub fn num_slices(&self) -> usize {
        self.slices.len()
    }

    fn all_windows_fired(&self, slice_end: i64) -> bool {
        SliceAssigner::is_fired(self.spec.assigner.last_window_end(slice_end), self.watermark)
    }

    /// Registers the windows of a new slice that have not fired yet.
    fn register_windows(&mut self, slice_end: i64) {
        let watermark = self.watermark;
        self.pending.extend(
            self.spec
                .assigner
                .window_ends(slice_end)
                .filter(|end| !SliceAssigner::is_fired(*end, watermark)),
        );
    }

    fn process_element(&mut self, record: StreamRecord<Row>) -> Result<(), TaskError> {
        let timestamp = match record.timestamp {
            Some(t) if t != i64::MIN => t,
            _ => return Err(TaskError::user(&self.spec.name, WindowError::NoTimestamp)),
        };
        let slice_end = self.spec.assigner.slice_end(timestamp);
        if self.all_windows_fired(slice_end) {
            self.late_records_dropped.inc();
            return Ok(());
        }
        let row = record.value;
        let retract = !row.kind.is_accumulate();
        let key = row.values.get(..self.spec.keys).unwrap_or(&row.values);
        let aggs = &self.spec.aggs;
        // Rows of a stream mostly go to its latest slice, reached without a search.
        let is_latest = self.slices.last_key_value().is_some_and(|(e, _)| *e == slice_end);
        let table = match is_latest {
            true => self.slices.last_entry().map(|e| e.into_mut()),
            false => self.slices.get_mut(&slice_end),
        };
        if let Some(table) = table {
            table.accumulate(key, aggs, &row.values, retract);
            return Ok(());
        }
        self.register_windows(slice_end);
        let recycled = self
            .slices
            .values_mut()
            .nth_back(INDEXED_SLICES - 1)
            .and_then(SliceTable::release_index);
        // Made for keys like the latest slice's, or the last fired one's (consecutive
        // slices of a stream hold much the same keys).
        let latest = self.slices.last_key_value().map(|(_, t)| t);
        let mut fresh = self.spare.take().unwrap_or_default();
        fresh.reset_like(latest, &self.spec.aggs, recycled);
        let table = self.slices.entry(slice_end).or_insert(fresh);
        table.accumulate(key, &self.spec.aggs, &row.values, retract);
        Ok(())
    }

    /// Fires the windows the watermark has passed, in ascending end order.
    fn advance(&mut self, watermark: i64) -> Result<(), TaskError> {
        self.watermark = self.watermark.max(watermark);
        while let Some(&end) = self.pending.first() {
            if !SliceAssigner::is_fired(end, self.watermark) {
                break;
            }
            self.pending.pop_first();
            self.fire(end)?;
        }
        Ok(())
    }

    /// Emits every key of the window ending at `end`, then drops the slices whose last
    /// window it was.
    fn fire(&mut self, end: i64) -> Result<(), TaskError> {
        let assigner = self.spec.assigner;
        let start = assigner.window_start(end);
        let first_slice = start.saturating_add(assigner.unit());
        let aggs = self.spec.aggs.clone();
        let only_slice = {
            let mut range = self.slices.range(first_slice..=end);
            match (range.next(), range.next()) {
                (Some((&e, _)), None) if assigner.last_window_end(e) == end => Some(e),
                _ => None,
            }
        };
        let window = match only_slice {
            Some(e) => self.slices.remove(&e).unwrap_or_default(),
            None => {
                let mut merged: Option<SliceTable> = None;
                for (_, table) in self.slices.range(first_slice..=end) {
                    match &mut merged {
                        None => merged = Some(table.clone()),
                        Some(m) => m.merge_from(table, &aggs),
                    }
                }
                merged.unwrap_or_default()
            }
        };
        let time = end.saturating_sub(1);
        let times = [start, end, time];
        let keys = self.spec.keys;
        for i in window.sorted_order() {
            let i = i as usize;
            let values = match &self.spec.projection {
                None => {
                    let mut values = Vec::with_capacity(3 + window.key_width(i) + aggs.len());
                    values.extend(times.map(Value::Timestamp));
                    window.push_key(i, &mut values);
                    window.push_results(i, &aggs, &mut values);
                    values
                }
                Some(columns) => {
                    // A push per branch: each value is written in place, not built
                    // aside and copied.
                    let mut values = Vec::with_capacity(columns.len());
                    for &c in columns {
                        match c {
                            0..=2 => values.push(Value::Timestamp(times[c])),
                            c if c < 3 + keys => values.push(window.key_value(i, c - 3)),
                            c => values.push(window.result(i, c - 3 - keys, &aggs)),
                        }
                    }
                    values
                }
            };
            self.out.collect(StreamRecord {
                value: Row::insert(values),
                timestamp: Some(time),
            })?;
        }
        self.spare = Some(window);
        while let Some((&e, _)) = self.slices.first_key_value() {
            if assigner.last_window_end(e) > end {
                break;
            }
            self.slices.remove(&e);
        }
        Ok(())
    }
}

impl CheckpointedOperator for SlicingWindowOperator {
    fn snapshot_state(&mut self, _checkpoint_id: u64) -> Result<OperatorSnapshot, TaskError> {
        slice_snapshot::snapshot(&self.slices, self.watermark, self.max_parallelism)
            .map_err(|e| TaskError::Build(format!("{}: window state snapshot: {e}", self.spec.name)))
    }
}

impl Output<Row> for SlicingWindowOperator {
    #[inline]
    fn collect(&mut self, record: StreamRecord<Row>) -> Result<(), TaskError> {
        self.process_element(record)
    }

    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.advance(watermark.0)?;
        self.out.emit_watermark(watermark)
    }

    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.end_input()
    }

    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        self.out.emit_watermark_status(status)
    }

    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        self.out.on_processing_time(now)
    }
}

#[cfg(test)]
mod tests;
