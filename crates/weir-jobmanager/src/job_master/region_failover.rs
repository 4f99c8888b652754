//! Region failover (Flink's `RestartPipelinedRegionFailoverStrategy`, the default
//! `jobmanager.execution.failover-strategy: region`): a task failure restarts only the
//! pipelined regions it touches ([`PipelinedRegions`]), each subtask restored from the
//! latest completed checkpoint; the other regions keep running and the job stays
//! RUNNING. The restart strategy decides as for a global failover (one entry per
//! failure); when it gives up, the whole job fails.
//!
//! Invariants: a region restart is pending at most once (a second failure meanwhile
//! widens it); the restarted subtasks get a new partition generation, which only they
//! share (regions exchange no data), so no result partition of a running region is
//! touched; a failover that would restart every subtask, or that happens while the job
//! is not running with its slots, is a global failover.

use super::{Action, Failure, JobMaster};
use crate::failover::restart_strategy::RestartDecision;
use crate::failover::RestartScope;
use crate::resource_manager::slot_table::SlotTable;
use crate::scheduler::slot_assignment::assign_slots;
use std::collections::BTreeSet;
use weir_config::FailoverStrategy;
use weir_core::JobStatus;
use weir_graph::{ExecutionState, SubtaskRef};

/// A region restart waiting for its delay (or for slots).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RegionRestart {
    /// When it is due.
    pub at: i64,
    /// The subtasks to restart.
    pub scope: BTreeSet<SubtaskRef>,
    /// Since when it waits for slots to replace lost ones.
    pub waiting_for_slots_since: Option<i64>,
}

impl JobMaster {
    /// Sets the failover strategy (Flink's default is region; [`JobMaster::new`] starts
    /// with full).
    pub fn set_failover_strategy(&mut self, strategy: FailoverStrategy) {
        self.failover_strategy = strategy;
    }

    /// `failed` subtasks failed with `failure`: a region failover when it applies, else
    /// a global one.
    pub(super) fn handle_task_failure(
        &mut self,
        failure: Failure,
        failed: &[SubtaskRef],
        slots: &mut SlotTable,
        now_ms: i64,
    ) -> Vec<Action> {
        let mut scope = if self.batch.is_some() {
            self.batch_failover_scope(failed, slots)
        } else {
            self.regions.to_restart(failed)
        };
        if let Some(pending) = self.region_restart.take() {
            scope.extend(pending.scope);
        }
        let total: usize = self.job_graph.vertices.iter().map(|v| v.parallelism as usize).sum();
        let regional = self.failover_strategy == FailoverStrategy::Region
            && self.status == JobStatus::Running
            && (self.slots.is_some() || self.batch.is_some())
            && !scope.is_empty()
            && scope.len() < total;
        if !regional {
            return self.handle_failure(failure, slots, now_ms);
        }
        let mut actions = self.checkpoints_abort_all("A region of the job fails over.", slots, now_ms);
        actions.extend(self.cancel_subtasks(&scope, slots, now_ms));
        match self.restart.on_failure(now_ms) {
            RestartDecision::Restart { delay_ms } => {
                self.record_exception(&failure, None, now_ms);
                let restarted = scope.len();
                self.log_restart(&failure, RestartScope::Regions { restarted, total }, delay_ms);
                self.region_restart = Some(RegionRestart {
                    at: now_ms + delay_ms,
                    scope,
                    waiting_for_slots_since: None,
                });
            }
            RestartDecision::Suppressed { reason } => {
                actions.extend(self.stop_all(slots, now_ms));
                actions.extend(self.fail_job(&failure, &reason, slots, now_ms));
            }
        }
        actions
    }

    /// Cancels the live attempts of `scope`.
    fn cancel_subtasks(&mut self, scope: &BTreeSet<SubtaskRef>, slots: &SlotTable, now_ms: i64) -> Vec<Action> {
        let mut actions = Vec::new();
        for (id, d) in &self.attempts {
            if !scope.contains(&(d.vertex, d.subtask)) {
                continue;
            }
            let Some(ev) = self.execution_graph.execution_vertex_mut(d.vertex, d.subtask) else {
                continue;
            };
            if ev.current.attempt_id.to_string() != *id || ev.current.state.is_terminal() {
                continue;
            }
            if ev.current.transition(ExecutionState::Canceled, now_ms).is_err() {
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
        actions
    }

    /// When the pending region restart is due, if one is.
    pub(super) fn region_restart_due_at(&self) -> Option<i64> {
        self.region_restart.as_ref().map(|r| r.at)
    }

    /// Carries out the pending region restart: replaces slots on lost TaskManagers (or
    /// waits for free ones up to the slot request timeout), then deploys new attempts of
    /// its subtasks restored from the latest completed checkpoint.
    pub(super) fn restart_regions(&mut self, slots: &mut SlotTable, now_ms: i64) -> Vec<Action> {
        if self.batch.is_some() {
            return self.restart_batch_regions(slots, now_ms);
        }
        let Some(mut pending) = self.region_restart.take() else {
            return Vec::new();
        };
        let Some(mut job_slots) = self.slots.clone() else {
            return Vec::new();
        };
        let lost: Vec<usize> = job_slots
            .iter()
            .enumerate()
            .filter(|(_, s)| slots.get(&s.resource_id).is_none())
            .map(|(i, _)| i)
            .collect();
        if !lost.is_empty() {
            let Some(replacements) = slots.allocate(self.job_id, lost.len() as u32) else {
                let since = *pending.waiting_for_slots_since.get_or_insert(now_ms);
                if now_ms - since >= self.slot_request_timeout_ms {
                    let failure = Failure {
                        name: "weir.runtime.NoResourceAvailableException".into(),
                        message: format!(
                            "Could not acquire {} slots to restart a failed region within the slot request timeout of {} ms",
                            lost.len(),
                            self.slot_request_timeout_ms
                        ),
                        task_name: None,
                        location: None,
                    };
                    return self.handle_failure(failure, slots, now_ms);
                }
                self.region_restart = Some(pending);
                return Vec::new();
            };
            for (i, slot) in lost.into_iter().zip(replacements) {
                job_slots[i] = slot;
            }
            self.slots = Some(job_slots.clone());
        }
        let Some(assignment) = assign_slots(&self.job_graph, &job_slots) else {
            let failure = Failure {
                name: "weir.runtime.JobException".into(),
                message: "the job's slots no longer fit its graph".into(),
                task_name: None,
                location: None,
            };
            return self.handle_failure(failure, slots, now_ms);
        };
        let scope = pending.scope;
        self.new_generation_for(&scope, now_ms);
        if let Err(failure) = self.plan_restore(now_ms, true) {
            return self.handle_failure(failure, slots, now_ms);
        }
        let mut actions = Vec::new();
        for &(v, i) in &scope {
            if let Some(slot) = assignment.get(&(v, i)).cloned() {
                actions.extend(self.deploy(v, i, slot, &assignment, slots, now_ms));
            }
        }
        actions
    }

    /// New attempts, in a new partition generation, for the subtasks of `scope`.
    fn new_generation_for(&mut self, scope: &BTreeSet<SubtaskRef>, now_ms: i64) {
        self.generation += 1;
        self.attempts.retain(|_, d| !scope.contains(&(d.vertex, d.subtask)));
        for &(v, i) in scope {
            if let Some(ev) = self.execution_graph.execution_vertex_mut(v, i) {
                if ev.reset_for_new_execution(now_ms).is_ok() {
                    self.vertex_generation.insert((v, i), self.generation);
                }
            }
        }
    }

    /// The pending region restart of a job scheduled stage by stage: new attempts (and
    /// partition generation) for its subtasks, whose regions the scheduling strategy
    /// hands out again as their inputs allow.
    fn restart_batch_regions(&mut self, slots: &mut SlotTable, now_ms: i64) -> Vec<Action> {
        let Some(pending) = self.region_restart.take() else {
            return Vec::new();
        };
        let scope = pending.scope;
        self.new_generation_for(&scope, now_ms);
        self.batch_reset(&scope);
        if let Err(failure) = self.plan_restore(now_ms, true) {
            return self.handle_failure(failure, slots, now_ms);
        }
        self.schedule_batch(slots, now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{cluster, deployments};
    use super::*;
    use crate::failover::restart_strategy::RestartStrategyConfig;
    use weir_api::program::ProgramInvocation;
    use weir_core::ids::JobId;
    use weir_graph::{
        ChainingStrategy, ExecutionConfig, JobGraph, NodeKind, Partitioner, StreamEdge, StreamGraph, StreamNode,
    };
    use weir_rpc::TaskDeploymentDescriptor;

    /// Source → forward → sink, two tasks per pipeline (chaining off): `p` regions.
    fn forward_job(p: u32, restart: RestartStrategyConfig) -> JobMaster {
        let node = |id: u32| StreamNode {
            id,
            name: format!("n{id}"),
            kind: if id == 0 { NodeKind::Source } else { NodeKind::Sink },
            parallelism: p,
            parallelism_configured: false,
            source_splits: None,
            max_parallelism: None,
            chaining_strategy: ChainingStrategy::Never,
            slot_sharing_group: "default".into(),
            uid: None,
            keyed: false,
        };
        let g = StreamGraph {
            job_name: "j".into(),
            config: ExecutionConfig::default(),
            nodes: vec![node(0), node(1)],
            edges: vec![StreamEdge {
                source: 0,
                target: 1,
                partitioner: Partitioner::Forward,
                input: 0,
            }],
        };
        let jg = JobGraph::from_stream_graph(&g).unwrap();
        let mut jm = JobMaster::new(
            JobId(7),
            ProgramInvocation::new("p"),
            "f".into(),
            jg,
            restart.create(1).unwrap(),
            1000,
            0,
        );
        jm.set_failover_strategy(FailoverStrategy::Region);
        jm
    }

    fn running(jm: &mut JobMaster, tdds: &[TaskDeploymentDescriptor], slots: &mut SlotTable) {
        for t in tdds {
            jm.on_task_state(&t.attempt_id, ExecutionState::Running, None, slots, 10);
        }
    }

    fn fixed(max_attempts: i32, delay_ms: i64) -> RestartStrategyConfig {
        RestartStrategyConfig::FixedDelay { max_attempts, delay_ms }
    }

    #[test]
    fn a_failed_task_restarts_only_its_region_and_the_job_stays_running() {
        let mut slots = cluster(2, 1);
        let mut jm = forward_job(2, fixed(3, 100));
        let first = deployments(&jm.start(&mut slots, 0));
        running(&mut jm, &first, &mut slots);
        let failed = first
            .iter()
            .find(|t| t.vertex_index == 1 && t.subtask_index == 0)
            .unwrap();
        let actions = jm.on_task_state(&failed.attempt_id, ExecutionState::Failed, None, &mut slots, 50);
        // Only the region's other live attempt (the source of pipeline 0) is cancelled.
        let cancelled: Vec<&str> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Cancel { attempt_id, .. } => Some(attempt_id.as_str()),
                _ => None,
            })
            .collect();
        let source0 = first
            .iter()
            .find(|t| t.vertex_index == 0 && t.subtask_index == 0)
            .unwrap();
        assert_eq!(cancelled, vec![source0.attempt_id.as_str()]);
        assert!(!actions.iter().any(|a| matches!(a, Action::ReleaseJob { .. })));
        assert_eq!(jm.status, JobStatus::Running);
        assert_eq!(jm.exceptions.len(), 1);
        assert!(jm.tick(&mut slots, 100).is_empty());
        let second = deployments(&jm.tick(&mut slots, 150));
        let mut redeployed: Vec<(u32, u32)> = second.iter().map(|t| (t.vertex_index, t.subtask_index)).collect();
        redeployed.sort_unstable();
        assert_eq!(redeployed, vec![(0, 0), (1, 0)]);
        assert!(second.iter().all(|t| t.attempt_number == 1));
        // The region's partitions are new; pipeline 1 keeps its attempts and partitions.
        let generation = second[0].generation;
        assert!(generation > first[0].generation);
        let attempts: Vec<u32> = second
            .iter()
            .flat_map(|t| {
                let outputs = t.outputs.iter().filter_map(|o| o.partition.as_ref());
                let inputs = t.inputs.iter().filter_map(|i| i.partition.as_ref());
                outputs.chain(inputs).map(|p| p.attempt).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(attempts, vec![generation, generation]);
        for t in first.iter().filter(|t| t.subtask_index == 1) {
            assert_eq!(
                jm.current_attempt(t.vertex_index as usize, 1).map(|a| a.to_string()),
                Some(t.attempt_id.clone())
            );
        }
    }

    #[test]
    fn a_lost_taskmanager_restarts_its_regions_on_a_replacement_slot() {
        let mut slots = cluster(3, 1);
        let mut jm = forward_job(2, fixed(3, 0));
        let first = deployments(&jm.start(&mut slots, 0));
        running(&mut jm, &first, &mut slots);
        let victim = first[0].clone();
        let lost_tm = jm.attempt_location(&victim.attempt_id).unwrap().resource_id.clone();
        jm.on_taskmanager_lost(&lost_tm, "killed", &mut slots, 50);
        slots.remove(&lost_tm);
        let second = deployments(&jm.tick(&mut slots, 60));
        assert_eq!(second.len(), 2);
        assert!(second.iter().all(|t| t.subtask_index == victim.subtask_index));
        for t in &second {
            assert_ne!(jm.attempt_location(&t.attempt_id).unwrap().resource_id, lost_tm);
        }
        assert_eq!(jm.status, JobStatus::Running);
    }

    #[test]
    fn without_a_free_slot_the_region_waits_then_fails_over_globally_after_the_timeout() {
        let mut slots = cluster(2, 1);
        let mut jm = forward_job(2, fixed(5, 0));
        let first = deployments(&jm.start(&mut slots, 0));
        running(&mut jm, &first, &mut slots);
        let lost_tm = jm.attempt_location(&first[0].attempt_id).unwrap().resource_id.clone();
        jm.on_taskmanager_lost(&lost_tm, "killed", &mut slots, 50);
        slots.remove(&lost_tm);
        assert!(deployments(&jm.tick(&mut slots, 60)).is_empty());
        assert_eq!(jm.status, JobStatus::Running);
        jm.tick(&mut slots, 1100);
        assert_eq!(jm.status, JobStatus::Restarting);
        assert!(jm
            .exceptions
            .last()
            .unwrap()
            .stacktrace
            .contains("NoResourceAvailableException"));
    }

    #[test]
    fn when_the_strategy_gives_up_the_whole_job_fails_and_every_task_is_cancelled() {
        let mut slots = cluster(2, 1);
        let mut jm = forward_job(2, RestartStrategyConfig::NoRestart);
        let first = deployments(&jm.start(&mut slots, 0));
        running(&mut jm, &first, &mut slots);
        let actions = jm.on_task_state(&first[0].attempt_id, ExecutionState::Failed, None, &mut slots, 50);
        assert_eq!(jm.status, JobStatus::Failed);
        let cancels = actions.iter().filter(|a| matches!(a, Action::Cancel { .. })).count();
        assert_eq!(cancels, 3);
        assert_eq!(slots.free_slots(), 2);
    }

    #[test]
    fn full_failover_restarts_everything_even_with_independent_pipelines() {
        let mut slots = cluster(2, 1);
        let mut jm = forward_job(2, fixed(3, 0));
        jm.set_failover_strategy(FailoverStrategy::Full);
        let first = deployments(&jm.start(&mut slots, 0));
        running(&mut jm, &first, &mut slots);
        jm.on_task_state(&first[0].attempt_id, ExecutionState::Failed, None, &mut slots, 50);
        assert_eq!(jm.status, JobStatus::Restarting);
        assert_eq!(deployments(&jm.tick(&mut slots, 60)).len(), 4);
    }
}
