//! The global failover (Flink's full restart): every live attempt is cancelled and its
//! slots freed; the restart strategy then decides between restarting the whole job after
//! its delay (a new generation of attempts, restored from the latest checkpoint) and
//! failing it. Every failure goes into the exception history, with the strategy's reason
//! when it gave up. [`super::region_failover`] restarts only the regions a failure
//! touches and falls back to this when it cannot.

use super::{Action, ExceptionEntry, Failure, JobMaster};
use crate::failover::restart_strategy::RestartDecision;
use crate::failover::{log_restart, RestartScope};
use crate::resource_manager::slot_table::SlotTable;
use weir_core::JobStatus;
use weir_graph::ExecutionState;

impl JobMaster {
    /// Cancels every live attempt (on TaskManagers still registered), then frees the
    /// job's slots and tells their TaskManagers to release the job.
    pub(super) fn stop_all(&mut self, slots: &mut SlotTable, now_ms: i64) -> Vec<Action> {
        let mut actions = Vec::new();
        for (id, d) in &self.attempts {
            let Some(ev) = self.execution_graph.execution_vertex_mut(d.vertex, d.subtask) else {
                continue;
            };
            if ev.current.attempt_id.to_string() != *id || !ev.current.cancel(now_ms) {
                continue;
            }
            if let Some(tm) = slots.get(&d.slot.resource_id) {
                actions.push(Action::Cancel {
                    rpc_address: tm.registration.rpc_address.clone(),
                    attempt_id: id.clone(),
                    job_master_id: self.job_master_id.clone(),
                });
            }
        }
        actions.extend(self.release(slots));
        actions
    }

    /// Frees the job's slots and tells the TaskManagers that held them, or hold its
    /// blocking partitions, to release the job.
    pub(super) fn release(&mut self, slots: &mut SlotTable) -> Vec<Action> {
        self.slots = None;
        if let Some(batch) = self.batch.as_mut() {
            batch.reset_all();
        }
        let mut tms = slots.release_job(self.job_id);
        // A job scheduled stage by stage gave slots back as stages finished; their
        // TaskManagers still hold its blocking partitions.
        tms.extend(self.attempts.values().map(|d| d.slot.resource_id.clone()));
        tms.sort_unstable();
        tms.dedup();
        let rpc_addresses = tms
            .iter()
            .filter_map(|t| slots.get(t))
            .map(|t| t.registration.rpc_address.clone())
            .collect();
        vec![Action::ReleaseJob {
            job_id: self.job_id.to_string(),
            below_generation: self.generation + 1,
            rpc_addresses,
            keep_local_state: false,
        }]
    }

    /// A global failover: every task is cancelled and, if the restart strategy allows,
    /// the whole job restarts after its delay.
    pub(super) fn handle_failure(&mut self, failure: Failure, slots: &mut SlotTable, now_ms: i64) -> Vec<Action> {
        self.region_restart = None;
        let mut actions = self.checkpoints_abort_all("The job fails over.", slots, now_ms);
        actions.extend(self.stop_all(slots, now_ms));
        match self.restart.on_failure(now_ms) {
            RestartDecision::Restart { delay_ms } => {
                // The restarted tasks may find their state on the same TaskManagers.
                for action in &mut actions {
                    if let Action::ReleaseJob { keep_local_state, .. } = action {
                        *keep_local_state = true;
                    }
                }
                self.record_exception(&failure, None, now_ms);
                self.log_restart(&failure, RestartScope::Job, delay_ms);
                self.set_status(JobStatus::Restarting, now_ms);
                self.restart_at = Some(now_ms + delay_ms);
            }
            RestartDecision::Suppressed { reason } => {
                actions.extend(self.fail_job(&failure, &reason, slots, now_ms));
            }
        }
        actions
    }

    /// Says in the log that this job restarts `scope` after `delay_ms` because of
    /// `failure`.
    pub(super) fn log_restart(&self, failure: &Failure, scope: RestartScope, delay_ms: i64) {
        let cause = if failure.message.is_empty() {
            &failure.name
        } else {
            &failure.message
        };
        log_restart(
            &self.invocation.job_name,
            &self.job_id.to_string(),
            failure.task_name.as_deref(),
            cause,
            scope,
            delay_ms,
        );
    }

    /// The restart strategy gave up: the job is FAILED with `failure` as its cause (the
    /// tasks are already cancelled).
    pub(super) fn fail_job(
        &mut self,
        failure: &Failure,
        reason: &str,
        slots: &mut SlotTable,
        now_ms: i64,
    ) -> Vec<Action> {
        self.record_exception(failure, Some(reason), now_ms);
        self.set_status(JobStatus::Failing, now_ms);
        self.set_status(JobStatus::Failed, now_ms);
        self.checkpoints_shutdown(weir_checkpoint::JobTermination::Failed, slots, now_ms)
    }

    /// Adds `failure` to the exception history; `suppressed` is the restart strategy's
    /// reason when it gave up (the entry is then Flink's JobException around it).
    pub(super) fn record_exception(&mut self, failure: &Failure, suppressed: Option<&str>, now_ms: i64) {
        let (endpoint, taskmanager_id) = match &failure.location {
            Some((e, t)) => (Some(e.clone()), Some(t.clone())),
            None => (None, None),
        };
        let (exception_name, stacktrace) = match suppressed {
            None => (failure.name.clone(), format!("{}: {}", failure.name, failure.message)),
            Some(reason) => (
                "weir.runtime.JobException".to_string(),
                format!(
                    "weir.runtime.JobException: {reason}\nCaused by: {}: {}",
                    failure.name, failure.message
                ),
            ),
        };
        self.exceptions.push(ExceptionEntry {
            exception_name,
            stacktrace,
            timestamp: now_ms,
            task_name: failure.task_name.clone(),
            endpoint,
            taskmanager_id,
        });
    }

    /// Restarts the whole job now: a new generation of attempts, restored from the
    /// latest checkpoint, scheduled again.
    pub(super) fn restart_now(&mut self, slots: &mut SlotTable, now_ms: i64) -> Vec<Action> {
        self.restart_at = None;
        self.generation += 1;
        self.base_generation = self.generation;
        self.vertex_generation.clear();
        self.attempts.clear();
        self.metrics.clear();
        self.final_metrics.clear();
        self.previous_metrics.clear();
        for v in &mut self.execution_graph.job_vertices {
            // stop_all ended every attempt that was deployed; one still CREATED (a batch
            // stage that never ran) is already new.
            for t in v.task_vertices.iter_mut() {
                if t.current.state == ExecutionState::Created {
                    continue;
                }
                if let Err(e) = t.reset_for_new_execution(now_ms) {
                    tracing::error!(job = %self.job_id, vertex = t.job_vertex, subtask = t.subtask_index, error = %e, "a live attempt survived the global failover");
                }
            }
        }
        if let Err(failure) = self.plan_restore(now_ms, true) {
            return self.handle_failure(failure, slots, now_ms);
        }
        self.set_status(JobStatus::Running, now_ms);
        self.slot_request_since = Some(now_ms);
        self.try_schedule(slots, now_ms)
    }
}
