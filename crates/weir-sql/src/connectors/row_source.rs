//! A source of rows over a source of raw records (lines, generated values): each
//! record is converted (parsed, computed columns evaluated) on the source's thread.
//! Positions for checkpoints are the inner source's.

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

/// Converts one raw record into a row, or `None` to skip it (a malformed line the
/// table ignores).
pub type Convert<X> = Arc<dyn Fn(X) -> Result<Option<Row>, TaskError> + Send + Sync>;

/// Rows from the records of `inner`.
pub struct RowSource<X> {
    inner: Box<dyn SourceFunction<X>>,
    convert: Convert<X>,
}

impl<X> RowSource<X> {
    /// Rows of `inner`'s records, converted by `convert`.
    pub fn new(inner: Box<dyn SourceFunction<X>>, convert: Convert<X>) -> Self {
        Self { inner, convert }
    }
}

struct Converting<'a, X> {
    out: &'a mut dyn Output<Row>,
    convert: &'a Convert<X>,
}

impl<X> Output<X> for Converting<'_, X> {
    fn collect(&mut self, record: StreamRecord<X>) -> Result<(), TaskError> {
        match (self.convert)(record.value)? {
            Some(row) => self.out.collect(StreamRecord {
                value: row,
                timestamp: record.timestamp,
            }),
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

impl<X> SourceFunction<Row> for RowSource<X> {
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

/// Completes rows of one table: its computed columns compiled once.
pub struct Completer {
    table: Arc<ResolvedTable>,
    computed: Vec<Option<Compiled>>,
    in_place: bool,
    /// The physical columns come first, in declaration order, then only computed ones.
    appends: bool,
}

impl Completer {
    /// The completer of `table`'s rows.
    pub fn new(table: Arc<ResolvedTable>) -> Self {
        let computed = table
            .columns
            .iter()
            .map(|c| match c {
                ColumnSource::Computed(e) => Some(Compiled::new(e.clone())),
                ColumnSource::Physical(_) => None,
            })
            .collect();
        let in_place = table.columns.len() == table.physical.len()
            && table
                .columns
                .iter()
                .enumerate()
                .all(|(i, c)| matches!(c, ColumnSource::Physical(p) if *p == i));
        let physical = table.physical.len();
        let appends = table.columns.len() >= physical
            && table.columns.iter().enumerate().all(|(i, c)| match c {
                ColumnSource::Physical(p) => i < physical && *p == i,
                ColumnSource::Computed(_) => i >= physical,
            });
        Self {
            table,
            computed,
            in_place,
            appends,
        }
    }

    /// The number of columns of a complete row.
    pub fn width(&self) -> usize {
        self.table.columns.len()
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
            physical.reserve(self.computed.len() - n);
            for compiled in &self.computed[n..] {
                let value = match compiled {
                    Some(e) => e.eval(&physical[..n]).map_err(|e| self.failed(e))?,
                    None => Value::Null,
                };
                physical.push(value);
            }
            return Ok(Row::insert(physical));
        }
        let mut values: SmallVec<[Value; 8]> = SmallVec::with_capacity(self.table.columns.len());
        for (c, compiled) in self.table.columns.iter().zip(&self.computed) {
            values.push(match (c, compiled) {
                (_, Some(e)) => e.eval(&physical).map_err(|e| self.failed(e))?,
                (ColumnSource::Physical(i), None) => physical.get(*i).cloned().unwrap_or_default(),
                (ColumnSource::Computed(_), None) => Value::Null,
            });
        }
        physical.clear();
        physical.extend(values);
        Ok(Row::insert(physical))
    }

    fn failed(&self, cause: crate::expr::EvalError) -> TaskError {
        TaskError::user(&format!("Source: {}", self.table.name), cause)
    }
}

/// Adds the source of table `t` to `env`: with the rowtime column's values as record
/// timestamps and bounded-out-of-orderness watermarks when `t` has a watermark.
/// `boundedness` says whether it ends (what BATCH needs and AUTOMATIC decides by).
pub fn add_row_source(
    env: &weir_api::StreamExecutionEnvironment,
    t: &crate::plan::ResolvedTable,
    description: String,
    boundedness: weir_api::Boundedness,
    build: impl Fn(&weir_runtime::operator::TaskContext) -> Result<Box<dyn SourceFunction<Row>>, TaskError>
        + Send
        + Sync
        + 'static,
) -> weir_api::DataStream<Row> {
    let stream = match t.rowtime {
        Some(i) => {
            let strategy = weir_api::watermark::WatermarkStrategy::for_bounded_out_of_orderness(
                std::time::Duration::from_millis(t.watermark_delay_ms.max(0) as u64),
            )
            .with_timestamp_assigner(move |row: &Row, _| match row.values.get(i) {
                Some(crate::value::Value::Timestamp(ms)) => *ms,
                _ => i64::MIN,
            });
            env.from_source(build, strategy, description)
        }
        None => env.add_source(description, None, build),
    };
    stream.set_boundedness(boundedness)
}
