//! The operators' counters an attempt reports (Flink's operator metric groups of a
//! subtask), and their per-second rates over the attempt's last two reports.
//!
//! A chain's operators are the same in every report of an attempt, head first, so the
//! rates pair them by position; a report with another number of operators (none
//! happens) has no rates.

use super::JobMaster;
use std::collections::BTreeMap;

/// One operator's counters in an attempt's report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperatorMetrics {
    /// The operator's name as its metrics carry it.
    pub operator_name: String,
    /// Records it took in (`numRecordsIn`).
    pub records_in: u64,
    /// Records it emitted (`numRecordsOut`).
    pub records_out: u64,
    /// Further counters by Flink's name (e.g. `numLateRecordsDropped`).
    pub counters: BTreeMap<String, u64>,
}

impl OperatorMetrics {
    /// The counters of a report on the wire.
    pub fn from_report(r: weir_rpc::OperatorMetricsReport) -> Self {
        Self {
            operator_name: r.operator_name,
            records_in: r.records_in,
            records_out: r.records_out,
            counters: r.counters.into_iter().collect(),
        }
    }
}

/// One operator's records per second over the attempt's last two reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OperatorRates {
    /// `numRecordsInPerSecond`.
    pub records_in_per_second: f64,
    /// `numRecordsOutPerSecond`.
    pub records_out_per_second: f64,
}

impl JobMaster {
    /// The rates of each operator of attempt `attempt_id`, head first; `None` until two
    /// reports at different times exist.
    pub fn operator_rates(&self, attempt_id: &str) -> Option<Vec<OperatorRates>> {
        let sample = self.previous_metrics.get(attempt_id)?;
        let (from, prev, to) = (sample.at_ms, &sample.counters, sample.latest_at_ms);
        let last = self.metrics.get(attempt_id)?;
        if to <= from || prev.operators.len() != last.operators.len() {
            return None;
        }
        let seconds = (to - from) as f64 / 1000.0;
        let per_second = |now: u64, before: u64| now.saturating_sub(before) as f64 / seconds;
        Some(
            last.operators
                .iter()
                .zip(&prev.operators)
                .map(|(now, before)| OperatorRates {
                    records_in_per_second: per_second(now.records_in, before.records_in),
                    records_out_per_second: per_second(now.records_out, before.records_out),
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::cluster;
    use super::super::tests::job;
    use super::super::{AttemptMetrics, MetricsReport};
    use super::*;
    use crate::failover::restart_strategy::RestartStrategyConfig;

    #[test]
    fn operator_rates_are_the_change_of_each_operator_over_the_last_two_reports() {
        let mut slots = cluster(1, 2);
        let mut jm = job(1, RestartStrategyConfig::NoRestart);
        assert!(!jm.start(&mut slots, 0).is_empty());
        let attempt = jm.current_attempt(0, 0).map(|a| a.to_string()).unwrap_or_default();
        let at = |records: u64| AttemptMetrics {
            operators: vec![
                OperatorMetrics {
                    operator_name: "Map".into(),
                    records_in: records,
                    records_out: records,
                    counters: BTreeMap::new(),
                },
                OperatorMetrics {
                    operator_name: "Filter".into(),
                    records_in: records,
                    records_out: records / 2,
                    counters: BTreeMap::new(),
                },
            ],
            ..AttemptMetrics::default()
        };
        jm.record_metrics(&attempt, at(100), MetricsReport::Live, 1_000);
        assert_eq!(jm.operator_rates(&attempt), None, "one report has no rate");
        jm.record_metrics(&attempt, at(2_100), MetricsReport::Live, 3_000);
        let rates = jm.operator_rates(&attempt).expect("two reports");
        assert_eq!(rates.len(), 2);
        assert_eq!(rates[0].records_in_per_second, 1_000.0);
        assert_eq!(rates[1].records_out_per_second, 500.0);
    }
}
