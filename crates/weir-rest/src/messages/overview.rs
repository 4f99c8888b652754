//! `GET /overview`: the cluster at a glance.
//!
//! Owns [`Overview`]. Invariant: `slots-free-and-blocked` and `taskmanagers-blocked`
//! are omitted when zero, as Flink's `NON_DEFAULT` inclusion does (Flink 2.3 with no
//! blocklisted TaskManager writes neither).

use crate::serde_util::is_zero;
use serde::Serialize;

/// The body of `GET /overview`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overview {
    /// Number of registered TaskManagers.
    pub taskmanagers: u32,
    /// Slots over all TaskManagers.
    #[serde(rename = "slots-total")]
    pub slots_total: u32,
    /// Slots not allocated to any job.
    #[serde(rename = "slots-available")]
    pub slots_available: u32,
    /// Jobs not yet in a globally terminal state.
    #[serde(rename = "jobs-running")]
    pub jobs_running: u32,
    /// Jobs that FINISHED.
    #[serde(rename = "jobs-finished")]
    pub jobs_finished: u32,
    /// Jobs that were CANCELED (Flink spells the key with two l's).
    #[serde(rename = "jobs-cancelled")]
    pub jobs_cancelled: u32,
    /// Jobs that FAILED.
    #[serde(rename = "jobs-failed")]
    pub jobs_failed: u32,
    /// The Flink version whose API is served (see [`crate::FLINK_API_VERSION`]).
    #[serde(rename = "flink-version")]
    pub flink_version: String,
    /// The build's commit (Weir: its own version or commit).
    #[serde(rename = "flink-commit")]
    pub flink_commit: String,
    /// Free slots on blocked TaskManagers; omitted when 0.
    #[serde(rename = "slots-free-and-blocked", skip_serializing_if = "is_zero")]
    pub slots_free_and_blocked: u32,
    /// Blocked TaskManagers; omitted when 0.
    #[serde(rename = "taskmanagers-blocked", skip_serializing_if = "is_zero")]
    pub taskmanagers_blocked: u32,
}
