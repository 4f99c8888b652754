//! What happens after a failure: Flink's restart backoff strategies as state machines
//! (the region and global failover themselves are steps of the
//! [`JobMaster`](crate::job_master::JobMaster)).

pub mod restart_strategy;

/// The log target of the lines that say a job restarts; `weir local` shows them by
/// default while it hides the JobManager's other logs.
pub const RESTART_LOG_TARGET: &str = "weir_jobmanager::failover";

/// What a restart covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestartScope {
    /// Every task of the job (a global failover).
    Job,
    /// `restarted` of the job's `total` subtasks (a region failover).
    Regions {
        /// Subtasks restarted.
        restarted: usize,
        /// Subtasks of the job.
        total: usize,
    },
}

/// One line, at warn level on [`RESTART_LOG_TARGET`], saying that job `job_name`
/// (`job_id`) restarts `scope` after `delay_ms` because `task` failed with `cause`.
pub fn log_restart(job_name: &str, job_id: &str, task: Option<&str>, cause: &str, scope: RestartScope, delay_ms: i64) {
    let what = match scope {
        RestartScope::Job => "restarting the whole job".to_string(),
        RestartScope::Regions { restarted, total } => {
            format!("restarting {restarted} of its {total} subtasks (region failover)")
        }
    };
    // Names and causes come from users and peers: one line, control characters escaped.
    let failed = task.map_or_else(
        || "the job failed".to_string(),
        |t| format!("{} failed", t.escape_debug()),
    );
    let cause: String = cause.lines().next().unwrap_or_default().chars().take(300).collect();
    tracing::warn!(
        target: RESTART_LOG_TARGET,
        "Job '{}' ({job_id}): {failed}: {}; {what} in {delay_ms} ms",
        job_name.escape_debug(),
        cause.escape_debug()
    );
}
