//! Typing rules of the binder: the result type of arithmetic, which types compare,
//! the common type of CASE branches, literals' types, LIKE patterns as regexes.

use super::{ArithOp, Expr};
use crate::error::{Result, SqlError};
use crate::types::DataType;
use crate::value::Value;
use sqlparser::ast::Value as AstValue;

/// An expression with its type.
#[derive(Debug, Clone)]
pub struct Bound {
    /// The compiled expression.
    pub expr: Expr,
    /// Its type.
    pub ty: DataType,
}

/// The result type of `a op b`, if the operands allow it.
pub fn arith_type(op: ArithOp, a: DataType, b: DataType) -> Option<DataType> {
    use DataType::*;
    match (a, b) {
        (t, Interval) if t.is_timestamp() || t == Date => Some(t),
        (Interval, t) if op == ArithOp::Add && t.is_timestamp() => Some(t),
        (Interval, Interval) if matches!(op, ArithOp::Add | ArithOp::Sub) => Some(Interval),
        _ => {
            let common = DataType::numeric_common(a, b)?;
            Some(match (op, common, a, b) {
                (ArithOp::Mul, Decimal(..), _, _) => {
                    let (s1, s2) = (scale_of(a), scale_of(b));
                    Decimal(38, (s1 + s2).min(38))
                }
                (ArithOp::Div, Decimal(..), _, _) => Decimal(38, scale_of(a).max(6)),
                (_, Decimal(_, s), _, _) => Decimal(38, s),
                (_, t, _, _) => t,
            })
        }
    }
}

fn scale_of(t: DataType) -> u8 {
    match t {
        DataType::Decimal(_, s) => s,
        _ => 0,
    }
}

/// True if values of `a` and `b` can be compared.
pub fn comparable(a: DataType, b: DataType) -> bool {
    a == DataType::Null
        || b == DataType::Null
        || (a.is_numeric() && b.is_numeric())
        || (a.is_string() && b.is_string())
        || (a.is_timestamp() && b.is_timestamp())
        || a == b
}

/// The type both branches of a CASE (or COALESCE's arguments) have.
pub fn common_type(a: DataType, b: DataType) -> Option<DataType> {
    match (a, b) {
        (DataType::Null, x) | (x, DataType::Null) => Some(x),
        (x, y) if x == y => Some(x),
        (x, y) if x.is_string() && y.is_string() => Some(DataType::STRING),
        (x, y) if x.is_timestamp() && y.is_timestamp() => Some(x),
        (x, y) => DataType::numeric_common(x, y),
    }
}

/// A literal with its type (integers are INT or BIGINT, exact decimals DECIMAL).
pub fn literal(v: &AstValue) -> Result<Bound> {
    let (value, ty) = match v {
        AstValue::Null => (Value::Null, DataType::Null),
        AstValue::Boolean(b) => (Value::Bool(*b), DataType::Boolean),
        AstValue::SingleQuotedString(s) => (Value::Str(s.clone()), DataType::Char(s.chars().count().max(1) as u32)),
        AstValue::Number(n, _) => {
            if let Ok(i) = n.parse::<i64>() {
                let t = if i32::try_from(i).is_ok() {
                    DataType::Int
                } else {
                    DataType::BigInt
                };
                (Value::Int(i), t)
            } else if n.contains(['e', 'E']) {
                (
                    Value::Double(
                        n.parse()
                            .map_err(|_| SqlError::validation(format!("Illegal number '{n}'")))?,
                    ),
                    DataType::Double,
                )
            } else {
                let scale = n.split_once('.').map_or(0, |(_, f)| f.len()) as u8;
                let u = super::cast::parse_decimal(n, scale)
                    .ok_or_else(|| SqlError::validation(format!("Illegal number '{n}'")))?;
                let digits = n.chars().filter(|c| c.is_ascii_digit()).count().clamp(1, 38) as u8;
                (Value::Decimal(u, scale), DataType::Decimal(digits.max(scale), scale))
            }
        }
        other => return Err(SqlError::unsupported(format!("The literal {other}"))),
    };
    Ok(Bound {
        expr: Expr::Literal(value),
        ty,
    })
}

/// SQL `LIKE` pattern (`%`, `_`) as an anchored regular expression.
pub fn like_regex(pattern: &str) -> Result<regex::Regex> {
    let mut re = String::from("(?s)^");
    for c in pattern.chars() {
        match c {
            '%' => re.push_str(".*"),
            '_' => re.push('.'),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    regex::Regex::new(&re).map_err(|e| SqlError::validation(format!("Invalid LIKE pattern '{pattern}': {e}")))
}
