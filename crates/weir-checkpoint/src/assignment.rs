//! Restore assignment (Flink's `StateAssignmentOperation` and the checks of
//! `Checkpoints.loadAndValidateCheckpoint`): which snapshot handles each subtask of the
//! new job restores from. Pure: no I/O.
//!
//! Rules:
//! - Old vertices are matched to new ones by [`OperatorId`]: a new vertex takes every
//!   old [`TaskState`] that shares an operator with its chain (one old task may feed
//!   several new vertices when a chain was split; the task then restores only its own
//!   operators' state from the handle).
//! - An old task none of whose operators exists any more is an error if it has state
//!   (Flink's "Failed to rollback to checkpoint/savepoint …") unless
//!   `allow_non_restored_state`; stateless ones are skipped silently, as in Flink.
//!   Operators that vanished from a chain that is still matched are not detected: the
//!   handle covers the whole chain.
//! - Max parallelism: a new vertex whose max parallelism was configured explicitly must
//!   have the restored one ("Max parallelism mismatch …"); otherwise the restored one
//!   replaces the default, and is returned as the vertex's effective max parallelism.
//!   A new parallelism above it is an error ("The state for task … can not be
//!   restored …").
//! - Parallelism unchanged: subtask `i` gets old subtask `i`'s handle, plus the handles
//!   of the other old subtasks whose snapshot holds union list state, marked
//!   `union_only` (Flink hands every subtask the union on every restore). Parallelism
//!   changed: every subtask gets **all** old handles with their key-group ranges. Keyed
//!   state is then read only for the key groups the new subtask owns, and operator list
//!   state (not keyed) is redistributed by the task itself, which needs every handle.
//! - Finished subtasks (checkpoints after tasks finish): a new subtask is restored as
//!   finished when the old subtask of its index finished at an unchanged parallelism,
//!   or when every old subtask of its vertex finished (any parallelism). Finished old
//!   subtasks have no state, so at a changed parallelism the unfinished ones' state is
//!   redistributed alone (a finished source's splits were read to their end). A
//!   subtask restored as finished whose upstream subtasks are not all restored as
//!   finished is an error: it would drop their records.
//! - Only subtasks with at least one handle, or restored as finished, get a
//!   [`TaskRestore`].

use std::collections::BTreeMap;

use weir_core::checkpoint::StreamStateHandle;
use weir_core::ids::OperatorId;
use weir_core::{CheckpointId, KeyGroupRange};

use crate::coordinator::{TaskKey, VertexInfo};
use crate::error::CheckpointError;
use crate::metadata::{CheckpointMetadata, TaskState};

/// A vertex of the job being started, for a restore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreVertex {
    /// The vertex.
    pub info: VertexInfo,
    /// Whether its max parallelism was set explicitly (operator or
    /// `pipeline.max-parallelism`) rather than derived from the parallelism.
    pub max_parallelism_configured: bool,
}

/// One snapshot handle to restore from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreHandle {
    /// The subtask of the old job that wrote it.
    pub old_subtask: u32,
    /// The key groups it covers.
    pub key_group_range: KeyGroupRange,
    /// The snapshot.
    pub handle: StreamStateHandle,
    /// Handed over only for its union list state: the parallelism is unchanged and the
    /// handle belongs to another subtask, whose keyed and list state stay its own.
    pub union_only: bool,
}

/// What one new subtask restores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRestore {
    /// The checkpoint restored from.
    pub checkpoint_id: CheckpointId,
    /// The handles, ordered by old vertex then old subtask.
    pub handles: Vec<RestoreHandle>,
    /// Restored as finished: the subtask runs none of its operators.
    pub finished: bool,
}

/// The result of [`assign_restore`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreAssignment {
    /// The checkpoint restored from.
    pub checkpoint_id: CheckpointId,
    /// The effective max parallelism of each new vertex (same order as the input).
    pub max_parallelism: Vec<u32>,
    /// The restore of each new subtask that has state.
    pub tasks: BTreeMap<TaskKey, TaskRestore>,
}

/// Computes the restore of every subtask of `vertices` from `metadata`, read from
/// `path` (named in errors). See the module documentation for the rules.
pub fn assign_restore(
    metadata: &CheckpointMetadata,
    path: &str,
    vertices: &[RestoreVertex],
    allow_non_restored_state: bool,
) -> Result<RestoreAssignment, CheckpointError> {
    let mut matched: Vec<Vec<&TaskState>> = vec![Vec::new(); vertices.len()];
    for task in &metadata.tasks {
        let targets: Vec<usize> = vertices
            .iter()
            .enumerate()
            .filter(|(_, v)| v.info.operator_ids.iter().any(|op| task.operator_ids.contains(op)))
            .map(|(i, _)| i)
            .collect();
        if targets.is_empty() {
            let has_state = task.subtasks.iter().any(|s| s.handle.is_some());
            if has_state && !allow_non_restored_state {
                let operator = task.operator_ids.first().copied().unwrap_or(OperatorId(0));
                return Err(CheckpointError::UnmappedState {
                    path: path.to_string(),
                    operator,
                });
            }
            continue;
        }
        for i in targets {
            matched[i].push(task);
        }
    }

    let mut max_parallelism = Vec::with_capacity(vertices.len());
    let mut tasks = BTreeMap::new();
    for (vertex, (new, old_tasks)) in vertices.iter().zip(&matched).enumerate() {
        let mut effective = new.info.max_parallelism;
        let mut restored: Option<u32> = None;
        for old in old_tasks {
            let operator = new
                .info
                .operator_ids
                .iter()
                .find(|op| old.operator_ids.contains(op))
                .copied()
                .unwrap_or(OperatorId(0));
            let mismatch = |new_max: u32| CheckpointError::MaxParallelismMismatch {
                operator,
                restored: old.max_parallelism,
                new: new_max,
            };
            if new.max_parallelism_configured && old.max_parallelism != new.info.max_parallelism {
                return Err(mismatch(new.info.max_parallelism));
            }
            match restored {
                Some(r) if r != old.max_parallelism => return Err(mismatch(r)),
                _ => restored = Some(old.max_parallelism),
            }
        }
        if let Some(r) = restored {
            effective = r;
            if new.info.parallelism > r {
                return Err(CheckpointError::ParallelismAboveMax {
                    vertex: new.info.vertex_id,
                    max_parallelism: r,
                    parallelism: new.info.parallelism,
                });
            }
        }
        max_parallelism.push(effective);
        for subtask in 0..new.info.parallelism {
            let handles: Vec<RestoreHandle> = old_tasks
                .iter()
                .flat_map(|old| handles_for(old, new.info.parallelism, subtask))
                .collect();
            let finished = !old_tasks.is_empty()
                && old_tasks
                    .iter()
                    .all(|old| finished_in(old, new.info.parallelism, subtask));
            if !handles.is_empty() || finished {
                tasks.insert(
                    TaskKey { vertex, subtask },
                    TaskRestore {
                        checkpoint_id: metadata.checkpoint_id,
                        handles,
                        finished,
                    },
                );
            }
        }
    }
    check_finished_upstream(&tasks, vertices, path)?;
    Ok(RestoreAssignment {
        checkpoint_id: metadata.checkpoint_id,
        max_parallelism,
        tasks,
    })
}

/// Whether new subtask `subtask` of `parallelism` is finished according to `old`.
fn finished_in(old: &TaskState, parallelism: u32, subtask: u32) -> bool {
    if old.parallelism == parallelism {
        old.subtasks.iter().any(|s| s.subtask == subtask && s.finished)
    } else {
        old.subtasks.len() == old.parallelism as usize && old.subtasks.iter().all(|s| s.finished)
    }
}

/// Every subtask restored as finished must read only from subtasks restored as
/// finished.
fn check_finished_upstream(
    tasks: &BTreeMap<TaskKey, TaskRestore>,
    vertices: &[RestoreVertex],
    path: &str,
) -> Result<(), CheckpointError> {
    let is_finished = |key: &TaskKey| tasks.get(key).is_some_and(|r| r.finished);
    for (key, _) in tasks.iter().filter(|(_, r)| r.finished) {
        let Some(v) = vertices.get(key.vertex) else { continue };
        let upstream = v
            .info
            .upstream
            .get(key.subtask as usize)
            .map_or(&[][..], |u| u.as_slice());
        if let Some(up) = upstream.iter().flat_map(|r| r.keys()).find(|u| !is_finished(u)) {
            return Err(CheckpointError::FinishedAfterUnfinished {
                path: path.to_string(),
                vertex: v.info.name.clone(),
                subtask: key.subtask,
                upstream: vertices
                    .get(up.vertex)
                    .map_or_else(String::new, |u| u.info.name.clone()),
                upstream_subtask: up.subtask,
            });
        }
    }
    Ok(())
}

/// The handles of `old` that new subtask `subtask` of `parallelism` restores.
fn handles_for(old: &TaskState, parallelism: u32, subtask: u32) -> Vec<RestoreHandle> {
    let same_parallelism = old.parallelism == parallelism;
    old.subtasks
        .iter()
        .filter(|s| !same_parallelism || s.subtask == subtask || s.union_state)
        .filter_map(|s| {
            s.handle.clone().map(|handle| RestoreHandle {
                old_subtask: s.subtask,
                key_group_range: s.key_group_range,
                handle,
                union_only: same_parallelism && s.subtask != subtask,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::SubtaskState;
    use weir_core::ids::{JobId, JobVertexId};
    use weir_core::SnapshotType;

    fn inline(b: u8) -> Option<StreamStateHandle> {
        Some(StreamStateHandle::Inline(vec![b]))
    }

    fn old_task(
        vertex: u128,
        ops: &[u128],
        parallelism: u32,
        max: u32,
        handles: &[Option<StreamStateHandle>],
    ) -> TaskState {
        TaskState {
            vertex_id: JobVertexId(vertex),
            vertex_name: format!("v{vertex}"),
            operator_ids: ops.iter().map(|o| OperatorId(*o)).collect(),
            parallelism,
            max_parallelism: max,
            subtasks: handles
                .iter()
                .enumerate()
                .map(|(i, h)| SubtaskState {
                    subtask: i as u32,
                    key_group_range: KeyGroupRange::for_subtask(max, parallelism, i as u32),
                    handle: h.clone(),
                    state_size: 1,
                    union_state: false,
                    finished: false,
                    shared_state: Vec::new(),
                })
                .collect(),
        }
    }

    fn metadata(tasks: Vec<TaskState>) -> CheckpointMetadata {
        CheckpointMetadata {
            job_id: JobId(1),
            checkpoint_id: 9,
            timestamp: 0,
            snapshot_type: SnapshotType::Savepoint,
            tasks,
        }
    }

    fn new_vertex(ops: &[u128], parallelism: u32, max: u32, configured: bool) -> RestoreVertex {
        RestoreVertex {
            info: VertexInfo {
                vertex_id: JobVertexId(100 + ops[0]),
                name: "new".to_string(),
                parallelism,
                max_parallelism: max,
                operator_ids: ops.iter().map(|o| OperatorId(*o)).collect(),
                is_source: false,
                upstream: Vec::new(),
            },
            max_parallelism_configured: configured,
        }
    }

    #[test]
    fn at_the_same_parallelism_handles_with_union_state_go_to_every_subtask_as_union_only() {
        let mut old = old_task(1, &[11], 3, 128, &[inline(0), inline(1), inline(2)]);
        old.subtasks[2].union_state = true;
        let vertices = vec![new_vertex(&[11], 3, 128, false)];
        let plan = assign_restore(&metadata(vec![old]), "chk", &vertices, false).unwrap();
        let restore = &plan.tasks[&TaskKey { vertex: 0, subtask: 0 }];
        let got: Vec<(u32, bool)> = restore.handles.iter().map(|h| (h.old_subtask, h.union_only)).collect();
        assert_eq!(got, vec![(0, false), (2, true)]);
        let own = &plan.tasks[&TaskKey { vertex: 0, subtask: 2 }];
        assert_eq!(
            own.handles
                .iter()
                .map(|h| (h.old_subtask, h.union_only))
                .collect::<Vec<_>>(),
            vec![(2, false)]
        );
    }

    /// `old_task` with the subtasks in `finished` finished (and stateless).
    fn with_finished(mut task: TaskState, finished: &[u32]) -> TaskState {
        for s in task.subtasks.iter_mut().filter(|s| finished.contains(&s.subtask)) {
            s.finished = true;
            s.handle = None;
        }
        task
    }

    fn finished_subtasks(plan: &RestoreAssignment, vertex: usize) -> Vec<u32> {
        plan.tasks
            .iter()
            .filter(|(k, r)| k.vertex == vertex && r.finished)
            .map(|(k, _)| k.subtask)
            .collect()
    }

    #[test]
    fn at_the_same_parallelism_a_finished_subtask_is_restored_as_finished_without_state() {
        let old = with_finished(old_task(1, &[11], 2, 128, &[inline(0), inline(1)]), &[1]);
        let plan = assign_restore(&metadata(vec![old]), "chk", &[new_vertex(&[11], 2, 128, false)], false).unwrap();
        assert_eq!(finished_subtasks(&plan, 0), vec![1]);
        assert!(plan.tasks[&TaskKey { vertex: 0, subtask: 1 }].handles.is_empty());
        assert_eq!(plan.tasks[&TaskKey { vertex: 0, subtask: 0 }].handles.len(), 1);
    }

    #[test]
    fn at_a_new_parallelism_only_a_fully_finished_vertex_is_restored_as_finished() {
        let partly = with_finished(old_task(1, &[11], 2, 128, &[inline(0), inline(1)]), &[0]);
        let plan = assign_restore(
            &metadata(vec![partly]),
            "chk",
            &[new_vertex(&[11], 3, 128, false)],
            false,
        )
        .unwrap();
        assert!(finished_subtasks(&plan, 0).is_empty());
        for subtask in 0..3 {
            let olds: Vec<u32> = plan.tasks[&TaskKey { vertex: 0, subtask }]
                .handles
                .iter()
                .map(|h| h.old_subtask)
                .collect();
            assert_eq!(olds, vec![1], "only the unfinished subtask's state is redistributed");
        }
        let fully = with_finished(old_task(1, &[11], 2, 128, &[None, None]), &[0, 1]);
        let plan = assign_restore(
            &metadata(vec![fully]),
            "chk",
            &[new_vertex(&[11], 3, 128, false)],
            false,
        )
        .unwrap();
        assert_eq!(finished_subtasks(&plan, 0), vec![0, 1, 2]);
    }

    #[test]
    fn a_finished_subtask_fed_by_an_unfinished_one_is_an_illegal_modification() {
        let source = old_task(1, &[11], 1, 128, &[inline(0)]);
        let sink = with_finished(old_task(2, &[21], 1, 128, &[None]), &[0]);
        let mut vertices = vec![new_vertex(&[11], 1, 128, false), new_vertex(&[21], 1, 128, false)];
        vertices[1].info.name = "Sink".to_string();
        vertices[0].info.name = "Source".to_string();
        vertices[1].info.upstream = vec![vec![crate::UpstreamRange {
            vertex: 0,
            subtasks: 0..1,
        }]];
        let err = assign_restore(&metadata(vec![source, sink]), "/sp", &vertices, false).unwrap_err();
        assert!(
            matches!(&err, CheckpointError::FinishedAfterUnfinished { vertex, upstream, .. }
                if vertex == "Sink" && upstream == "Source"),
            "{err}"
        );
        assert!(err.to_string().contains("/sp"), "{err}");
    }

    #[test]
    fn with_the_same_parallelism_subtask_i_gets_exactly_old_subtask_i() {
        let m = metadata(vec![old_task(1, &[10, 11], 3, 128, &[inline(0), None, inline(2)])]);
        let a = assign_restore(&m, "/sp", &[new_vertex(&[10, 11], 3, 128, false)], false).unwrap();
        assert_eq!(a.checkpoint_id, 9);
        assert_eq!(a.max_parallelism, vec![128]);
        assert_eq!(a.tasks.len(), 2, "the stateless subtask 1 gets nothing");
        let t0 = &a.tasks[&TaskKey { vertex: 0, subtask: 0 }];
        assert_eq!(t0.handles.len(), 1);
        assert_eq!(t0.handles[0].old_subtask, 0);
        assert_eq!(t0.handles[0].key_group_range, KeyGroupRange::new(0, 42));
        assert_eq!(
            a.tasks[&TaskKey { vertex: 0, subtask: 2 }].handles[0].handle,
            inline(2).unwrap()
        );
    }

    #[test]
    fn with_a_new_parallelism_every_subtask_gets_all_old_handles() {
        let m = metadata(vec![old_task(1, &[10], 2, 128, &[inline(0), inline(1)])]);
        let a = assign_restore(&m, "/sp", &[new_vertex(&[10], 3, 128, false)], false).unwrap();
        assert_eq!(a.tasks.len(), 3);
        for t in a.tasks.values() {
            let olds: Vec<u32> = t.handles.iter().map(|h| h.old_subtask).collect();
            assert_eq!(olds, vec![0, 1]);
        }
    }

    #[test]
    fn state_of_a_removed_operator_fails_unless_allowed() {
        let m = metadata(vec![
            old_task(1, &[10], 1, 128, &[inline(0)]),
            old_task(2, &[20], 1, 128, &[inline(1)]),
        ]);
        let vertices = [new_vertex(&[10], 1, 128, false)];
        let err = assign_restore(&m, "/sp/savepoint-1", &vertices, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "Failed to rollback to checkpoint/savepoint /sp/savepoint-1. Cannot map checkpoint/savepoint state \
                 for operator {} to the new program, because the operator is not available in the new program. If \
                 you want to allow to skip this, you can set the --allowNonRestoredState option on the CLI.",
                OperatorId(20)
            )
        );
        let a = assign_restore(&m, "/sp/savepoint-1", &vertices, true).unwrap();
        assert_eq!(a.tasks.len(), 1);
    }

    #[test]
    fn a_removed_stateless_operator_is_skipped_silently() {
        let m = metadata(vec![
            old_task(1, &[10], 1, 128, &[inline(0)]),
            old_task(2, &[20], 2, 128, &[None, None]),
        ]);
        assert!(assign_restore(&m, "/sp", &[new_vertex(&[10], 1, 128, false)], false).is_ok());
    }

    #[test]
    fn an_explicit_different_max_parallelism_is_a_mismatch() {
        let m = metadata(vec![old_task(1, &[10], 2, 128, &[inline(0), inline(1)])]);
        let err = assign_restore(&m, "/sp", &[new_vertex(&[10], 2, 256, true)], false).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "Max parallelism mismatch between checkpoint/savepoint state and new program. Cannot map operator {} \
                 with max parallelism 128 to new program with max parallelism 256. This indicates that the program \
                 has been changed in a non-compatible way after the checkpoint/savepoint.",
                OperatorId(10)
            )
        );
    }

    #[test]
    fn a_default_max_parallelism_is_replaced_by_the_restored_one() {
        let m = metadata(vec![old_task(1, &[10], 2, 256, &[inline(0), inline(1)])]);
        let a = assign_restore(
            &m,
            "/sp",
            &[new_vertex(&[10], 2, 128, false), new_vertex(&[30], 2, 128, false)],
            false,
        )
        .unwrap();
        assert_eq!(a.max_parallelism, vec![256, 128]);
    }

    #[test]
    fn a_parallelism_above_the_restored_max_parallelism_is_an_error() {
        let m = metadata(vec![old_task(1, &[10], 2, 128, &[inline(0), inline(1)])]);
        let err = assign_restore(&m, "/sp", &[new_vertex(&[10], 130, 256, false)], false).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "The state for task {} can not be restored. The maximum parallelism (128) of the restored state is \
                 lower than the configured parallelism (130). Please reduce the parallelism of the task to be lower \
                 or equal to the maximum parallelism.",
                JobVertexId(110)
            )
        );
    }

    #[test]
    fn a_split_chain_gives_the_old_handle_to_each_new_vertex_and_merged_chains_get_both() {
        let m = metadata(vec![
            old_task(1, &[10, 11], 1, 128, &[inline(1)]),
            old_task(2, &[20], 1, 128, &[inline(2)]),
        ]);
        let a = assign_restore(
            &m,
            "/sp",
            &[new_vertex(&[10], 1, 128, false), new_vertex(&[11, 20], 1, 128, false)],
            false,
        )
        .unwrap();
        assert_eq!(a.tasks[&TaskKey { vertex: 0, subtask: 0 }].handles.len(), 1);
        assert_eq!(a.tasks[&TaskKey { vertex: 1, subtask: 0 }].handles.len(), 2);
    }
}
