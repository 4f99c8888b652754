//! What the JobManager's metric reporters export: Flink's `jobmanager` scope (the
//! cluster it manages and its own process) and a `jobmanager_job` scope per job
//! (restarts, uptime, downtime, checkpoint gauges), labelled with Flink's scope variables
//! (`host`; `job_id`, `job_name`). The values are the ones the REST metric endpoints
//! serve ([`crate::rest::metrics`]), read when a reporter asks.

use crate::jobmanager::{now_ms, JobManager};
use crate::rest::metrics as rest_metrics;
use std::sync::Arc;
use weir_metrics::{MetricSample, MetricSource, Scope};
use weir_rest::ComponentMetrics;
use weir_rpc::process::ProcessSampler;

/// The JobManager's [`MetricSource`].
pub struct JobManagerMetricSource {
    jm: Arc<JobManager>,
    host: String,
    process: ProcessSampler,
}

impl JobManagerMetricSource {
    /// The metrics of `jm`, labelled with `host`.
    pub fn new(jm: Arc<JobManager>, host: String) -> Self {
        Self {
            jm,
            host,
            process: ProcessSampler::new(),
        }
    }
}

fn push_all(out: &mut Vec<MetricSample>, scope: Scope, labels: &[(&'static str, String)], metrics: ComponentMetrics) {
    out.extend(
        metrics
            .into_iter()
            .map(|(name, value)| MetricSample::new(scope, name, labels, value.as_f64())),
    );
}

impl MetricSource for JobManagerMetricSource {
    fn samples(&self) -> Vec<MetricSample> {
        let process = self.process.sample();
        let now = now_ms();
        let st = self.jm.lock();
        let mut out = Vec::new();
        let host = [("host", self.host.clone())];
        push_all(
            &mut out,
            Scope::JobManager,
            &host,
            rest_metrics::jobmanager_metrics(&st, &process),
        );
        for (job_id, jm) in &st.jobs {
            let labels = [
                ("host", self.host.clone()),
                ("job_id", job_id.to_string()),
                ("job_name", jm.invocation.job_name.clone()),
            ];
            push_all(
                &mut out,
                Scope::JobManagerJob,
                &labels,
                rest_metrics::job_metrics(jm, now),
            );
        }
        out
    }
}
