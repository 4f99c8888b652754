//! The ExecutionGraph: every JobVertex expanded into its parallel subtasks.
//!
//! Owns the executions of subtasks (their lifecycle is [`ExecutionState`], as in
//! Flink's `Execution`), the per-subtask attempt history ([`ExecutionVertex`]), the
//! aggregate vertex status (Flink's `getAggregateJobVertexState`), the slot count of a
//! job (flink-facts §4) and the subtask wiring of an edge (Flink's
//! `EdgeManagerBuildUtil` and `VertexInputInfoComputationUtils`).
//!
//! Invariants:
//! - an [`Execution`] only changes state through [`Execution::transition`], which rejects
//!   every move [`ExecutionState::can_transition_to`] forbids, so a terminal state is
//!   final and its timestamps are in lifecycle order;
//! - an [`ExecutionVertex`] has exactly one current execution; older ones are in
//!   `prior_attempts`, oldest first, and attempt numbers count up from 0 without gaps;
//! - `ExecutionGraph::job_vertices[i]` is `JobGraph::vertices[i]`, and its
//!   `task_vertices[k]` is subtask `k`;
//! - on every edge each produced subpartition is read by exactly one consumer subtask,
//!   and every consumer reads at least one subpartition.

use crate::error::GraphError;
pub use crate::execution_state::ExecutionState;
use crate::job_graph::JobGraph;
use crate::stream_graph::DistributionPattern;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};
use weir_core::ids::{ExecutionAttemptId, JobId, JobVertexId};

/// Milliseconds since the Unix epoch by the wall clock (0 if the clock is before 1970).
fn wall_clock_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// One attempt to run a subtask (Flink's `Execution`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    /// Random id of this attempt.
    pub attempt_id: ExecutionAttemptId,
    /// 0 for the first attempt of the subtask, then 1, 2, …
    pub attempt_number: u32,
    /// Current state.
    pub state: ExecutionState,
    /// When each state was entered, in ms since the epoch.
    pub state_timestamps: BTreeMap<ExecutionState, i64>,
    /// The failure cause, once FAILED.
    pub failure: Option<String>,
}

impl Execution {
    /// A new attempt in CREATED, entered at `now_ms`.
    pub fn new(attempt_number: u32, now_ms: i64) -> Self {
        Self {
            attempt_id: ExecutionAttemptId::random(),
            attempt_number,
            state: ExecutionState::Created,
            state_timestamps: BTreeMap::from([(ExecutionState::Created, now_ms)]),
            failure: None,
        }
    }

    /// Moves to `next` at `now_ms`, or fails with [`GraphError::IllegalTransition`]
    /// (leaving the execution unchanged) if the lifecycle forbids it.
    pub fn transition(&mut self, next: ExecutionState, now_ms: i64) -> Result<(), GraphError> {
        if !self.state.can_transition_to(next) {
            return Err(GraphError::IllegalTransition {
                from: self.state,
                to: next,
            });
        }
        self.state = next;
        self.state_timestamps.insert(next, now_ms);
        Ok(())
    }

    /// Moves a live attempt to CANCELED at `now_ms` (every live state may); false,
    /// and nothing changes, for an attempt that already ended.
    pub fn cancel(&mut self, now_ms: i64) -> bool {
        // The lifecycle lets every live state cancel, so it refuses only an ended attempt.
        self.transition(ExecutionState::Canceled, now_ms).is_ok()
    }

    /// Moves to FAILED at `now_ms` and records `cause`.
    pub fn fail(&mut self, cause: impl Into<String>, now_ms: i64) -> Result<(), GraphError> {
        self.transition(ExecutionState::Failed, now_ms)?;
        self.failure = Some(cause.into());
        Ok(())
    }

    /// When `state` was entered, if it was.
    pub fn state_timestamp(&self, state: ExecutionState) -> Option<i64> {
        self.state_timestamps.get(&state).copied()
    }
}

/// One parallel subtask of a vertex with its attempts (Flink's `ExecutionVertex`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionVertex {
    /// Index of the vertex in `JobGraph::vertices`.
    pub job_vertex: usize,
    /// Index of this subtask, `0..parallelism`.
    pub subtask_index: u32,
    /// The vertex's parallelism.
    pub parallelism: u32,
    /// The current attempt.
    pub current: Execution,
    /// Earlier attempts, oldest first.
    pub prior_attempts: Vec<Execution>,
}

impl ExecutionVertex {
    /// Subtask `subtask_index` of `job_vertex` with a first attempt created at `now_ms`.
    pub fn new(job_vertex: usize, subtask_index: u32, parallelism: u32, now_ms: i64) -> Self {
        Self {
            job_vertex,
            subtask_index,
            parallelism,
            current: Execution::new(0, now_ms),
            prior_attempts: Vec::new(),
        }
    }

    /// The state of the current attempt.
    pub fn state(&self) -> ExecutionState {
        self.current.state
    }

    /// Archives the current attempt and starts the next one (attempt number + 1) in
    /// CREATED at `now_ms`. Like Flink, refuses while the current attempt is not terminal.
    pub fn reset_for_new_execution(&mut self, now_ms: i64) -> Result<(), GraphError> {
        if !self.current.state.is_terminal() {
            return Err(GraphError::ResetNonTerminal {
                state: self.current.state,
            });
        }
        let next = Execution::new(self.current.attempt_number.saturating_add(1), now_ms);
        let old = std::mem::replace(&mut self.current, next);
        self.prior_attempts.push(old);
        Ok(())
    }

    /// Flink's task name with subtask, e.g. `Map (2/4)` for subtask 1 of 4.
    pub fn task_name_with_subtask(&self, vertex_name: &str) -> String {
        format!("{vertex_name} ({}/{})", self.subtask_index + 1, self.parallelism)
    }
}

/// All subtasks of one JobVertex (Flink's `ExecutionJobVertex`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionJobVertex {
    /// Index of the vertex in `JobGraph::vertices`.
    pub job_vertex: usize,
    /// The vertex id.
    pub id: JobVertexId,
    /// The vertex (chain) name.
    pub name: String,
    /// Number of subtasks.
    pub parallelism: u32,
    /// Resolved max parallelism.
    pub max_parallelism: u32,
    /// Slot sharing group.
    pub slot_sharing_group: String,
    /// The subtasks; `task_vertices[k]` is subtask `k`.
    pub task_vertices: Vec<ExecutionVertex>,
}

impl ExecutionJobVertex {
    /// Number of subtasks per state of their current attempt; every state is present
    /// (with 0 when none), as in the REST API's `tasks`.
    pub fn state_counts(&self) -> BTreeMap<ExecutionState, u32> {
        let mut counts: BTreeMap<ExecutionState, u32> = ExecutionState::ALL.iter().map(|s| (*s, 0)).collect();
        for tv in &self.task_vertices {
            *counts.entry(tv.state()).or_insert(0) += 1;
        }
        counts
    }

    /// The vertex status shown in dashboards (see [`aggregate_execution_state`]).
    pub fn aggregate_state(&self) -> ExecutionState {
        aggregate_execution_state(&self.state_counts(), self.parallelism)
    }
}

/// Flink's `ExecutionJobVertex.getAggregateJobVertexState`: any FAILED → FAILED, else any
/// CANCELING → CANCELING, else any CANCELED → CANCELED, else any INITIALIZING →
/// INITIALIZING, else any RUNNING → RUNNING, else any FINISHED → FINISHED if all
/// `parallelism` subtasks finished and RUNNING otherwise, else CREATED.
pub fn aggregate_execution_state(counts: &BTreeMap<ExecutionState, u32>, parallelism: u32) -> ExecutionState {
    let count = |s: ExecutionState| counts.get(&s).copied().unwrap_or(0);
    use ExecutionState::*;
    for state in [Failed, Canceling, Canceled, Initializing, Running] {
        if count(state) > 0 {
            return state;
        }
    }
    match count(Finished) {
        0 => Created,
        n if n == parallelism => Finished,
        _ => Running,
    }
}

/// The parallel view of a job: one [`ExecutionJobVertex`] per JobVertex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionGraph {
    /// The job's id.
    pub job_id: JobId,
    /// The job's name.
    pub job_name: String,
    /// One entry per JobVertex, in the JobGraph's (topological) order.
    pub job_vertices: Vec<ExecutionJobVertex>,
}

impl ExecutionGraph {
    /// Expands `job_graph`; every subtask gets a first attempt in CREATED stamped with the
    /// wall clock.
    pub fn new(job_id: JobId, job_graph: &JobGraph) -> Self {
        Self::new_at(job_id, job_graph, wall_clock_ms())
    }

    /// As [`ExecutionGraph::new`], with the CREATED timestamp given.
    pub fn new_at(job_id: JobId, job_graph: &JobGraph, now_ms: i64) -> Self {
        let job_vertices = job_graph
            .vertices
            .iter()
            .enumerate()
            .map(|(i, v)| ExecutionJobVertex {
                job_vertex: i,
                id: v.id,
                name: v.name.clone(),
                parallelism: v.parallelism,
                max_parallelism: v.max_parallelism,
                slot_sharing_group: v.slot_sharing_group.clone(),
                task_vertices: (0..v.parallelism)
                    .map(|k| ExecutionVertex::new(i, k, v.parallelism, now_ms))
                    .collect(),
            })
            .collect();
        Self {
            job_id,
            job_name: job_graph.job_name.clone(),
            job_vertices,
        }
    }

    /// Subtask `subtask` of vertex `job_vertex`, if both exist.
    pub fn execution_vertex(&self, job_vertex: usize, subtask: u32) -> Option<&ExecutionVertex> {
        self.job_vertices.get(job_vertex)?.task_vertices.get(subtask as usize)
    }

    /// Mutable access to subtask `subtask` of vertex `job_vertex`, if both exist.
    pub fn execution_vertex_mut(&mut self, job_vertex: usize, subtask: u32) -> Option<&mut ExecutionVertex> {
        self.job_vertices
            .get_mut(job_vertex)?
            .task_vertices
            .get_mut(subtask as usize)
    }

    /// `(job_vertex, subtask)` of the subtask whose *current* attempt is `attempt`.
    pub fn find_attempt(&self, attempt: ExecutionAttemptId) -> Option<(usize, u32)> {
        self.job_vertices.iter().find_map(|jv| {
            jv.task_vertices
                .iter()
                .find(|tv| tv.current.attempt_id == attempt)
                .map(|tv| (jv.job_vertex, tv.subtask_index))
        })
    }

    /// Total number of subtasks.
    pub fn num_subtasks(&self) -> u32 {
        self.job_vertices.iter().map(|jv| jv.parallelism).sum()
    }

    /// Number of subtasks per state over the whole job; every state is present.
    pub fn state_counts(&self) -> BTreeMap<ExecutionState, u32> {
        let mut total: BTreeMap<ExecutionState, u32> = ExecutionState::ALL.iter().map(|s| (*s, 0)).collect();
        for jv in &self.job_vertices {
            for (s, n) in jv.state_counts() {
                *total.entry(s).or_insert(0) += n;
            }
        }
        total
    }
}

/// Slots needed per slot sharing group: the highest vertex parallelism in the group
/// (a slot holds at most one subtask of each vertex of its group; flink-facts §4).
pub fn slots_required(job_graph: &JobGraph) -> BTreeMap<String, u32> {
    let mut groups: BTreeMap<String, u32> = BTreeMap::new();
    for v in &job_graph.vertices {
        let slots = groups.entry(v.slot_sharing_group.clone()).or_insert(0);
        *slots = (*slots).max(v.parallelism);
    }
    groups
}

/// Slots needed by the whole job: the sum over groups of [`slots_required`].
pub fn total_slots_required(job_graph: &JobGraph) -> u32 {
    slots_required(job_graph).values().sum()
}

/// Consumers fed by pointwise producer `producer` when producers are fewer than
/// consumers: `[start, end)` (Flink's `connectPointwise`, uneven splits included).
fn pointwise_consumer_range(producer: u64, producers: u64, consumers: u64) -> (u64, u64) {
    let start = (producer * consumers).div_ceil(producers);
    let end = ((producer + 1) * consumers).div_ceil(producers);
    (start, end)
}

/// Producers read by pointwise consumer `consumer` when producers are at least as many
/// as consumers: `[start, end)`.
fn pointwise_producer_range(consumer: u64, producers: u64, consumers: u64) -> (u64, u64) {
    (consumer * producers / consumers, (consumer + 1) * producers / consumers)
}

/// What consumer subtask `consumer_index` reads on an edge: `(producer index,
/// subpartition index)` pairs, in producer order. As Flink wires subtasks:
/// - ALL_TO_ALL: subpartition `consumer_index` of every producer;
/// - POINTWISE, equal parallelism: subpartition 0 of producer `consumer_index`;
/// - POINTWISE, fewer producers (e.g. 2 → 4): one producer, whose contiguous consumer
///   range contains this consumer; the subpartition is `consumer_index % range length`
///   (Flink's `computeConsumedSubpartitionRange`; for even splits the position in the
///   range);
/// - POINTWISE, more producers (e.g. 4 → 2): subpartition 0 of each producer in this
///   consumer's contiguous producer range.
///
/// Empty when a parallelism is 0 or `consumer_index` is out of range.
pub fn consumed_subpartitions(
    pattern: DistributionPattern,
    producer_parallelism: u32,
    consumer_parallelism: u32,
    consumer_index: u32,
) -> Vec<(u32, u32)> {
    let (sp, cp, ci) = (
        u64::from(producer_parallelism),
        u64::from(consumer_parallelism),
        u64::from(consumer_index),
    );
    if sp == 0 || cp == 0 || ci >= cp {
        return Vec::new();
    }
    let narrow = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
    match pattern {
        DistributionPattern::AllToAll => (0..producer_parallelism).map(|p| (p, consumer_index)).collect(),
        DistributionPattern::Pointwise if sp >= cp => {
            let (start, end) = pointwise_producer_range(ci, sp, cp);
            (start..end).map(|p| (narrow(p), 0)).collect()
        }
        DistributionPattern::Pointwise => {
            // The producer whose consumer range holds ci.
            let producer = (0..sp).find(|p| {
                let (start, end) = pointwise_consumer_range(*p, sp, cp);
                (start..end).contains(&ci)
            });
            match producer {
                Some(p) => {
                    let (start, end) = pointwise_consumer_range(p, sp, cp);
                    vec![(narrow(p), narrow(ci % (end - start)))]
                }
                None => Vec::new(),
            }
        }
    }
}

/// Number of subpartitions producer subtask `producer_index` writes on an edge:
/// ALL_TO_ALL → `consumer_parallelism`; POINTWISE → 1 when producers are at least as
/// many as consumers, else the length of its consumer range. 0 when a parallelism is 0
/// or `producer_index` is out of range.
pub fn num_subpartitions(
    pattern: DistributionPattern,
    producer_parallelism: u32,
    consumer_parallelism: u32,
    producer_index: u32,
) -> u32 {
    if producer_parallelism == 0 || consumer_parallelism == 0 || producer_index >= producer_parallelism {
        return 0;
    }
    match pattern {
        DistributionPattern::AllToAll => consumer_parallelism,
        DistributionPattern::Pointwise if producer_parallelism >= consumer_parallelism => 1,
        DistributionPattern::Pointwise => {
            let (start, end) = pointwise_consumer_range(
                u64::from(producer_index),
                u64::from(producer_parallelism),
                u64::from(consumer_parallelism),
            );
            u32::try_from(end - start).unwrap_or(u32::MAX)
        }
    }
}

/// The producer's view of the wiring: for producer subtask `producer_index`,
/// `result[j]` is the consumer subtask that reads its subpartition `j` (so the result
/// has [`num_subpartitions`] entries). Consistent with [`consumed_subpartitions`].
pub fn subpartition_consumers(
    pattern: DistributionPattern,
    producer_parallelism: u32,
    consumer_parallelism: u32,
    producer_index: u32,
) -> Vec<u32> {
    let n = num_subpartitions(pattern, producer_parallelism, consumer_parallelism, producer_index);
    if n == 0 {
        return Vec::new();
    }
    match pattern {
        DistributionPattern::AllToAll => (0..consumer_parallelism).collect(),
        DistributionPattern::Pointwise if producer_parallelism >= consumer_parallelism => {
            // The consumer whose producer range holds producer_index.
            let (sp, cp) = (u64::from(producer_parallelism), u64::from(consumer_parallelism));
            (0..consumer_parallelism)
                .find(|c| {
                    let (start, end) = pointwise_producer_range(u64::from(*c), sp, cp);
                    (start..end).contains(&u64::from(producer_index))
                })
                .into_iter()
                .collect()
        }
        DistributionPattern::Pointwise => {
            let (start, end) = pointwise_consumer_range(
                u64::from(producer_index),
                u64::from(producer_parallelism),
                u64::from(consumer_parallelism),
            );
            let mut by_subpartition = vec![0u32; (end - start) as usize];
            for c in start..end {
                let slot = (c % (end - start)) as usize;
                by_subpartition[slot] = u32::try_from(c).unwrap_or(u32::MAX);
            }
            by_subpartition
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job_graph::tests::{graph, node, wordcount};
    use crate::stream_graph::{NodeKind, Partitioner};
    use std::collections::BTreeSet;
    use ExecutionState::*;

    fn compile(g: &crate::stream_graph::StreamGraph) -> JobGraph {
        match JobGraph::from_stream_graph(g) {
            Ok(jg) => jg,
            Err(e) => panic!("compilation failed: {e}"),
        }
    }

    /// Source p1 -> Map p4 -> Sink p2, all in "default" (flink-facts §4).
    fn slots_example() -> crate::stream_graph::StreamGraph {
        graph(
            vec![
                node(0, "Source: S", NodeKind::Source, 1),
                node(1, "Map", NodeKind::Operator, 4),
                node(2, "Sink: P", NodeKind::Sink, 2),
            ],
            &[(0, 1, Partitioner::Rebalance), (1, 2, Partitioner::Rebalance)],
        )
    }

    #[test]
    fn the_happy_path_through_the_lifecycle_is_legal_and_timestamped() {
        let mut e = Execution::new(0, 10);
        for (i, s) in [Scheduled, Deploying, Initializing, Running, Finished]
            .into_iter()
            .enumerate()
        {
            assert!(e.transition(s, 11 + i as i64).is_ok(), "to {s}");
        }
        assert_eq!(e.state, Finished);
        assert_eq!(e.state_timestamp(Created), Some(10));
        assert_eq!(e.state_timestamp(Running), Some(14));
        assert_eq!(e.state_timestamp(Finished), Some(15));
        assert!(e.state.is_terminal());
    }

    #[test]
    fn any_live_state_may_cancel_or_fail() {
        for s in [Created, Scheduled, Deploying, Initializing, Running, Reconciling] {
            for next in [Canceling, Canceled, Failed] {
                assert!(s.can_transition_to(next), "{s} -> {next}");
            }
        }
        assert!(Canceling.can_transition_to(Canceled));
        assert!(Canceling.can_transition_to(Failed));
        assert!(Created.can_transition_to(Reconciling));
        assert!(Reconciling.can_transition_to(Running));
        assert!(Reconciling.can_transition_to(Finished));
        assert!(Deploying.can_transition_to(Finished));
    }

    #[test]
    fn illegal_transitions_are_rejected_and_leave_the_execution_unchanged() {
        let illegal = [
            (Created, Running),
            (Created, Deploying),
            (Scheduled, Running),
            (Deploying, Running),
            (Running, Scheduled),
            (Running, Running),
            (Running, Initializing),
            (Canceling, Running),
            (Canceling, Canceling),
            (Canceling, Finished),
            (Reconciling, Scheduled),
            (Scheduled, Reconciling),
        ];
        for (from, to) in illegal {
            assert!(!from.can_transition_to(to), "{from} -> {to}");
        }
        for terminal in [Finished, Canceled, Failed] {
            assert!(terminal.is_terminal());
            for next in ExecutionState::ALL {
                assert!(!terminal.can_transition_to(next), "{terminal} -> {next}");
            }
        }
        let mut e = Execution::new(0, 0);
        assert_eq!(
            e.transition(Running, 5),
            Err(GraphError::IllegalTransition {
                from: Created,
                to: Running
            })
        );
        assert_eq!(e.state, Created);
        assert_eq!(e.state_timestamp(Running), None);
        let msg = GraphError::IllegalTransition {
            from: Finished,
            to: Running,
        }
        .to_string();
        assert_eq!(msg, "illegal execution state transition from FINISHED to RUNNING");
    }

    #[test]
    fn cancelling_moves_a_live_attempt_and_leaves_an_ended_one_alone() {
        for s in [
            Created,
            Scheduled,
            Deploying,
            Initializing,
            Running,
            Reconciling,
            Canceling,
        ] {
            let mut e = Execution::new(0, 0);
            e.state = s;
            assert!(e.cancel(7), "{s}");
            assert_eq!(e.state, Canceled);
            assert_eq!(e.state_timestamp(Canceled), Some(7));
        }
        for s in [Finished, Canceled, Failed] {
            let mut e = Execution::new(0, 0);
            e.state = s;
            assert!(!e.cancel(7), "{s}");
            assert_eq!(e.state, s);
            assert_eq!(e.state_timestamp(Canceled), None);
        }
    }

    #[test]
    fn a_failure_records_its_cause() {
        let mut e = Execution::new(0, 0);
        assert!(e.fail("boom", 3).is_ok());
        assert_eq!(e.state, Failed);
        assert_eq!(e.failure.as_deref(), Some("boom"));
        assert!(e.fail("again", 4).is_err());
        assert_eq!(e.failure.as_deref(), Some("boom"));
    }

    #[test]
    fn execution_states_serialise_in_screaming_snake_case() {
        let json = serde_json::to_string(&ExecutionState::ALL).unwrap_or_default();
        assert_eq!(
            json,
            r#"["CREATED","SCHEDULED","DEPLOYING","INITIALIZING","RUNNING","FINISHED","CANCELING","CANCELED","FAILED","RECONCILING"]"#
        );
        for s in ExecutionState::ALL {
            assert_eq!(format!("\"{s}\""), serde_json::to_string(&s).unwrap_or_default());
        }
    }

    #[test]
    fn resetting_a_subtask_archives_the_attempt_and_counts_up() {
        let mut v = ExecutionVertex::new(0, 1, 4, 0);
        assert_eq!(v.task_name_with_subtask("Map"), "Map (2/4)");
        assert_eq!(
            v.reset_for_new_execution(1),
            Err(GraphError::ResetNonTerminal { state: Created })
        );
        let first = v.current.attempt_id;
        assert!(v.current.fail("lost TaskManager", 2).is_ok());
        assert!(v.reset_for_new_execution(3).is_ok());
        assert_eq!(v.current.attempt_number, 1);
        assert_eq!(v.state(), Created);
        assert_eq!(v.current.state_timestamp(Created), Some(3));
        assert_ne!(v.current.attempt_id, first);
        assert_eq!(v.prior_attempts.len(), 1);
        assert_eq!(v.prior_attempts[0].attempt_id, first);
        assert_eq!(v.prior_attempts[0].state, Failed);
    }

    #[test]
    fn execution_graph_expands_every_vertex_into_its_subtasks() {
        let jg = compile(&wordcount());
        let eg = ExecutionGraph::new_at(JobId(7), &jg, 100);
        assert_eq!(eg.job_vertices.len(), 2);
        assert_eq!(eg.num_subtasks(), 4);
        assert_eq!(eg.job_vertices[1].id, jg.vertices[1].id);
        assert_eq!(eg.job_vertices[1].task_vertices[1].subtask_index, 1);
        assert_eq!(eg.state_counts().get(&Created), Some(&4));
        assert_eq!(eg.state_counts().get(&Running), Some(&0));
        let attempt = eg.job_vertices[1].task_vertices[1].current.attempt_id;
        assert_eq!(eg.find_attempt(attempt), Some((1, 1)));
        assert!(eg.execution_vertex(1, 2).is_none());
        assert!(eg.execution_vertex(5, 0).is_none());
        let eg2 = ExecutionGraph::new(JobId(7), &jg);
        assert!(
            eg2.job_vertices[0].task_vertices[0]
                .current
                .state_timestamp(Created)
                .unwrap_or(0)
                > 0
        );
    }

    #[test]
    fn aggregate_vertex_state_follows_flinks_precedence() {
        let jg = compile(&slots_example());
        let mut eg = ExecutionGraph::new_at(JobId(1), &jg, 0);
        let map = 1;
        assert_eq!(eg.job_vertices[map].aggregate_state(), Created);
        let drive = |eg: &mut ExecutionGraph, k: u32, path: &[ExecutionState]| {
            if let Some(tv) = eg.execution_vertex_mut(map, k) {
                for s in path {
                    assert!(tv.current.transition(*s, 1).is_ok());
                }
            }
        };
        let to_running = [Scheduled, Deploying, Initializing, Running];
        drive(&mut eg, 0, &[Scheduled, Deploying, Initializing]);
        assert_eq!(eg.job_vertices[map].aggregate_state(), Initializing);
        drive(&mut eg, 0, &[Running, Finished]);
        assert_eq!(eg.job_vertices[map].aggregate_state(), Running, "some finished");
        drive(&mut eg, 1, &to_running);
        assert_eq!(eg.job_vertices[map].aggregate_state(), Running);
        drive(&mut eg, 2, &[Canceled]);
        assert_eq!(eg.job_vertices[map].aggregate_state(), Canceled);
        drive(&mut eg, 1, &[Canceling]);
        assert_eq!(eg.job_vertices[map].aggregate_state(), Canceling);
        drive(&mut eg, 3, &[Failed]);
        assert_eq!(eg.job_vertices[map].aggregate_state(), Failed);
        let counts = eg.job_vertices[map].state_counts();
        assert_eq!(counts.len(), ExecutionState::ALL.len());
        assert_eq!(
            (
                counts[&Finished],
                counts[&Canceling],
                counts[&Canceled],
                counts[&Failed]
            ),
            (1, 1, 1, 1)
        );

        let mut all = BTreeMap::new();
        all.insert(Finished, 4);
        assert_eq!(aggregate_execution_state(&all, 4), Finished);
        assert_eq!(aggregate_execution_state(&BTreeMap::new(), 4), Created);
        all.insert(Scheduled, 1);
        assert_eq!(aggregate_execution_state(&all, 5), Running);
    }

    #[test]
    fn slots_are_the_highest_parallelism_per_sharing_group() {
        let g = slots_example();
        let jg = compile(&g);
        assert_eq!(total_slots_required(&jg), 4);
        assert_eq!(slots_required(&jg), BTreeMap::from([("default".to_string(), 4)]));

        let mut g = slots_example();
        g.nodes[2].slot_sharing_group = "x".to_string();
        let jg = compile(&g);
        assert_eq!(
            slots_required(&jg),
            BTreeMap::from([("default".to_string(), 4), ("x".to_string(), 2)])
        );
        assert_eq!(total_slots_required(&jg), 6);
    }

    #[test]
    fn all_to_all_wiring_gives_every_consumer_its_own_subpartition_of_every_producer() {
        assert_eq!(num_subpartitions(DistributionPattern::AllToAll, 2, 3, 0), 3);
        assert_eq!(
            consumed_subpartitions(DistributionPattern::AllToAll, 2, 3, 1),
            vec![(0, 1), (1, 1)]
        );
    }

    #[test]
    fn pointwise_wiring_matches_flinks_ranges() {
        let pw = DistributionPattern::Pointwise;
        // Equal parallelism: one to one.
        assert_eq!(consumed_subpartitions(pw, 3, 3, 2), vec![(2, 0)]);
        assert_eq!(num_subpartitions(pw, 3, 3, 2), 1);
        // 2 -> 4: producer 0 feeds 0,1; producer 1 feeds 2,3.
        let got: Vec<_> = (0..4).map(|c| consumed_subpartitions(pw, 2, 4, c)).collect();
        assert_eq!(got, vec![vec![(0, 0)], vec![(0, 1)], vec![(1, 0)], vec![(1, 1)]]);
        assert_eq!(num_subpartitions(pw, 2, 4, 1), 2);
        assert_eq!(subpartition_consumers(pw, 2, 4, 1), vec![2, 3]);
        // 2 -> 5 (uneven): producer 0 feeds 0,1,2; producer 1 feeds 3,4 with Flink's
        // `consumer % range length` subpartition choice.
        assert_eq!(num_subpartitions(pw, 2, 5, 0), 3);
        assert_eq!(num_subpartitions(pw, 2, 5, 1), 2);
        assert_eq!(consumed_subpartitions(pw, 2, 5, 3), vec![(1, 1)]);
        assert_eq!(consumed_subpartitions(pw, 2, 5, 4), vec![(1, 0)]);
        assert_eq!(subpartition_consumers(pw, 2, 5, 1), vec![4, 3]);
        // 4 -> 2: consumer 0 reads producers 0,1; consumer 1 reads 2,3.
        assert_eq!(consumed_subpartitions(pw, 4, 2, 0), vec![(0, 0), (1, 0)]);
        assert_eq!(consumed_subpartitions(pw, 4, 2, 1), vec![(2, 0), (3, 0)]);
        assert_eq!(num_subpartitions(pw, 4, 2, 3), 1);
        assert_eq!(subpartition_consumers(pw, 4, 2, 3), vec![1]);
        // Out of range.
        assert!(consumed_subpartitions(pw, 4, 2, 2).is_empty());
        assert_eq!(num_subpartitions(pw, 4, 2, 4), 0);
        assert!(consumed_subpartitions(pw, 0, 2, 0).is_empty());
    }

    #[test]
    fn every_subpartition_is_consumed_by_exactly_one_consumer() {
        for pattern in [DistributionPattern::Pointwise, DistributionPattern::AllToAll] {
            for sp in 1..=8u32 {
                for cp in 1..=8u32 {
                    let produced: BTreeSet<(u32, u32)> = (0..sp)
                        .flat_map(|p| (0..num_subpartitions(pattern, sp, cp, p)).map(move |s| (p, s)))
                        .collect();
                    let mut consumed = BTreeSet::new();
                    for c in 0..cp {
                        let reads = consumed_subpartitions(pattern, sp, cp, c);
                        assert!(!reads.is_empty(), "{pattern} {sp}->{cp}: consumer {c} reads nothing");
                        for r in reads {
                            assert!(consumed.insert(r), "{pattern} {sp}->{cp}: {r:?} read twice");
                        }
                    }
                    assert_eq!(produced, consumed, "{pattern} {sp}->{cp}");
                    for p in 0..sp {
                        for (s, c) in subpartition_consumers(pattern, sp, cp, p).into_iter().enumerate() {
                            assert!(
                                consumed_subpartitions(pattern, sp, cp, c).contains(&(p, s as u32)),
                                "{pattern} {sp}->{cp}: producer view disagrees"
                            );
                        }
                    }
                }
            }
        }
    }
}
