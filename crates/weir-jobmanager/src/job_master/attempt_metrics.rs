//! The counters the JobMaster keeps per attempt from its heartbeats and final report,
//! and their totals per vertex. Each attempt keeps its latest report and the one before
//! it (with both times), from which [`super::rates`] derives per-second rates.

use super::operator_metrics::OperatorMetrics;
use super::JobMaster;
use weir_graph::ExecutionState;

/// Which kind of report carried an attempt's counters.
///
/// Heartbeats and the FINISHED update travel on separate RPCs, so a heartbeat sampled
/// before the task finished may arrive after its final report: once an attempt's final
/// counters are in, live reports for it are stale and are dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsReport {
    /// Sampled while the attempt ran (with a TaskManager heartbeat).
    Live,
    /// Sent with the attempt's FINISHED state: its last word.
    Final,
}

/// The counters an attempt reported last (live with heartbeats, final when it finished).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AttemptMetrics {
    /// Records read from the network.
    pub records_in: u64,
    /// Records written to the network.
    pub records_out: u64,
    /// Milliseconds busy.
    pub busy_ms: u64,
    /// Milliseconds waiting for input.
    pub idle_ms: u64,
    /// Milliseconds waiting for output buffers.
    pub backpressured_ms: u64,
    /// Bytes read from the network.
    pub bytes_in: u64,
    /// Bytes written to the network.
    pub bytes_out: u64,
    /// The watermark the input is at (for totals: the least over the subtasks), once
    /// there is one.
    pub input_watermark: Option<i64>,
    /// The last watermark sent downstream (for totals: the least), once there is one.
    pub output_watermark: Option<i64>,
    /// Used share of the input buffer pool in thousandths (live reports only).
    pub in_pool_usage_permille: u32,
    /// Used share of the output buffer pool in thousandths (live reports only).
    pub out_pool_usage_permille: u32,
    /// A two-input task's watermark of each input, once it has one (both `None` for a
    /// task of one input).
    pub input_watermarks: [Option<i64>; 2],
    /// The counters of each operator of the chain, head first (none for totals).
    pub operators: Vec<OperatorMetrics>,
}

/// Totals of a vertex's current attempts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VertexMetricsTotals {
    /// Sum over subtasks.
    pub totals: AttemptMetrics,
    /// True when every subtask has finished and reported its final counters.
    pub complete: bool,
}

/// The report an attempt sent before its latest one, with the times of both.
#[derive(Debug, Clone)]
pub(super) struct PreviousSample {
    /// The counters of the report before the latest.
    pub(super) counters: AttemptMetrics,
    /// When that report arrived (epoch ms).
    pub(super) at_ms: i64,
    /// When the latest report arrived (epoch ms).
    pub(super) latest_at_ms: i64,
}

impl JobMaster {
    /// Counters reported by an attempt of this job (stale attempts, and live reports of
    /// an attempt whose final counters are in, are ignored).
    pub fn record_metrics(&mut self, attempt_id: &str, metrics: AttemptMetrics, report: MetricsReport, now_ms: i64) {
        if !self.attempts.contains_key(attempt_id) {
            return;
        }
        match report {
            MetricsReport::Live if self.final_metrics.contains(attempt_id) => return,
            MetricsReport::Live => {}
            MetricsReport::Final => {
                self.final_metrics.insert(attempt_id.to_string());
            }
        }
        let last_time = self.previous_metrics.get(attempt_id).map(|p| p.latest_at_ms);
        let sample = match (self.metrics.get(attempt_id).cloned(), last_time) {
            (Some(counters), Some(at_ms)) => PreviousSample {
                counters,
                at_ms,
                latest_at_ms: now_ms,
            },
            _ => PreviousSample {
                counters: metrics.clone(),
                at_ms: now_ms,
                latest_at_ms: now_ms,
            },
        };
        self.previous_metrics.insert(attempt_id.to_string(), sample);
        self.metrics.insert(attempt_id.to_string(), metrics);
    }

    /// Per subtask of `vertex`: the shares of time (back-pressured, idle, busy) over the
    /// last two samples; `(0, 0, NaN)` until two samples exist.
    pub fn vertex_time_ratios(&self, vertex: usize) -> Vec<(f64, f64, f64)> {
        let Some(v) = self.execution_graph.job_vertices.get(vertex) else {
            return Vec::new();
        };
        v.task_vertices
            .iter()
            .map(|t| match self.attempt_rates(&t.current.attempt_id.to_string()) {
                Some(r) => (
                    r.backpressured_ms_per_second / 1000.0,
                    r.idle_ms_per_second / 1000.0,
                    r.busy_ms_per_second / 1000.0,
                ),
                None => (0.0, 0.0, f64::NAN),
            })
            .collect()
    }

    /// Totals of the current attempts of `vertex`.
    pub fn vertex_metrics(&self, vertex: usize) -> VertexMetricsTotals {
        let Some(v) = self.execution_graph.job_vertices.get(vertex) else {
            return VertexMetricsTotals::default();
        };
        let mut out = VertexMetricsTotals {
            totals: AttemptMetrics::default(),
            complete: true,
        };
        for t in &v.task_vertices {
            if t.current.state != ExecutionState::Finished {
                out.complete = false;
            }
            if let Some(m) = self.metrics.get(&t.current.attempt_id.to_string()) {
                out.totals.records_in += m.records_in;
                out.totals.records_out += m.records_out;
                out.totals.busy_ms += m.busy_ms;
                out.totals.idle_ms += m.idle_ms;
                out.totals.backpressured_ms += m.backpressured_ms;
                out.totals.bytes_in += m.bytes_in;
                out.totals.bytes_out += m.bytes_out;
                out.totals.input_watermark = least(out.totals.input_watermark, m.input_watermark);
                out.totals.output_watermark = least(out.totals.output_watermark, m.output_watermark);
            } else {
                out.complete = false;
            }
        }
        out
    }

    /// The counters attempt `attempt_id` reported last.
    pub fn attempt_metrics(&self, attempt_id: &str) -> Option<AttemptMetrics> {
        self.metrics.get(attempt_id).cloned()
    }
}

/// The smaller of two watermarks, either of which may not exist yet.
fn least(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::cluster;
    use super::super::tests::job;
    use super::super::JobMaster;
    use super::{AttemptMetrics, MetricsReport};
    use crate::failover::restart_strategy::RestartStrategyConfig;

    fn out(records: u64) -> AttemptMetrics {
        AttemptMetrics {
            records_out: records,
            ..AttemptMetrics::default()
        }
    }

    /// A started one-vertex job and the attempt id of its first subtask.
    fn started() -> (JobMaster, String) {
        let mut slots = cluster(1, 2);
        let mut jm = job(1, RestartStrategyConfig::NoRestart);
        jm.start(&mut slots, 0);
        let attempt = jm.current_attempt(0, 0).map(|a| a.to_string()).unwrap_or_default();
        (jm, attempt)
    }

    #[test]
    fn a_heartbeat_sampled_before_the_task_finished_but_arriving_after_its_final_report_is_dropped() {
        let (mut jm, attempt) = started();
        jm.record_metrics(&attempt, out(100), MetricsReport::Live, 1_000);
        assert_eq!(jm.attempt_metrics(&attempt), Some(out(100)));
        jm.record_metrics(&attempt, out(30_000), MetricsReport::Final, 2_000);
        jm.record_metrics(&attempt, out(29_975), MetricsReport::Live, 2_001);
        assert_eq!(jm.attempt_metrics(&attempt), Some(out(30_000)));
        assert_eq!(jm.vertex_metrics(0).totals.records_out, 30_000);
    }

    #[test]
    fn live_reports_replace_each_other_and_reports_of_unknown_attempts_are_ignored() {
        let (mut jm, attempt) = started();
        jm.record_metrics(&attempt, out(10), MetricsReport::Live, 1_000);
        jm.record_metrics(&attempt, out(20), MetricsReport::Live, 1_500);
        assert_eq!(jm.attempt_metrics(&attempt), Some(out(20)));
        jm.record_metrics("no-such-attempt", out(5), MetricsReport::Final, 1_600);
        assert_eq!(jm.attempt_metrics("no-such-attempt"), None);
    }
}
