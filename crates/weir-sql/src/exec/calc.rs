//! The `Calc` operator: evaluates a filter and the projections per row, in one
//! chained operator. The changelog kind and the record timestamp pass through.
//!
//! The output row reuses the input row's vector. A Calc that only selects columns
//! (and constants) moves each value selected once out of the input instead of copying
//! it, so no string is cloned and nothing is evaluated.

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

/// Where one output value of a selecting Calc comes from.
#[derive(Debug, Clone, PartialEq)]
enum Pick {
    /// The input column, selected by no other output: moved out.
    Move(usize),
    /// The input column, selected more than once: copied.
    Copy(usize),
    /// A constant.
    Const(Value),
}

/// The picks of a Calc whose projections are all columns or constants, else `None`.
fn picks(exprs: &[Expr]) -> Option<Vec<Pick>> {
    let uses = |c: usize| exprs.iter().filter(|e| matches!(e, Expr::Column(i) if *i == c)).count();
    exprs
        .iter()
        .map(|e| match e {
            Expr::Column(c) if uses(*c) == 1 => Some(Pick::Move(*c)),
            Expr::Column(c) => Some(Pick::Copy(*c)),
            Expr::Literal(v) => Some(Pick::Const(v.clone())),
            _ => None,
        })
        .collect()
}

/// One subtask's Calc.
pub struct CalcOperator {
    spec: Arc<CalcSpec>,
    projections: Vec<Compiled>,
    picks: Option<Vec<Pick>>,
    out: Box<dyn Output<Row>>,
}

impl CalcOperator {
    /// A Calc emitting to `out`, its projections compiled.
    pub fn new(spec: Arc<CalcSpec>, out: Box<dyn Output<Row>>) -> Self {
        let projections = spec.exprs.iter().cloned().map(Compiled::new).collect();
        let picks = picks(&spec.exprs);
        Self {
            spec,
            projections,
            picks,
            out,
        }
    }
}

/// Applies the filter of `spec` and then `picks` to `row`: `None` if filtered out.
fn select(spec: &CalcSpec, picks: &[Pick], mut row: Row) -> Result<Option<Row>, TaskError> {
    if let Some(f) = &spec.filter {
        if !f.is_true(&row.values).map_err(|e| TaskError::user(&spec.name, e))? {
            return Ok(None);
        }
    }
    let mut projected = Projected::with_capacity(picks.len());
    for p in picks {
        projected.push(match p {
            Pick::Move(c) => row.values.get_mut(*c).map(std::mem::take).unwrap_or_default(),
            Pick::Copy(c) => row.values.get(*c).cloned().unwrap_or_default(),
            Pick::Const(v) => v.clone(),
        });
    }
    row.values.clear();
    row.values.extend(projected);
    Ok(Some(row))
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
        let row = match &self.picks {
            Some(picks) => select(&self.spec, picks, record.value)?,
            None => apply(&self.spec, &self.projections, record.value)?,
        };
        if let Some(row) = row {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::DataType;

    fn spec(exprs: Vec<Expr>, filter: Option<Expr>) -> CalcSpec {
        CalcSpec {
            name: "Calc".into(),
            exprs,
            filter,
        }
    }

    #[test]
    fn a_selecting_calc_moves_columns_and_gives_what_evaluating_gives() {
        let exprs = vec![
            Expr::Column(2),
            Expr::Column(0),
            Expr::Literal(Value::Int(7)),
            Expr::Column(0),
        ];
        assert_eq!(
            picks(&exprs),
            Some(vec![
                Pick::Move(2),
                Pick::Copy(0),
                Pick::Const(Value::Int(7)),
                Pick::Copy(0)
            ])
        );
        let spec = spec(exprs, None);
        let input = Row {
            kind: crate::value::RowKind::UpdateAfter,
            values: vec![Value::Str("a".into()), Value::Null, Value::Double(1.5)],
        };
        let compiled: Vec<Compiled> = spec.exprs.iter().cloned().map(Compiled::new).collect();
        let evaluated = apply(&spec, &compiled, input.clone()).unwrap();
        let picked = select(&spec, &picks(&spec.exprs).unwrap(), input).unwrap();
        assert_eq!(picked, evaluated);
        let row = picked.unwrap();
        assert_eq!(row.kind, crate::value::RowKind::UpdateAfter);
        assert_eq!(
            row.values,
            vec![
                Value::Double(1.5),
                Value::Str("a".into()),
                Value::Int(7),
                Value::Str("a".into())
            ]
        );
    }

    #[test]
    fn a_selecting_calc_filters_before_it_moves() {
        let filter = Expr::Column(0);
        let spec = spec(vec![Expr::Column(1)], Some(filter));
        let picks = picks(&spec.exprs).unwrap();
        let row = |b| Row::insert(vec![Value::Bool(b), Value::Int(1)]);
        assert_eq!(select(&spec, &picks, row(false)).unwrap(), None);
        assert_eq!(
            select(&spec, &picks, row(true)).unwrap(),
            Some(Row::insert(vec![Value::Int(1)]))
        );
    }

    #[test]
    fn a_calc_with_an_expression_is_not_a_selection() {
        let e = Expr::Cast {
            expr: Box::new(Expr::Column(0)),
            from: DataType::Int,
            to: DataType::BigInt,
            try_cast: false,
        };
        assert_eq!(picks(&[Expr::Column(1), e]), None);
    }
}
