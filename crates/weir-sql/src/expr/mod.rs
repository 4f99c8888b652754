//! Bound expressions: compiled once from the SQL text against an input schema (column
//! references are indexes), evaluated per row as a tree with SQL's three-valued logic
//! (a comparison with NULL is NULL; `AND`/`OR` follow Kleene's tables; a filter keeps
//! only TRUE).

pub mod bind;
pub mod bind_fn;
pub mod cast;
mod chain;
pub mod func;
pub mod kernel;
pub mod time;
pub mod typing;

use crate::types::DataType;
use crate::value::{align, Value};
use cast::narrow;
use func::ScalarFn;
use smallvec::SmallVec;
use std::cmp::Ordering;
use std::fmt;

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

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `<>`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
}

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

/// A bound expression.
#[derive(Debug, Clone)]
pub enum Expr {
    /// The input column at this index.
    Column(usize),
    /// A constant.
    Literal(Value),
    /// `NOT e`.
    Not(Box<Expr>),
    /// `-e`.
    Neg(Box<Expr>),
    /// `a AND b AND ...`.
    And(Vec<Expr>),
    /// `a OR b OR ...`.
    Or(Vec<Expr>),
    /// A comparison.
    Compare(CmpOp, Box<Expr>, Box<Expr>),
    /// Arithmetic producing the given type.
    Arith(ArithOp, Box<Expr>, Box<Expr>, DataType),
    /// `e IS [NOT] NULL` (negated when the flag is true).
    IsNull(Box<Expr>, bool),
    /// `CASE WHEN c THEN v ... ELSE e END`.
    Case(Vec<(Expr, Expr)>, Box<Expr>),
    /// `CAST` / `TRY_CAST` (`try` gives NULL instead of failing).
    Cast {
        /// The operand.
        expr: Box<Expr>,
        /// Its type.
        from: DataType,
        /// The target type.
        to: DataType,
        /// TRY_CAST.
        try_cast: bool,
    },
    /// `e [NOT] LIKE pattern` with the pattern compiled.
    Like(Box<Expr>, regex::Regex, bool),
    /// `e [NOT] IN (list)`.
    InList(Box<Expr>, Vec<Expr>, bool),
    /// A scalar function.
    Call(ScalarFn, Vec<Expr>),
}

fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

/// `AND` (`decisive` false) or `OR` (`decisive` true) of `items` by Kleene's tables:
/// the decisive value wins, else NULL if any item is NULL.
fn kleene(items: &[Expr], row: &[Value], decisive: bool) -> EvalResult {
    let mut null = false;
    for e in items {
        match truth(&e.eval(row)?) {
            Some(b) if b == decisive => return Ok(Value::Bool(decisive)),
            None => null = true,
            Some(_) => {}
        }
    }
    Ok(if null { Value::Null } else { Value::Bool(!decisive) })
}

impl Expr {
    /// Evaluates against `row`.
    pub fn eval(&self, row: &[Value]) -> EvalResult {
        Ok(match self {
            Expr::Column(i) => row.get(*i).cloned().unwrap_or(Value::Null),
            Expr::Literal(v) => v.clone(),
            Expr::Not(e) => match truth(&e.eval(row)?) {
                Some(b) => Value::Bool(!b),
                None => Value::Null,
            },
            Expr::Neg(e) => match e.eval(row)? {
                Value::Int(i) => Value::Int(i.wrapping_neg()),
                Value::Double(d) => Value::Double(-d),
                Value::Decimal(u, s) => Value::Decimal(-u, s),
                Value::Interval(ms) => Value::Interval(-ms),
                _ => Value::Null,
            },
            Expr::And(items) => kleene(items, row, false)?,
            Expr::Or(items) => kleene(items, row, true)?,
            Expr::Compare(op, a, b) => {
                let (a, b) = (a.eval(row)?, b.eval(row)?);
                if a.is_null() || b.is_null() {
                    return Ok(Value::Null);
                }
                let o = a.cmp(&b);
                Value::Bool(match op {
                    CmpOp::Eq => o == Ordering::Equal,
                    CmpOp::NotEq => o != Ordering::Equal,
                    CmpOp::Lt => o == Ordering::Less,
                    CmpOp::LtEq => o != Ordering::Greater,
                    CmpOp::Gt => o == Ordering::Greater,
                    CmpOp::GtEq => o != Ordering::Less,
                })
            }
            Expr::Arith(op, a, b, t) => arith(*op, a.eval(row)?, b.eval(row)?, *t)?,
            Expr::IsNull(e, negated) => Value::Bool(e.eval(row)?.is_null() != *negated),
            Expr::Case(whens, otherwise) => {
                for (c, v) in whens {
                    if truth(&c.eval(row)?) == Some(true) {
                        return v.eval(row);
                    }
                }
                otherwise.eval(row)?
            }
            Expr::Cast {
                expr,
                from,
                to,
                try_cast,
            } => {
                let v = expr.eval(row)?;
                match cast::cast(v, *from, *to) {
                    Ok(v) => v,
                    Err(_) if *try_cast => Value::Null,
                    Err(e) => return Err(e),
                }
            }
            Expr::Like(e, re, negated) => match e.eval(row)? {
                Value::Str(s) => Value::Bool(re.is_match(&s) != *negated),
                _ => Value::Null,
            },
            Expr::InList(e, list, negated) => {
                let v = e.eval(row)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let mut null = false;
                for item in list {
                    let x = item.eval(row)?;
                    if x.is_null() {
                        null = true;
                    } else if x == v {
                        return Ok(Value::Bool(!*negated));
                    }
                }
                if null {
                    Value::Null
                } else {
                    Value::Bool(*negated)
                }
            }
            Expr::Call(f, args) => {
                let mut values: SmallVec<[Value; 4]> = SmallVec::with_capacity(args.len());
                for a in args {
                    values.push(a.eval(row)?);
                }
                f.eval(&values)?
            }
        })
    }

    /// True if the expression is TRUE for `row` (a filter's test).
    pub fn is_true(&self, row: &[Value]) -> Result<bool, EvalError> {
        Ok(truth(&self.eval(row)?) == Some(true))
    }
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

#[cfg(test)]
mod tests;
