//! What the JobMaster derives from the counters its attempts report with each
//! heartbeat: per-second rates over the last two samples of an attempt (Flink's
//! `numRecordsInPerSecond`, `busyTimeMsPerSecond`, …), and the job's restart count.
//!
//! Samples are taken when heartbeats arrive, so a rate covers one heartbeat interval
//! (the last two reports); an attempt with fewer than two reports, or two at the same
//! millisecond, has no rate. Nothing here touches the record path: the task threads
//! only publish totals, and the division happens when the REST API asks.

use super::JobMaster;

/// Per-second rates of one attempt over its last two reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AttemptRates {
    /// Records read per second.
    pub records_in_per_second: f64,
    /// Records written per second.
    pub records_out_per_second: f64,
    /// Bytes read per second.
    pub bytes_in_per_second: f64,
    /// Bytes written per second.
    pub bytes_out_per_second: f64,
    /// Milliseconds busy per second, 0..1000.
    pub busy_ms_per_second: f64,
    /// Milliseconds idle (waiting for input) per second, 0..1000.
    pub idle_ms_per_second: f64,
    /// Milliseconds back-pressured (waiting for an output buffer) per second, 0..1000.
    pub backpressured_ms_per_second: f64,
}

impl JobMaster {
    /// The rates of attempt `attempt_id` over its last two reports; `None` until two
    /// reports at different times exist.
    pub fn attempt_rates(&self, attempt_id: &str) -> Option<AttemptRates> {
        let sample = self.previous_metrics.get(attempt_id)?;
        let (from, prev, to) = (sample.at_ms, &sample.counters, sample.latest_at_ms);
        let last = self.metrics.get(attempt_id)?;
        if to <= from {
            return None;
        }
        let seconds = (to - from) as f64 / 1000.0;
        let per_second = |now: u64, before: u64| now.saturating_sub(before) as f64 / seconds;
        let time_share = |now: u64, before: u64| per_second(now, before).clamp(0.0, 1000.0);
        Some(AttemptRates {
            records_in_per_second: per_second(last.records_in, prev.records_in),
            records_out_per_second: per_second(last.records_out, prev.records_out),
            bytes_in_per_second: per_second(last.bytes_in, prev.bytes_in),
            bytes_out_per_second: per_second(last.bytes_out, prev.bytes_out),
            busy_ms_per_second: time_share(last.busy_ms, prev.busy_ms),
            idle_ms_per_second: time_share(last.idle_ms, prev.idle_ms),
            backpressured_ms_per_second: time_share(last.backpressured_ms, prev.backpressured_ms),
        })
    }

    /// Restarts since the job was submitted, global and of regions (Flink's
    /// `numRestarts`): each gives the restarted subtasks a new partition generation.
    pub fn num_restarts(&self) -> u32 {
        self.generation
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::cluster;
    use super::super::tests::job;
    use super::super::{AttemptMetrics, MetricsReport};
    use crate::failover::restart_strategy::RestartStrategyConfig;

    #[test]
    fn rates_are_the_change_over_the_last_two_reports_per_second() {
        let mut slots = cluster(1, 2);
        let mut jm = job(1, RestartStrategyConfig::NoRestart);
        let actions = jm.start(&mut slots, 0);
        assert!(!actions.is_empty());
        let attempt = jm.current_attempt(0, 0).map(|a| a.to_string()).unwrap_or_default();
        let at = |records: u64, busy: u64| AttemptMetrics {
            records_in: records,
            records_out: records * 2,
            busy_ms: busy,
            idle_ms: 0,
            backpressured_ms: 0,
            ..AttemptMetrics::default()
        };
        jm.record_metrics(&attempt, at(100, 0), MetricsReport::Live, 1_000);
        assert_eq!(jm.attempt_rates(&attempt), None, "one report has no rate");
        jm.record_metrics(&attempt, at(600, 250), MetricsReport::Live, 1_500);
        jm.record_metrics(&attempt, at(1_600, 1_000), MetricsReport::Live, 2_500);
        let r = jm.attempt_rates(&attempt).expect("two reports");
        assert_eq!(r.records_in_per_second, 1_000.0);
        assert_eq!(r.records_out_per_second, 2_000.0);
        assert_eq!(r.busy_ms_per_second, 750.0);
        assert_eq!(r.idle_ms_per_second, 0.0);
        assert_eq!(jm.attempt_rates("no-such-attempt"), None);
        assert_eq!(jm.num_restarts(), 0);
    }
}
