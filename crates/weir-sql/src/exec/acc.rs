//! Accumulators of the aggregate functions, with retraction (a `-U`/`-D` input row
//! takes its value back out), so an aggregation can consume an updating stream.
//! `MIN`/`MAX` and `DISTINCT` keep a count per value.
//!
//! Invariant: counts, integer sums and their averages wrap at their Java type's
//! limits, as Flink's do; an accumulator never panics on overflow.

use crate::expr::cast::narrow;
use crate::expr::{arith, rescale, ArithOp};
use crate::plan::{AggCall, AggFunc};
use crate::types::DataType;
use crate::value::Value;
use serde::{Deserialize, Serialize};

/// One aggregate's state.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Acc {
    /// Rows (or non-NULL values) counted.
    Count(i64),
    /// The sum and how many values it holds.
    Sum(Value, i64),
    /// Each distinct (or, for MIN/MAX, each) value with its multiplicity, sorted.
    Values(Vec<(Value, i64)>),
}

/// A new accumulator for `call`.
pub fn create(call: &AggCall) -> Acc {
    match (call.func, call.distinct) {
        (AggFunc::Min | AggFunc::Max, _) | (_, true) => Acc::Values(Vec::new()),
        (AggFunc::Count, false) => Acc::Count(0),
        (AggFunc::Sum | AggFunc::Avg, false) => Acc::Sum(Value::Null, 0),
    }
}

fn add_value(values: &mut Vec<(Value, i64)>, v: Value, delta: i64) {
    match values.binary_search_by(|(x, _)| x.cmp(&v)) {
        Ok(i) => {
            values[i].1 += delta;
            if values[i].1 <= 0 {
                values.remove(i);
            }
        }
        Err(i) if delta > 0 => values.insert(i, (v, delta)),
        Err(_) => {}
    }
}

/// Counts and sums of BIGINT/INT/DOUBLE values, updated in place without copying the
/// input value; false when `acc` needs the general path of [`update`]. Computes what
/// the general path computes (the integer sum wraps at its type's width).
fn update_in_place(call: &AggCall, acc: &mut Acc, row: &[Value], sign: i64) -> bool {
    let arg = match call.arg {
        None => None,
        Some(i) => match row.get(i) {
            None | Some(Value::Null) => return true,
            v => v,
        },
    };
    match (acc, arg) {
        (Acc::Count(n), _) => *n = n.wrapping_add(sign),
        (Acc::Sum(sum, n), Some(Value::Double(d))) => {
            if sum_type(call) != DataType::Double {
                return false;
            }
            let base = match (*n, &*sum) {
                (0, _) => 0.0,
                (_, Value::Double(s)) => *s,
                _ => return false,
            };
            *sum = Value::Double(if sign > 0 { base + d } else { base - d });
            *n = n.wrapping_add(sign);
        }
        (Acc::Sum(sum, n), Some(Value::Int(i))) => {
            let t = sum_type(call);
            if !t.is_integer() {
                return false;
            }
            let base = match (*n, &*sum) {
                (0, _) => 0,
                (_, Value::Int(s)) => *s,
                _ => return false,
            };
            let total = if sign > 0 {
                base.wrapping_add(*i)
            } else {
                base.wrapping_sub(*i)
            };
            *sum = Value::Int(narrow(total, t));
            *n = n.wrapping_add(sign);
        }
        _ => return false,
    }
    true
}

/// Adds (`retract` false) or takes back one input value.
pub fn update(call: &AggCall, acc: &mut Acc, row: &[Value], retract: bool) {
    if update_in_place(call, acc, row, if retract { -1 } else { 1 }) {
        return;
    }
    let v = match call.arg {
        Some(i) => row.get(i).cloned().unwrap_or(Value::Null),
        None => Value::Int(1),
    };
    if v.is_null() {
        return;
    }
    let sign = if retract { -1 } else { 1 };
    match acc {
        Acc::Count(n) => *n = n.wrapping_add(sign),
        Acc::Values(values) => add_value(values, v, sign),
        Acc::Sum(sum, n) => {
            let t = sum_type(call);
            let v = match (v, t) {
                (Value::Decimal(u, s), DataType::Decimal(_, ts)) => Value::Decimal(rescale(u, s, ts), ts),
                (Value::Int(i), DataType::Decimal(_, ts)) => Value::Decimal(rescale(i as i128, 0, ts), ts),
                (v, _) => v,
            };
            let op = if retract { ArithOp::Sub } else { ArithOp::Add };
            // An empty sum starts from zero; a sum that overflowed (NULL) stays NULL.
            // Adding and subtracting cannot fail (only division can).
            let base = if *n == 0 { zero(t) } else { sum.clone() };
            *sum = arith(op, base, v, t).unwrap_or(Value::Null);
            *n = n.wrapping_add(sign);
        }
    }
}

/// The type a sum is accumulated in: SUM's own result type (so an INT sum wraps as a
/// Java int, as in Flink, and a DECIMAL sum overflowing 38 digits becomes NULL); AVG
/// sums integers as BIGINT.
fn sum_type(call: &AggCall) -> DataType {
    match (call.func, call.arg_type) {
        (_, DataType::Decimal(_, s)) => DataType::Decimal(38, s),
        (_, DataType::Float | DataType::Double) => DataType::Double,
        (AggFunc::Sum, t) if t.is_integer() => t,
        _ => DataType::BigInt,
    }
}

fn zero(t: DataType) -> Value {
    match t {
        DataType::Decimal(_, s) => Value::Decimal(0, s),
        DataType::Double => Value::Double(0.0),
        _ => Value::Int(0),
    }
}

/// The accumulator of two merged windows (sessions): counts and sums add, value
/// multiplicities add.
pub fn merge(call: &AggCall, a: Acc, b: Acc) -> Acc {
    match (a, b) {
        (Acc::Count(x), Acc::Count(y)) => Acc::Count(x.wrapping_add(y)),
        (Acc::Sum(x, n), Acc::Sum(y, m)) => {
            let t = sum_type(call);
            let sum = match (n, m) {
                (0, _) => y,
                (_, 0) => x,
                _ => arith(ArithOp::Add, x, y, t).unwrap_or(Value::Null),
            };
            Acc::Sum(sum, n.wrapping_add(m))
        }
        (Acc::Values(mut x), Acc::Values(y)) => {
            for (v, count) in y {
                add_value(&mut x, v, count);
            }
            Acc::Values(x)
        }
        // Both come from `create(call)`, so they are of one kind.
        (a, _) => a,
    }
}

/// The aggregate's current result.
pub fn result(call: &AggCall, acc: &Acc) -> Value {
    match (call.func, acc) {
        (AggFunc::Count, Acc::Count(n)) => Value::Int(*n),
        (AggFunc::Count, Acc::Values(v)) => Value::Int(v.len() as i64),
        (AggFunc::Min, Acc::Values(v)) => v.first().map_or(Value::Null, |(x, _)| x.clone()),
        (AggFunc::Max, Acc::Values(v)) => v.last().map_or(Value::Null, |(x, _)| x.clone()),
        (AggFunc::Sum | AggFunc::Avg, Acc::Values(values)) => {
            let mut sum = Acc::Sum(Value::Null, 0);
            let plain = AggCall {
                distinct: false,
                arg: Some(0),
                ..call.clone()
            };
            for (v, _) in values {
                update(&plain, &mut sum, std::slice::from_ref(v), false);
            }
            result(&plain, &sum)
        }
        (_, Acc::Sum(_, 0)) => Value::Null,
        (AggFunc::Sum, Acc::Sum(sum, _)) => sum.clone(),
        (AggFunc::Avg, Acc::Sum(sum, n)) => {
            let t = call.result_type;
            match (sum, t) {
                (Value::Decimal(u, s), DataType::Decimal(_, ts)) => arith(
                    ArithOp::Div,
                    Value::Decimal(*u, *s),
                    Value::Int(*n),
                    DataType::Decimal(38, ts),
                )
                .unwrap_or(Value::Null),
                (Value::Int(i), _) => Value::Int(i.wrapping_div(*n)),
                (v, _) => Value::Double(v.as_f64().unwrap_or(0.0) / *n as f64),
            }
        }
        _ => Value::Null,
    }
}
