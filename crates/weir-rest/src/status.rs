//! Job and execution states as Flink names them in JSON, and the per-state maps the
//! responses carry.
//!
//! Owns [`JobStatus`] (a job's state, `RUNNING`, `FAILED`, …) with [`JobStatusInfo`]
//! (the answer of `/jobs/:jid/status`), [`ExecutionState`] (a subtask attempt's state)
//! and how a group of them aggregates, and four fixed-key maps:
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
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// The state of a job (Flink's `JobStatus`), written in upper case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobStatus {
    /// The job was submitted and is being set up (JobMaster not yet running it).
    Initializing,
    /// The job's ExecutionGraph exists; no task has been scheduled yet.
    Created,
    /// Some tasks are scheduled or running.
    Running,
    /// The job failed and waits for its tasks to stop.
    Failing,
    /// The job failed for good (terminal).
    Failed,
    /// The job is being cancelled and waits for its tasks to stop.
    Cancelling,
    /// The job was cancelled (terminal).
    Canceled,
    /// Every task finished (terminal).
    Finished,
    /// The job is being restarted after a failure.
    Restarting,
    /// The job was suspended, e.g. by a lost leadership; another JobManager may resume it.
    Suspended,
    /// The JobManager is re-learning the job's state after its own failover.
    Reconciling,
}

impl JobStatus {
    /// Every status, in declaration order.
    pub const ALL: [JobStatus; 11] = [
        JobStatus::Initializing,
        JobStatus::Created,
        JobStatus::Running,
        JobStatus::Failing,
        JobStatus::Failed,
        JobStatus::Cancelling,
        JobStatus::Canceled,
        JobStatus::Finished,
        JobStatus::Restarting,
        JobStatus::Suspended,
        JobStatus::Reconciling,
    ];

    /// The order in which Flink 2.3 writes `timestamps`.
    const FLINK_MAP_ORDER: [JobStatus; 11] = [
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

    /// Flink's name, e.g. `"RUNNING"`.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Initializing => "INITIALIZING",
            JobStatus::Created => "CREATED",
            JobStatus::Running => "RUNNING",
            JobStatus::Failing => "FAILING",
            JobStatus::Failed => "FAILED",
            JobStatus::Cancelling => "CANCELLING",
            JobStatus::Canceled => "CANCELED",
            JobStatus::Finished => "FINISHED",
            JobStatus::Restarting => "RESTARTING",
            JobStatus::Suspended => "SUSPENDED",
            JobStatus::Reconciling => "RECONCILING",
        }
    }

    /// FINISHED, CANCELED and FAILED: the job is over for the whole cluster and its
    /// resources (and HA data) can be released.
    pub fn is_globally_terminal(self) -> bool {
        matches!(self, JobStatus::Finished | JobStatus::Canceled | JobStatus::Failed)
    }

    /// The globally terminal states plus SUSPENDED: this JobManager is done with the
    /// job (another one may resume a suspended job).
    pub fn is_terminal(self) -> bool {
        self.is_globally_terminal() || self == JobStatus::Suspended
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The state of one execution attempt of a subtask (Flink's `ExecutionState`), written
/// in upper case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExecutionState {
    /// Created, waiting to be scheduled.
    Created,
    /// A slot was requested or assigned.
    Scheduled,
    /// Being sent to its TaskManager.
    Deploying,
    /// Processing records.
    Running,
    /// Reached the end of its input (terminal).
    Finished,
    /// A cancel call was sent; waiting for the task to stop.
    Canceling,
    /// Cancelled (terminal).
    Canceled,
    /// Failed (terminal).
    Failed,
    /// The JobManager is re-learning the task's state after its own failover.
    Reconciling,
    /// Restoring state and setting up operators.
    Initializing,
}

impl ExecutionState {
    /// Every state, in Flink's declaration order.
    pub const ALL: [ExecutionState; 10] = [
        ExecutionState::Created,
        ExecutionState::Scheduled,
        ExecutionState::Deploying,
        ExecutionState::Running,
        ExecutionState::Finished,
        ExecutionState::Canceling,
        ExecutionState::Canceled,
        ExecutionState::Failed,
        ExecutionState::Reconciling,
        ExecutionState::Initializing,
    ];

    /// The order in which Flink 2.3 writes `status-counts` and a vertex's `tasks`.
    const FLINK_MAP_ORDER: [ExecutionState; 10] = [
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
    const FLINK_LOWER_ORDER: [ExecutionState; 10] = [
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

    /// Flink's name, e.g. `"RUNNING"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionState::Created => "CREATED",
            ExecutionState::Scheduled => "SCHEDULED",
            ExecutionState::Deploying => "DEPLOYING",
            ExecutionState::Running => "RUNNING",
            ExecutionState::Finished => "FINISHED",
            ExecutionState::Canceling => "CANCELING",
            ExecutionState::Canceled => "CANCELED",
            ExecutionState::Failed => "FAILED",
            ExecutionState::Reconciling => "RECONCILING",
            ExecutionState::Initializing => "INITIALIZING",
        }
    }

    /// The lower-case name used by `/jobs/overview`, e.g. `"running"`.
    pub fn as_lower_str(self) -> &'static str {
        match self {
            ExecutionState::Created => "created",
            ExecutionState::Scheduled => "scheduled",
            ExecutionState::Deploying => "deploying",
            ExecutionState::Running => "running",
            ExecutionState::Finished => "finished",
            ExecutionState::Canceling => "canceling",
            ExecutionState::Canceled => "canceled",
            ExecutionState::Failed => "failed",
            ExecutionState::Reconciling => "reconciling",
            ExecutionState::Initializing => "initializing",
        }
    }

    /// FINISHED, CANCELED and FAILED.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            ExecutionState::Finished | ExecutionState::Canceled | ExecutionState::Failed
        )
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for ExecutionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
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
        self.0[state.index()]
    }

    /// Sets the count of `state`.
    pub fn set(&mut self, state: ExecutionState, n: u32) {
        self.0[state.index()] = n;
    }

    /// Adds `n` to the count of `state` (saturating).
    pub fn add(&mut self, state: ExecutionState, n: u32) {
        let slot = &mut self.0[state.index()];
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
    for state in ExecutionState::FLINK_MAP_ORDER {
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
        self.0[state.index()]
    }

    /// Records when `state` was entered.
    pub fn set(&mut self, state: ExecutionState, at_ms: i64) {
        self.0[state.index()] = at_ms;
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
        for state in ExecutionState::FLINK_LOWER_ORDER {
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
        self.0[status.index()]
    }

    /// Records that the job entered `status` at `millis`.
    pub fn set(&mut self, status: JobStatus, millis: i64) {
        self.0[status.index()] = millis;
    }
}

impl Serialize for JobStatusTimestamps {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(JobStatus::ALL.len()))?;
        for status in JobStatus::FLINK_MAP_ORDER {
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
    fn index_matches_position_in_all() {
        for (i, s) in JobStatus::ALL.iter().enumerate() {
            assert_eq!(s.index(), i);
        }
        for (i, s) in ExecutionState::ALL.iter().enumerate() {
            assert_eq!(s.index(), i);
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
