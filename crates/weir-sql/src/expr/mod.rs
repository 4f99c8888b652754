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
pub mod numeric;
pub mod time;
pub mod typing;

use crate::types::DataType;
use crate::value::Value;
use func::ScalarFn;
pub use numeric::{arith, as_decimal, rescale, ArithOp, EvalError, EvalResult};
use smallvec::SmallVec;
use std::cmp::Ordering;

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

#[cfg(test)]
mod fast_path_tests;
#[cfg(test)]
mod tests;
