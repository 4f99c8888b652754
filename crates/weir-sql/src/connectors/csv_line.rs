//! The CSV lines of a filesystem source, read field by field in one pass with each
//! column's reader chosen once per table: integers, doubles and canonical timestamps
//! are read while their field is scanned for its end, so a plain line costs one walk
//! over its bytes and no per-field type dispatch.
//!
//! Invariant: [`CsvLineParser::parse_into`] gives exactly what
//! [`parse_csv_into`] gives for every line (values,
//! error text, the vector left on an error). A fast reader only answers for the text
//! it fully understands and whose value it computes as the general path does; every
//! other field goes to the general per-field conversion, and any line with a quote, a
//! wrong number of fields or a field that does not convert goes to the general parser
//! whole.

use super::format::{field_value, parse_csv_into, POWERS_OF_TEN};
use crate::expr::cast::narrow;
use crate::expr::time::parse_timestamp;
use crate::types::DataType;
use crate::value::Value;

/// How one column's field is read.
#[derive(Debug, Clone, Copy)]
enum ColumnReader {
    /// TINYINT to BIGINT: `-?[0-9]{1,18}`.
    Integer(DataType),
    /// FLOAT, DOUBLE: `-?[0-9]+(\.[0-9]+)?` of at most fifteen digits.
    Floating,
    /// TIMESTAMP, TIMESTAMP_LTZ: `yyyy-MM-dd HH:mm:ss[.f{1,9}]`.
    Timestamp,
    /// Any other type: the general conversion.
    General,
}

/// The last date part of a canonical timestamp and the epoch milliseconds of its
/// midnight (rows of a file mostly share their day with the previous row's).
#[derive(Debug, Clone, Copy)]
struct DayCache {
    date: [u8; 10],
    midnight_ms: i64,
}

/// Reads CSV lines of one table's physical column types.
#[derive(Debug, Clone)]
pub struct CsvLineParser {
    types: Vec<DataType>,
    readers: Vec<ColumnReader>,
    day: Option<DayCache>,
}

/// The nanoseconds of one unit in the last of `n` fraction digits of a timestamp.
const NANOS_PER_DIGIT: [i64; 10] = [
    0,
    100_000_000,
    10_000_000,
    1_000_000,
    100_000,
    10_000,
    1_000,
    100,
    10,
    1,
];

impl CsvLineParser {
    /// A parser of lines holding fields of `types`, in order.
    pub fn new(types: &[DataType]) -> Self {
        let readers = types
            .iter()
            .map(|t| match *t {
                t if t.is_integer() => ColumnReader::Integer(t),
                DataType::Float | DataType::Double => ColumnReader::Floating,
                t if t.is_timestamp() => ColumnReader::Timestamp,
                _ => ColumnReader::General,
            })
            .collect();
        Self {
            types: types.to_vec(),
            readers,
            day: None,
        }
    }

    /// Parses `line` into values appended to `out`, exactly as
    /// [`parse_csv_into`] does.
    pub fn parse_into(&mut self, line: &str, out: &mut Vec<Value>) -> Result<(), String> {
        let start = out.len();
        if self.parse_plain(line, out).is_none() {
            out.truncate(start);
            return parse_csv_into(line, &self.types, out);
        }
        Ok(())
    }

    /// The fields of a line without quotes and with exactly one field per column, each
    /// converting; `None` (with `out` holding part of the line) for any other line. A
    /// fast reader takes no quote, so a quote is seen in the field the general
    /// conversion would get.
    fn parse_plain(&mut self, line: &str, out: &mut Vec<Value>) -> Option<()> {
        let bytes = line.as_bytes();
        let last = self.readers.len().checked_sub(1)?;
        let mut at = 0;
        for i in 0..=last {
            let reader = self.readers[i];
            // A fast reader pushes its value itself (written in place, not moved).
            let fast = match reader {
                ColumnReader::Integer(t) => integer_field(bytes, at, t, out),
                ColumnReader::Floating => floating_field(bytes, at, out),
                ColumnReader::Timestamp => self.timestamp_field(line, at, out),
                ColumnReader::General => None,
            };
            let end = match fast {
                Some(end) => end,
                None => {
                    let end = memchr::memchr(b',', &bytes[at..]).map_or(bytes.len(), |n| at + n);
                    // A quote may hide commas: the general parser reads that line.
                    if memchr::memchr(b'"', &bytes[at..end]).is_some() {
                        return None;
                    }
                    out.push(field_value(&line[at..end], false, self.types[i]).ok()?);
                    end
                }
            };
            match (i == last, bytes.get(end)) {
                (true, None) => return Some(()),
                (false, Some(b',')) => at = end + 1,
                _ => return None,
            }
        }
        None
    }

    /// A canonical timestamp field at `at`: its time of day read here, its date's
    /// midnight from the cache or, for a new date, from the general parser.
    fn timestamp_field(&mut self, line: &str, at: usize, out: &mut Vec<Value>) -> Option<usize> {
        let bytes = line.as_bytes();
        let field: &[u8; 19] = bytes.get(at..at + 19)?.try_into().ok()?;
        let digit = |k: usize| field[k].wrapping_sub(b'0');
        let two = |k: usize| -> Option<i64> {
            let (h, l) = (digit(k), digit(k + 1));
            (h < 10 && l < 10).then(|| i64::from(h * 10 + l))
        };
        let layout_ok =
            field[4] == b'-' && field[7] == b'-' && field[10] == b' ' && field[13] == b':' && field[16] == b':';
        if !layout_ok || two(0).is_none() || two(2).is_none() || two(5).is_none() || two(8).is_none() {
            return None;
        }
        let (hour, minute, second) = (two(11)?, two(14)?, two(17)?);
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        let mut end = at + 19;
        let mut nanos: i64 = 0;
        if bytes.get(end) == Some(&b'.') {
            let digits_from = end + 1;
            end = digits_from;
            while let Some(d) = bytes.get(end).map(|b| b.wrapping_sub(b'0')).filter(|d| *d < 10) {
                // More than nine fraction digits: the general path reads the field.
                if end - digits_from == 9 {
                    return None;
                }
                nanos = nanos * 10 + i64::from(d);
                end += 1;
            }
            let n = end - digits_from;
            if n == 0 {
                return None;
            }
            nanos *= NANOS_PER_DIGIT[n];
        }
        if !matches!(bytes.get(end), None | Some(b',')) {
            return None;
        }
        let time_ms = ((hour * 60 + minute) * 60 + second) * 1000 + nanos / 1_000_000;
        let mut date = [0u8; 10];
        date.copy_from_slice(&field[..10]);
        let midnight_ms = match self.day {
            Some(day) if day.date == date => day.midnight_ms,
            _ => {
                let midnight_ms = parse_timestamp(&line[at..end])? - time_ms;
                self.day = Some(DayCache { date, midnight_ms });
                midnight_ms
            }
        };
        out.push(Value::Timestamp(midnight_ms + time_ms));
        Some(end)
    }
}

/// An integer field at `at`: an optional `-` and one to eighteen digits, ending the
/// line or before a comma.
fn integer_field(bytes: &[u8], at: usize, t: DataType, out: &mut Vec<Value>) -> Option<usize> {
    let negative = bytes.get(at) == Some(&b'-');
    let digits_from = at + usize::from(negative);
    let mut end = digits_from;
    let mut n: i64 = 0;
    while let Some(d) = bytes.get(end).map(|b| b.wrapping_sub(b'0')).filter(|d| *d < 10) {
        // A nineteenth digit may not fit an i64: the general path reads that field.
        if end - digits_from == 18 {
            return None;
        }
        n = n * 10 + i64::from(d);
        end += 1;
    }
    if end == digits_from || !matches!(bytes.get(end), None | Some(b',')) {
        return None;
    }
    out.push(Value::Int(narrow(if negative { -n } else { n }, t)));
    Some(end)
}

/// A floating field at `at`: an optional `-`, digits and an optional `.` with digits,
/// fifteen digits at most, ending the line or before a comma; the digits as an exact
/// integer divided by an exact power of ten, as the general path computes it.
fn floating_field(bytes: &[u8], at: usize, out: &mut Vec<Value>) -> Option<usize> {
    let negative = bytes.get(at) == Some(&b'-');
    let mut end = at + usize::from(negative);
    let mut mantissa: u64 = 0;
    let mut whole = 0usize;
    while let Some(d) = bytes.get(end).map(|b| b.wrapping_sub(b'0')).filter(|d| *d < 10) {
        mantissa = mantissa * 10 + u64::from(d);
        whole += 1;
        end += 1;
        if whole > 15 {
            return None;
        }
    }
    let mut fraction = 0usize;
    if whole > 0 && bytes.get(end) == Some(&b'.') {
        end += 1;
        while let Some(d) = bytes.get(end).map(|b| b.wrapping_sub(b'0')).filter(|d| *d < 10) {
            mantissa = mantissa * 10 + u64::from(d);
            fraction += 1;
            end += 1;
            if whole + fraction > 15 {
                return None;
            }
        }
        if fraction == 0 {
            return None;
        }
    }
    if whole == 0 || !matches!(bytes.get(end), None | Some(b',')) {
        return None;
    }
    let magnitude = mantissa as f64 / POWERS_OF_TEN[fraction];
    out.push(Value::Double(if negative { -magnitude } else { magnitude }));
    Some(end)
}

#[cfg(test)]
#[path = "csv_line_tests.rs"]
mod tests;
