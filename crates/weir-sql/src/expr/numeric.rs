//! Numbers under SQL's rules: [`arith`] (`+ - * / %` on integers, doubles and
//! decimals, with Flink's overflow and division-by-zero behaviour), decimal scaling
//! ([`as_decimal`], [`rescale`]), and [`EvalError`], how evaluation fails at run time.
//! Used by the expression tree, the casts and the scalar functions alike.

use crate::types::DataType;
use crate::value::{align, Value};
use std::cmp::Ordering;
use std::fmt;

/// An integer narrowed to `t` as Java's primitive casts do.
pub fn narrow(i: i64, t: DataType) -> i64 {
    match t {
        DataType::TinyInt => i as i8 as i64,
        DataType::SmallInt => i as i16 as i64,
        DataType::Int => i as i32 as i64,
        _ => i,
    }
}

/// Why evaluating an expression failed at run time (fails the job).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalError(pub String);

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EvalError {}

/// The result of evaluating an expression.
pub type EvalResult = Result<Value, EvalError>;

/// An arithmetic operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
}

fn div_by_zero() -> EvalError {
    EvalError("java.lang.ArithmeticException: / by zero".into())
}

/// `a op b` with the result type `t` (operands already of compatible types).
pub fn arith(op: ArithOp, a: Value, b: Value, t: DataType) -> EvalResult {
    Ok(match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Value::Null,
        (Value::Timestamp(ts), Value::Interval(ms)) => match op {
            ArithOp::Add => Value::Timestamp(ts.saturating_add(ms)),
            ArithOp::Sub => Value::Timestamp(ts.saturating_sub(ms)),
            _ => Value::Null,
        },
        (Value::Interval(ms), Value::Timestamp(ts)) if op == ArithOp::Add => Value::Timestamp(ts.saturating_add(ms)),
        (Value::Date(d), Value::Interval(ms)) => {
            let days = ms / 86_400_000;
            Value::Date(if op == ArithOp::Sub {
                d - days as i32
            } else {
                d + days as i32
            })
        }
        (Value::Interval(x), Value::Interval(y)) => match op {
            ArithOp::Add => Value::Interval(x.saturating_add(y)),
            ArithOp::Sub => Value::Interval(x.saturating_sub(y)),
            _ => Value::Null,
        },
        // Java's integer arithmetic, as Flink's generated code does it: the result wraps
        // at the width of its type (INT + INT overflows as a 32-bit int).
        (Value::Int(x), Value::Int(y)) if t.is_integer() => Value::Int(narrow(
            match op {
                ArithOp::Add => x.wrapping_add(y),
                ArithOp::Sub => x.wrapping_sub(y),
                ArithOp::Mul => x.wrapping_mul(y),
                ArithOp::Div if y == 0 => return Err(div_by_zero()),
                ArithOp::Div => x.wrapping_div(y),
                ArithOp::Mod if y == 0 => return Err(div_by_zero()),
                ArithOp::Mod => x.wrapping_rem(y),
            },
            t,
        )),
        (a, b) => match t {
            DataType::Decimal(precision, scale) => {
                let (x, s) = as_decimal(&a);
                let (y, u) = as_decimal(&b);
                let v = match op {
                    ArithOp::Add | ArithOp::Sub => {
                        let (x, y) = align(x, s, y, u);
                        let r = if op == ArithOp::Add {
                            x.saturating_add(y)
                        } else {
                            x.saturating_sub(y)
                        };
                        rescale(r, s.max(u), scale)
                    }
                    ArithOp::Mul => rescale(x.saturating_mul(y), s + u, scale),
                    ArithOp::Div | ArithOp::Mod if y == 0 => return Err(div_by_zero()),
                    ArithOp::Div => {
                        // x/10^s / (y/10^u) at `scale` digits: x * 10^(scale + u - s) / y, half up.
                        let shift = scale as i32 + u as i32 - s as i32;
                        let num = if shift >= 0 {
                            x.saturating_mul(10i128.saturating_pow(shift as u32))
                        } else {
                            x / 10i128.pow((-shift) as u32)
                        };
                        round_div(num, y)
                    }
                    ArithOp::Mod => {
                        let (x, y) = align(x, s, y, u);
                        rescale(x % y, s.max(u), scale)
                    }
                };
                fit_precision(v, precision, scale)
            }
            _ => {
                let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
                Value::Double(match op {
                    ArithOp::Add => x + y,
                    ArithOp::Sub => x - y,
                    ArithOp::Mul => x * y,
                    ArithOp::Div => x / y,
                    ArithOp::Mod => x % y,
                })
            }
        },
    })
}

/// A numeric value as an unscaled decimal and its scale.
pub fn as_decimal(v: &Value) -> (i128, u8) {
    match v {
        Value::Decimal(u, s) => (*u, *s),
        Value::Int(i) => (*i as i128, 0),
        Value::Double(d) => ((d * 1e6).round() as i128, 6),
        _ => (0, 0),
    }
}

fn round_div(num: i128, den: i128) -> i128 {
    let q = num / den;
    let r = num % den;
    if r.unsigned_abs() * 2 >= den.unsigned_abs() {
        q + if (num < 0) != (den < 0) { -1 } else { 1 }
    } else {
        q
    }
}

/// A decimal result, or NULL when it needs more digits than `precision` (Flink's
/// `DecimalData` gives null on overflow rather than an error).
fn fit_precision(unscaled: i128, precision: u8, scale: u8) -> Value {
    match 10i128.checked_pow(u32::from(precision)) {
        Some(limit) if unscaled.unsigned_abs() >= limit.unsigned_abs() => Value::Null,
        _ => Value::Decimal(unscaled, scale),
    }
}

/// `unscaled` at scale `from` brought to scale `to`, rounding half up.
pub fn rescale(unscaled: i128, from: u8, to: u8) -> i128 {
    match from.cmp(&to) {
        Ordering::Equal => unscaled,
        Ordering::Less => unscaled.saturating_mul(10i128.saturating_pow((to - from) as u32)),
        Ordering::Greater => round_div(unscaled, 10i128.pow((from - to) as u32)),
    }
}
