//! The `Calc` operator: evaluates a filter and the projections per row, in one
//! chained operator. The changelog kind and the record timestamp pass through.
//!
//! No vector is allocated per row: a Calc that only moves columns, in ascending column
//! order, shifts them to the front of the input row's vector; any other Calc builds its
//! output in the vector of the row before (kept emptied as the spare) and keeps the
//! input's vector as the next spare. A Calc that only selects columns (and constants)
//! moves each value selected once out of the input instead of copying it, so no string
//! is cloned and nothing is evaluated.

use crate::expr::kernel::Compiled;
use crate::expr::Expr;
use crate::value::{Row, Value};
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
    /// The picks only move columns, in ascending column order: the output is the input
    /// vector with the picked values shifted to the front.
    in_place: bool,
    /// The vector the next output row is built in (the last input row's, emptied).
    spare: Vec<Value>,
    out: Box<dyn Output<Row>>,
}

impl CalcOperator {
    /// A Calc emitting to `out`, its projections compiled.
    pub fn new(spec: Arc<CalcSpec>, out: Box<dyn Output<Row>>) -> Self {
        let projections = spec.exprs.iter().cloned().map(Compiled::new).collect();
        let picks = picks(&spec.exprs);
        let in_place = picks.as_deref().is_some_and(moves_in_order);
        Self {
            spec,
            projections,
            picks,
            in_place,
            spare: Vec::new(),
            out,
        }
    }
}

/// True when every pick moves a column and the columns ascend strictly.
fn moves_in_order(picks: &[Pick]) -> bool {
    let mut last = None;
    picks.iter().all(|p| match p {
        Pick::Move(c) if last.is_none_or(|l| *c > l) => {
            last = Some(*c);
            true
        }
        _ => false,
    })
}

/// Whether `row` passes `spec`'s filter.
fn passes(spec: &CalcSpec, row: &Row) -> Result<bool, TaskError> {
    match &spec.filter {
        Some(f) => f.is_true(&row.values).map_err(|e| TaskError::user(&spec.name, e)),
        None => Ok(true),
    }
}

/// `row`'s values replaced by `out`'s; the old vector, emptied, becomes the spare.
fn replace_values(row: &mut Row, out: Vec<Value>, spare: &mut Vec<Value>) {
    let mut old = std::mem::replace(&mut row.values, out);
    old.clear();
    *spare = old;
}

/// Applies the filter of `spec` and then `picks` to `row`: `None` if filtered out.
/// `in_place` says the picks move ascending columns (see [`moves_in_order`]); the
/// output is built in `spare` otherwise.
fn select(
    spec: &CalcSpec,
    picks: &[Pick],
    in_place: bool,
    mut row: Row,
    spare: &mut Vec<Value>,
) -> Result<Option<Row>, TaskError> {
    if !passes(spec, &row)? {
        return Ok(None);
    }
    let fits = matches!(picks.last(), Some(Pick::Move(c)) if *c < row.values.len());
    if in_place && fits {
        // Column `c` of pick `i` is at or after `i` and after every earlier pick's, so
        // each swap takes a value not yet moved and leaves the picked ones in front.
        for (i, p) in picks.iter().enumerate() {
            if let Pick::Move(c) = p {
                row.values.swap(i, *c);
            }
        }
        row.values.truncate(picks.len());
        return Ok(Some(row));
    }
    let mut out = std::mem::take(spare);
    out.reserve(picks.len());
    for p in picks {
        out.push(match p {
            Pick::Move(c) => row.values.get_mut(*c).map(std::mem::take).unwrap_or_default(),
            Pick::Copy(c) => row.values.get(*c).cloned().unwrap_or_default(),
            Pick::Const(v) => v.clone(),
        });
    }
    replace_values(&mut row, out, spare);
    Ok(Some(row))
}

/// Applies `spec` (its projections compiled) to `row`: `None` if filtered out. The
/// projections are evaluated against the input values into `spare`, which then takes
/// the input's place (and the input's vector becomes the spare).
pub fn apply(
    spec: &CalcSpec,
    projections: &[Compiled],
    mut row: Row,
    spare: &mut Vec<Value>,
) -> Result<Option<Row>, TaskError> {
    if !passes(spec, &row)? {
        return Ok(None);
    }
    let mut out = std::mem::take(spare);
    out.reserve(projections.len());
    for e in projections {
        out.push(e.eval(&row.values).map_err(|e| TaskError::user(&spec.name, e))?);
    }
    replace_values(&mut row, out, spare);
    Ok(Some(row))
}

impl Output<Row> for CalcOperator {
    fn collect(&mut self, record: StreamRecord<Row>) -> Result<(), TaskError> {
        let row = match &self.picks {
            Some(picks) => select(&self.spec, picks, self.in_place, record.value, &mut self.spare)?,
            None => apply(&self.spec, &self.projections, record.value, &mut self.spare)?,
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
        let mut spare = Vec::new();
        let evaluated = apply(&spec, &compiled, input.clone(), &mut spare).unwrap();
        let picks = picks(&spec.exprs).unwrap();
        assert!(!moves_in_order(&picks));
        let picked = select(&spec, &picks, false, input, &mut spare).unwrap();
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
        for in_place in [false, true] {
            let mut spare = Vec::new();
            assert_eq!(select(&spec, &picks, in_place, row(false), &mut spare).unwrap(), None);
            assert_eq!(
                select(&spec, &picks, in_place, row(true), &mut spare).unwrap(),
                Some(Row::insert(vec![Value::Int(1)]))
            );
        }
    }

    #[test]
    fn ascending_moves_shift_the_values_in_place_and_give_what_evaluating_gives() {
        let exprs = vec![Expr::Column(0), Expr::Column(3), Expr::Column(4)];
        let picks = picks(&exprs).unwrap();
        assert!(moves_in_order(&picks));
        let spec = spec(exprs, None);
        let compiled: Vec<Compiled> = spec.exprs.iter().cloned().map(Compiled::new).collect();
        let input = Row::insert((0..6).map(|i| Value::Str(format!("v{i}"))).collect());
        let mut spare = Vec::new();
        let evaluated = apply(&spec, &compiled, input.clone(), &mut spare).unwrap();
        let picked = select(&spec, &picks, true, input, &mut spare).unwrap();
        assert_eq!(picked, evaluated);
        assert_eq!(
            picked.unwrap().values,
            vec![
                Value::Str("v0".into()),
                Value::Str("v3".into()),
                Value::Str("v4".into())
            ]
        );
        // A row too short for the picks reads NULLs, as the general path does.
        let short = Row::insert(vec![Value::Int(1), Value::Int(2)]);
        assert_eq!(
            select(&spec, &picks, true, short, &mut spare).unwrap(),
            Some(Row::insert(vec![Value::Int(1), Value::Null, Value::Null]))
        );
        assert!(!moves_in_order(&[Pick::Move(2), Pick::Move(1)]));
        assert!(!moves_in_order(&[Pick::Move(0), Pick::Const(Value::Null)]));
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
