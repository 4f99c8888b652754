//! Live counters of one running subtask, shared with the process that reports them
//! (the TaskManager's heartbeat): records and bytes in and out, Flink's time split into
//! busy, idle (waiting for input) and backpressured (waiting for an output buffer), and
//! the task's current input and output watermarks (`i64::MIN` before the first), and
//! how full its input and output buffer pools are.
//!
//! The task thread is the only writer; it publishes after every batch with relaxed
//! stores, so readers see values at most one batch old.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

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
        }
    }
}

impl TaskMetrics {
    /// All counters at zero.
    pub fn new() -> Self {
        Self::default()
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
        };
        m.publish(s);
        assert_eq!(m.snapshot(), s);
    }
}
