//! The lifecycle of one execution attempt: [`ExecutionState`] and its legal
//! transitions (Flink's `ExecutionState` and the moves `Execution` allows). One type
//! for the JobMaster, the TaskManagers' reports and the REST API.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The state of one execution attempt of a subtask (Flink's `ExecutionState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExecutionState {
    /// Created, waiting to be scheduled.
    Created,
    /// A slot was requested/assigned.
    Scheduled,
    /// The task is being sent to its TaskManager.
    Deploying,
    /// The task is restoring state and setting up its operators.
    Initializing,
    /// The task processes records.
    Running,
    /// The task reached the end of its input (terminal).
    Finished,
    /// A cancel call was sent; waiting for the task to stop.
    Canceling,
    /// The task was cancelled (terminal).
    Canceled,
    /// The task failed (terminal).
    Failed,
    /// The JobManager is re-learning the state of a task after its own failover.
    Reconciling,
}

impl ExecutionState {
    /// Every state, in lifecycle order.
    pub const ALL: [ExecutionState; 10] = [
        ExecutionState::Created,
        ExecutionState::Scheduled,
        ExecutionState::Deploying,
        ExecutionState::Initializing,
        ExecutionState::Running,
        ExecutionState::Finished,
        ExecutionState::Canceling,
        ExecutionState::Canceled,
        ExecutionState::Failed,
        ExecutionState::Reconciling,
    ];

    /// The name as Flink writes it, e.g. `RUNNING`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ExecutionState::Created => "CREATED",
            ExecutionState::Scheduled => "SCHEDULED",
            ExecutionState::Deploying => "DEPLOYING",
            ExecutionState::Initializing => "INITIALIZING",
            ExecutionState::Running => "RUNNING",
            ExecutionState::Finished => "FINISHED",
            ExecutionState::Canceling => "CANCELING",
            ExecutionState::Canceled => "CANCELED",
            ExecutionState::Failed => "FAILED",
            ExecutionState::Reconciling => "RECONCILING",
        }
    }

    /// The lower-case name used by `/jobs/overview`, e.g. `"running"`.
    pub fn as_lower_str(&self) -> &'static str {
        match self {
            ExecutionState::Created => "created",
            ExecutionState::Scheduled => "scheduled",
            ExecutionState::Deploying => "deploying",
            ExecutionState::Initializing => "initializing",
            ExecutionState::Running => "running",
            ExecutionState::Finished => "finished",
            ExecutionState::Canceling => "canceling",
            ExecutionState::Canceled => "canceled",
            ExecutionState::Failed => "failed",
            ExecutionState::Reconciling => "reconciling",
        }
    }

    /// FINISHED, CANCELED and FAILED are terminal.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            ExecutionState::Finished | ExecutionState::Canceled | ExecutionState::Failed
        )
    }

    /// Whether an execution in `self` may move to `next`, following Flink's `Execution`:
    /// - CREATED → SCHEDULED → DEPLOYING → INITIALIZING → RUNNING → FINISHED;
    /// - DEPLOYING or INITIALIZING → FINISHED (a very fast task, as `markFinished` allows);
    /// - CREATED → RECONCILING → RUNNING | FINISHED (JobManager failover);
    /// - any non-terminal state → CANCELING, CANCELED or FAILED (CANCELING itself only
    ///   to CANCELED or FAILED);
    /// - nothing leaves a terminal state, and no state moves to itself.
    pub fn can_transition_to(self, next: ExecutionState) -> bool {
        use ExecutionState::*;
        if self.is_terminal() || self == next {
            return false;
        }
        match next {
            Canceling => self != Canceling,
            Canceled | Failed => true,
            Scheduled => self == Created,
            Deploying => self == Scheduled,
            Initializing => self == Deploying,
            Running => matches!(self, Initializing | Reconciling),
            Finished => matches!(self, Deploying | Initializing | Running | Reconciling),
            Reconciling => self == Created,
            Created => false,
        }
    }
}

impl fmt::Display for ExecutionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
