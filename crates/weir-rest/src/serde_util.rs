//! Serialisation helpers for the places where Flink's JSON differs from serde's
//! defaults: ids written as 32 hex characters, and doubles that may be `NaN`.

use serde::Serializer;
use std::fmt::Display;

/// Writes an id through its `Display` (32 lower-case hex characters for Weir ids),
/// not through its derived serde form (a number).
pub(crate) fn display<T: Display, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

/// Writes a double as Jackson does by default: finite values as numbers, `NaN` and
/// the infinities as the strings `"NaN"`, `"Infinity"` and `"-Infinity"` (serde_json
/// would write `null`). Flink reports an unknown `accumulated-busy-time` as `"NaN"`.
pub(crate) fn jackson_double<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    if value.is_nan() {
        s.serialize_str("NaN")
    } else if value.is_infinite() {
        s.serialize_str(if *value > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        s.serialize_f64(*value)
    }
}

/// `skip_serializing_if` predicate for Jackson's `NON_DEFAULT` on an `int`.
pub(crate) fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// `skip_serializing_if` predicate for Jackson's `NON_DEFAULT` on a `boolean`.
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    #[derive(Serialize)]
    struct D(#[serde(serialize_with = "super::jackson_double")] f64);

    #[test]
    fn doubles_are_written_as_jackson_writes_them() {
        let j = |v: f64| serde_json::to_string(&D(v)).unwrap_or_default();
        assert_eq!(j(35.0), "35.0");
        assert_eq!(j(f64::NAN), "\"NaN\"");
        assert_eq!(j(f64::INFINITY), "\"Infinity\"");
        assert_eq!(j(f64::NEG_INFINITY), "\"-Infinity\"");
    }
}
