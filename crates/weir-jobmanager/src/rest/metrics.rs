//! The job, JobManager and TaskManager metrics the REST backend serves, under Flink's
//! names ([`weir_rest::metric_names`]):
//!
//! - a job: `numRestarts` and its deprecated alias `fullRestarts` (the same count, as
//!   in Flink), `uptime` and `downtime` with Flink's gauges' rules, and with
//!   checkpointing on Flink's checkpoint gauges (`numberOfCompletedCheckpoints`,
//!   `lastCheckpointDuration`, …);
//! - the JobManager: `numRegisteredTaskManagers`, `taskSlotsTotal`,
//!   `taskSlotsAvailable`, `numRunningJobs`, and its own process (below);
//! - a TaskManager: its process, its network buffer pool
//!   (`Status.Shuffle.Netty.{Available,Used,Total}MemorySegments` and `…Memory` in
//!   bytes) and the blocking partitions it holds
//!   (`Status.Shuffle.Blocking.{Partitions,MemoryBytes,SpilledBytes}`), as its last
//!   heartbeat reported them.
//!
//! A process reports `Status.JVM.CPU.Load`, `Status.JVM.CPU.Time` (ns),
//! `Status.JVM.Threads.Count` and `Status.ProcessTree.Memory.RSS` (bytes), each only
//! when it could be read (on Linux, from `/proc/self`). Flink's JVM memory pools
//! (`Status.JVM.Memory.Heap.Used`, …), garbage collector and class loader metrics have
//! no Rust counterpart and are absent.

use crate::job_master::JobMaster;
use crate::jobmanager::State;
use crate::resource_manager::slot_table::TaskManagerEntry;
use std::collections::BTreeMap;
use weir_checkpoint::stats::CheckpointStatsTracker;
use weir_rest::metric_names as names;
use weir_rest::{ComponentMetrics, JobStatus, MetricValue};
use weir_rpc::{NetworkMemory, ProcessMetrics};

fn integer(out: &mut ComponentMetrics, name: &str, value: u64) {
    out.insert(
        name.to_string(),
        MetricValue::Integer(i64::try_from(value).unwrap_or(i64::MAX)),
    );
}

/// The job-scoped metrics of `jm` at `now`.
pub(crate) fn job_metrics(jm: &JobMaster, now: i64) -> ComponentMetrics {
    let mut out = ComponentMetrics::new();
    let restarts = jm.num_restarts() as u64;
    integer(&mut out, names::NUM_RESTARTS, restarts);
    integer(&mut out, names::FULL_RESTARTS, restarts);
    let (uptime, downtime) = up_and_down_time(jm.status, &jm.timestamps, now);
    out.insert(names::UPTIME.into(), MetricValue::Integer(uptime));
    out.insert(names::DOWNTIME.into(), MetricValue::Integer(downtime));
    if let Some(coordinator) = jm.checkpoint_coordinator() {
        add_checkpoint_metrics(&mut out, coordinator.stats());
    }
    out
}

/// Flink's checkpoint metrics of a job with checkpointing on (its
/// `CheckpointStatsTracker` gauges): the counts, and the latest completed checkpoint and
/// restore, -1 before there is one.
fn add_checkpoint_metrics(out: &mut ComponentMetrics, stats: &CheckpointStatsTracker) {
    let c = stats.counts();
    integer(out, names::TOTAL_NUMBER_OF_CHECKPOINTS, c.total);
    integer(out, names::NUMBER_OF_IN_PROGRESS_CHECKPOINTS, c.in_progress);
    integer(out, names::NUMBER_OF_COMPLETED_CHECKPOINTS, c.completed);
    integer(out, names::NUMBER_OF_FAILED_CHECKPOINTS, c.failed);
    let latest = stats.latest_completed();
    let or_none = |value: Option<u64>| value.map_or(-1, |v| i64::try_from(v).unwrap_or(i64::MAX));
    for (name, value) in [
        (
            names::LAST_CHECKPOINT_DURATION,
            latest.map(|l| l.end_to_end_duration_ms),
        ),
        (names::LAST_CHECKPOINT_SIZE, latest.map(|l| l.checkpointed_size)),
        (names::LAST_CHECKPOINT_FULL_SIZE, latest.map(|l| l.state_size)),
        (names::LAST_CHECKPOINT_PERSISTED_DATA, latest.map(|l| l.persisted_data)),
        (names::LAST_COMPLETED_CHECKPOINT_ID, latest.map(|l| l.id)),
    ] {
        out.insert(name.into(), MetricValue::Integer(or_none(value)));
    }
    let restored = stats.latest_restored().map_or(-1, |r| r.restore_timestamp);
    out.insert(
        names::LAST_CHECKPOINT_RESTORE_TIMESTAMP.into(),
        MetricValue::Integer(restored),
    );
}

/// Flink's `UpTimeGauge` and `DownTimeGauge`: while RUNNING, the time since it last
/// became RUNNING and 0; once terminal, -1 and -1; otherwise 0 and the time since the
/// current outage began (the latest FAILING or RESTARTING after the last RUNNING), or 0
/// before the job ever ran.
fn up_and_down_time(status: JobStatus, timestamps: &BTreeMap<JobStatus, i64>, now: i64) -> (i64, i64) {
    let at = |s: JobStatus| timestamps.get(&s).copied().unwrap_or(0);
    if status == JobStatus::Running {
        return ((now - at(JobStatus::Running)).max(0), 0);
    }
    if status.is_terminal() {
        return (-1, -1);
    }
    let outage = at(JobStatus::Failing).max(at(JobStatus::Restarting));
    let down = if outage <= at(JobStatus::Running) {
        0
    } else {
        (now - outage).max(0)
    };
    (0, down)
}

/// The JobManager's metrics: the cluster it manages and its own `process`.
pub(crate) fn jobmanager_metrics(st: &State, process: &ProcessMetrics) -> ComponentMetrics {
    let mut out = ComponentMetrics::new();
    integer(
        &mut out,
        names::NUM_REGISTERED_TASK_MANAGERS,
        st.slots.num_taskmanagers() as u64,
    );
    integer(&mut out, names::TASK_SLOTS_TOTAL, st.slots.total_slots() as u64);
    integer(&mut out, names::TASK_SLOTS_AVAILABLE, st.slots.free_slots() as u64);
    let running = st.jobs.values().filter(|j| !j.is_globally_terminal()).count();
    integer(&mut out, names::NUM_RUNNING_JOBS, running as u64);
    add_process(&mut out, process);
    out
}

/// A TaskManager's metrics from its last heartbeat.
pub(crate) fn taskmanager_metrics(tm: &TaskManagerEntry) -> ComponentMetrics {
    let mut out = ComponentMetrics::new();
    if let Some(p) = &tm.status.process {
        add_process(&mut out, p);
    }
    if let Some(n) = &tm.status.network {
        add_network(&mut out, n);
    }
    out
}

fn add_process(out: &mut ComponentMetrics, p: &ProcessMetrics) {
    if let Some(load) = p.cpu_load {
        out.insert(names::CPU_LOAD.into(), MetricValue::Double(load));
    }
    if let Some(ns) = p.cpu_time_ns {
        integer(out, names::CPU_TIME, ns);
    }
    if let Some(threads) = p.threads {
        integer(out, names::THREADS_COUNT, threads);
    }
    if let Some(rss) = p.rss_bytes {
        integer(out, names::PROCESS_RSS, rss);
    }
}

fn add_network(out: &mut ComponentMetrics, n: &NetworkMemory) {
    let used = n.total_segments.saturating_sub(n.available_segments);
    integer(out, names::NETWORK_TOTAL_SEGMENTS, n.total_segments);
    integer(out, names::NETWORK_AVAILABLE_SEGMENTS, n.available_segments);
    integer(out, names::NETWORK_USED_SEGMENTS, used);
    integer(
        out,
        names::NETWORK_TOTAL_MEMORY,
        n.total_segments.saturating_mul(n.segment_size),
    );
    integer(
        out,
        names::NETWORK_AVAILABLE_MEMORY,
        n.available_segments.saturating_mul(n.segment_size),
    );
    integer(out, names::NETWORK_USED_MEMORY, used.saturating_mul(n.segment_size));
    for (name, value) in weir_rpc::blocking_gauges::blocking_gauges(n) {
        integer(out, name, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uptime_and_downtime_follow_flinks_gauges() {
        let ts: BTreeMap<JobStatus, i64> = [
            (JobStatus::Created, 100),
            (JobStatus::Running, 1_000),
            (JobStatus::Restarting, 4_000),
        ]
        .into();
        assert_eq!(up_and_down_time(JobStatus::Running, &ts, 5_000), (4_000, 0));
        assert_eq!(up_and_down_time(JobStatus::Restarting, &ts, 5_000), (0, 1_000));
        assert_eq!(up_and_down_time(JobStatus::Finished, &ts, 5_000), (-1, -1));
        let never_ran: BTreeMap<JobStatus, i64> = [(JobStatus::Created, 100)].into();
        assert_eq!(up_and_down_time(JobStatus::Created, &never_ran, 5_000), (0, 0));
        // Running again after the restart: the outage is over.
        let recovered: BTreeMap<JobStatus, i64> = [(JobStatus::Running, 4_500), (JobStatus::Restarting, 4_000)].into();
        assert_eq!(up_and_down_time(JobStatus::Running, &recovered, 5_000), (500, 0));
    }

    #[test]
    fn network_memory_is_reported_in_segments_and_bytes() {
        let mut out = ComponentMetrics::new();
        add_network(
            &mut out,
            &NetworkMemory {
                total_segments: 10,
                available_segments: 4,
                segment_size: 32_768,
                blocking_partitions: 2,
                blocking_memory_bytes: 100,
                blocking_spilled_bytes: 7_000,
            },
        );
        assert_eq!(out[names::NETWORK_USED_SEGMENTS], MetricValue::Integer(6));
        assert_eq!(out[names::NETWORK_AVAILABLE_MEMORY], MetricValue::Integer(4 * 32_768));
        assert_eq!(out[names::NETWORK_TOTAL_MEMORY], MetricValue::Integer(10 * 32_768));
        assert_eq!(out["Status.Shuffle.Blocking.Partitions"], MetricValue::Integer(2));
        assert_eq!(out["Status.Shuffle.Blocking.MemoryBytes"], MetricValue::Integer(100));
        assert_eq!(out["Status.Shuffle.Blocking.SpilledBytes"], MetricValue::Integer(7_000));
    }

    #[test]
    fn unread_process_values_are_absent_not_zero() {
        let mut out = ComponentMetrics::new();
        add_process(
            &mut out,
            &ProcessMetrics {
                cpu_time_ns: Some(5),
                cpu_load: None,
                rss_bytes: None,
                threads: Some(3),
            },
        );
        let ids: Vec<&str> = out.keys().map(String::as_str).collect();
        assert_eq!(ids, vec![names::CPU_TIME, names::THREADS_COUNT]);
    }
}
