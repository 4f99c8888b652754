//! Scalar functions: evaluation over already evaluated arguments. Their argument and
//! result types are checked where they are bound ([`super::bind`]). NULL in gives NULL
//! out, except for `COALESCE` and `CONCAT_WS`'s separator-free arguments.

use super::numeric::{arith, as_decimal, rescale, ArithOp, EvalError, EvalResult};
use super::time::{extract, format_millis, parse_with_pattern};
use crate::types::DataType;
use crate::value::Value;

/// Which side `TRIM` trims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimSide {
    /// Both ends.
    Both,
    /// The start.
    Leading,
    /// The end.
    Trailing,
}

/// A scalar function.
#[derive(Debug, Clone)]
pub enum ScalarFn {
    /// `UPPER(s)`.
    Upper,
    /// `LOWER(s)`.
    Lower,
    /// `SUBSTRING(s FROM start [FOR len])` (1-based).
    Substring,
    /// `CONCAT(a, b, ...)`.
    Concat,
    /// `CONCAT_WS(sep, a, b, ...)`: NULL arguments are skipped.
    ConcatWs,
    /// `TRIM([BOTH|LEADING|TRAILING] [chars FROM] s)`; args: s, chars.
    Trim(TrimSide),
    /// `CHAR_LENGTH(s)`.
    CharLength,
    /// `REGEXP_EXTRACT(s, pattern [, group])`, the pattern compiled when constant.
    RegexpExtract(Option<regex::Regex>),
    /// `SPLIT_INDEX(s, sep, index)` (0-based).
    SplitIndex,
    /// `ABS(n)`.
    Abs,
    /// `MOD(a, b)` of the result type.
    Mod(DataType),
    /// `ROUND(n [, digits])` of the result type.
    Round(DataType),
    /// `FLOOR(n)`.
    Floor,
    /// `CEIL(n)`.
    Ceil,
    /// `TO_TIMESTAMP_LTZ(n, precision)`: epoch seconds (0) or milliseconds (3).
    ToTimestampLtz(u8),
    /// `TO_TIMESTAMP(s [, format])`.
    ToTimestamp,
    /// `DATE_FORMAT(ts|s, format)`.
    DateFormat,
    /// `EXTRACT(field FROM ts)`.
    Extract(String),
    /// `CURRENT_TIMESTAMP` / `NOW()` / `PROCTIME()`.
    CurrentTimestamp,
    /// `COALESCE(a, b, ...)`.
    Coalesce,
}

fn s(v: &Value) -> Option<&str> {
    match v {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Decimal(..) | Value::Double(_) => v.as_f64().map(|f| f as i64),
        _ => None,
    }
}

impl ScalarFn {
    /// Applies the function.
    pub fn eval(&self, args: &[Value]) -> EvalResult {
        match self {
            ScalarFn::Coalesce => return Ok(args.iter().find(|v| !v.is_null()).cloned().unwrap_or(Value::Null)),
            ScalarFn::ConcatWs => {
                let Some(sep) = args.first().and_then(s) else {
                    return Ok(Value::Null);
                };
                let parts: Vec<&str> = args[1..].iter().filter_map(s).collect();
                return Ok(Value::Str(parts.join(sep)));
            }
            ScalarFn::CurrentTimestamp => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as i64)
                    .unwrap_or(0);
                return Ok(Value::Timestamp(now));
            }
            ScalarFn::RegexpExtract(_) | ScalarFn::Trim(_) | ScalarFn::Round(_) | ScalarFn::ToTimestamp
                if args.first().is_some_and(Value::is_null) =>
            {
                return Ok(Value::Null)
            }
            ScalarFn::RegexpExtract(_) | ScalarFn::Trim(_) | ScalarFn::Round(_) | ScalarFn::ToTimestamp => {}
            _ if args.iter().any(Value::is_null) => return Ok(Value::Null),
            _ => {}
        }
        let a0 = &args[0];
        Ok(match self {
            ScalarFn::Upper => Value::Str(s(a0).unwrap_or_default().to_uppercase()),
            ScalarFn::Lower => Value::Str(s(a0).unwrap_or_default().to_lowercase()),
            ScalarFn::CharLength => Value::Int(s(a0).unwrap_or_default().chars().count() as i64),
            ScalarFn::Concat => Value::Str(args.iter().filter_map(s).collect()),
            ScalarFn::Substring => {
                let text: Vec<char> = s(a0).unwrap_or_default().chars().collect();
                let start = int(&args[1]).unwrap_or(1);
                let len = args.get(2).and_then(int).unwrap_or(i64::MAX);
                if len < 0 {
                    return Err(EvalError(format!(
                        "The length of SUBSTRING must not be negative: {len}"
                    )));
                }
                let from = if start > 0 {
                    start - 1
                } else {
                    (text.len() as i64 + start).max(0)
                };
                let from = from.clamp(0, text.len() as i64) as usize;
                let to = (from as i64).saturating_add(len).clamp(0, text.len() as i64) as usize;
                Value::Str(text[from..to].iter().collect())
            }
            ScalarFn::Trim(side) => {
                let text = s(a0).unwrap_or_default();
                let chars: Vec<char> = args.get(1).and_then(s).unwrap_or(" ").chars().collect();
                let f = |c: char| chars.contains(&c);
                Value::Str(
                    match side {
                        TrimSide::Both => text.trim_matches(f),
                        TrimSide::Leading => text.trim_start_matches(f),
                        TrimSide::Trailing => text.trim_end_matches(f),
                    }
                    .to_string(),
                )
            }
            ScalarFn::RegexpExtract(compiled) => {
                let text = s(a0).unwrap_or_default();
                let owned;
                let re = match compiled {
                    Some(re) => re,
                    None => {
                        let p = args.get(1).and_then(s).unwrap_or_default();
                        owned = regex::Regex::new(p)
                            .map_err(|e| EvalError(format!("Invalid regular expression '{p}': {e}")))?;
                        &owned
                    }
                };
                let group = args.get(2).and_then(int).unwrap_or(0).max(0) as usize;
                re.captures(text)
                    .and_then(|c| c.get(group))
                    .map_or(Value::Null, |m| Value::Str(m.as_str().to_string()))
            }
            ScalarFn::SplitIndex => {
                let text = s(a0).unwrap_or_default();
                let sep = s(&args[1]).unwrap_or_default();
                let i = int(&args[2]).unwrap_or(-1);
                if i < 0 || sep.is_empty() {
                    Value::Null
                } else {
                    text.split(sep)
                        .nth(i as usize)
                        .map_or(Value::Null, |p| Value::Str(p.to_string()))
                }
            }
            ScalarFn::Abs => match a0 {
                Value::Int(i) => Value::Int(i.wrapping_abs()),
                Value::Double(d) => Value::Double(d.abs()),
                Value::Decimal(u, sc) => Value::Decimal(u.abs(), *sc),
                _ => Value::Null,
            },
            ScalarFn::Mod(t) => arith(ArithOp::Mod, a0.clone(), args[1].clone(), *t)?,
            ScalarFn::Round(t) => {
                if a0.is_null() {
                    return Ok(Value::Null);
                }
                let digits = args.get(1).and_then(int).unwrap_or(0);
                match (a0, t) {
                    (Value::Double(d), _) => {
                        let f = 10f64.powi(digits as i32);
                        Value::Double((d * f).round() / f)
                    }
                    (Value::Int(i), _) if digits >= 0 => Value::Int(*i),
                    (Value::Int(i), _) => {
                        let f = 10i64.pow((-digits).min(18) as u32);
                        Value::Int(((*i as f64 / f as f64).round() as i64) * f)
                    }
                    (v, DataType::Decimal(_, scale)) => {
                        let (u, sc) = as_decimal(v);
                        let d = digits.clamp(0, 38) as u8;
                        Value::Decimal(rescale(rescale(u, sc, d.min(sc)), d.min(sc), *scale), *scale)
                    }
                    (v, _) => v.clone(),
                }
            }
            ScalarFn::Floor | ScalarFn::Ceil => {
                let up = matches!(self, ScalarFn::Ceil);
                match a0 {
                    Value::Int(i) => Value::Int(*i),
                    Value::Double(d) => Value::Double(if up { d.ceil() } else { d.floor() }),
                    Value::Decimal(u, sc) => {
                        let p = 10i128.pow(*sc as u32);
                        let q = u.div_euclid(p);
                        Value::Decimal(if up && u.rem_euclid(p) != 0 { q + 1 } else { q }, 0)
                    }
                    _ => Value::Null,
                }
            }
            ScalarFn::ToTimestampLtz(precision) => {
                let n = match a0 {
                    Value::Int(i) => *i as f64,
                    other => other.as_f64().unwrap_or(0.0),
                };
                let ms = if *precision == 0 { n * 1000.0 } else { n };
                Value::Timestamp(ms as i64)
            }
            ScalarFn::ToTimestamp => {
                let text = s(a0).unwrap_or_default();
                let pattern = args.get(1).and_then(s).unwrap_or("yyyy-MM-dd HH:mm:ss");
                match parse_with_pattern(text, pattern).or_else(|| super::time::parse_timestamp(text)) {
                    Some(ms) => Value::Timestamp(ms),
                    None => Value::Null,
                }
            }
            ScalarFn::DateFormat => {
                let ms = match a0 {
                    Value::Timestamp(ms) => Some(*ms),
                    Value::Str(t) => super::time::parse_timestamp(t),
                    _ => None,
                };
                let pattern = s(&args[1]).unwrap_or_default();
                ms.and_then(|ms| format_millis(ms, pattern))
                    .map_or(Value::Null, Value::Str)
            }
            ScalarFn::Extract(field) => {
                let ms = match a0 {
                    Value::Timestamp(ms) => *ms,
                    Value::Date(d) => *d as i64 * 86_400_000,
                    Value::Time(t) => *t as i64,
                    _ => return Ok(Value::Null),
                };
                extract(field, ms).map_or(Value::Null, Value::Int)
            }
            ScalarFn::Coalesce | ScalarFn::ConcatWs | ScalarFn::CurrentTimestamp => Value::Null,
        })
    }
}
