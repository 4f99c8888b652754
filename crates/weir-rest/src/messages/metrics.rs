//! Flink's metric query endpoints: what a backend reports ([`MetricValue`] in a
//! [`ComponentMetrics`] per job, vertex subtask, JobManager or TaskManager) and how a
//! query is answered, with the semantics of Flink's `AbstractMetricsHandler` and
//! `AbstractAggregatingMetricsHandler`:
//!
//! - without `get`: the ids of the available metrics, `[{"id": "numRecordsIn"}]`;
//! - with `get=a,b`: the requested metrics that exist, `[{"id": "a", "value": "12"}]`,
//!   values as strings the way Java prints them (`12`, `0.5`, `1.0E7`, `NaN`);
//! - aggregated over several components (subtasks, jobs, TaskManagers), with `get`:
//!   `[{"id": "a", "min": 1.0, "max": 2.0, "avg": 1.5, "sum": 3.0, "skew": 33.3}]`, only
//!   the aggregations named by `agg` (`min,max,avg,sum,skew`, case-insensitive; all
//!   when absent), and — Flink's quirk — an empty list as soon as one requested metric
//!   exists in none of the components.
//!
//! Query values are split at commas the way Java's `String.split(",")` does (trailing
//! empty parts dropped). A component that does not exist (unknown job, vertex, subtask
//! or TaskManager) has no metrics: the answer is `[]`, as in Flink.

use crate::error::RestError;
use crate::serde_util::jackson_double;
use serde::{Serialize, Serializer};
use std::collections::{BTreeMap, BTreeSet};

/// One metric's current value, typed as Flink's metric store keeps it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetricValue {
    /// A counter or an integral gauge (Java `long`).
    Integer(i64),
    /// A rate (meter) or a fractional gauge (Java `double`).
    Double(f64),
}

impl MetricValue {
    /// The value as a number, for aggregation.
    pub fn as_f64(self) -> f64 {
        match self {
            MetricValue::Integer(n) => n as f64,
            MetricValue::Double(x) => x,
        }
    }

    /// The value as Flink's metric store prints it (`String.valueOf`).
    pub fn to_flink_string(self) -> String {
        match self {
            MetricValue::Integer(n) => n.to_string(),
            MetricValue::Double(x) => java_double(x),
        }
    }
}

/// Java's `Double.toString`: decimal between 10⁻³ and 10⁷ (always with a fraction),
/// scientific (`1.0E7`) outside, and `NaN`, `Infinity`, `-Infinity`.
pub fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let magnitude = x.abs();
    if x == 0.0 || (1e-3..1e7).contains(&magnitude) {
        let s = format!("{x}");
        return if s.contains('.') { s } else { format!("{s}.0") };
    }
    let s = format!("{x:E}");
    match s.split_once('E') {
        Some((mantissa, exponent)) if !mantissa.contains('.') => format!("{mantissa}.0E{exponent}"),
        _ => s,
    }
}

/// The metrics of one component (a job, a vertex subtask, a process) by id.
pub type ComponentMetrics = BTreeMap<String, MetricValue>;

/// One entry of a metric list: the id alone, or with its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Metric {
    /// The metric id.
    pub id: String,
    /// Its value as a string; absent when only the available ids were asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// One entry of an aggregated metric list; each aggregation only when requested.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AggregatedMetric {
    /// The metric id.
    pub id: String,
    /// The smallest value.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "optional_double")]
    pub min: Option<f64>,
    /// The largest value.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "optional_double")]
    pub max: Option<f64>,
    /// The mean.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "optional_double")]
    pub avg: Option<f64>,
    /// The sum.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "optional_double")]
    pub sum: Option<f64>,
    /// Flink's data skew: mean absolute deviation over the mean, in percent (at most
    /// 100; 0 when the mean is 0).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "optional_double")]
    pub skew: Option<f64>,
}

fn optional_double<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(x) => jackson_double(x, s),
        None => s.serialize_none(),
    }
}

/// An aggregation of `agg` (Flink's `MetricsAggregationParameter.AggregationMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AggregationMode {
    /// `min`.
    Min,
    /// `max`.
    Max,
    /// `sum`.
    Sum,
    /// `avg`.
    Avg,
    /// `skew`.
    Skew,
}

impl AggregationMode {
    /// Every mode: what is computed when `agg` is absent.
    pub const ALL: [AggregationMode; 5] = [
        AggregationMode::Min,
        AggregationMode::Max,
        AggregationMode::Sum,
        AggregationMode::Avg,
        AggregationMode::Skew,
    ];

    /// The modes of an `agg` value, or Flink's 400 naming the whole value.
    pub fn parse_list(raw: &str) -> Result<BTreeSet<AggregationMode>, RestError> {
        java_split(raw)
            .into_iter()
            .map(|part| match part.to_ascii_uppercase().as_str() {
                "MIN" => Ok(AggregationMode::Min),
                "MAX" => Ok(AggregationMode::Max),
                "SUM" => Ok(AggregationMode::Sum),
                "AVG" => Ok(AggregationMode::Avg),
                "SKEW" => Ok(AggregationMode::Skew),
                _ => Err(RestError::BadRequest(format!(
                    "Bad request, could not parse parameters: Cannot resolve query parameter (agg) from value \"{raw}\"."
                ))),
            })
            .collect()
    }
}

/// Java's `s.split(",")`: the parts between commas, trailing empty parts dropped (so
/// `""` is `[""]` but `","` is `[]`).
pub fn java_split(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return vec![""];
    }
    let mut parts: Vec<&str> = s.split(',').collect();
    while parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}

/// The requested ids of a `get` value (`None`: list what is available).
pub fn requested(get: Option<&str>) -> Option<Vec<String>> {
    let ids: Vec<String> = java_split(get?).into_iter().map(str::to_string).collect();
    (!ids.is_empty()).then_some(ids)
}

/// The answer for one component: the available ids without `get`, else the requested
/// metrics it has (each once, in the order asked).
pub fn list_or_get(store: Option<&ComponentMetrics>, get: Option<&[String]>) -> Vec<Metric> {
    let Some(store) = store else {
        return Vec::new();
    };
    match get {
        None => store
            .keys()
            .map(|id| Metric {
                id: id.clone(),
                value: None,
            })
            .collect(),
        Some(ids) => {
            let mut seen = BTreeSet::new();
            ids.iter()
                .filter(|id| seen.insert(id.as_str()))
                .filter_map(|id| {
                    store.get(id).map(|v| Metric {
                        id: id.clone(),
                        value: Some(v.to_flink_string()),
                    })
                })
                .collect()
        }
    }
}

/// The answer aggregated over `stores`: the union of their ids without `get`, else the
/// requested aggregations of each requested metric over the stores that have it.
pub fn aggregate(
    stores: &[&ComponentMetrics],
    get: Option<&[String]>,
    modes: &BTreeSet<AggregationMode>,
) -> Vec<AggregatedMetric> {
    let Some(ids) = get else {
        let union: BTreeSet<&String> = stores.iter().flat_map(|s| s.keys()).collect();
        return union
            .into_iter()
            .map(|id| AggregatedMetric {
                id: id.clone(),
                min: None,
                max: None,
                avg: None,
                sum: None,
                skew: None,
            })
            .collect();
    };
    let modes = if modes.is_empty() {
        AggregationMode::ALL.into_iter().collect()
    } else {
        modes.clone()
    };
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let values: Vec<f64> = stores.iter().filter_map(|s| s.get(id)).map(|v| v.as_f64()).collect();
        if values.is_empty() {
            return Vec::new();
        }
        out.push(aggregated(id, &values, &modes));
    }
    out
}

fn aggregated(id: &str, values: &[f64], modes: &BTreeSet<AggregationMode>) -> AggregatedMetric {
    let sum: f64 = values.iter().sum();
    let avg = sum / values.len() as f64;
    let want = |m: AggregationMode, v: f64| modes.contains(&m).then_some(v);
    AggregatedMetric {
        id: id.to_string(),
        min: want(
            AggregationMode::Min,
            values.iter().copied().fold(f64::INFINITY, f64::min),
        ),
        max: want(
            AggregationMode::Max,
            values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ),
        avg: want(AggregationMode::Avg, avg),
        sum: want(AggregationMode::Sum, sum),
        skew: want(AggregationMode::Skew, skew(values, avg)),
    }
}

/// Flink's `DoubleDataSkew`: the mean absolute deviation over the mean, in percent,
/// capped at 100; 0 when the mean is 0.
fn skew(values: &[f64], avg: f64) -> f64 {
    if avg == 0.0 {
        return 0.0;
    }
    let deviation = values.iter().map(|v| (avg - v).abs()).sum::<f64>() / values.len() as f64;
    (deviation / avg * 100.0).min(100.0)
}

/// The subtask indexes below `parallelism` named by a `subtasks` value (`"1,3,5-9"`);
/// parts that are not a number or a range of numbers are ignored, as Flink ignores
/// them.
pub fn subtask_ranges(raw: &str, parallelism: usize) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for part in java_split(raw) {
        let part = part.trim();
        let range = match part.split_once('-') {
            None => part.parse::<usize>().ok().map(|i| (i, i)),
            Some((a, b)) => a.parse::<usize>().ok().zip(b.parse::<usize>().ok()),
        };
        if let Some((start, end)) = range {
            out.extend(start..=end.min(parallelism.saturating_sub(1)));
        }
    }
    out.retain(|i| *i < parallelism);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(pairs: &[(&str, MetricValue)]) -> ComponentMetrics {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn doubles_print_as_java_prints_them() {
        for (x, want) in [
            (0.0, "0.0"),
            (12.0, "12.0"),
            (0.5, "0.5"),
            (1234.5678, "1234.5678"),
            (1e7, "1.0E7"),
            (12_345_678.0, "1.2345678E7"),
            (0.0001, "1.0E-4"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(java_double(x), want, "{x}");
        }
        assert_eq!(MetricValue::Integer(42).to_flink_string(), "42");
    }

    #[test]
    fn commas_split_as_in_java() {
        assert_eq!(java_split("a,b"), vec!["a", "b"]);
        assert_eq!(java_split("a,,b,,"), vec!["a", "", "b"]);
        assert_eq!(java_split(""), vec![""]);
        assert!(java_split(",").is_empty());
        assert_eq!(requested(Some(",")), None, "nothing requested lists the ids");
        assert_eq!(requested(Some("")), Some(vec![String::new()]));
    }

    #[test]
    fn without_get_the_ids_are_listed_and_with_get_only_existing_values() {
        let s = store(&[
            ("numRecordsIn", MetricValue::Integer(7)),
            ("busy", MetricValue::Double(0.5)),
        ]);
        let listed = list_or_get(Some(&s), None);
        assert_eq!(
            listed.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
            vec!["busy", "numRecordsIn"]
        );
        assert!(listed.iter().all(|m| m.value.is_none()));
        let ids = vec![
            "numRecordsIn".to_string(),
            "nope".to_string(),
            "numRecordsIn".to_string(),
        ];
        let got = list_or_get(Some(&s), Some(&ids));
        assert_eq!(
            got,
            vec![Metric {
                id: "numRecordsIn".into(),
                value: Some("7".into())
            }]
        );
        assert_eq!(
            serde_json::to_string(&listed[0]).unwrap_or_default(),
            r#"{"id":"busy"}"#
        );
        assert!(list_or_get(None, None).is_empty());
    }

    #[test]
    fn aggregates_follow_flinks_accumulators() {
        let a = store(&[("n", MetricValue::Integer(23))]);
        let b = store(&[("n", MetricValue::Integer(3))]);
        let c = store(&[("n", MetricValue::Integer(10)), ("only-c", MetricValue::Integer(1))]);
        let ids = vec!["n".to_string()];
        let all = aggregate(&[&a, &b, &c], Some(&ids), &BTreeSet::new());
        assert_eq!(all.len(), 1);
        let m = &all[0];
        assert_eq!(
            (m.min, m.max, m.sum, m.avg),
            (Some(3.0), Some(23.0), Some(36.0), Some(12.0))
        );
        // Flink's test: 23, 3, 10 have a skew of about 61 %.
        assert!(m.skew.is_some_and(|s| (s - 61.1).abs() < 0.5), "{m:?}");
        let only_sum = aggregate(&[&a, &b], Some(&ids), &[AggregationMode::Sum].into_iter().collect());
        assert_eq!(
            serde_json::to_string(&only_sum).unwrap_or_default(),
            r#"[{"id":"n","sum":26.0}]"#
        );
        let missing = vec!["n".to_string(), "absent".to_string()];
        assert!(
            aggregate(&[&a, &c], Some(&missing), &BTreeSet::new()).is_empty(),
            "Flink's quirk"
        );
        let union = aggregate(&[&a, &c], None, &BTreeSet::new());
        assert_eq!(
            union.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
            vec!["n", "only-c"]
        );
        assert_eq!(skew(&[5.0], 5.0), 0.0);
        assert_eq!(skew(&[0.0, 0.0], 0.0), 0.0);
    }

    #[test]
    fn aggregation_modes_parse_case_insensitively_and_reject_others() {
        let modes = AggregationMode::parse_list("MIN,max,Skew");
        assert_eq!(
            modes,
            Ok([AggregationMode::Min, AggregationMode::Max, AggregationMode::Skew]
                .into_iter()
                .collect())
        );
        for bad in ["median", "", "min, max"] {
            assert_eq!(
                AggregationMode::parse_list(bad),
                Err(RestError::BadRequest(format!(
                    "Bad request, could not parse parameters: Cannot resolve query parameter (agg) from value \"{bad}\"."
                ))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn subtask_ranges_are_bounded_by_the_parallelism_and_skip_nonsense() {
        let got: Vec<usize> = subtask_ranges("0,2-3,x,5-,-1,7", 4).into_iter().collect();
        assert_eq!(got, vec![0, 2, 3]);
        assert_eq!(subtask_ranges("1-4000000000", 3).len(), 2, "a huge range does not hang");
        assert!(subtask_ranges("", 3).is_empty());
    }
}
