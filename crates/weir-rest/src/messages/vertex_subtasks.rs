//! A vertex's subtasks seen two more ways: when each entered each state
//! (`GET /jobs/:jid/vertices/:vid/subtasktimes`, Flink's `SubtasksTimesInfo`) and
//! grouped by the TaskManager they run on (`GET /jobs/:jid/vertices/:vid/taskmanagers`,
//! Flink's `JobVertexTaskManagersInfo`). One subtask alone
//! (`/jobs/:jid/vertices/:vid/subtasks/:idx`) is a [`SubtaskDetail`] of
//! [`crate::messages::vertex_detail`], as in Flink.
//!
//! Both are computed from a [`JobVertexDetail`]. The times are its subtasks'
//! `timestamps` with Flink's duration (from SCHEDULED to the end, or now). Per
//! TaskManager: the
//! state of its subtasks aggregated as Flink aggregates a vertex's, the earliest start,
//! the latest end once all ended, summed counters, and the same statistics as the
//! vertex's `aggregated`. Subtasks not deployed yet are grouped under Flink's
//! `(unassigned)`.

use crate::messages::jobs::VertexMetrics;
use crate::messages::status::{ExecutionState, ExecutionStateCounts, ExecutionStateTimestamps};
use crate::messages::vertex_detail::{AggregatedSubtasks, JobVertexDetail, SubtaskDetail};
use serde::Serialize;
use std::collections::BTreeMap;

/// What Flink writes for the location of a subtask that has none yet.
pub const UNASSIGNED: &str = "(unassigned)";

/// The answer of `/subtasktimes`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubtasksTimes {
    /// The vertex id (32 hex).
    pub id: String,
    /// The vertex (chain) name.
    pub name: String,
    /// The server time of the answer, ms since the epoch.
    pub now: i64,
    /// The subtasks, in index order.
    pub subtasks: Vec<SubtaskTimes>,
}

/// One subtask's current attempt in `/subtasktimes`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubtaskTimes {
    /// The subtask index.
    pub subtask: u32,
    /// Its TaskManager's `host:port`, or `(unassigned)`.
    pub endpoint: String,
    /// Milliseconds from SCHEDULED to its end (or now); -1 before it was scheduled.
    pub duration: i64,
    /// When it entered each state (0 if never).
    pub timestamps: ExecutionStateTimestamps,
}

impl SubtasksTimes {
    /// The times of the subtasks of `detail`.
    pub fn of(detail: &JobVertexDetail) -> Self {
        let subtasks = detail
            .subtasks
            .iter()
            .map(|s| {
                let endpoint = if s.endpoint.is_empty() {
                    UNASSIGNED.to_string()
                } else {
                    s.endpoint.clone()
                };
                SubtaskTimes::new(s.subtask, endpoint, s.status, s.timestamps, detail.now)
            })
            .collect();
        Self {
            id: detail.id.clone(),
            name: detail.name.clone(),
            now: detail.now,
            subtasks,
        }
    }
}

impl SubtaskTimes {
    /// The times of an attempt that is in `status` now and entered the states at
    /// `timestamps`; the duration as Flink computes it.
    pub fn new(
        subtask: u32,
        endpoint: String,
        status: ExecutionState,
        timestamps: ExecutionStateTimestamps,
        now: i64,
    ) -> Self {
        let scheduled = timestamps.get(ExecutionState::Scheduled);
        let end = if status.is_terminal() {
            timestamps.get(status)
        } else {
            now
        };
        Self {
            subtask,
            endpoint,
            duration: if scheduled > 0 { end - scheduled } else { -1 },
            timestamps,
        }
    }
}

/// The answer of `/taskmanagers` of a vertex.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobVertexTaskManagers {
    /// The vertex id (32 hex).
    pub id: String,
    /// The vertex (chain) name.
    pub name: String,
    /// The server time of the answer, ms since the epoch.
    pub now: i64,
    /// One entry per TaskManager running subtasks of the vertex.
    pub taskmanagers: Vec<VertexTaskManager>,
}

/// The subtasks of a vertex on one TaskManager (Flink's key order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VertexTaskManager {
    /// The TaskManager's `host:port`, or `(unassigned)`.
    pub endpoint: String,
    /// The aggregated state of its subtasks.
    pub status: ExecutionState,
    /// The earliest deployment, -1 before any.
    #[serde(rename = "start-time")]
    pub start_time: i64,
    /// The latest end once every subtask ended, else -1.
    #[serde(rename = "end-time")]
    pub end_time: i64,
    /// Milliseconds from the start to the end (or now), -1 before any start.
    pub duration: i64,
    /// The subtasks' counters summed.
    pub metrics: VertexMetrics,
    /// Subtasks per state.
    #[serde(rename = "status-counts")]
    pub status_counts: ExecutionStateCounts,
    /// The TaskManager's id, or `(unassigned)`.
    #[serde(rename = "taskmanager-id")]
    pub taskmanager_id: String,
    /// Statistics over its subtasks.
    pub aggregated: AggregatedSubtasks,
}

impl JobVertexTaskManagers {
    /// The subtasks of `detail` grouped by TaskManager (in TaskManager id order).
    pub fn of(detail: &JobVertexDetail) -> Self {
        let mut groups: BTreeMap<&str, Vec<SubtaskDetail>> = BTreeMap::new();
        for s in &detail.subtasks {
            let tm = if s.taskmanager_id.is_empty() {
                UNASSIGNED
            } else {
                s.taskmanager_id.as_str()
            };
            groups.entry(tm).or_default().push(s.clone());
        }
        let taskmanagers = groups
            .into_iter()
            .map(|(tm, subtasks)| VertexTaskManager::of(tm, &subtasks, detail.now))
            .collect();
        Self {
            id: detail.id.clone(),
            name: detail.name.clone(),
            now: detail.now,
            taskmanagers,
        }
    }
}

impl VertexTaskManager {
    /// The entry of TaskManager `taskmanager_id` running `subtasks` (not empty).
    fn of(taskmanager_id: &str, subtasks: &[SubtaskDetail], now: i64) -> Self {
        let status_counts = ExecutionStateCounts::from_states(subtasks.iter().map(|s| s.status));
        let start = subtasks.iter().map(|s| s.start_time).filter(|t| *t > 0).min();
        let all_ended = subtasks.iter().all(|s| s.status.is_terminal());
        let end = subtasks.iter().map(|s| s.end_time).max().unwrap_or(-1);
        let (start_time, end_time, duration) = match start {
            None => (-1, -1, -1),
            Some(start) if all_ended => (start, end, end - start),
            Some(start) => (start, -1, now - start),
        };
        let endpoint = subtasks
            .iter()
            .map(|s| s.endpoint.as_str())
            .find(|e| !e.is_empty())
            .unwrap_or(UNASSIGNED);
        Self {
            endpoint: endpoint.to_string(),
            status: status_counts.aggregate(),
            start_time,
            end_time,
            duration,
            metrics: sum_metrics(subtasks.iter().map(|s| &s.metrics)),
            status_counts,
            taskmanager_id: taskmanager_id.to_string(),
            aggregated: AggregatedSubtasks::of(subtasks),
        }
    }
}

/// Counters summed, each `*-complete` flag true only when every part's is.
fn sum_metrics<'a>(parts: impl Iterator<Item = &'a VertexMetrics>) -> VertexMetrics {
    let zero = VertexMetrics {
        accumulated_busy_time: 0.0,
        ..VertexMetrics::default()
    };
    parts.fold(zero, |a, m| VertexMetrics {
        read_bytes: a.read_bytes.saturating_add(m.read_bytes),
        read_bytes_complete: a.read_bytes_complete && m.read_bytes_complete,
        write_bytes: a.write_bytes.saturating_add(m.write_bytes),
        write_bytes_complete: a.write_bytes_complete && m.write_bytes_complete,
        read_records: a.read_records.saturating_add(m.read_records),
        read_records_complete: a.read_records_complete && m.read_records_complete,
        write_records: a.write_records.saturating_add(m.write_records),
        write_records_complete: a.write_records_complete && m.write_records_complete,
        accumulated_backpressured_time: a
            .accumulated_backpressured_time
            .saturating_add(m.accumulated_backpressured_time),
        accumulated_idle_time: a.accumulated_idle_time.saturating_add(m.accumulated_idle_time),
        accumulated_busy_time: a.accumulated_busy_time + m.accumulated_busy_time,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::vertex_detail::StatusDurations;
    use crate::sample_check::assert_matches_sample;

    fn subtask(index: u32, status: ExecutionState, tm: &str, start: i64, end: i64, records: i64) -> SubtaskDetail {
        SubtaskDetail {
            subtask: index,
            status,
            attempt: 0,
            endpoint: if tm.is_empty() {
                String::new()
            } else {
                format!("{tm}:1")
            },
            start_time: start,
            end_time: end,
            duration: 0,
            metrics: VertexMetrics {
                read_records: records,
                ..VertexMetrics::default()
            },
            taskmanager_id: tm.to_string(),
            status_duration: StatusDurations::default(),
            start_time_deprecated: start,
            timestamps: ExecutionStateTimestamps::new(),
        }
    }

    fn detail(subtasks: Vec<SubtaskDetail>) -> JobVertexDetail {
        JobVertexDetail::new(
            "c27dcf7b54ef6bfd6cff02ca8870b681".into(),
            "Sum".into(),
            3,
            128,
            10_000,
            subtasks,
        )
    }

    #[test]
    fn taskmanagers_match_flink_sample() {
        let d = detail(vec![
            subtask(0, ExecutionState::Running, "tm-a", 1000, -1, 0),
            subtask(1, ExecutionState::Running, "tm-a", 1001, -1, 0),
        ]);
        assert_matches_sample(&JobVertexTaskManagers::of(&d), "job_vertex_taskmanagers.json");
    }

    #[test]
    fn subtasks_are_grouped_per_taskmanager_with_summed_counters() {
        let d = detail(vec![
            subtask(0, ExecutionState::Finished, "tm-a", 1000, 4000, 5),
            subtask(1, ExecutionState::Finished, "tm-a", 900, 5000, 7),
            subtask(2, ExecutionState::Running, "tm-b", 1200, -1, 11),
        ]);
        let tms = JobVertexTaskManagers::of(&d);
        assert_eq!(tms.taskmanagers.len(), 2);
        let a = &tms.taskmanagers[0];
        assert_eq!((a.taskmanager_id.as_str(), a.endpoint.as_str()), ("tm-a", "tm-a:1"));
        assert_eq!(a.status, ExecutionState::Finished);
        assert_eq!((a.start_time, a.end_time, a.duration), (900, 5000, 4100));
        assert_eq!(a.metrics.read_records, 12);
        assert_eq!(a.status_counts.get(ExecutionState::Finished), 2);
        assert_eq!(a.aggregated.metrics.read_records.max, 7);
        let b = &tms.taskmanagers[1];
        assert_eq!(b.status, ExecutionState::Running);
        assert_eq!((b.start_time, b.end_time, b.duration), (1200, -1, 10_000 - 1200));
    }

    #[test]
    fn undeployed_subtasks_are_unassigned() {
        let d = detail(vec![subtask(0, ExecutionState::Created, "", -1, -1, 0)]);
        let tms = JobVertexTaskManagers::of(&d);
        let u = &tms.taskmanagers[0];
        assert_eq!(
            (u.taskmanager_id.as_str(), u.endpoint.as_str()),
            (UNASSIGNED, UNASSIGNED)
        );
        assert_eq!((u.start_time, u.end_time, u.duration), (-1, -1, -1));
        assert_eq!(u.status, ExecutionState::Created);
    }

    #[test]
    fn subtask_times_run_from_scheduled_to_the_end_or_now() {
        let mut ts = ExecutionStateTimestamps::new();
        ts.set(ExecutionState::Created, 100);
        ts.set(ExecutionState::Scheduled, 200);
        ts.set(ExecutionState::Finished, 900);
        let done = SubtaskTimes::new(0, "h:1".into(), ExecutionState::Finished, ts, 5000);
        assert_eq!(done.duration, 700);
        let running = SubtaskTimes::new(0, "h:1".into(), ExecutionState::Running, ts, 5000);
        assert_eq!(running.duration, 4800);
        let never = SubtaskTimes::new(
            0,
            UNASSIGNED.into(),
            ExecutionState::Created,
            ExecutionStateTimestamps::new(),
            5000,
        );
        assert_eq!(never.duration, -1);
        let v = serde_json::to_value(&done).expect("serialises");
        let keys: Vec<&str> = v
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(keys.len(), 4);
        assert_eq!(v["timestamps"]["SCHEDULED"], 200);
        assert_eq!(v["timestamps"]["RUNNING"], 0);
    }
}
