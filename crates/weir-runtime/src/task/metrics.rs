//! Live counters of one running subtask, shared with the process that reports them
//! (the TaskManager's heartbeat): records in and out, and Flink's time split into
//! busy, idle (waiting for input) and backpressured (waiting for an output buffer).
//!
//! The task thread is the only writer; it publishes after every batch with relaxed
//! stores, so readers see values at most one batch old.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of one subtask.
#[derive(Debug, Default)]
pub struct TaskMetrics {
    records_in: AtomicU64,
    records_out: AtomicU64,
    busy_ms: AtomicU64,
    idle_ms: AtomicU64,
    backpressured_ms: AtomicU64,
}

/// A consistent-enough copy of [`TaskMetrics`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskMetricsSnapshot {
    /// Records read from the network.
    pub records_in: u64,
    /// Records written to the network.
    pub records_out: u64,
    /// Milliseconds spent processing.
    pub busy_ms: u64,
    /// Milliseconds spent waiting for input.
    pub idle_ms: u64,
    /// Milliseconds spent waiting for output buffers.
    pub backpressured_ms: u64,
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
        self.busy_ms.store(s.busy_ms, Ordering::Relaxed);
        self.idle_ms.store(s.idle_ms, Ordering::Relaxed);
        self.backpressured_ms.store(s.backpressured_ms, Ordering::Relaxed);
    }

    /// The last published totals.
    pub fn snapshot(&self) -> TaskMetricsSnapshot {
        TaskMetricsSnapshot {
            records_in: self.records_in.load(Ordering::Relaxed),
            records_out: self.records_out.load(Ordering::Relaxed),
            busy_ms: self.busy_ms.load(Ordering::Relaxed),
            idle_ms: self.idle_ms.load(Ordering::Relaxed),
            backpressured_ms: self.backpressured_ms.load(Ordering::Relaxed),
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
            busy_ms: 3,
            idle_ms: 4,
            backpressured_ms: 5,
        };
        m.publish(s);
        assert_eq!(m.snapshot(), s);
    }
}
