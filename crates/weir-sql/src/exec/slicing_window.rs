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
//!
//! A row's slice is found without a search when it is the slice of the row before
//! (rows of a stream, and of each BATCH input buffer, come in runs of one slice). In
//! BATCH (the runtime mode is read when the operator is built on its task) the
//! operator's [`KeyDictionary`] gives every key a dense id, which the slice tables
//! hold in place of the key, and every slice keeps its index (all slices live until
//! the end of the input and are revisited once per input subpartition); fired tables
//! are kept for reuse rather than freed. Streaming keeps only the latest slices'
//! integer key indexes (the latest 4, `INDEXED_SLICES`) and a few fired tables.

use super::key_dictionary::KeyDictionary;
use super::slice_assigner::SliceAssigner;
use super::slice_snapshot::{self, RestoredSlices, SliceEntry};
use super::slice_table::SliceTable;
use super::window_rows::{RowEntry, WindowRows};
use crate::key::GroupKey;
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

/// The latest slices whose key index is kept when a new slice comes, in streaming (an
/// older one's is released for the new slice to reuse: rows of a stream mostly go to
/// its latest slices); also the fired tables a streaming operator keeps for reuse.
const INDEXED_SLICES: usize = 4;

/// Rows a firing window builds at once, a column at a time, before emitting them: few
/// enough that their memory stays within an allocator page, which emitting them frees
/// for the next ones (all of a window's rows at once would fill pages that are then
/// returned to the system and faulted in again).
const ROWS_AT_ONCE: usize = 64;

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

/// The slice the last row went to: timestamps `start..end` go to its table.
#[derive(Debug, Clone, Copy)]
struct LastSlice {
    start: i64,
    end: i64,
    table: usize,
}

/// The slicing window aggregate of one subtask.
pub struct SlicingWindowOperator {
    spec: WindowAggSpec,
    /// Slice end → the slice's table in `tables`.
    slices: BTreeMap<i64, usize>,
    /// The tables of the slices, and the spare ones (of fired slices, kept for new
    /// slices, which then neither allocate nor grow).
    tables: Vec<SliceTable>,
    /// Tables of `tables` no slice holds.
    spare: Vec<usize>,
    last: Option<LastSlice>,
    /// In BATCH, the keys whose ids the tables hold.
    dictionary: Option<KeyDictionary>,
    /// In BATCH, the keys added to slices and the slices made, whose ratio sizes a new
    /// slice (the latest slice may be one just begun).
    keys_added: usize,
    slices_made: usize,
    /// Ends of the windows still to fire.
    pending: BTreeSet<i64>,
    watermark: i64,
    max_parallelism: u32,
    out: Box<dyn Output<Row>>,
    late_records_dropped: Counter,
}

impl SlicingWindowOperator {
    /// The operator of one subtask of a job with `max_parallelism` key groups, starting
    /// from `restored` state; `batch` when the job runs in BATCH mode.
    pub fn new(
        spec: WindowAggSpec,
        restored: RestoredSlices,
        batch: bool,
        max_parallelism: u32,
        out: Box<dyn Output<Row>>,
        late_records_dropped: Counter,
    ) -> Self {
        let RestoredSlices { slices, watermark } = restored;
        let mut op = Self {
            spec,
            slices: BTreeMap::new(),
            tables: Vec::new(),
            spare: Vec::new(),
            last: None,
            dictionary: batch.then(KeyDictionary::default),
            keys_added: 0,
            slices_made: 0,
            pending: BTreeSet::new(),
            watermark,
            max_parallelism,
            out,
            late_records_dropped,
        };
        for (slice_end, table) in slices {
            if !op.all_windows_fired(slice_end) {
                op.register_windows(slice_end);
                let table = match &mut op.dictionary {
                    Some(dictionary) => dictionary.to_ids(&table, &op.spec.aggs),
                    None => table,
                };
                op.slices.insert(slice_end, op.tables.len());
                op.tables.push(table);
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

    #[inline]
    fn process_element(&mut self, record: StreamRecord<Row>) -> Result<(), TaskError> {
        let timestamp = match record.timestamp {
            Some(t) if t != i64::MIN => t,
            _ => return Err(TaskError::user(&self.spec.name, WindowError::NoTimestamp)),
        };
        let table = match self.last {
            Some(last) if last.start <= timestamp && timestamp < last.end => last.table,
            _ => match self.slice_of(timestamp) {
                Some(table) => table,
                None => {
                    self.late_records_dropped.inc();
                    return Ok(());
                }
            },
        };
        let row = record.value;
        let retract = !row.kind.is_accumulate();
        let key = row.values.get(..self.spec.keys).unwrap_or(&row.values);
        let aggs = &self.spec.aggs;
        let table = &mut self.tables[table];
        match &mut self.dictionary {
            Some(dictionary) => {
                let new = table.accumulate_int(dictionary.id(key), aggs, &row.values, retract);
                self.keys_added += new as usize;
            }
            None => table.accumulate(key, aggs, &row.values, retract),
        }
        Ok(())
    }

    /// The table of the slice holding `timestamp`, made if the slice is new; `None`
    /// when every window of the slice has fired (the row is late). The slice becomes
    /// the last one.
    #[inline(never)]
    fn slice_of(&mut self, timestamp: i64) -> Option<usize> {
        let assigner = self.spec.assigner;
        let end = assigner.slice_end(timestamp);
        if self.all_windows_fired(end) {
            return None;
        }
        let table = match self.slices.get(&end) {
            Some(&table) => table,
            None => self.new_slice(end),
        };
        let start = assigner.slice_start(timestamp);
        self.last = Some(LastSlice { start, end, table });
        Some(table)
    }

    /// Makes the table of the new slice ending at `slice_end`.
    fn new_slice(&mut self, slice_end: i64) -> usize {
        self.register_windows(slice_end);
        let recycled = match self.dictionary {
            Some(_) => None,
            None => {
                let older = self.slices.values().nth_back(INDEXED_SLICES - 1).copied();
                older.and_then(|t| self.tables[t].release_index())
            }
        };
        let table = self.spare.pop().unwrap_or_else(|| {
            self.tables.push(SliceTable::default());
            self.tables.len() - 1
        });
        // Made for keys like the latest slice's, or the last fired one's (consecutive
        // slices of a stream hold much the same keys).
        let latest = self.slices.last_key_value().map(|(_, &t)| t);
        let mut fresh = std::mem::take(&mut self.tables[table]);
        let before = latest.map(|t| &self.tables[t]);
        match &self.dictionary {
            Some(dictionary) => {
                // Indexed over every id given so far (ids come in any order), with room
                // for as many keys as the latest or an average slice holds.
                let average = self.keys_added / self.slices_made.max(1);
                let room = before.map_or(0, SliceTable::len).max(average);
                fresh.reset_for_ids(room + room / 8, dictionary.len(), &self.spec.aggs);
                self.slices_made += 1;
            }
            None => fresh.reset_like(before, &self.spec.aggs, recycled),
        }
        self.tables[table] = fresh;
        self.slices.insert(slice_end, table);
        table
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

    /// The merge of the slices `first_slice..=end` (a HOP or CUMULATE window).
    fn merged(&self, first_slice: i64, end: i64) -> SliceTable {
        let mut merged: Option<SliceTable> = None;
        for (_, &table) in self.slices.range(first_slice..=end) {
            match &mut merged {
                None => merged = Some(self.tables[table].clone()),
                Some(m) => m.merge_from(&self.tables[table], &self.spec.aggs),
            }
        }
        merged.unwrap_or_default()
    }

    /// Emits every key of the window ending at `end`, then drops the slices whose last
    /// window it was.
    fn fire(&mut self, end: i64) -> Result<(), TaskError> {
        let assigner = self.spec.assigner;
        let start = assigner.window_start(end);
        let first_slice = start.saturating_add(assigner.unit());
        let only_slice = {
            let mut range = self.slices.range(first_slice..=end);
            match (range.next(), range.next()) {
                (Some((&e, &table)), None) if assigner.last_window_end(e) == end => Some(table),
                _ => None,
            }
        };
        let merged;
        let window = match only_slice {
            Some(table) => &self.tables[table],
            None => {
                merged = self.merged(first_slice, end);
                &merged
            }
        };
        window.warm();
        let order = match &mut self.dictionary {
            Some(dictionary) => dictionary.ascending(window),
            None => window.sorted_order(),
        };
        let aggs = &self.spec.aggs;
        let time = end.saturating_sub(1);
        let times = [start, end, time];
        let keys = match &self.dictionary {
            Some(dictionary) => dictionary.keys(),
            None => window.keys(),
        };
        let entries: Vec<RowEntry> = order
            .into_iter()
            .map(|entry| RowEntry {
                entry,
                key: match &self.dictionary {
                    Some(_) => KeyDictionary::id_of(window, entry as usize) as u32,
                    None => entry,
                },
            })
            .collect();
        match &self.spec.projection {
            Some(columns) => {
                for chunk in entries.chunks(ROWS_AT_ONCE) {
                    let rows = WindowRows {
                        table: window,
                        keys,
                        entries: chunk,
                        times,
                        key_columns: self.spec.keys,
                        aggs,
                    }
                    .project(columns);
                    for values in rows {
                        self.out.collect(StreamRecord {
                            value: Row::insert(values),
                            timestamp: Some(time),
                        })?;
                    }
                }
            }
            None => {
                for e in &entries {
                    let (i, k) = (e.entry as usize, e.key as usize);
                    let mut values = Vec::with_capacity(3 + keys.key_width(k) + aggs.len());
                    values.extend(times.map(Value::Timestamp));
                    keys.push_key(k, &mut values);
                    window.push_results(i, aggs, &mut values);
                    self.out.collect(StreamRecord {
                        value: Row::insert(values),
                        timestamp: Some(time),
                    })?;
                }
            }
        }
        self.last = None;
        while let Some((&e, &table)) = self.slices.first_key_value() {
            if assigner.last_window_end(e) > end {
                break;
            }
            self.slices.remove(&e);
            if self.dictionary.is_none() && self.spare.len() >= INDEXED_SLICES {
                self.tables[table] = SliceTable::default();
            }
            self.spare.push(table);
        }
        Ok(())
    }
}

impl CheckpointedOperator for SlicingWindowOperator {
    fn snapshot_state(&mut self, _checkpoint_id: u64) -> Result<OperatorSnapshot, TaskError> {
        let dictionary = self.dictionary.as_ref();
        let entries = self.slices.iter().flat_map(|(&slice_end, &table)| {
            self.tables[table].entries().map(move |(key, accs)| SliceEntry {
                slice_end,
                key: match (dictionary, &key) {
                    (Some(d), GroupKey::One(Value::Int(id))) => d.key(*id as usize),
                    _ => key,
                },
                accs,
            })
        });
        slice_snapshot::snapshot(entries, self.watermark, self.max_parallelism)
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
