//! The `csv` and `json` formats: a line to physical values and back. CSV fields may be
//! quoted (`"a,b"`, `""` for a quote); an empty unquoted field of a non-string column
//! is NULL. JSON lines are objects with a field per column.

use crate::expr::cast::{cast, narrow};
use crate::expr::time::parse_timestamp;
use crate::types::DataType;
use crate::value::{Row, Value};

/// Calls `field(text, quoted)` for each field of one CSV line, in order; a line without
/// quotes is walked once, its fields borrowed from it.
fn for_each_csv_field(line: &str, mut field: impl FnMut(&str, bool)) {
    if memchr::memchr(b'"', line.as_bytes()).is_none() {
        let mut rest = line;
        loop {
            match memchr::memchr(b',', rest.as_bytes()) {
                Some(at) => {
                    field(&rest[..at], false);
                    rest = &rest[at + 1..];
                }
                None => return field(rest, false),
            }
        }
    }
    let mut cur = String::new();
    let mut quoted = false;
    let mut in_quotes = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if in_quotes && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' if in_quotes => in_quotes = false,
            '"' if cur.is_empty() => {
                in_quotes = true;
                quoted = true;
            }
            ',' if !in_quotes => {
                field(&cur, quoted);
                cur.clear();
                quoted = false;
            }
            c => cur.push(c),
        }
    }
    field(&cur, quoted)
}

/// The value of type `t` a field's text holds: as `CAST(text AS t)`, with integers,
/// doubles and timestamps read straight from the text (the cast, with its error
/// message, judges what they do not read).
pub(super) fn field_value(text: &str, quoted: bool, t: DataType) -> Result<Value, String> {
    if !quoted && (text.is_empty() && !t.is_string()) {
        return Ok(Value::Null);
    }
    let direct = match t {
        t if t.is_integer() => plain_integer(text)
            .or_else(|| text.trim().parse::<i64>().ok())
            .map(|i| Value::Int(narrow(i, t))),
        DataType::Float | DataType::Double => plain_decimal(text)
            .or_else(|| text.trim().parse::<f64>().ok())
            .map(Value::Double),
        t if t.is_timestamp() => parse_timestamp(text).map(Value::Timestamp),
        _ => None,
    };
    match direct {
        Some(v) => Ok(v),
        None => cast(Value::Str(text.to_string()), DataType::STRING, t).map_err(|e| e.0),
    }
}

/// An optional `-` and one to eighteen ASCII digits (so no overflow) as their
/// integer; `None` for any other text, which `str::parse` then reads.
fn plain_integer(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        rest => (false, rest),
    };
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    Some(if negative { -n } else { n })
}

/// Exact powers of ten as doubles (all below 2^53, so exactly representable).
pub(super) const POWERS_OF_TEN: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// An optional `-`, digits and an optional `.` with digits, fifteen digits at most,
/// as the nearest double: the digits as an integer (exact below 2^53) divided by an
/// exact power of ten, which IEEE division rounds correctly, so it is the double
/// `str::parse` gives (Clinger's fast path). `None` for any other text.
fn plain_decimal(text: &str) -> Option<f64> {
    let (negative, rest) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        rest => (false, rest),
    };
    let (whole, fraction) = match memchr::memchr(b'.', rest) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &[][..]),
    };
    let all_digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if whole.is_empty() || whole.len() + fraction.len() > 15 || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    if fraction.is_empty() && rest.len() > whole.len() {
        return None;
    }
    let mantissa = whole
        .iter()
        .chain(fraction)
        .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    let magnitude = mantissa as f64 / POWERS_OF_TEN[fraction.len()];
    Some(if negative { -magnitude } else { magnitude })
}

/// Parses a CSV line into values of `types`, appended to `out` (which the caller may
/// reuse; on an error it holds the fields parsed before).
pub fn parse_csv_into(line: &str, types: &[DataType], out: &mut Vec<Value>) -> Result<(), String> {
    let start = out.len();
    let mut found = 0usize;
    // A wrong field count is reported before a field that does not parse.
    let mut first_error = None;
    for_each_csv_field(line, |text, quoted| {
        if let (Some(t), None) = (types.get(found), &first_error) {
            match field_value(text, quoted, *t) {
                Ok(v) => out.push(v),
                Err(e) => first_error = Some(e),
            }
        }
        found += 1;
    });
    let error = match found == types.len() {
        false => Some(format!("expected {} fields, found {found}", types.len())),
        true => first_error,
    };
    match error {
        Some(e) => {
            out.truncate(start);
            Err(e)
        }
        None => Ok(()),
    }
}

/// Parses a CSV line into values of `types`.
pub fn parse_csv(line: &str, types: &[DataType]) -> Result<Vec<Value>, String> {
    let mut out = Vec::with_capacity(types.len());
    parse_csv_into(line, types, &mut out)?;
    Ok(out)
}

/// Parses a JSON object line into values of the named columns.
pub fn parse_json(line: &str, columns: &[(String, DataType)]) -> Result<Vec<Value>, String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    columns
        .iter()
        .map(|(name, t)| match obj.get(name) {
            None | Some(serde_json::Value::Null) => Ok(Value::Null),
            Some(serde_json::Value::String(s)) => field_value(s, true, *t),
            Some(serde_json::Value::Bool(b)) if *t == DataType::Boolean => Ok(Value::Bool(*b)),
            Some(other) => field_value(&other.to_string(), true, *t),
        })
        .collect()
}

/// A row as a CSV line.
pub fn to_csv(row: &Row, types: &[DataType]) -> String {
    row.values
        .iter()
        .zip(types)
        .map(|(v, t)| match v {
            Value::Null => String::new(),
            v => {
                let s = v.render(*t);
                if s.contains([',', '"', '\n']) {
                    format!("\"{}\"", s.replace('"', "\"\""))
                } else {
                    s
                }
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A row as a JSON object line.
pub fn to_json(row: &Row, columns: &[(String, DataType)]) -> String {
    let mut obj = serde_json::Map::new();
    for (v, (name, t)) in row.values.iter().zip(columns) {
        let j = match v {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Double(d) => {
                serde_json::Number::from_f64(*d).map_or(serde_json::Value::Null, serde_json::Value::Number)
            }
            v => serde_json::Value::String(v.render(*t)),
        };
        obj.insert(name.clone(), j);
    }
    serde_json::Value::Object(obj).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_vector_gets_each_line_appended_and_nothing_from_a_bad_line() {
        let types = [DataType::BigInt, DataType::Double, DataType::Timestamp(3)];
        let mut out = vec![Value::Int(-1)];
        parse_csv_into("1,0.07,2023-11-14 22:13:20.001", &types, &mut out).unwrap();
        assert_eq!(
            out,
            vec![
                Value::Int(-1),
                Value::Int(1),
                Value::Double(0.07),
                Value::Timestamp(1_700_000_000_001)
            ]
        );
        assert!(parse_csv_into("2,oops,2023-11-14 22:13:20.001", &types, &mut out).is_err());
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn plain_numbers_read_as_str_parse_reads_them() {
        for text in [
            "0",
            "-0",
            "7",
            "-7919",
            "123456789012345678",
            "-999999999999999999",
            "007",
        ] {
            assert_eq!(plain_integer(text), text.parse::<i64>().ok(), "{text}");
        }
        for text in ["", "-", "+5", " 5", "1234567890123456789", "1.0", "1e3", "--1"] {
            assert_eq!(plain_integer(text), None, "{text}");
        }
        let mut decimals: Vec<String> = [
            "0",
            "-0",
            "0.07",
            "-0.0",
            "212.59",
            "999.99",
            "0.1",
            "0.3",
            "123456789012345",
            "1.00000000000001",
            "-98765.4321",
            "0.00000000000001",
            "007.50",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        decimals.extend((0..100_000).step_by(7).map(|i| format!("{}.{:02}", i / 100, i % 100)));
        for text in &decimals {
            let fast = plain_decimal(text).expect("a plain decimal");
            let parsed: f64 = text.parse().expect("parses");
            assert_eq!(fast.to_bits(), parsed.to_bits(), "{text}");
        }
        for text in [
            "",
            ".5",
            "1.",
            "-",
            "1e5",
            "+1.5",
            "1.2.3",
            "1234567890123456",
            " 1.5",
            "NaN",
            "inf",
        ] {
            assert_eq!(plain_decimal(text), None, "{text}");
        }
    }

    #[test]
    fn csv_fields_may_be_quoted_and_empty_numbers_are_null() {
        let types = [DataType::STRING, DataType::Int, DataType::Decimal(10, 2)];
        assert_eq!(
            parse_csv("\"a,\"\"b\",,1.5", &types).unwrap(),
            vec![Value::Str("a,\"b".into()), Value::Null, Value::Decimal(150, 2)]
        );
        assert_eq!(
            parse_csv("a,x,1", &types).unwrap_err(),
            "For input string: 'x'. Invalid character found."
        );
        assert_eq!(parse_csv("a,x", &types).unwrap_err(), "expected 3 fields, found 2");
        assert_eq!(parse_csv("a,x,1,2", &types).unwrap_err(), "expected 3 fields, found 4");
        let row = Row::insert(vec![Value::Str("a,b".into()), Value::Null, Value::Decimal(150, 2)]);
        assert_eq!(to_csv(&row, &types), "\"a,b\",,1.50");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5_000))]

        /// Decimal texts of every length around the fifteen-digit limit, with and
        /// without signs, fractions, exponents and surrounding junk: wherever the fast
        /// path (Clinger's) gives a double, it is the bits `str::parse` gives.
        #[test]
        fn the_float_fast_path_computes_exactly_what_str_parse_computes(
            text in "[-+]?[0-9]{0,18}(\\.[0-9]{0,18})?([eE][-+]?[0-9]{1,3})?[ x]?",
        ) {
            if let Some(fast) = plain_decimal(&text) {
                let parsed = text.parse::<f64>();
                proptest::prop_assert!(
                    matches!(parsed, Ok(p) if p.to_bits() == fast.to_bits()),
                    "{text:?}: fast {fast:?}, str::parse {parsed:?}"
                );
            }
        }

        /// Integer texts of every length around the eighteen-digit limit: wherever the
        /// fast path gives an integer, it is what `str::parse` gives.
        #[test]
        fn the_integer_fast_path_computes_exactly_what_str_parse_computes(
            text in "[-+]?[0-9]{0,21}[ .x]?",
        ) {
            if let Some(fast) = plain_integer(&text) {
                proptest::prop_assert_eq!(text.parse::<i64>(), Ok(fast), "{:?}", text);
            }
        }
    }
}
