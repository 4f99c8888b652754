//! Rows as compact value vectors: a [`Row`] is its changelog kind and a `Vec<Value>`
//! indexed by the bound column positions (no name lookups per record).
//!
//! Integers of every width are `Int(i64)` and FLOAT/DOUBLE are `Double(f64)`; the
//! column's [`DataType`] says which SQL type a value has. Decimals are exact
//! (`i128` unscaled with a scale); temporal values are epoch-based milliseconds. Values
//! are totally ordered and hashable (doubles by their bits), so rows can be keys.

use crate::types::DataType;
use chrono::{DateTime, NaiveDate, Timelike};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A changelog row's kind (Flink's `RowKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RowKind {
    /// `+I`: a new row.
    Insert,
    /// `-U`: the previous version of an updated row.
    UpdateBefore,
    /// `+U`: the new version of an updated row.
    UpdateAfter,
    /// `-D`: a deleted row.
    Delete,
}

impl RowKind {
    /// `+I`, `-U`, `+U` or `-D`.
    pub fn short(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }

    /// True for `+I` and `+U` (the row is added), false for retractions.
    pub fn is_accumulate(self) -> bool {
        matches!(self, RowKind::Insert | RowKind::UpdateAfter)
    }
}

/// One SQL value.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub enum Value {
    /// NULL.
    #[default]
    Null,
    /// BOOLEAN.
    Bool(bool),
    /// TINYINT, SMALLINT, INT, BIGINT.
    Int(i64),
    /// FLOAT, DOUBLE.
    Double(f64),
    /// DECIMAL: the unscaled value and the scale.
    Decimal(i128, u8),
    /// CHAR, VARCHAR, STRING.
    Str(String),
    /// DATE: days since 1970-01-01.
    Date(i32),
    /// TIME: milliseconds of the day.
    Time(i32),
    /// TIMESTAMP and TIMESTAMP_LTZ: epoch milliseconds.
    Timestamp(i64),
    /// A day-time interval in milliseconds.
    Interval(i64),
}

impl Value {
    /// True for NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    fn rank(&self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Int(_) | Value::Double(_) | Value::Decimal(..) => 2,
            Value::Str(_) => 3,
            Value::Date(_) => 4,
            Value::Time(_) => 5,
            Value::Timestamp(_) => 6,
            Value::Interval(_) => 7,
        }
    }

    /// The value as a double, for numeric values.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Double(d) => Some(*d),
            Value::Decimal(u, s) => Some(*u as f64 / 10f64.powi(*s as i32)),
            _ => None,
        }
    }

    /// Formats the value as a SQL string of type `t` (CAST to STRING, print, CSV).
    pub fn render(&self, t: DataType) -> String {
        match (self, t) {
            (Value::Null, _) => "NULL".into(),
            (Value::Double(d), DataType::Float) => format_double(*d as f32 as f64, true),
            (Value::Double(d), _) => format_double(*d, false),
            (Value::Timestamp(ms), DataType::Timestamp(p) | DataType::TimestampLtz(p)) => format_timestamp(*ms, p),
            (v, _) => v.to_string(),
        }
    }
}

fn format_double(d: f64, single: bool) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if d == d.trunc() && d.abs() < 1e7 {
        return format!("{d:.1}");
    }
    if (1e-3..1e7).contains(&d.abs()) {
        if single {
            format!("{}", d as f32)
        } else {
            format!("{d}")
        }
    } else {
        let s = if single {
            format!("{:E}", d as f32)
        } else {
            format!("{d:E}")
        };
        if s.contains('.') {
            s
        } else {
            s.replacen('E', ".0E", 1)
        }
    }
}

/// `unscaled / 10^scale` as a decimal string with exactly `scale` fractional digits.
pub fn format_decimal(unscaled: i128, scale: u8) -> String {
    let sign = if unscaled < 0 { "-" } else { "" };
    let abs = unscaled.unsigned_abs();
    if scale == 0 {
        return format!("{sign}{abs}");
    }
    let div = 10u128.pow(scale as u32);
    format!("{sign}{}.{:0width$}", abs / div, abs % div, width = scale as usize)
}

/// Epoch milliseconds as `yyyy-MM-dd HH:mm:ss[.fff]` (UTC) with `precision` fraction digits (at most 3).
pub fn format_timestamp(ms: i64, precision: u8) -> String {
    let Some(t) = DateTime::from_timestamp_millis(ms) else {
        return ms.to_string();
    };
    let base = t.format("%Y-%m-%d %H:%M:%S").to_string();
    match precision.min(3) {
        0 => base,
        p => {
            let frac = format!("{:03}", t.timestamp_subsec_millis());
            format!("{base}.{}", &frac[..p as usize])
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "NULL"),
            Value::Bool(b) => write!(f, "{}", if *b { "TRUE" } else { "FALSE" }),
            Value::Int(i) => write!(f, "{i}"),
            Value::Double(d) => write!(f, "{}", format_double(*d, false)),
            Value::Decimal(u, s) => write!(f, "{}", format_decimal(*u, *s)),
            Value::Str(s) => write!(f, "{s}"),
            Value::Date(d) => match NaiveDate::from_num_days_from_ce_opt(*d + 719_163) {
                Some(date) => write!(f, "{}", date.format("%Y-%m-%d")),
                None => write!(f, "{d}"),
            },
            Value::Time(ms) => {
                let t = chrono::NaiveTime::from_num_seconds_from_midnight_opt((*ms / 1000) as u32, 0);
                match t {
                    Some(t) => write!(f, "{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second()),
                    None => write!(f, "{ms}"),
                }
            }
            Value::Timestamp(ms) => write!(f, "{}", format_timestamp(*ms, 3)),
            Value::Interval(ms) => write!(f, "{}", format_interval(*ms)),
        }
    }
}

fn format_interval(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "+" };
    let a = ms.unsigned_abs();
    let (d, rest) = (a / 86_400_000, a % 86_400_000);
    format!(
        "{sign}{d} {:02}:{:02}:{:02}.{:03}",
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000
    )
}

fn cmp_numeric(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Decimal(x, s), Value::Decimal(y, t)) => {
            let (x, y) = align(*x, *s, *y, *t);
            x.cmp(&y)
        }
        (Value::Int(x), Value::Decimal(y, t)) => {
            let (x, y) = align(*x as i128, 0, *y, *t);
            x.cmp(&y)
        }
        (Value::Decimal(x, s), Value::Int(y)) => {
            let (x, y) = align(*x, *s, *y as i128, 0);
            x.cmp(&y)
        }
        _ => a.as_f64().unwrap_or(0.0).total_cmp(&b.as_f64().unwrap_or(0.0)),
    }
}

/// Two unscaled decimals brought to the larger scale (saturating).
pub fn align(x: i128, s: u8, y: i128, t: u8) -> (i128, i128) {
    let up = |v: i128, by: u8| v.saturating_mul(10i128.saturating_pow(by as u32));
    match s.cmp(&t) {
        Ordering::Less => (up(x, t - s), y),
        Ordering::Greater => (x, up(y, s - t)),
        Ordering::Equal => (x, y),
    }
}

impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            (Value::Str(a), Value::Str(b)) => a.cmp(b),
            (Value::Date(a), Value::Date(b)) | (Value::Time(a), Value::Time(b)) => a.cmp(b),
            (Value::Timestamp(a), Value::Timestamp(b)) | (Value::Interval(a), Value::Interval(b)) => a.cmp(b),
            (a, b) if a.rank() == 2 && b.rank() == 2 => cmp_numeric(a, b),
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            Value::Null => {}
            Value::Bool(b) => b.hash(state),
            // Numbers equal across representations hash alike.
            Value::Int(_) | Value::Double(_) | Value::Decimal(..) => match self {
                Value::Int(i) => i.hash(state),
                Value::Decimal(u, s) if u % 10i128.pow(*s as u32) == 0 => {
                    ((u / 10i128.pow(*s as u32)) as i64).hash(state)
                }
                Value::Double(d) if d.fract() == 0.0 && d.abs() < 9e18 => (*d as i64).hash(state),
                other => other.as_f64().unwrap_or(0.0).to_bits().hash(state),
            },
            Value::Str(s) => s.hash(state),
            Value::Date(d) | Value::Time(d) => d.hash(state),
            Value::Timestamp(t) | Value::Interval(t) => t.hash(state),
        }
    }
}

/// One row of a changelog stream. It travels between tasks in the compact encoding of
/// [`crate::row_codec`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Row {
    /// Insert, update before/after or delete.
    pub kind: RowKind,
    /// The fields, by column index.
    pub values: Vec<Value>,
}

impl Row {
    /// An insert row.
    pub fn insert(values: Vec<Value>) -> Self {
        Row {
            kind: RowKind::Insert,
            values,
        }
    }
}

/// Formats rows as Flink's print connector does: `+I[a, b]`.
pub struct PrintRow<'a> {
    /// The row.
    pub row: &'a Row,
    /// The column types.
    pub types: &'a [DataType],
}

impl fmt::Display for PrintRow<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.row.kind.short())?;
        for (i, v) in self.row.values.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            let t = self.types.get(i).copied().unwrap_or(DataType::STRING);
            write!(f, "{}", v.render(t))?;
        }
        write!(f, "]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_and_hash_equal_across_representations() {
        use std::collections::hash_map::DefaultHasher;
        let h = |v: &Value| {
            let mut s = DefaultHasher::new();
            v.hash(&mut s);
            s.finish()
        };
        assert_eq!(Value::Int(5), Value::Decimal(500, 2));
        assert_eq!(h(&Value::Int(5)), h(&Value::Decimal(500, 2)));
        assert!(Value::Decimal(1234, 2) < Value::Int(13));
        assert!(Value::Null < Value::Int(i64::MIN));
    }

    #[test]
    fn values_print_as_flink_prints_them() {
        assert_eq!(format_decimal(-5, 2), "-0.05");
        assert_eq!(Value::Double(2.0).to_string(), "2.0");
        assert_eq!(
            Value::Timestamp(1_699_999_980_000).to_string(),
            "2023-11-14 22:13:00.000"
        );
        assert_eq!(Value::Date(0).to_string(), "1970-01-01");
        let row = Row::insert(vec![Value::Str("a".into()), Value::Null, Value::Int(3)]);
        let types = [DataType::STRING, DataType::Int, DataType::BigInt];
        assert_eq!(
            PrintRow {
                row: &row,
                types: &types
            }
            .to_string(),
            "+I[a, NULL, 3]"
        );
    }
}
