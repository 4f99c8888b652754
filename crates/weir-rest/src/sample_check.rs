//! Test support: compares the JSON shape of a serialised response with a real Flink
//! 2.3 response kept in `tests/samples/`.
//!
//! The shape of a JSON value is the set of `(path, type)` pairs of every value in it,
//! where a path names object keys (`/vertices[]/metrics/read-bytes`), the elements of
//! an array share one path, and the type distinguishes integers from doubles. Two
//! values have the same shape when these sets are equal: same keys at every level,
//! same nesting, same value types. Key *order* is compared separately (first
//! occurrence of each object path).

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The text of `tests/samples/<name>`. The crate directory is read when the test runs
/// (cargo sets it), not baked in at compile time, so a build shared by several
/// checkouts of the repository reads its own checkout's samples.
fn sample_text(name: &str) -> String {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_string());
    let path = format!("{dir}/tests/samples/{name}");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

/// Parses `tests/samples/<name>`.
pub(crate) fn sample(name: &str) -> Value {
    serde_json::from_str(&sample_text(name)).unwrap_or_else(|e| panic!("parse {name}: {e}"))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "double",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn collect(v: &Value, path: &str, shape: &mut BTreeSet<(String, &'static str)>) {
    shape.insert((path.to_string(), type_name(v)));
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                collect(x, &format!("{path}/{k}"), shape);
            }
        }
        Value::Array(items) => {
            for x in items {
                collect(x, &format!("{path}[]"), shape);
            }
        }
        _ => {}
    }
}

/// The `(path, type)` pairs of `v`.
fn shape_of(v: &Value) -> BTreeSet<(String, &'static str)> {
    let mut shape = BTreeSet::new();
    collect(v, "", &mut shape);
    shape
}

/// A JSON value that keeps its object keys in document order (`serde_json::Value`
/// sorts them without the `preserve_order` feature).
enum Ordered {
    Object(Vec<(String, Ordered)>),
    Array(Vec<Ordered>),
    Scalar,
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Scalar)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(x) = a.next_element()? {
                    items.push(x);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Ordered, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Ordered>()? {
                    entries.push((k, v));
                }
                Ok(Ordered::Object(entries))
            }
        }
        d.deserialize_any(V)
    }
}

/// Path of each object → its keys in document order (first occurrence of the path).
fn key_order(text: &str) -> BTreeMap<String, Vec<String>> {
    fn walk(v: &Ordered, path: &str, out: &mut BTreeMap<String, Vec<String>>) {
        match v {
            Ordered::Object(entries) => {
                out.entry(path.to_string())
                    .or_insert_with(|| entries.iter().map(|(k, _)| k.clone()).collect());
                for (k, x) in entries {
                    walk(x, &format!("{path}/{k}"), out);
                }
            }
            Ordered::Array(items) => {
                for x in items {
                    walk(x, &format!("{path}[]"), out);
                }
            }
            Ordered::Scalar => {}
        }
    }
    let parsed: Ordered = serde_json::from_str(text).unwrap_or_else(|e| panic!("parse for key order: {e}"));
    let mut out = BTreeMap::new();
    walk(&parsed, "", &mut out);
    out
}

/// Asserts that `value` serialises to the same shape (keys, nesting, value types) and
/// key order as the Flink sample `name`.
pub(crate) fn assert_matches_sample<T: Serialize>(value: &T, name: &str) {
    let our_text = serde_json::to_string(value).unwrap_or_else(|e| panic!("serialise: {e}"));
    let ours: Value = serde_json::from_str(&our_text).unwrap_or_else(|e| panic!("reparse: {e}"));
    let their_text = sample_text(name);
    let theirs: Value = serde_json::from_str(&their_text).unwrap_or_else(|e| panic!("parse {name}: {e}"));
    let our_shape = shape_of(&ours);
    let their_shape = shape_of(&theirs);
    let missing: Vec<_> = their_shape.difference(&our_shape).collect();
    let extra: Vec<_> = our_shape.difference(&their_shape).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "shape differs from {name}\n missing (in Flink, not ours): {missing:?}\n extra (ours, not Flink's): {extra:?}\n ours: {ours:#}"
    );
    assert_eq!(
        key_order(&our_text),
        key_order(&their_text),
        "key order differs from {name}"
    );
}

/// Asserts that `value` has the shape and key order of the part of the Flink sample
/// `name` at `part` (a shape path such as `/subtasks[]`: every element of the sample's
/// `subtasks`), for answers that Flink nests in a sampled one.
pub(crate) fn assert_matches_sample_part<T: Serialize>(value: &T, name: &str, part: &str) {
    let our_text = serde_json::to_string(value).unwrap_or_else(|e| panic!("serialise: {e}"));
    let ours: Value = serde_json::from_str(&our_text).unwrap_or_else(|e| panic!("reparse: {e}"));
    let their_text = sample_text(name);
    let theirs: Value = serde_json::from_str(&their_text).unwrap_or_else(|e| panic!("parse {name}: {e}"));
    let strip = |path: &str| path.strip_prefix(part).map(str::to_string);
    let their_shape: BTreeSet<(String, &'static str)> = shape_of(&theirs)
        .into_iter()
        .filter_map(|(path, ty)| strip(&path).map(|p| (p, ty)))
        .collect();
    assert!(!their_shape.is_empty(), "{name} has nothing at {part}");
    let our_shape = shape_of(&ours);
    assert_eq!(
        our_shape, their_shape,
        "shape differs from {name} at {part}\n ours: {ours:#}"
    );
    let their_order: BTreeMap<String, Vec<String>> = key_order(&their_text)
        .into_iter()
        .filter_map(|(path, keys)| strip(&path).map(|p| (p, keys)))
        .collect();
    assert_eq!(
        key_order(&our_text),
        their_order,
        "key order differs from {name} at {part}"
    );
}

#[cfg(test)]
mod tests {
    use super::assert_matches_sample;
    use serde_json::json;

    #[test]
    #[should_panic(expected = "shape differs")]
    fn a_missing_key_is_caught() {
        assert_matches_sample(&json!({"jobs": []}), "jobs_list.json");
    }

    #[test]
    #[should_panic(expected = "shape differs")]
    fn an_integer_for_a_double_is_caught() {
        let mut v = super::sample("taskmanagers.json");
        v["taskmanagers"][0]["totalResource"]["cpuCores"] = json!(2);
        assert_matches_sample(&v, "taskmanagers.json");
    }

    #[test]
    #[should_panic(expected = "key order differs")]
    fn a_reordered_key_is_caught() {
        #[derive(serde::Serialize)]
        struct Reordered {
            status: &'static str,
            id: &'static str,
        }
        #[derive(serde::Serialize)]
        struct List {
            jobs: Vec<Reordered>,
        }
        let list = List {
            jobs: vec![Reordered {
                status: "RUNNING",
                id: "x",
            }],
        };
        assert_matches_sample(&list, "jobs_list.json");
    }

    #[test]
    fn key_order_follows_the_document() {
        let order = super::key_order(r#"{"b": 1, "a": {"d": [{"f": 1, "e": 2}], "c": 2}}"#);
        let want: Vec<(&str, Vec<&str>)> =
            vec![("", vec!["b", "a"]), ("/a", vec!["d", "c"]), ("/a/d[]", vec!["f", "e"])];
        let got: Vec<(&str, Vec<&str>)> = order
            .iter()
            .map(|(k, v)| (k.as_str(), v.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(got, want);
    }
}
