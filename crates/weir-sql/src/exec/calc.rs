//! The `Calc` operator: evaluates a filter and the projections per row, in one
//! chained operator. The changelog kind and the record timestamp pass through.

use crate::expr::kernel::Compiled;
use crate::expr::Expr;
use crate::value::{Row, Value};
use smallvec::SmallVec;
use std::sync::Arc;
use weir_core::element::WatermarkStatus;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::operator::Output;
use weir_runtime::TaskError;

/// What a Calc computes.
#[derive(Debug, Clone)]
pub struct CalcSpec {
    /// The operator's name (for errors).
    pub name: String,
    /// The projections.
    pub exprs: Vec<Expr>,
    /// The filter.
    pub filter: Option<Expr>,
}

/// One subtask's Calc.
pub struct CalcOperator {
    spec: Arc<CalcSpec>,
    projections: Vec<Compiled>,
    out: Box<dyn Output<Row>>,
}

impl CalcOperator {
    /// A Calc emitting to `out`, its projections compiled.
    pub fn new(spec: Arc<CalcSpec>, out: Box<dyn Output<Row>>) -> Self {
        let projections = spec.exprs.iter().cloned().map(Compiled::new).collect();
        Self { spec, projections, out }
    }
}

/// Output values of one row before they replace the input's: inline up to this many.
type Projected = SmallVec<[Value; 8]>;

/// Applies `spec` (its projections compiled) to `row`: `None` if filtered out. The output row reuses the input
/// row's vector: the projections are evaluated against the input values first (on
/// the stack for up to eight columns), then replace them.
pub fn apply(spec: &CalcSpec, projections: &[Compiled], mut row: Row) -> Result<Option<Row>, TaskError> {
    let fail = |e: crate::expr::EvalError| TaskError::user(&spec.name, e);
    if let Some(f) = &spec.filter {
        if !f.is_true(&row.values).map_err(fail)? {
            return Ok(None);
        }
    }
    let mut projected = Projected::with_capacity(projections.len());
    for e in projections {
        projected.push(e.eval(&row.values).map_err(fail)?);
    }
    row.values.clear();
    row.values.extend(projected);
    Ok(Some(row))
}

impl Output<Row> for CalcOperator {
    fn collect(&mut self, record: StreamRecord<Row>) -> Result<(), TaskError> {
        if let Some(row) = apply(&self.spec, &self.projections, record.value)? {
            self.out.collect(StreamRecord {
                value: row,
                timestamp: record.timestamp,
            })?;
        }
        Ok(())
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.out.emit_watermark(watermark)
    }
    fn emit_watermark_status(&mut self, status: WatermarkStatus) -> Result<(), TaskError> {
        self.out.emit_watermark_status(status)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.end_input()
    }
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        self.out.on_processing_time(now)
    }
}
