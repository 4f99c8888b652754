//! `GET /jobs/:jid/vertices/:vid`: one vertex with its subtasks' current attempts
//! (Flink's `JobVertexDetailsInfo`), with the fields of Flink 2.3's answer.

use crate::messages::jobs::VertexMetrics;
use crate::messages::status::{ExecutionState, ExecutionStateTimestamps};
use serde::Serialize;

/// The answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobVertexDetail {
    /// The vertex id (32 hex).
    pub id: String,
    /// The vertex (chain) name.
    pub name: String,
    /// Its parallelism.
    pub parallelism: u32,
    /// Its max parallelism.
    #[serde(rename = "maxParallelism")]
    pub max_parallelism: u32,
    /// The server time of the answer, ms since the epoch.
    pub now: i64,
    /// The subtasks, in index order.
    pub subtasks: Vec<SubtaskDetail>,
    /// Statistics over the subtasks.
    pub aggregated: AggregatedSubtasks,
}

impl JobVertexDetail {
    /// The detail of `subtasks` with their statistics.
    pub fn new(
        id: String,
        name: String,
        parallelism: u32,
        max_parallelism: u32,
        now: i64,
        subtasks: Vec<SubtaskDetail>,
    ) -> Self {
        let aggregated = AggregatedSubtasks::of(&subtasks);
        Self {
            id,
            name,
            parallelism,
            max_parallelism,
            now,
            subtasks,
            aggregated,
        }
    }
}

/// Min, max, sum, average and quantiles of one value over the subtasks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AggregatedStats {
    /// 25th percentile.
    pub p25: i64,
    /// Smallest.
    pub min: i64,
    /// Average (integer).
    pub avg: i64,
    /// Median (mean of the middle two for an even count).
    pub median: i64,
    /// Largest.
    pub max: i64,
    /// Sum.
    pub sum: i64,
    /// 95th percentile.
    pub p95: i64,
    /// 75th percentile.
    pub p75: i64,
}

impl AggregatedStats {
    /// The statistics of `values` (all zero when empty); the median and quantiles as
    /// Flink estimates them ([`weir_core::stats::percentile`]), rounded.
    pub fn of(values: impl IntoIterator<Item = i64>) -> Self {
        let mut v: Vec<i64> = values.into_iter().collect();
        if v.is_empty() {
            return Self::default();
        }
        v.sort_unstable();
        let n = v.len();
        let sorted: Vec<f64> = v.iter().map(|&x| x as f64).collect();
        let q = |p: f64| weir_core::stats::percentile(&sorted, p).round() as i64;
        let sum: i64 = v.iter().fold(0i64, |a, x| a.saturating_add(*x));
        Self {
            p25: q(25.0),
            min: v[0],
            avg: sum / n as i64,
            median: q(50.0),
            max: v[n - 1],
            sum,
            p95: q(95.0),
            p75: q(75.0),
        }
    }
}

/// Statistics of each counter over the subtasks (Flink's key order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AggregatedMetrics {
    /// Records written.
    #[serde(rename = "write-records")]
    pub write_records: AggregatedStats,
    /// Back-pressured ms.
    #[serde(rename = "accumulated-backpressured-time")]
    pub accumulated_backpressured_time: AggregatedStats,
    /// Idle ms.
    #[serde(rename = "accumulated-idle-time")]
    pub accumulated_idle_time: AggregatedStats,
    /// Bytes written.
    #[serde(rename = "write-bytes")]
    pub write_bytes: AggregatedStats,
    /// Bytes read.
    #[serde(rename = "read-bytes")]
    pub read_bytes: AggregatedStats,
    /// Records read.
    #[serde(rename = "read-records")]
    pub read_records: AggregatedStats,
    /// Busy ms.
    #[serde(rename = "accumulated-busy-time")]
    pub accumulated_busy_time: AggregatedStats,
}

/// Statistics of the time spent in each state over the subtasks (Flink's key order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AggregatedStatusDurations {
    /// CREATED.
    #[serde(rename = "CREATED")]
    pub created: AggregatedStats,
    /// RUNNING.
    #[serde(rename = "RUNNING")]
    pub running: AggregatedStats,
    /// INITIALIZING.
    #[serde(rename = "INITIALIZING")]
    pub initializing: AggregatedStats,
    /// SCHEDULED.
    #[serde(rename = "SCHEDULED")]
    pub scheduled: AggregatedStats,
    /// DEPLOYING.
    #[serde(rename = "DEPLOYING")]
    pub deploying: AggregatedStats,
}

/// The `aggregated` part of the answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct AggregatedSubtasks {
    /// Counters.
    pub metrics: AggregatedMetrics,
    /// Time per state.
    #[serde(rename = "status-duration")]
    pub status_duration: AggregatedStatusDurations,
}

impl AggregatedSubtasks {
    /// The statistics of `subtasks`.
    pub fn of(subtasks: &[SubtaskDetail]) -> Self {
        let stat = |f: &dyn Fn(&SubtaskDetail) -> i64| AggregatedStats::of(subtasks.iter().map(f));
        Self {
            metrics: AggregatedMetrics {
                write_records: stat(&|s| s.metrics.write_records),
                accumulated_backpressured_time: stat(&|s| s.metrics.accumulated_backpressured_time),
                accumulated_idle_time: stat(&|s| s.metrics.accumulated_idle_time),
                write_bytes: stat(&|s| s.metrics.write_bytes),
                read_bytes: stat(&|s| s.metrics.read_bytes),
                read_records: stat(&|s| s.metrics.read_records),
                accumulated_busy_time: stat(&|s| s.metrics.accumulated_busy_time as i64),
            },
            status_duration: AggregatedStatusDurations {
                created: stat(&|s| s.status_duration.created),
                running: stat(&|s| s.status_duration.running),
                initializing: stat(&|s| s.status_duration.initializing),
                scheduled: stat(&|s| s.status_duration.scheduled),
                deploying: stat(&|s| s.status_duration.deploying),
            },
        }
    }
}

/// Milliseconds one attempt spent in each state before RUNNING and in RUNNING
/// (Flink's key order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StatusDurations {
    /// SCHEDULED.
    #[serde(rename = "SCHEDULED")]
    pub scheduled: i64,
    /// DEPLOYING.
    #[serde(rename = "DEPLOYING")]
    pub deploying: i64,
    /// CREATED.
    #[serde(rename = "CREATED")]
    pub created: i64,
    /// INITIALIZING.
    #[serde(rename = "INITIALIZING")]
    pub initializing: i64,
    /// RUNNING.
    #[serde(rename = "RUNNING")]
    pub running: i64,
}

/// One subtask's current attempt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubtaskDetail {
    /// The subtask index.
    pub subtask: u32,
    /// The attempt's state.
    pub status: ExecutionState,
    /// The attempt number, from 0 (a restarted subtask has a higher one).
    pub attempt: u32,
    /// Where it runs (`host:port` of its TaskManager), empty before deployment.
    pub endpoint: String,
    /// When it was deployed, -1 before.
    #[serde(rename = "start-time")]
    pub start_time: i64,
    /// When it ended, -1 while it runs.
    #[serde(rename = "end-time")]
    pub end_time: i64,
    /// Milliseconds from start to end (or now).
    pub duration: i64,
    /// Its counters.
    pub metrics: VertexMetrics,
    /// Its TaskManager's id, empty before deployment.
    #[serde(rename = "taskmanager-id")]
    pub taskmanager_id: String,
    /// Milliseconds spent in each state.
    #[serde(rename = "status-duration")]
    pub status_duration: StatusDurations,
    /// The deprecated duplicate of `start-time` Flink still sends.
    #[serde(rename = "start_time")]
    pub start_time_deprecated: i64,
    /// When the attempt entered each state; not part of this answer, it serves
    /// `/subtasktimes` ([`crate::SubtasksTimes::of`]).
    #[serde(skip)]
    pub timestamps: ExecutionStateTimestamps,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample_check::assert_matches_sample;

    #[test]
    fn vertex_detail_matches_flink_sample() {
        let metrics = VertexMetrics {
            read_records_complete: true,
            ..VertexMetrics::default()
        };
        let detail = JobVertexDetail::new(
            "c27dcf7b54ef6bfd6cff02ca8870b681".into(),
            "Sum -> Sink".into(),
            1,
            128,
            1_795_941_226_155,
            vec![SubtaskDetail {
                subtask: 0,
                status: ExecutionState::Running,
                attempt: 0,
                endpoint: "localhost:37831".into(),
                start_time: 1_795_941_219_537,
                end_time: -1,
                duration: 6622,
                metrics,
                taskmanager_id: "tm".into(),
                status_duration: StatusDurations {
                    created: 131,
                    running: 5116,
                    ..StatusDurations::default()
                },
                start_time_deprecated: 1_795_941_219_537,
                timestamps: ExecutionStateTimestamps::new(),
            }],
        );
        assert_matches_sample(&detail, "job_vertex_detail.json");
    }

    #[test]
    fn statistics_match_flinks_for_two_subtasks() {
        let s = AggregatedStats::of([5116, 5100]);
        assert_eq!(
            s,
            AggregatedStats {
                p25: 5100,
                min: 5100,
                avg: 5108,
                median: 5108,
                max: 5116,
                sum: 10216,
                p95: 5116,
                p75: 5116
            }
        );
        assert_eq!(AggregatedStats::of([]), AggregatedStats::default());
        assert_eq!(AggregatedStats::of([3, 1, 2]).median, 2);
    }
}
