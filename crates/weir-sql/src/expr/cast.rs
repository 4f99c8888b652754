//! CAST between SQL types with Flink's rules: numbers narrow with Java's wrap-around,
//! a string that is not a number fails with Flink's cause text
//! (`For input string: 'abc'. Invalid character found.`).

pub use super::numeric::narrow;
use super::numeric::{as_decimal, rescale, EvalError, EvalResult};
use super::time::{parse_date, parse_time, parse_timestamp};
use crate::types::DataType;
use crate::value::Value;
use weir_core::excerpt::excerpt;

fn number_error(s: &str) -> EvalError {
    EvalError(format!("For input string: '{}'. Invalid character found.", excerpt(s)))
}

/// A string parsed as a decimal of scale `scale`.
pub fn parse_decimal(s: &str, scale: u8) -> Option<i128> {
    let t = s.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if (whole.is_empty() && frac.is_empty()) || !whole.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let unscaled: i128 = format!("{whole}{frac}").parse().unwrap_or(0);
    let v = rescale(unscaled, frac.len().min(38) as u8, scale);
    Some(if neg { -v } else { v })
}

/// Casts `v` of type `from` to `to`.
pub fn cast(v: Value, from: DataType, to: DataType) -> EvalResult {
    // The casts of computed columns over generated numbers, answered before the
    // general table below (which answers them alike).
    match (to, &v) {
        (_, Value::Null) => return Ok(Value::Null),
        (t, Value::Int(i)) if t.is_integer() => return Ok(Value::Int(narrow(*i, t))),
        (DataType::Float | DataType::Double, Value::Int(i)) => return Ok(Value::Double(*i as f64)),
        (t, Value::Timestamp(_)) if t.is_timestamp() => return Ok(v),
        _ => {}
    }
    Ok(match (to, v) {
        (t, v) if t.is_string() => match v {
            Value::Str(s) => Value::Str(s),
            other => Value::Str(other.render(from)),
        },
        (DataType::Boolean, Value::Bool(b)) => Value::Bool(b),
        (DataType::Boolean, Value::Str(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "t" | "yes" | "y" | "1" => Value::Bool(true),
            "false" | "f" | "no" | "n" | "0" => Value::Bool(false),
            _ => return Err(EvalError(format!("Cannot parse '{}' as BOOLEAN.", excerpt(&s)))),
        },
        (DataType::Boolean, n) => Value::Bool(n.as_f64().unwrap_or(0.0) != 0.0),
        (t, Value::Str(s)) if t.is_integer() => match s.trim().parse::<i64>() {
            Ok(i) => Value::Int(narrow(i, t)),
            Err(_) => return Err(number_error(&s)),
        },
        (t, Value::Int(i)) if t.is_integer() => Value::Int(narrow(i, t)),
        (t, Value::Double(d)) if t.is_integer() => Value::Int(narrow(d as i64, t)),
        (t, Value::Decimal(u, s)) if t.is_integer() => Value::Int(narrow((u / 10i128.pow(s as u32)) as i64, t)),
        (t, Value::Bool(b)) if t.is_numeric() => Value::Int(b as i64),
        (DataType::Float | DataType::Double, Value::Str(s)) => match s.trim().parse::<f64>() {
            Ok(d) => Value::Double(d),
            Err(_) => return Err(number_error(&s)),
        },
        (DataType::Float | DataType::Double, n @ (Value::Int(_) | Value::Double(_) | Value::Decimal(..))) => {
            Value::Double(n.as_f64().unwrap_or(0.0))
        }
        (DataType::Decimal(_, scale), Value::Str(s)) => match parse_decimal(&s, scale) {
            Some(u) => Value::Decimal(u, scale),
            None => return Err(number_error(&s)),
        },
        (DataType::Decimal(_, scale), n @ (Value::Int(_) | Value::Double(_) | Value::Decimal(..))) => {
            if let Value::Double(d) = n {
                Value::Decimal((d * 10f64.powi(scale as i32)).round() as i128, scale)
            } else {
                let (u, s) = as_decimal(&n);
                Value::Decimal(rescale(u, s, scale), scale)
            }
        }
        (DataType::Date, Value::Str(s)) => match parse_date(&s) {
            Some(d) => Value::Date(d),
            None => return Err(EvalError(format!("Invalid date '{}'.", excerpt(&s)))),
        },
        (DataType::Date, Value::Timestamp(ms)) => Value::Date(ms.div_euclid(86_400_000) as i32),
        (DataType::Date, Value::Date(d)) => Value::Date(d),
        (DataType::Time, Value::Str(s)) => match parse_time(&s) {
            Some(t) => Value::Time(t),
            None => return Err(EvalError(format!("Invalid time '{}'.", excerpt(&s)))),
        },
        (DataType::Time, Value::Timestamp(ms)) => Value::Time(ms.rem_euclid(86_400_000) as i32),
        (DataType::Time, Value::Time(t)) => Value::Time(t),
        (t, Value::Str(s)) if t.is_timestamp() => match parse_timestamp(&s) {
            Some(ms) => Value::Timestamp(ms),
            None => return Err(EvalError(format!("Invalid timestamp '{}'.", excerpt(&s)))),
        },
        (t, Value::Timestamp(ms)) if t.is_timestamp() => Value::Timestamp(ms),
        (t, Value::Date(d)) if t.is_timestamp() => Value::Timestamp(d as i64 * 86_400_000),
        (t, Value::Int(i)) if t.is_timestamp() => Value::Timestamp(i.saturating_mul(1000)),
        (t, v) => {
            return Err(EvalError(format!(
                "Unsupported cast from '{from}' to '{t}' of '{}'.",
                excerpt(&v.to_string())
            )))
        }
    })
}

/// True if `from` can be cast to `to` (checked at planning).
pub fn can_cast(from: DataType, to: DataType) -> bool {
    use DataType::*;
    if from == Null || from == to || to.is_string() || from.is_string() {
        return true;
    }
    match to {
        Boolean => from.is_numeric(),
        t if t.is_numeric() => from.is_numeric() || from == Boolean,
        Date => from.is_timestamp(),
        Time => from.is_timestamp(),
        t if t.is_timestamp() => from.is_timestamp() || from == Date || from.is_integer(),
        _ => false,
    }
}
