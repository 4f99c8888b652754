//! What a TaskManager's metric reporters export: its process (Flink's
//! `taskmanager` scope: CPU, threads, resident memory, network buffers, the blocking
//! result partitions held in memory and spill files) and each running
//! subtask (`taskmanager_job_task` scope: records and bytes in and out and their rates,
//! busy/idle/back-pressured time per second and in total, input and output watermarks)
//! and each operator of its chain (`taskmanager_job_task_operator` scope: records in
//! and out and their rates, the operator's own counters such as
//! `numLateRecordsDropped`, and on a two-input task's head the watermark of each
//! input), labelled with Flink's scope variables.
//!
//! Values are read when a reporter asks: the task threads only publish totals, and the
//! rates are computed here between reads ([`weir_metrics::rates`]). A subtask's metrics
//! exist while it runs, as in Flink, where a task's metric group closes with the task.

use crate::executor::TaskExecutor;
use crate::task_identity::{RunningTaskMetrics, TaskIdentity};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};
use weir_metrics::lag::watermark_lag;
use weir_metrics::names;
use weir_metrics::rates::RateTracker;
use weir_metrics::{MetricSample, MetricSource, Scope};
use weir_rpc::process::ProcessSampler;
use weir_rpc::{NetworkMemory, ProcessMetrics};
use weir_runtime::task::metrics::TaskMetricsSnapshot;

/// The counters a subtask's rates are computed from, in [`RATE_NAMES`] order.
const RATE_COUNTERS: usize = 7;

/// The per-second metrics, one per counter of [`counters`].
const RATE_NAMES: [&str; RATE_COUNTERS] = [
    names::NUM_RECORDS_IN_PER_SECOND,
    names::NUM_RECORDS_OUT_PER_SECOND,
    names::NUM_BYTES_IN_PER_SECOND,
    names::NUM_BYTES_OUT_PER_SECOND,
    names::BUSY_TIME_MS_PER_SECOND,
    names::IDLE_TIME_MS_PER_SECOND,
    names::BACK_PRESSURED_TIME_MS_PER_SECOND,
];

fn counters(s: &TaskMetricsSnapshot) -> [u64; RATE_COUNTERS] {
    [
        s.records_in,
        s.records_out,
        s.bytes_in,
        s.bytes_out,
        s.busy_ms,
        s.idle_ms,
        s.backpressured_ms,
    ]
}

/// The TaskManager's [`MetricSource`].
pub struct TaskManagerMetricSource {
    executor: Arc<TaskExecutor>,
    host: String,
    process: ProcessSampler,
    rates: Mutex<RateTracker<String, RATE_COUNTERS>>,
    operator_rates: Mutex<RateTracker<(String, usize), 2>>,
}

impl TaskManagerMetricSource {
    /// The metrics of `executor`'s process and tasks, labelled with `host`.
    pub fn new(executor: Arc<TaskExecutor>, host: String) -> Self {
        Self {
            executor,
            host,
            process: ProcessSampler::new(),
            rates: Mutex::new(RateTracker::default()),
            operator_rates: Mutex::new(RateTracker::default()),
        }
    }
}

impl MetricSource for TaskManagerMetricSource {
    fn samples(&self) -> Vec<MetricSample> {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let tm_id = &self.executor.settings().resource_id;
        let mut out = process_samples(
            &self.host,
            tm_id,
            &self.process.sample(),
            &self.executor.network_memory(),
        );
        let tasks = self.executor.running_task_metrics();
        let mut rates = self.rates.lock().unwrap_or_else(|p| p.into_inner());
        out.extend(task_samples(&self.host, tm_id, &tasks, &mut rates, now_ms));
        let mut operator_rates = self.operator_rates.lock().unwrap_or_else(|p| p.into_inner());
        out.extend(operator_samples(&self.host, tm_id, &tasks, &mut operator_rates, now_ms));
        out
    }
}

/// The `taskmanager` scope: the process, its network buffer pool and blocking
/// partitions.
fn process_samples(host: &str, tm_id: &str, p: &ProcessMetrics, n: &NetworkMemory) -> Vec<MetricSample> {
    let labels = [("host", host.to_string()), ("tm_id", tm_id.to_string())];
    let mut out = Vec::new();
    let mut push = |name: &str, value: f64| out.push(MetricSample::new(Scope::TaskManager, name, &labels, value));
    if let Some(load) = p.cpu_load {
        push(names::CPU_LOAD, load);
    }
    if let Some(ns) = p.cpu_time_ns {
        push(names::CPU_TIME, ns as f64);
    }
    if let Some(threads) = p.threads {
        push(names::THREADS_COUNT, threads as f64);
    }
    if let Some(rss) = p.rss_bytes {
        push(names::PROCESS_RSS, rss as f64);
    }
    for (name, value) in weir_rpc::blocking_gauges::blocking_gauges(n) {
        push(name, value as f64);
    }
    let used = n.total_segments.saturating_sub(n.available_segments);
    for (segments_name, memory_name, segments) in [
        (
            names::NETWORK_TOTAL_SEGMENTS,
            names::NETWORK_TOTAL_MEMORY,
            n.total_segments,
        ),
        (
            names::NETWORK_AVAILABLE_SEGMENTS,
            names::NETWORK_AVAILABLE_MEMORY,
            n.available_segments,
        ),
        (names::NETWORK_USED_SEGMENTS, names::NETWORK_USED_MEMORY, used),
    ] {
        push(segments_name, segments as f64);
        push(memory_name, segments.saturating_mul(n.segment_size) as f64);
    }
    out
}

/// The `taskmanager_job_task` scope of every running subtask; forgets the rates of
/// subtasks no longer running.
fn task_samples(
    host: &str,
    tm_id: &str,
    tasks: &[RunningTaskMetrics],
    rates: &mut RateTracker<String, RATE_COUNTERS>,
    now_ms: i64,
) -> Vec<MetricSample> {
    rates.retain(|attempt| tasks.iter().any(|t| &t.identity.attempt_id == attempt));
    let mut out = Vec::new();
    for t in tasks {
        let (task, s) = (&t.identity, &t.task);
        let labels = task_labels(host, tm_id, task);
        let mut push =
            |name: &str, value: f64| out.push(MetricSample::new(Scope::TaskManagerTask, name, &labels, value));
        for (name, value) in [
            (names::NUM_RECORDS_IN, s.records_in),
            (names::NUM_RECORDS_OUT, s.records_out),
            (names::NUM_BYTES_IN, s.bytes_in),
            (names::NUM_BYTES_OUT, s.bytes_out),
            (names::ACCUMULATED_BUSY_TIME, s.busy_ms),
            (names::ACCUMULATED_IDLE_TIME, s.idle_ms),
            (names::ACCUMULATED_BACK_PRESSURED_TIME, s.backpressured_ms),
        ] {
            push(name, value as f64);
        }
        for (in_name, out_name) in [
            (names::IN_POOL_USAGE, names::OUT_POOL_USAGE),
            (names::LEGACY_IN_POOL_USAGE, names::LEGACY_OUT_POOL_USAGE),
        ] {
            push(in_name, s.in_pool_usage_permille as f64 / 1000.0);
            push(out_name, s.out_pool_usage_permille as f64 / 1000.0);
        }
        // Flink's gauges read Long.MIN_VALUE before the first watermark; so do these.
        push(names::CURRENT_INPUT_WATERMARK, s.input_watermark as f64);
        push(names::CURRENT_OUTPUT_WATERMARK, s.output_watermark as f64);
        if let Some(lag) = watermark_lag(now_ms, s.output_watermark).filter(|_| task.is_source) {
            push(names::WATERMARK_LAG, lag as f64);
        }
        if let Some(per_second) = rates.observe(&task.attempt_id, now_ms, counters(s)) {
            for (name, value) in RATE_NAMES.iter().zip(per_second) {
                push(name, value);
            }
        }
    }
    out
}

/// Flink's task scope variables of `task`.
fn task_labels(host: &str, tm_id: &str, task: &TaskIdentity) -> Vec<(&'static str, String)> {
    vec![
        ("host", host.to_string()),
        ("tm_id", tm_id.to_string()),
        ("job_id", task.job_id.clone()),
        ("job_name", task.job_name.clone()),
        ("task_id", task.vertex_id.clone()),
        ("task_name", task.task_name.clone()),
        ("task_attempt_id", task.attempt_id.clone()),
        ("task_attempt_num", task.attempt_number.to_string()),
        ("subtask_index", task.subtask_index.to_string()),
    ]
}

/// The `taskmanager_job_task_operator` scope of every operator of every running
/// subtask; forgets the rates of subtasks no longer running.
fn operator_samples(
    host: &str,
    tm_id: &str,
    tasks: &[RunningTaskMetrics],
    rates: &mut RateTracker<(String, usize), 2>,
    now_ms: i64,
) -> Vec<MetricSample> {
    rates.retain(|(attempt, _)| tasks.iter().any(|t| &t.identity.attempt_id == attempt));
    let mut out = Vec::new();
    for t in tasks {
        for (i, op) in t.operators.iter().enumerate() {
            let mut labels = task_labels(host, tm_id, &t.identity);
            labels.push(("operator_id", op.operator_id.clone()));
            labels.push(("operator_name", op.operator_name.clone()));
            let mut push =
                |name: &str, value: f64| out.push(MetricSample::new(Scope::TaskManagerOperator, name, &labels, value));
            push(names::NUM_RECORDS_IN, op.records_in as f64);
            push(names::NUM_RECORDS_OUT, op.records_out as f64);
            for (name, value) in &op.counters {
                push(name, *value as f64);
            }
            if let (0, Some([first, second])) = (i, t.task.input_watermarks) {
                push(names::CURRENT_INPUT_1_WATERMARK, first as f64);
                push(names::CURRENT_INPUT_2_WATERMARK, second as f64);
            }
            let key = (t.identity.attempt_id.clone(), i);
            if let Some([records_in, records_out]) = rates.observe(&key, now_ms, [op.records_in, op.records_out]) {
                push(names::NUM_RECORDS_IN_PER_SECOND, records_in);
                push(names::NUM_RECORDS_OUT_PER_SECOND, records_out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_runtime::task::metrics::OperatorMetricsSnapshot;

    fn identity(subtask: u32) -> TaskIdentity {
        TaskIdentity {
            job_id: "0123456789abcdef0123456789abcdef".into(),
            job_name: "keyed-sum".into(),
            vertex_id: "cbc357ccb763df2852fee8c4fc7d55f2".into(),
            task_name: "Sum -> Sink: Print".into(),
            subtask_index: subtask,
            attempt_id: format!("attempt-{subtask}"),
            attempt_number: 1,
            is_source: false,
        }
    }

    fn value(samples: &[MetricSample], name: &str, subtask: &str) -> Option<f64> {
        samples
            .iter()
            .find(|s| s.name == name && s.labels.iter().any(|(k, v)| *k == "subtask_index" && v == subtask))
            .map(|s| s.value)
    }

    fn running(subtask: u32, task: TaskMetricsSnapshot, operators: Vec<OperatorMetricsSnapshot>) -> RunningTaskMetrics {
        RunningTaskMetrics {
            identity: identity(subtask),
            task,
            operators,
        }
    }

    fn operator(name: &str, records_in: u64, records_out: u64) -> OperatorMetricsSnapshot {
        OperatorMetricsSnapshot {
            operator_id: format!("id-{name}"),
            operator_name: name.into(),
            records_in,
            records_out,
            counters: Vec::new(),
        }
    }

    #[test]
    fn each_operator_exports_its_records_counters_and_rates_with_its_name_and_id() {
        let mut window = operator("Window", 100, 4);
        window.counters.push(("numLateRecordsDropped".into(), 7));
        let task = TaskMetricsSnapshot {
            input_watermarks: Some([5, i64::MIN]),
            ..TaskMetricsSnapshot::default()
        };
        let mut rates = RateTracker::default();
        let ops = vec![operator("Co-Map", 100, 100), window];
        let first = operator_samples("h", "tm", &[running(0, task, ops.clone())], &mut rates, 10_000);
        assert!(first.iter().all(|s| s.scope == Scope::TaskManagerOperator));
        let get = |samples: &[MetricSample], operator: &str, name: &str| {
            samples
                .iter()
                .find(|s| s.name == name && s.labels.contains(&("operator_name", operator.to_string())))
                .map(|s| s.value)
        };
        assert_eq!(get(&first, "Co-Map", "numRecordsIn"), Some(100.0));
        assert_eq!(get(&first, "Window", "numRecordsOut"), Some(4.0));
        assert_eq!(get(&first, "Window", "numLateRecordsDropped"), Some(7.0));
        assert_eq!(get(&first, "Co-Map", "currentInput1Watermark"), Some(5.0));
        assert_eq!(get(&first, "Co-Map", "currentInput2Watermark"), Some(i64::MIN as f64));
        assert_eq!(get(&first, "Window", "currentInput1Watermark"), None);
        assert_eq!(get(&first, "Co-Map", "numRecordsInPerSecond"), None);
        let labels: Vec<&str> = first[0].labels.iter().map(|(k, _)| *k).collect();
        assert_eq!(&labels[labels.len() - 2..], &["operator_id", "operator_name"]);
        let later = vec![operator("Co-Map", 300, 300), operator("Window", 300, 8)];
        let second = operator_samples("h", "tm", &[running(0, task, later)], &mut rates, 12_000);
        assert_eq!(get(&second, "Co-Map", "numRecordsInPerSecond"), Some(100.0));
        assert_eq!(get(&second, "Window", "numRecordsOutPerSecond"), Some(2.0));
        assert!(operator_samples("h", "tm", &[], &mut rates, 13_000).is_empty());
        assert!(rates.is_empty());
    }

    #[test]
    fn only_a_source_subtask_with_a_real_watermark_reports_its_watermark_lag() {
        let with_watermark = |output_watermark: i64| TaskMetricsSnapshot {
            output_watermark,
            ..TaskMetricsSnapshot::default()
        };
        let mut source = running(0, with_watermark(7_000), Vec::new());
        source.identity.is_source = true;
        let mut source_before_watermarks = running(1, with_watermark(i64::MIN), Vec::new());
        source_before_watermarks.identity.is_source = true;
        let not_a_source = running(2, with_watermark(7_000), Vec::new());
        let mut rates = RateTracker::default();
        let samples = task_samples(
            "h",
            "tm",
            &[source, source_before_watermarks, not_a_source],
            &mut rates,
            10_000,
        );
        assert_eq!(value(&samples, "watermarkLag", "0"), Some(3_000.0));
        assert_eq!(value(&samples, "watermarkLag", "1"), None);
        assert_eq!(value(&samples, "watermarkLag", "2"), None);
    }

    #[test]
    fn a_subtask_exports_its_totals_watermarks_and_flinks_scope_variables() {
        let snapshot = TaskMetricsSnapshot {
            records_in: 1000,
            records_out: 10,
            bytes_in: 52_000,
            bytes_out: 400,
            busy_ms: 70,
            idle_ms: 20,
            backpressured_ms: 5,
            input_watermark: 1_700_000_000_000,
            output_watermark: i64::MIN,
            in_pool_usage_permille: 250,
            out_pool_usage_permille: 1000,
            input_watermarks: None,
        };
        let mut rates = RateTracker::default();
        let samples = task_samples("127.0.0.1", "tm-1", &[running(1, snapshot, Vec::new())], &mut rates, 0);
        assert!(samples.iter().all(|s| s.scope == Scope::TaskManagerTask));
        assert_eq!(value(&samples, "numRecordsIn", "1"), Some(1000.0));
        assert_eq!(value(&samples, "numRecordsOut", "1"), Some(10.0));
        assert_eq!(value(&samples, "numBytesIn", "1"), Some(52_000.0));
        assert_eq!(value(&samples, "accumulateBusyTimeMs", "1"), Some(70.0));
        assert_eq!(value(&samples, "currentInputWatermark", "1"), Some(1.7e12));
        assert_eq!(value(&samples, "currentOutputWatermark", "1"), Some(i64::MIN as f64));
        assert_eq!(
            value(&samples, "numRecordsInPerSecond", "1"),
            None,
            "no rate from one reading"
        );
        let labels: Vec<&str> = samples[0].labels.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            labels,
            vec![
                "host",
                "tm_id",
                "job_id",
                "job_name",
                "task_id",
                "task_name",
                "task_attempt_id",
                "task_attempt_num",
                "subtask_index"
            ]
        );
        assert!(samples[0]
            .labels
            .contains(&("task_name", "Sum -> Sink: Print".to_string())));
    }

    #[test]
    fn rates_come_from_two_readings_and_end_with_the_subtask() {
        let at = |records: u64, busy: u64| TaskMetricsSnapshot {
            records_in: records,
            busy_ms: busy,
            ..TaskMetricsSnapshot::default()
        };
        let mut rates = RateTracker::default();
        task_samples("h", "tm", &[running(0, at(0, 0), Vec::new())], &mut rates, 10_000);
        let samples = task_samples("h", "tm", &[running(0, at(5000, 500), Vec::new())], &mut rates, 12_000);
        assert_eq!(value(&samples, "numRecordsInPerSecond", "0"), Some(2500.0));
        assert_eq!(value(&samples, "busyTimeMsPerSecond", "0"), Some(250.0));
        assert_eq!(value(&samples, "numRecordsOutPerSecond", "0"), Some(0.0));
        assert!(task_samples("h", "tm", &[], &mut rates, 13_000).is_empty());
        assert!(rates.is_empty());
    }

    #[test]
    fn the_process_exports_what_it_could_read_and_its_network_buffers() {
        let p = ProcessMetrics {
            cpu_time_ns: Some(5_000_000),
            cpu_load: None,
            rss_bytes: Some(8 << 20),
            threads: Some(12),
        };
        let n = NetworkMemory {
            total_segments: 100,
            available_segments: 60,
            segment_size: 32 * 1024,
            blocking_partitions: 3,
            blocking_memory_bytes: 1000,
            blocking_spilled_bytes: 5000,
        };
        let samples = process_samples("h", "tm-9", &p, &n);
        let get = |name: &str| samples.iter().find(|s| s.name == name).map(|s| s.value);
        assert_eq!(get("Status.JVM.CPU.Time"), Some(5e6));
        assert_eq!(get("Status.JVM.CPU.Load"), None);
        assert_eq!(get("Status.ProcessTree.Memory.RSS"), Some((8 << 20) as f64));
        assert_eq!(get("Status.JVM.Threads.Count"), Some(12.0));
        assert_eq!(get("Status.Shuffle.Netty.UsedMemorySegments"), Some(40.0));
        assert_eq!(get("Status.Shuffle.Netty.AvailableMemory"), Some(60.0 * 32768.0));
        assert_eq!(get("Status.Shuffle.Blocking.Partitions"), Some(3.0));
        assert_eq!(get("Status.Shuffle.Blocking.MemoryBytes"), Some(1000.0));
        assert_eq!(get("Status.Shuffle.Blocking.SpilledBytes"), Some(5000.0));
        assert!(
            samples
                .iter()
                .all(|s| s.scope == Scope::TaskManager
                    && s.labels == vec![("host", "h".into()), ("tm_id", "tm-9".into())])
        );
    }
}
