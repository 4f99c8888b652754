//! The `csv` and `json` formats: a line to physical values and back. CSV fields may be
//! quoted (`"a,b"`, `""` for a quote); an empty unquoted field of a non-string column
//! is NULL. JSON lines are objects with a field per column.

use crate::expr::cast::{cast, narrow};
use crate::expr::time::parse_timestamp;
use crate::types::DataType;
use crate::value::{Row, Value};
use std::borrow::Cow;

/// The fields of one CSV line, each with whether it was quoted. A line without quotes
/// is split in place, borrowing its fields.
pub fn split_csv(line: &str) -> Vec<(Cow<'_, str>, bool)> {
    if !line.contains('"') {
        return line.split(',').map(|f| (Cow::Borrowed(f), false)).collect();
    }
    let mut fields = Vec::new();
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
                fields.push((Cow::Owned(std::mem::take(&mut cur)), quoted));
                quoted = false;
            }
            c => cur.push(c),
        }
    }
    fields.push((Cow::Owned(cur), quoted));
    fields
}

/// The value of type `t` a field's text holds: as `CAST(text AS t)`, with integers,
/// doubles and timestamps read straight from the text (the cast, with its error
/// message, judges what they do not read).
fn field_value(text: &str, quoted: bool, t: DataType) -> Result<Value, String> {
    if !quoted && (text.is_empty() && !t.is_string()) {
        return Ok(Value::Null);
    }
    let direct = match t {
        t if t.is_integer() => text.trim().parse::<i64>().ok().map(|i| Value::Int(narrow(i, t))),
        DataType::Float | DataType::Double => text.trim().parse::<f64>().ok().map(Value::Double),
        t if t.is_timestamp() => parse_timestamp(text).map(Value::Timestamp),
        _ => None,
    };
    match direct {
        Some(v) => Ok(v),
        None => cast(Value::Str(text.to_string()), DataType::STRING, t).map_err(|e| e.0),
    }
}

/// Parses a CSV line into values of `types`.
pub fn parse_csv(line: &str, types: &[DataType]) -> Result<Vec<Value>, String> {
    let fields = split_csv(line);
    if fields.len() != types.len() {
        return Err(format!("expected {} fields, found {}", types.len(), fields.len()));
    }
    fields
        .iter()
        .zip(types)
        .map(|((f, q), t)| field_value(f, *q, *t))
        .collect()
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
        let row = Row::insert(vec![Value::Str("a,b".into()), Value::Null, Value::Decimal(150, 2)]);
        assert_eq!(to_csv(&row, &types), "\"a,b\",,1.50");
    }
}
