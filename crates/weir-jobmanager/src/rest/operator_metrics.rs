//! The operator-scoped metrics of a subtask, as Flink's metric store files them for the
//! REST API: under `<operator name>.<metric>` in the subtask's metrics (and so
//! `<subtask>.<operator name>.<metric>` in its vertex's), the operator name filtered as
//! Flink's metric query service filters it (space, `.`, `:` and `,` become `_`, so
//! `Sink: Print` is `Sink__Print`).
//!
//! Each operator has `numRecordsIn` and `numRecordsOut`, their per-second rates once
//! the attempt reported twice, and the counters it added (a window's
//! `numLateRecordsDropped`). The head operator of a task reading the network also has
//! the task's `currentInputWatermark` and, for two inputs, `currentInput1Watermark` and
//! `currentInput2Watermark`, each once there is one.

use crate::job_master::{AttemptMetrics, OperatorRates};
use weir_rest::metric_names as names;
use weir_rest::{ComponentMetrics, MetricValue};

/// An operator's name as it appears in metric ids.
pub(crate) fn metric_operator_name(name: &str) -> String {
    name.chars()
        .map(|c| if matches!(c, ' ' | '.' | ':' | ',') { '_' } else { c })
        .collect()
}

/// Adds the operator metrics of `m` (and their `rates`, head first) to `out`.
pub(crate) fn add_operator_metrics(out: &mut ComponentMetrics, m: &AttemptMetrics, rates: Option<&[OperatorRates]>) {
    for (i, op) in m.operators.iter().enumerate() {
        let prefix = metric_operator_name(&op.operator_name);
        let mut integer = |name: &str, v: u64| {
            out.insert(
                format!("{prefix}.{name}"),
                MetricValue::Integer(i64::try_from(v).unwrap_or(i64::MAX)),
            );
        };
        integer(names::NUM_RECORDS_IN, op.records_in);
        integer(names::NUM_RECORDS_OUT, op.records_out);
        for (name, value) in &op.counters {
            integer(name, *value);
        }
        if let Some(r) = rates.and_then(|r| r.get(i)) {
            out.insert(
                format!("{prefix}.{}", names::NUM_RECORDS_IN_PER_SECOND),
                MetricValue::Double(r.records_in_per_second),
            );
            out.insert(
                format!("{prefix}.{}", names::NUM_RECORDS_OUT_PER_SECOND),
                MetricValue::Double(r.records_out_per_second),
            );
        }
        if i == 0 {
            let [first, second] = m.input_watermarks;
            for (name, watermark) in [
                (names::CURRENT_INPUT_WATERMARK, m.input_watermark),
                (names::CURRENT_INPUT_1_WATERMARK, first),
                (names::CURRENT_INPUT_2_WATERMARK, second),
            ] {
                if let Some(w) = watermark {
                    out.insert(format!("{prefix}.{name}"), MetricValue::Integer(w));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job_master::OperatorMetrics;

    fn op(name: &str, records_in: u64, records_out: u64) -> OperatorMetrics {
        OperatorMetrics {
            operator_name: name.into(),
            records_in,
            records_out,
            ..OperatorMetrics::default()
        }
    }

    #[test]
    fn operator_names_are_filtered_as_flinks_metric_query_service_does() {
        assert_eq!(
            metric_operator_name("Sink: Print to Std. Out"),
            "Sink__Print_to_Std__Out"
        );
        assert_eq!(metric_operator_name("Window(a,b)"), "Window(a_b)");
        assert_eq!(metric_operator_name("Sum"), "Sum");
    }

    #[test]
    fn each_operator_has_its_records_and_counters_and_the_head_the_input_watermarks() {
        let mut window = op("Window", 10, 2);
        window.counters.insert("numLateRecordsDropped".into(), 3);
        let m = AttemptMetrics {
            input_watermark: Some(5),
            input_watermarks: [Some(5), Some(9)],
            operators: vec![op("Co-Map", 10, 10), window],
            ..AttemptMetrics::default()
        };
        let mut out = ComponentMetrics::new();
        let rates = [
            OperatorRates {
                records_in_per_second: 4.0,
                records_out_per_second: 4.0,
            },
            OperatorRates {
                records_in_per_second: 4.0,
                records_out_per_second: 1.0,
            },
        ];
        add_operator_metrics(&mut out, &m, Some(&rates));
        let get = |id: &str| out.get(id).copied();
        assert_eq!(get("Co-Map.numRecordsIn"), Some(MetricValue::Integer(10)));
        assert_eq!(get("Window.numRecordsOut"), Some(MetricValue::Integer(2)));
        assert_eq!(get("Window.numLateRecordsDropped"), Some(MetricValue::Integer(3)));
        assert_eq!(get("Window.numRecordsOutPerSecond"), Some(MetricValue::Double(1.0)));
        assert_eq!(get("Co-Map.currentInput1Watermark"), Some(MetricValue::Integer(5)));
        assert_eq!(get("Co-Map.currentInput2Watermark"), Some(MetricValue::Integer(9)));
        assert_eq!(get("Co-Map.currentInputWatermark"), Some(MetricValue::Integer(5)));
        assert_eq!(
            get("Window.currentInputWatermark"),
            None,
            "only the head has the input's"
        );
    }
}
