//! The rows a firing window emits when a projection is compiled into the aggregate,
//! built a column at a time: each column's kind (a window time, a key value, an
//! aggregate's result, and the form of its accumulators) is decided once per window
//! rather than once per row and value, and each loop writes one kind of value straight
//! into the rows.
//!
//! Invariant: row `r` is the row of `entries[r]`, its values the projected columns of
//! `window_start, window_end, window_time, keys..., aggregates...` in order, as a
//! row-at-a-time projection gives them.

use super::key_entries::KeyEntries;
use super::slice_table::SliceTable;
use crate::plan::AggCall;
use crate::value::Value;

/// One emitted row's entry: its entry in the window's table and its key's number in
/// the key entries (the same number, or a BATCH dictionary's id).
#[derive(Debug, Clone, Copy)]
pub struct RowEntry {
    /// The entry in the window's table.
    pub entry: u32,
    /// The key's number in the key entries.
    pub key: u32,
}

/// What a firing window's rows are made of.
pub struct WindowRows<'a> {
    /// The window's table (its accumulators).
    pub table: &'a SliceTable,
    /// The keys the entries' key numbers refer to.
    pub keys: &'a KeyEntries,
    /// The entries of the rows, in emission order.
    pub entries: &'a [RowEntry],
    /// `window_start, window_end, window_time`.
    pub times: [i64; 3],
    /// The number of key columns.
    pub key_columns: usize,
    /// The aggregate calls.
    pub aggs: &'a [AggCall],
}

impl WindowRows<'_> {
    /// The rows holding `columns` (indexes of `window_start, window_end, window_time,
    /// keys..., aggregates...`; NULL past them).
    pub fn project(&self, columns: &[usize]) -> Vec<Vec<Value>> {
        let mut rows: Vec<Vec<Value>> = (0..self.entries.len())
            .map(|_| Vec::with_capacity(columns.len()))
            .collect();
        for &c in columns {
            match c {
                0..=2 => {
                    let t = self.times[c];
                    for row in &mut rows {
                        row.push(Value::Timestamp(t));
                    }
                }
                c if c < 3 + self.key_columns => {
                    let keys = self.entries.iter().map(|e| e.key as usize);
                    self.keys.push_key_column(c - 3, keys, &mut rows);
                }
                c => {
                    let entries = self.entries.iter().map(|e| e.entry as usize);
                    self.table
                        .push_result_column(c - 3 - self.key_columns, self.aggs, entries, &mut rows);
                }
            }
        }
        rows
    }
}
