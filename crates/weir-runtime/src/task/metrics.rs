//! Live counters of one running subtask, shared with the process that reports them
//! (the TaskManager's heartbeat): records and bytes in and out, Flink's time split into
//! busy, idle (waiting for input) and backpressured (waiting for an output buffer), and
//! the task's current input and output watermarks (`i64::MIN` before the first) and,
//! for a two-input task, each input's, how full its input and output buffer pools
//! are, and the records in and out (and further counters) of each operator of its
//! chain.
//!
//! The task thread is the only writer; it publishes at most every 10 ms (and at its
//! end) with relaxed stores, so readers see values about 10 ms old at most. With collection off
//! (`metrics.collection.enabled: false`) the task counts nothing per operator and
//! publishes its totals only when it ends.

use crate::operator::metric_group::OperatorMetricGroup;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

/// Counters of one subtask.
#[derive(Debug)]
pub struct TaskMetrics {
    records_in: AtomicU64,
    records_out: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    busy_ms: AtomicU64,
    idle_ms: AtomicU64,
    backpressured_ms: AtomicU64,
    input_watermark: AtomicI64,
    output_watermark: AtomicI64,
    in_pool_usage_permille: AtomicU64,
    out_pool_usage_permille: AtomicU64,
    two_inputs: AtomicBool,
    input1_watermark: AtomicI64,
    input2_watermark: AtomicI64,
    collect: bool,
    /// Published together under the lock, so that a reader sees one operator's
    /// counters (and all operators') from the same publication.
    operators: Mutex<Vec<OperatorMetricsSnapshot>>,
}

/// The published counters of one operator of the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorMetricsSnapshot {
    /// The operator's id (hex).
    pub operator_id: String,
    /// The operator's name as its metrics carry it.
    pub operator_name: String,
    /// Records it took in (`numRecordsIn`).
    pub records_in: u64,
    /// Records it emitted (`numRecordsOut`).
    pub records_out: u64,
    /// Further counters by Flink's name (e.g. `numLateRecordsDropped`).
    pub counters: Vec<(String, u64)>,
}

impl Default for TaskMetrics {
    fn default() -> Self {
        Self {
            records_in: AtomicU64::new(0),
            records_out: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            busy_ms: AtomicU64::new(0),
            idle_ms: AtomicU64::new(0),
            backpressured_ms: AtomicU64::new(0),
            input_watermark: AtomicI64::new(i64::MIN),
            output_watermark: AtomicI64::new(i64::MIN),
            in_pool_usage_permille: AtomicU64::new(0),
            out_pool_usage_permille: AtomicU64::new(0),
            two_inputs: AtomicBool::new(false),
            input1_watermark: AtomicI64::new(i64::MIN),
            input2_watermark: AtomicI64::new(i64::MIN),
            collect: true,
            operators: Mutex::new(Vec::new()),
        }
    }
}

/// A consistent-enough copy of [`TaskMetrics`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskMetricsSnapshot {
    /// Records read from the network.
    pub records_in: u64,
    /// Records written to the network.
    pub records_out: u64,
    /// Bytes of buffers read from the network.
    pub bytes_in: u64,
    /// Bytes of records written to the network.
    pub bytes_out: u64,
    /// Milliseconds spent processing.
    pub busy_ms: u64,
    /// Milliseconds spent waiting for input.
    pub idle_ms: u64,
    /// Milliseconds spent waiting for output buffers.
    pub backpressured_ms: u64,
    /// The watermark the task's input is at (Flink's `currentInputWatermark`);
    /// `i64::MIN` before the first.
    pub input_watermark: i64,
    /// The last watermark the task sent downstream (`currentOutputWatermark`);
    /// `i64::MIN` before the first.
    pub output_watermark: i64,
    /// Used share of the input gates' receive buffers, in thousandths (Flink's
    /// `inPoolUsage`).
    pub in_pool_usage_permille: u64,
    /// Used share of the output partitions' buffers, in thousandths
    /// (`outPoolUsage`).
    pub out_pool_usage_permille: u64,
    /// A two-input task's watermark of each input (Flink's `currentInput1Watermark`,
    /// `currentInput2Watermark`; `i64::MIN` before the first); `None` for other tasks.
    pub input_watermarks: Option<[i64; 2]>,
}

impl Default for TaskMetricsSnapshot {
    fn default() -> Self {
        Self {
            records_in: 0,
            records_out: 0,
            bytes_in: 0,
            bytes_out: 0,
            busy_ms: 0,
            idle_ms: 0,
            backpressured_ms: 0,
            input_watermark: i64::MIN,
            output_watermark: i64::MIN,
            in_pool_usage_permille: 0,
            out_pool_usage_permille: 0,
            input_watermarks: None,
        }
    }
}

impl TaskMetrics {
    /// All counters at zero, collected live.
    pub fn new() -> Self {
        Self::default()
    }

    /// All counters at zero; with `collect` off the task counts nothing per operator
    /// and publishes only when it ends.
    pub fn with_collection(collect: bool) -> Self {
        Self {
            collect,
            ..Self::default()
        }
    }

    /// Whether the task collects metrics while it runs.
    pub fn collects(&self) -> bool {
        self.collect
    }

    /// Fixes the operators of the chain (when the chain is built), all at zero.
    pub fn set_operators(&self, groups: &[Rc<OperatorMetricGroup>]) {
        *self.lock_operators() = groups
            .iter()
            .map(|g| OperatorMetricsSnapshot {
                operator_id: g.operator_id.clone(),
                operator_name: g.operator_name.clone(),
                records_in: 0,
                records_out: 0,
                counters: g
                    .counter_values()
                    .into_iter()
                    .map(|(name, _)| (name.to_string(), 0))
                    .collect(),
            })
            .collect();
    }

    /// Publishes the counters of the operators fixed by [`Self::set_operators`].
    pub fn publish_operators(&self, groups: &[Rc<OperatorMetricGroup>]) {
        let mut published = self.lock_operators();
        for (p, g) in published.iter_mut().zip(groups) {
            p.records_in = g.records_in.get();
            p.records_out = g.records_out.get();
            for ((_, slot), (_, value)) in p.counters.iter_mut().zip(g.counter_values()) {
                *slot = value;
            }
        }
    }

    /// The last published counters of each operator, head first.
    pub fn operators(&self) -> Vec<OperatorMetricsSnapshot> {
        self.lock_operators().clone()
    }

    fn lock_operators(&self) -> std::sync::MutexGuard<'_, Vec<OperatorMetricsSnapshot>> {
        // Publishing cannot leave the list half-written: a poisoned lock's data is whole.
        self.operators.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Publishes the task's current totals.
    pub fn publish(&self, s: TaskMetricsSnapshot) {
        self.records_in.store(s.records_in, Ordering::Relaxed);
        self.records_out.store(s.records_out, Ordering::Relaxed);
        self.bytes_in.store(s.bytes_in, Ordering::Relaxed);
        self.bytes_out.store(s.bytes_out, Ordering::Relaxed);
        self.input_watermark.store(s.input_watermark, Ordering::Relaxed);
        self.output_watermark.store(s.output_watermark, Ordering::Relaxed);
        self.busy_ms.store(s.busy_ms, Ordering::Relaxed);
        self.idle_ms.store(s.idle_ms, Ordering::Relaxed);
        self.backpressured_ms.store(s.backpressured_ms, Ordering::Relaxed);
        self.in_pool_usage_permille
            .store(s.in_pool_usage_permille, Ordering::Relaxed);
        self.out_pool_usage_permille
            .store(s.out_pool_usage_permille, Ordering::Relaxed);
        if let Some([first, second]) = s.input_watermarks {
            self.input1_watermark.store(first, Ordering::Relaxed);
            self.input2_watermark.store(second, Ordering::Relaxed);
            self.two_inputs.store(true, Ordering::Relaxed);
        }
    }

    /// The last published totals.
    pub fn snapshot(&self) -> TaskMetricsSnapshot {
        TaskMetricsSnapshot {
            records_in: self.records_in.load(Ordering::Relaxed),
            records_out: self.records_out.load(Ordering::Relaxed),
            bytes_in: self.bytes_in.load(Ordering::Relaxed),
            bytes_out: self.bytes_out.load(Ordering::Relaxed),
            input_watermark: self.input_watermark.load(Ordering::Relaxed),
            output_watermark: self.output_watermark.load(Ordering::Relaxed),
            busy_ms: self.busy_ms.load(Ordering::Relaxed),
            idle_ms: self.idle_ms.load(Ordering::Relaxed),
            backpressured_ms: self.backpressured_ms.load(Ordering::Relaxed),
            in_pool_usage_permille: self.in_pool_usage_permille.load(Ordering::Relaxed),
            out_pool_usage_permille: self.out_pool_usage_permille.load(Ordering::Relaxed),
            input_watermarks: self.two_inputs.load(Ordering::Relaxed).then(|| {
                [
                    self.input1_watermark.load(Ordering::Relaxed),
                    self.input2_watermark.load(Ordering::Relaxed),
                ]
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_totals_are_what_a_snapshot_reads() {
        let m = TaskMetrics::new();
        assert_eq!(m.snapshot(), TaskMetricsSnapshot::default());
        let s = TaskMetricsSnapshot {
            records_in: 1,
            records_out: 2,
            bytes_in: 6,
            bytes_out: 7,
            busy_ms: 3,
            idle_ms: 4,
            backpressured_ms: 5,
            input_watermark: 8,
            output_watermark: 9,
            in_pool_usage_permille: 10,
            out_pool_usage_permille: 11,
            input_watermarks: Some([12, i64::MIN]),
        };
        m.publish(s);
        assert_eq!(m.snapshot(), s);
    }

    #[test]
    fn operators_publish_their_counters_in_chain_order() {
        let m = TaskMetrics::new();
        assert!(m.operators().is_empty(), "no operators before the chain is built");
        let map = Rc::new(OperatorMetricGroup::new("01".into(), "Map"));
        let window = Rc::new(OperatorMetricGroup::new("02".into(), "Window"));
        let late = window.counter("numLateRecordsDropped");
        m.set_operators(&[map.clone(), window.clone()]);
        map.records_in.inc();
        map.records_out.inc();
        window.records_in.inc();
        late.inc();
        m.publish_operators(&[map, window]);
        let ops = m.operators();
        assert_eq!(ops.len(), 2);
        assert_eq!(
            (ops[0].operator_name.as_str(), ops[0].records_in, ops[0].records_out),
            ("Map", 1, 1)
        );
        assert_eq!(ops[1].counters, vec![("numLateRecordsDropped".to_string(), 1)]);
    }
}
