//! A source of rows over a source of raw records (lines, generated values): each
//! record is converted (parsed, computed columns evaluated) on the source's thread.
//! Positions for checkpoints are the inner source's.
//!
//! A table's rows are complete when they hold its emitted columns (its schema); a
//! table with a projection pushed into its scan evaluates only the columns the query
//! reads, and its rowtime, when the query does not read it, only for the record's
//! timestamp.

use crate::expr::kernel::Compiled;
use crate::plan::table::ColumnSource;
use crate::plan::ResolvedTable;
use crate::value::{Row, Value};
use smallvec::SmallVec;
use std::sync::Arc;
use weir_core::element::WatermarkStatus;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

/// Rows from the records of `inner`, each converted by `convert` into a row record
/// (with its timestamp), or `None` to skip it.
pub struct RowSource<X, C> {
    inner: Box<dyn SourceFunction<X>>,
    convert: C,
}

impl<X, C> RowSource<X, C>
where
    C: Fn(StreamRecord<X>) -> Result<Option<StreamRecord<Row>>, TaskError>,
{
    /// Rows of `inner`'s records, converted by `convert`.
    pub fn new(inner: Box<dyn SourceFunction<X>>, convert: C) -> Self {
        Self { inner, convert }
    }
}

struct Converting<'a, C> {
    out: &'a mut dyn Output<Row>,
    convert: &'a C,
}

impl<X, C> Output<X> for Converting<'_, C>
where
    C: Fn(StreamRecord<X>) -> Result<Option<StreamRecord<Row>>, TaskError>,
{
    #[inline]
    fn collect(&mut self, record: StreamRecord<X>) -> Result<(), TaskError> {
        match (self.convert)(record)? {
            Some(row) => self.out.collect(row),
            None => Ok(()),
        }
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.out.emit_watermark(watermark)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.end_input()
    }
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        self.out.emit_watermark_status(status)
    }
}

impl<X, C> SourceFunction<Row> for RowSource<X, C>
where
    C: Fn(StreamRecord<X>) -> Result<Option<StreamRecord<Row>>, TaskError> + Send,
    X: 'static,
{
    fn poll_next(&mut self, output: &mut dyn Output<Row>) -> Result<SourceStatus, TaskError> {
        let mut c = Converting {
            out: output,
            convert: &self.convert,
        };
        self.inner.poll_next(&mut c)
    }
    fn on_processing_time(&mut self, now: i64, output: &mut dyn Output<Row>) -> Result<(), TaskError> {
        let mut c = Converting {
            out: output,
            convert: &self.convert,
        };
        self.inner.on_processing_time(now, &mut c)
    }
    fn snapshot_position(&mut self) -> Result<Vec<Vec<u8>>, TaskError> {
        self.inner.snapshot_position()
    }
    fn restore_position(&mut self, positions: Vec<Vec<u8>>) -> Result<(), TaskError> {
        self.inner.restore_position(positions)
    }
}

/// Where one column of a complete row comes from.
enum Slot {
    /// The physical value at this index, copied.
    Physical(usize),
    /// A computed column.
    Computed(Compiled),
}

/// The epoch milliseconds of a rowtime value; `i64::MIN` for a NULL.
fn rowtime_millis(v: &Value) -> i64 {
    match v {
        Value::Timestamp(ms) => *ms,
        _ => i64::MIN,
    }
}

/// Where [`Completer::record`] takes a record's timestamp from.
enum Stamp {
    /// The complete row's column at this index (the rowtime is emitted).
    Emitted(usize),
    /// The physical value at this index (a physical rowtime the row does not hold).
    Physical(usize),
    /// A computed rowtime the row does not hold, evaluated for the stamp only.
    Computed(Compiled),
    /// The table has no rowtime: the raw record's timestamp.
    Raw,
}

/// Completes rows of one table: its computed columns compiled once.
pub struct Completer {
    table: Arc<ResolvedTable>,
    /// For every column of the table's `columns`.
    slots: Vec<Slot>,
    stamp: Stamp,
    /// The number of columns a complete row has (the table's schema's).
    emitted: usize,
    in_place: bool,
    /// The physical columns come first, in declaration order, then only computed ones.
    appends: bool,
}

impl Completer {
    /// The completer of `table`'s rows.
    pub fn new(table: Arc<ResolvedTable>) -> Self {
        let slots: Vec<Slot> = table
            .columns
            .iter()
            .map(|c| match c {
                ColumnSource::Computed(e) => Slot::Computed(Compiled::new(e.clone())),
                ColumnSource::Physical(p) => Slot::Physical(*p),
            })
            .collect();
        let emitted = table.schema.len();
        let physical = table.physical.len();
        let all_emitted = table.columns.len() == emitted;
        let in_place = all_emitted
            && emitted == physical
            && table
                .columns
                .iter()
                .enumerate()
                .all(|(i, c)| matches!(c, ColumnSource::Physical(p) if *p == i));
        let appends = all_emitted
            && emitted >= physical
            && table.columns.iter().enumerate().all(|(i, c)| match c {
                ColumnSource::Physical(p) => i < physical && *p == i,
                ColumnSource::Computed(_) => i >= physical,
            });
        let stamp = match (table.rowtime, table.rowtime.and_then(|r| slots.get(r))) {
            (Some(r), _) if r < emitted => Stamp::Emitted(r),
            (_, Some(Slot::Physical(i))) => Stamp::Physical(*i),
            (_, Some(Slot::Computed(c))) => Stamp::Computed(c.clone()),
            (_, None) => Stamp::Raw,
        };
        Self {
            table,
            slots,
            stamp,
            emitted,
            in_place,
            appends,
        }
    }

    /// The number of columns of a complete row.
    pub fn width(&self) -> usize {
        self.emitted
    }

    /// The value of `slot` for a row of `physical` values.
    #[inline]
    fn value(&self, slot: &Slot, physical: &[Value]) -> Result<Value, TaskError> {
        match slot {
            Slot::Computed(c) => self.evaluated(c, physical),
            Slot::Physical(i) => Ok(physical.get(*i).cloned().unwrap_or_default()),
        }
    }

    /// The complete row from its physical values: computed columns evaluated. The row
    /// reuses the vector of physical values (a table of physical columns only, in
    /// declaration order, keeps it as it is; one whose computed columns all follow its
    /// physical ones gets them appended).
    pub fn complete(&self, mut physical: Vec<Value>) -> Result<Row, TaskError> {
        if self.in_place {
            return Ok(Row::insert(physical));
        }
        let n = self.table.physical.len();
        if self.appends && physical.len() == n {
            physical.reserve(self.emitted - n);
            for slot in &self.slots[n..] {
                let value = self.value(slot, &physical[..n])?;
                physical.push(value);
            }
            return Ok(Row::insert(physical));
        }
        let mut values: SmallVec<[Value; 8]> = SmallVec::with_capacity(self.emitted);
        for slot in &self.slots[..self.emitted] {
            values.push(self.value(slot, &physical)?);
        }
        physical.clear();
        physical.extend(values);
        Ok(Row::insert(physical))
    }

    /// The record of the complete row of `physical` values, in a vector of its exact
    /// width: stamped with its rowtime when the table has one (evaluated for the
    /// stamp only when the row does not hold it), else with `timestamp`.
    /// Computed columns are taken from their kernels where those answer (the tree,
    /// out of line, evaluates the rest).
    #[inline]
    pub fn record(&self, physical: &[Value], timestamp: Option<i64>) -> Result<StreamRecord<Row>, TaskError> {
        let mut values = Vec::with_capacity(self.emitted);
        for slot in &self.slots[..self.emitted] {
            values.push(match slot {
                Slot::Physical(i) => physical.get(*i).cloned().unwrap_or_default(),
                Slot::Computed(c) => match c.kernel_value(physical) {
                    Some(v) => v,
                    None => self.evaluated(c, physical)?,
                },
            });
        }
        let timestamp = match &self.stamp {
            Stamp::Emitted(r) => Some(values.get(*r).map_or(i64::MIN, rowtime_millis)),
            Stamp::Physical(i) => Some(physical.get(*i).map_or(i64::MIN, rowtime_millis)),
            Stamp::Computed(c) => Some(match c.kernel_millis(physical) {
                Some(ms) => ms,
                None => rowtime_millis(&self.evaluated(c, physical)?),
            }),
            Stamp::Raw => timestamp,
        };
        Ok(StreamRecord {
            value: Row::insert(values),
            timestamp,
        })
    }

    /// `c`'s value for a row of `physical` values (out of line: [`Completer::record`]
    /// calls it only where a kernel gave up on the row).
    #[inline(never)]
    fn evaluated(&self, c: &Compiled, physical: &[Value]) -> Result<Value, TaskError> {
        c.eval(physical).map_err(|e| self.failed(e))
    }

    fn failed(&self, cause: crate::expr::EvalError) -> TaskError {
        TaskError::user(&format!("Source: {}", self.table.name), cause)
    }
}

/// Builds one subtask's source of rows.
pub trait BuildRowSource:
    Fn(&weir_runtime::operator::TaskContext) -> Result<Box<dyn SourceFunction<Row>>, TaskError> + Send + Sync + 'static
{
}

impl<F> BuildRowSource for F where
    F: Fn(&weir_runtime::operator::TaskContext) -> Result<Box<dyn SourceFunction<Row>>, TaskError>
        + Send
        + Sync
        + 'static
{
}

/// How a table's source is added.
pub struct SourceDecl {
    /// The source's name.
    pub description: String,
    /// Whether it ends (what BATCH needs and AUTOMATIC decides by).
    pub boundedness: weir_api::Boundedness,
    /// Its records come stamped with their rowtime (see [`Completer::record`]); else
    /// the rowtime is read from the rows, which must hold it.
    pub stamped: bool,
}

/// Adds the source of table `t` to `env` as `decl` says: with record timestamps and
/// bounded-out-of-orderness watermarks when `t` has a watermark.
pub fn add_declared_source(
    env: &weir_api::StreamExecutionEnvironment,
    t: &ResolvedTable,
    decl: SourceDecl,
    build: impl BuildRowSource,
) -> weir_api::DataStream<Row> {
    let stream = match t.rowtime {
        Some(i) => {
            let strategy = weir_api::watermark::WatermarkStrategy::for_bounded_out_of_orderness(
                std::time::Duration::from_millis(t.watermark_delay_ms.max(0) as u64),
            );
            let strategy = if decl.stamped {
                strategy
            } else {
                strategy.with_timestamp_assigner(move |row: &Row, _| row.values.get(i).map_or(i64::MIN, rowtime_millis))
            };
            env.from_source(build, strategy, decl.description)
        }
        None => env.add_source(decl.description, None, build),
    };
    stream.set_boundedness(decl.boundedness)
}

#[cfg(test)]
#[path = "row_source_tests.rs"]
mod tests;
