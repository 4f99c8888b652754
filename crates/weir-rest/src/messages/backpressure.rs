//! `GET /jobs/:jid/vertices/:vid/backpressure`: how much of each subtask's time goes to
//! waiting for output buffers, with Flink's levels (OK ≤ 0.10 < LOW ≤ 0.5 < HIGH).
//!
//! Flink writes the level twice, as `backpressureLevel` and `backpressure-level`; so
//! does Weir.

use crate::serde_util::jackson_double;
use serde::{Serialize, Serializer};

/// A back-pressure level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackPressureLevel {
    /// Ratio ≤ 0.10.
    Ok,
    /// Ratio ≤ 0.5.
    Low,
    /// Ratio > 0.5.
    High,
}

impl BackPressureLevel {
    /// The level of a back-pressured-time ratio.
    pub fn of_ratio(ratio: f64) -> Self {
        if ratio.is_nan() || ratio <= 0.10 {
            BackPressureLevel::Ok
        } else if ratio <= 0.5 {
            BackPressureLevel::Low
        } else {
            BackPressureLevel::High
        }
    }

    /// `ok`, `low` or `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            BackPressureLevel::Ok => "ok",
            BackPressureLevel::Low => "low",
            BackPressureLevel::High => "high",
        }
    }
}

impl Serialize for BackPressureLevel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One subtask's ratios over the last measurement interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubtaskBackPressure {
    /// Subtask index.
    pub subtask: u32,
    /// Level of `ratio`.
    #[serde(rename = "backpressureLevel")]
    pub backpressure_level: BackPressureLevel,
    /// Share of time back-pressured.
    pub ratio: f64,
    /// Share of time idle.
    #[serde(rename = "idleRatio")]
    pub idle_ratio: f64,
    /// Share of time busy (`"NaN"` when unknown).
    #[serde(rename = "busyRatio", serialize_with = "jackson_double")]
    pub busy_ratio: f64,
    /// The level again, under Flink's second key.
    #[serde(rename = "backpressure-level")]
    pub backpressure_level_dashed: BackPressureLevel,
}

/// The body of the back-pressure endpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VertexBackPressure {
    /// `ok` once measured.
    pub status: String,
    /// The highest subtask level.
    #[serde(rename = "backpressureLevel")]
    pub backpressure_level: BackPressureLevel,
    /// When the measurement was taken (ms since the epoch).
    #[serde(rename = "end-timestamp")]
    pub end_timestamp: i64,
    /// Per subtask.
    pub subtasks: Vec<SubtaskBackPressure>,
    /// The level again, under Flink's second key.
    #[serde(rename = "backpressure-level")]
    pub backpressure_level_dashed: BackPressureLevel,
}

impl VertexBackPressure {
    /// The response for per-subtask `(ratio, idle ratio, busy ratio)` measured at `end_timestamp`.
    pub fn from_ratios(end_timestamp: i64, ratios: &[(f64, f64, f64)]) -> Self {
        let subtasks: Vec<SubtaskBackPressure> = ratios
            .iter()
            .enumerate()
            .map(|(i, &(ratio, idle, busy))| {
                let level = BackPressureLevel::of_ratio(ratio);
                SubtaskBackPressure {
                    subtask: i as u32,
                    backpressure_level: level,
                    ratio,
                    idle_ratio: idle,
                    busy_ratio: busy,
                    backpressure_level_dashed: level,
                }
            })
            .collect();
        let worst = subtasks
            .iter()
            .map(|s| s.backpressure_level)
            .max_by_key(|l| match l {
                BackPressureLevel::Ok => 0,
                BackPressureLevel::Low => 1,
                BackPressureLevel::High => 2,
            })
            .unwrap_or(BackPressureLevel::Ok);
        Self {
            status: "ok".into(),
            backpressure_level: worst,
            end_timestamp,
            subtasks,
            backpressure_level_dashed: worst,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample_check::assert_matches_sample;

    #[test]
    fn levels_follow_flinks_thresholds() {
        assert_eq!(BackPressureLevel::of_ratio(0.0), BackPressureLevel::Ok);
        assert_eq!(BackPressureLevel::of_ratio(0.10), BackPressureLevel::Ok);
        assert_eq!(BackPressureLevel::of_ratio(0.11), BackPressureLevel::Low);
        assert_eq!(BackPressureLevel::of_ratio(0.5), BackPressureLevel::Low);
        assert_eq!(BackPressureLevel::of_ratio(0.51), BackPressureLevel::High);
        assert_eq!(BackPressureLevel::of_ratio(f64::NAN), BackPressureLevel::Ok);
    }

    #[test]
    fn response_has_flinks_fields_and_the_worst_level() {
        let v = VertexBackPressure::from_ratios(1, &[(0.0, 0.0, f64::NAN), (0.0, 0.0, f64::NAN)]);
        assert_matches_sample(&v, "job_vertex_backpressure.json");
        let v = VertexBackPressure::from_ratios(1, &[(0.0, 1.0, 0.0), (0.7, 0.0, 0.3)]);
        assert_eq!(v.backpressure_level, BackPressureLevel::High);
    }
}
