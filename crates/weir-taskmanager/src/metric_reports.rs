//! The wire form of a task's published metrics: its operators' counters and its
//! watermarks, as the heartbeat's `TaskMetricsReport` and the final
//! `TaskExecutionState` carry them.

use weir_rpc::OperatorMetricsReport;
use weir_runtime::task::metrics::{OperatorMetricsSnapshot, TaskMetricsSnapshot};

/// A watermark on the wire: absent before the first (`i64::MIN`).
pub(crate) fn watermark(value: i64) -> Option<i64> {
    (value != i64::MIN).then_some(value)
}

/// A two-input task's watermark of each input on the wire; both absent for a task of
/// one input.
pub(crate) fn input_watermarks(s: &TaskMetricsSnapshot) -> [Option<i64>; 2] {
    match s.input_watermarks {
        Some([first, second]) => [watermark(first), watermark(second)],
        None => [None, None],
    }
}

/// Each operator's counters on the wire, head first.
pub(crate) fn operator_reports(operators: Vec<OperatorMetricsSnapshot>) -> Vec<OperatorMetricsReport> {
    operators
        .into_iter()
        .map(|o| OperatorMetricsReport {
            operator_id: o.operator_id,
            operator_name: o.operator_name,
            records_in: o.records_in,
            records_out: o.records_out,
            counters: o.counters.into_iter().collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_two_input_task_reports_per_input_watermarks_and_only_once_it_has_them() {
        let one_input = TaskMetricsSnapshot::default();
        assert_eq!(input_watermarks(&one_input), [None, None]);
        let two_inputs = TaskMetricsSnapshot {
            input_watermarks: Some([7, i64::MIN]),
            ..TaskMetricsSnapshot::default()
        };
        assert_eq!(input_watermarks(&two_inputs), [Some(7), None]);
    }

    #[test]
    fn operator_counters_travel_by_name() {
        let reports = operator_reports(vec![OperatorMetricsSnapshot {
            operator_id: "0a".into(),
            operator_name: "Window".into(),
            records_in: 5,
            records_out: 2,
            counters: vec![("numLateRecordsDropped".into(), 3)],
        }]);
        assert_eq!(reports[0].counters.get("numLateRecordsDropped"), Some(&3));
        assert_eq!((reports[0].records_in, reports[0].records_out), (5, 2));
    }
}
