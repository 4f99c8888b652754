//! Job and execution states as Flink names them in JSON, and the per-state maps the
//! responses carry.
//!
//! Re-exports [`JobStatus`] and [`ExecutionState`] (defined once, in `weir-core`, for the
//! JobMaster and REST alike) and owns [`JobStatusInfo`] (the answer of `/jobs/:jid/status`),
//! how a group of attempts aggregates, and four fixed-key maps:
//! - [`ExecutionStateCounts`]: `{"CREATED": n, …}` with every execution state, as in a
//!   job detail's `status-counts` and a vertex's `tasks`;
//! - [`JobTaskCounts`]: `{"running": n, …, "total": n}` with lower-case keys, as in
//!   `/jobs/overview`;
//! - [`JobStatusTimestamps`]: `{"RUNNING": ms, …}` with every job status (0 when the job
//!   never entered it), as in a job detail's `timestamps`;
//! - [`ExecutionStateTimestamps`]: `{"RUNNING": ms, …}` with every execution state, as
//!   in the `timestamps` of `/subtasktimes`.
//!
//! Invariant: each map always serialises every key of its enum (Flink's maps are
//! complete), in the order Flink 2.3 writes them, so responses diff cleanly against
//! Flink's.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

pub use weir_core::execution_state::ExecutionState;
pub use weir_core::job_status::JobStatus;

/// The order in which Flink 2.3 writes `timestamps`.
const JOB_STATUS_MAP_ORDER: [JobStatus; 11] = [
    JobStatus::Restarting,
    JobStatus::Suspended,
    JobStatus::Reconciling,
    JobStatus::Running,
    JobStatus::Failed,
    JobStatus::Cancelling,
    JobStatus::Canceled,
    JobStatus::Finished,
    JobStatus::Initializing,
    JobStatus::Failing,
    JobStatus::Created,
];

/// The order in which Flink 2.3 writes `status-counts` and a vertex's `tasks`.
const EXECUTION_STATE_MAP_ORDER: [ExecutionState; 10] = [
    ExecutionState::Scheduled,
    ExecutionState::Failed,
    ExecutionState::Deploying,
    ExecutionState::Created,
    ExecutionState::Initializing,
    ExecutionState::Running,
    ExecutionState::Canceling,
    ExecutionState::Finished,
    ExecutionState::Canceled,
    ExecutionState::Reconciling,
];

/// The order in which Flink 2.3 writes the lower-case `tasks` of `/jobs/overview`
/// (`total` goes between `canceled` and `created`).
const EXECUTION_STATE_LOWER_ORDER: [ExecutionState; 10] = [
    ExecutionState::Running,
    ExecutionState::Canceling,
    ExecutionState::Canceled,
    ExecutionState::Created,
    ExecutionState::Scheduled,
    ExecutionState::Deploying,
    ExecutionState::Reconciling,
    ExecutionState::Finished,
    ExecutionState::Initializing,
    ExecutionState::Failed,
];

/// A state's slot in the fixed-size arrays of the maps below.
fn execution_slot(state: ExecutionState) -> usize {
    state as usize
}

/// A status's slot in [`JobStatusTimestamps`].
fn job_slot(status: JobStatus) -> usize {
    status as usize
}

/// The answer of `GET /jobs/:jid/status` (Flink's `JobStatusInfo`): `{"status": "RUNNING"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct JobStatusInfo {
    /// The job's status.
    pub status: JobStatus,
}

/// Number of subtasks in each [`ExecutionState`]; serialises as a map with every
/// state's upper-case name as a key (`status-counts`, a vertex's `tasks`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecutionStateCounts([u32; 10]);

impl ExecutionStateCounts {
    /// All zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts the given states.
    pub fn from_states(states: impl IntoIterator<Item = ExecutionState>) -> Self {
        let mut counts = Self::new();
        for state in states {
            counts.add(state, 1);
        }
        counts
    }

    /// The count of `state`.
    pub fn get(&self, state: ExecutionState) -> u32 {
        self.0[execution_slot(state)]
    }

    /// Sets the count of `state`.
    pub fn set(&mut self, state: ExecutionState, n: u32) {
        self.0[execution_slot(state)] = n;
    }

    /// Adds `n` to the count of `state` (saturating).
    pub fn add(&mut self, state: ExecutionState, n: u32) {
        let slot = &mut self.0[execution_slot(state)];
        *slot = slot.saturating_add(n);
    }

    /// The sum over all states (saturating).
    pub fn total(&self) -> u32 {
        self.0.iter().fold(0u32, |acc, n| acc.saturating_add(*n))
    }
}

impl ExecutionStateCounts {
    /// The state of a group of subtasks with these counts (Flink's
    /// `ExecutionJobVertex.getAggregateJobVertexState`, the group's size as its
    /// parallelism): the state every subtask is in, if one; else FAILED, CANCELING,
    /// CANCELED or INITIALIZING when any subtask is in it (in that order); else RUNNING
    /// when any runs or finished; else CREATED.
    pub fn aggregate(&self) -> ExecutionState {
        let n = self.total();
        let any = |s: &ExecutionState| self.get(*s) > 0;
        ExecutionState::ALL
            .into_iter()
            .find(|s| self.get(*s) == n)
            .or_else(|| {
                [
                    ExecutionState::Failed,
                    ExecutionState::Canceling,
                    ExecutionState::Canceled,
                    ExecutionState::Initializing,
                ]
                .into_iter()
                .find(any)
            })
            .unwrap_or(if any(&ExecutionState::Running) || any(&ExecutionState::Finished) {
                ExecutionState::Running
            } else {
                ExecutionState::Created
            })
    }
}

/// Writes one value per execution state, keyed by its upper-case name, in Flink's order.
fn serialize_per_state<S: Serializer, T: Serialize>(
    s: S,
    value: impl Fn(ExecutionState) -> T,
) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(ExecutionState::ALL.len()))?;
    for state in EXECUTION_STATE_MAP_ORDER {
        map.serialize_entry(state.as_str(), &value(state))?;
    }
    map.end()
}

impl Serialize for ExecutionStateCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_per_state(s, |state| self.get(state))
    }
}

/// When a subtask attempt entered each [`ExecutionState`] (ms since the epoch, 0 for a
/// state it never entered, as Flink's `stateTimestamps`); serialises like
/// [`ExecutionStateCounts`] (the `timestamps` of `/subtasktimes`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecutionStateTimestamps([i64; 10]);

impl ExecutionStateTimestamps {
    /// All zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// When `state` was entered (0 if never).
    pub fn get(&self, state: ExecutionState) -> i64 {
        self.0[execution_slot(state)]
    }

    /// Records when `state` was entered.
    pub fn set(&mut self, state: ExecutionState, at_ms: i64) {
        self.0[execution_slot(state)] = at_ms;
    }
}

impl Serialize for ExecutionStateTimestamps {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_per_state(s, |state| self.get(state))
    }
}

/// The `tasks` of one job in `/jobs/overview`: lower-case execution-state keys plus
/// `total`, the number of subtasks of the job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobTaskCounts {
    /// Number of subtasks of the job.
    pub total: u32,
    /// Subtasks per current execution state.
    pub counts: ExecutionStateCounts,
}

impl JobTaskCounts {
    /// `counts` with `total` set to their sum.
    pub fn from_counts(counts: ExecutionStateCounts) -> Self {
        Self {
            total: counts.total(),
            counts,
        }
    }
}

impl Serialize for JobTaskCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(ExecutionState::ALL.len() + 1))?;
        for state in EXECUTION_STATE_LOWER_ORDER {
            map.serialize_entry(state.as_lower_str(), &self.counts.get(state))?;
            if state == ExecutionState::Canceled {
                map.serialize_entry("total", &self.total)?;
            }
        }
        map.end()
    }
}

/// When the job entered each [`JobStatus`] (milliseconds since the epoch, 0 when it
/// never did); serialises as a map with every status as a key (`timestamps`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobStatusTimestamps([i64; 11]);

impl JobStatusTimestamps {
    /// All zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// When the job entered `status`, 0 if it never did.
    pub fn get(&self, status: JobStatus) -> i64 {
        self.0[job_slot(status)]
    }

    /// Records that the job entered `status` at `millis`.
    pub fn set(&mut self, status: JobStatus, millis: i64) {
        self.0[job_slot(status)] = millis;
    }
}

impl Serialize for JobStatusTimestamps {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(JobStatus::ALL.len()))?;
        for status in JOB_STATUS_MAP_ORDER {
            map.serialize_entry(status.as_str(), &self.get(status))?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_names_match_flink() {
        for s in JobStatus::ALL {
            let json = serde_json::to_string(&s).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            let back: JobStatus = serde_json::from_str(&json).expect("round trip");
            assert_eq!(back, s);
        }
        for s in ExecutionState::ALL {
            let json = serde_json::to_string(&s).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(s.as_lower_str(), s.as_str().to_lowercase());
        }
    }

    #[test]
    fn every_state_has_its_own_slot_in_the_maps() {
        for (i, s) in JobStatus::ALL.iter().enumerate() {
            assert_eq!(job_slot(*s), i);
        }
        for (i, s) in ExecutionState::ALL.iter().enumerate() {
            assert_eq!(execution_slot(*s), i);
        }
    }

    #[test]
    fn the_flink_orders_name_every_state_once() {
        let mut jobs = JOB_STATUS_MAP_ORDER.to_vec();
        jobs.sort();
        assert_eq!(jobs, JobStatus::ALL.to_vec());
        for order in [EXECUTION_STATE_MAP_ORDER, EXECUTION_STATE_LOWER_ORDER] {
            let mut states = order.to_vec();
            states.sort();
            assert_eq!(states, ExecutionState::ALL.to_vec());
        }
    }

    #[test]
    fn terminal_states() {
        let globally: Vec<_> = JobStatus::ALL
            .into_iter()
            .filter(|s| s.is_globally_terminal())
            .collect();
        assert_eq!(
            globally,
            vec![JobStatus::Failed, JobStatus::Canceled, JobStatus::Finished]
        );
        assert!(JobStatus::Suspended.is_terminal());
        assert!(!JobStatus::Suspended.is_globally_terminal());
        assert!(!JobStatus::Running.is_terminal());
        assert!(ExecutionState::Canceled.is_terminal());
        assert!(!ExecutionState::Canceling.is_terminal());
    }

    #[test]
    fn maps_have_every_key_once() {
        let mut counts = ExecutionStateCounts::from_states([
            ExecutionState::Running,
            ExecutionState::Running,
            ExecutionState::Failed,
        ]);
        counts.add(ExecutionState::Canceled, 1);
        let v = serde_json::to_value(counts).expect("serialises");
        let obj = v.as_object().expect("object");
        assert_eq!(obj.len(), 10);
        assert_eq!(obj["RUNNING"], 2);
        assert_eq!(obj["FAILED"], 1);
        assert_eq!(obj["CANCELED"], 1);
        assert_eq!(counts.total(), 4);

        let tasks = JobTaskCounts::from_counts(counts);
        let v = serde_json::to_value(tasks).expect("serialises");
        let obj = v.as_object().expect("object");
        assert_eq!(obj.len(), 11);
        assert_eq!(obj["total"], 4);
        assert_eq!(obj["running"], 2);

        let mut ts = JobStatusTimestamps::new();
        ts.set(JobStatus::Running, 42);
        let v = serde_json::to_value(ts).expect("serialises");
        let obj = v.as_object().expect("object");
        assert_eq!(obj.len(), 11);
        assert_eq!(obj["RUNNING"], 42);
        assert_eq!(obj["CREATED"], 0);

        let mut ts = ExecutionStateTimestamps::new();
        ts.set(ExecutionState::Deploying, 7);
        let v = serde_json::to_value(ts).expect("serialises");
        let obj = v.as_object().expect("object");
        assert_eq!(obj.len(), 10);
        assert_eq!(obj["DEPLOYING"], 7);
        assert_eq!(obj["RUNNING"], 0);
    }

    #[test]
    fn a_group_of_subtasks_aggregates_as_flinks_vertex_state() {
        use ExecutionState::*;
        let of = |states: &[ExecutionState]| ExecutionStateCounts::from_states(states.iter().copied()).aggregate();
        assert_eq!(of(&[Scheduled, Scheduled]), Scheduled, "all in one state");
        assert_eq!(of(&[Finished, Finished]), Finished);
        assert_eq!(of(&[Running, Failed]), Failed);
        assert_eq!(of(&[Canceled, Canceling]), Canceling);
        assert_eq!(of(&[Running, Initializing]), Initializing);
        assert_eq!(of(&[Running, Finished]), Running);
        assert_eq!(of(&[Created, Finished]), Running);
        assert_eq!(of(&[Created, Deploying]), Created);
    }
}
