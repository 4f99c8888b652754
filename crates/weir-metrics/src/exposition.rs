//! Samples in the Prometheus text exposition format (version 0.0.4), encoded by
//! `prometheus-client` with the names, help texts and labels Flink's PrometheusReporter
//! gives them.
//!
//! Samples of the same exported name form one family (one `# HELP` / `# TYPE` pair),
//! whatever order the source produced them in; every metric is a gauge, as Flink
//! exports counters, gauges and meters. Families come out sorted by name, samples of a
//! family in the source's order.

use crate::sample::{exported_name, MetricSample, Scope};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;

/// The `Content-Type` of what [`encode`] returns.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// One scrape's samples, handed to `prometheus-client` as a collector.
#[derive(Debug)]
struct ScrapeCollector {
    families: BTreeMap<String, Family>,
}

#[derive(Debug)]
struct Family {
    help: String,
    samples: Vec<MetricSample>,
}

impl ScrapeCollector {
    fn new(samples: Vec<MetricSample>) -> Self {
        let mut families: BTreeMap<String, Family> = BTreeMap::new();
        for sample in samples {
            families
                .entry(exported_name(sample.scope, &sample.name))
                .or_insert_with(|| Family {
                    help: help(sample.scope, &sample.name),
                    samples: Vec::new(),
                })
                .samples
                .push(sample);
        }
        Self { families }
    }
}

fn help(scope: Scope, name: &str) -> String {
    format!("{name} (scope: {})", scope.help_name())
}

impl Collector for ScrapeCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for (name, family) in &self.families {
            let gauge_type = ConstGauge::new(0.0f64).metric_type();
            let mut metric = encoder.encode_descriptor(name, &family.help, None, gauge_type)?;
            for sample in &family.samples {
                let labels: Vec<(&str, &str)> = sample.labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
                let point = metric.encode_family(&labels)?;
                ConstGauge::new(sample.value).encode(point)?;
            }
        }
        Ok(())
    }
}

/// `samples` as Prometheus text.
pub fn encode(samples: Vec<MetricSample>) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(ScrapeCollector::new(samples)));
    let mut text = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut text, &registry)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(scope: Scope, name: &'static str, labels: &[(&'static str, &str)], value: f64) -> MetricSample {
        MetricSample {
            scope,
            name: name.to_string(),
            labels: labels.iter().map(|(k, v)| (*k, v.to_string())).collect(),
            value,
        }
    }

    fn parse(text: &str) -> prometheus_parse::Scrape {
        prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("valid exposition text")
    }

    #[test]
    fn samples_of_one_name_form_one_gauge_family_with_their_labels() {
        let text = encode(vec![
            sample(
                Scope::TaskManagerTask,
                "numRecordsIn",
                &[("job_id", "j1"), ("subtask_index", "0")],
                10.0,
            ),
            sample(Scope::TaskManager, "Status.JVM.CPU.Load", &[("tm_id", "t\"1")], 0.25),
            sample(
                Scope::TaskManagerTask,
                "numRecordsIn",
                &[("job_id", "j1"), ("subtask_index", "1")],
                32.0,
            ),
        ])
        .unwrap();
        let scrape = parse(&text);
        assert_eq!(scrape.samples.len(), 3);
        let records: Vec<(String, f64)> = scrape
            .samples
            .iter()
            .filter(|s| s.metric == "flink_taskmanager_job_task_numRecordsIn")
            .map(|s| {
                let prometheus_parse::Value::Gauge(v) = s.value else {
                    panic!("not a gauge: {:?}", s.value)
                };
                (s.labels.get("subtask_index").unwrap_or_default().to_string(), v)
            })
            .collect();
        assert_eq!(records, vec![("0".to_string(), 10.0), ("1".to_string(), 32.0)]);
        let load = scrape
            .samples
            .iter()
            .find(|s| s.metric == "flink_taskmanager_Status_JVM_CPU_Load")
            .expect("the CPU load");
        // prometheus-parse keeps label values as escaped in the text.
        assert_eq!(load.labels.get("tm_id"), Some("t\\\"1"));
        assert!(text.contains("tm_id=\"t\\\"1\""), "{text}");
        assert_eq!(
            scrape
                .docs
                .get("flink_taskmanager_job_task_numRecordsIn")
                .map(String::as_str),
            Some("numRecordsIn (scope: taskmanager_job_task)")
        );
        assert_eq!(
            text.matches("# TYPE flink_taskmanager_job_task_numRecordsIn gauge")
                .count(),
            1
        );
    }

    #[test]
    fn no_samples_give_an_empty_exposition() {
        assert!(parse(&encode(Vec::new()).unwrap()).samples.is_empty());
    }
}
