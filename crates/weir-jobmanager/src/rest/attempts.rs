//! One execution attempt of a subtask for the REST backend
//! (`/jobs/:jid/vertices/:vid/subtasks/:idx/attempts/:attempt` and its accumulators):
//! the current attempt or an earlier one from the subtask's history, with the detail
//! [`crate::rest::vertex`] gives the current one (an earlier attempt's TaskManager is
//! shown while it is still known, else `(unassigned)`).
//!
//! Which attempt a number names is [`select_attempt`], a plain function: the current
//! attempt's number is the current attempt, a smaller one the prior attempt of that
//! number (Flink's 404 `Attempt <n> not found in subtask …` if the history lacks it),
//! anything larger Flink's 404 `Invalid attempt num <n>`.

use crate::job_master::JobMaster;
use crate::jobmanager::State;
use crate::rest::vertex::{find_vertex, subtask_detail};
use weir_graph::Execution;
use weir_rest::{attempt_not_found, invalid_attempt, RestError, SubtaskAttempt};

/// Why a number names no attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoSuchAttempt {
    /// Beyond the current attempt.
    Invalid,
    /// Before the current attempt, but not in the history.
    NotKept,
}

/// The attempt numbered `attempt` among the `current` one and the `prior` ones.
pub(crate) fn select_attempt<'a>(
    current: &'a Execution,
    prior: &'a [Execution],
    attempt: u32,
) -> Result<&'a Execution, NoSuchAttempt> {
    if attempt == current.attempt_number {
        return Ok(current);
    }
    if attempt > current.attempt_number {
        return Err(NoSuchAttempt::Invalid);
    }
    prior
        .iter()
        .find(|e| e.attempt_number == attempt)
        .ok_or(NoSuchAttempt::NotKept)
}

/// Attempt `attempt` of subtask `subtask` of vertex `vertex_id` of `jm`, or Flink's 404s
/// (unknown vertex, subtask index beyond the parallelism, no such attempt).
pub(crate) fn subtask_attempt(
    st: &State,
    jm: &JobMaster,
    vertex_id: &str,
    subtask: u32,
    attempt: u32,
    now: i64,
) -> Result<SubtaskAttempt, RestError> {
    let (_, v) = find_vertex(jm, vertex_id)?;
    let t = v
        .task_vertices
        .get(subtask as usize)
        .ok_or_else(|| RestError::subtask_not_found(vertex_id))?;
    let e = select_attempt(&t.current, &t.prior_attempts, attempt).map_err(|why| match why {
        NoSuchAttempt::Invalid => invalid_attempt(i64::from(attempt)),
        NoSuchAttempt::NotKept => {
            attempt_not_found(attempt, &format!("{} ({}/{})", v.name, subtask + 1, v.parallelism))
        }
    })?;
    Ok(SubtaskAttempt {
        detail: subtask_detail(st, jm, subtask, e, now),
        attempt_id: e.attempt_id.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_names_the_current_or_a_prior_attempt_and_nothing_else() {
        let prior = vec![Execution::new(0, 1), Execution::new(1, 2)];
        let current = Execution::new(2, 3);
        let pick = |n| select_attempt(&current, &prior, n).map(|e| e.attempt_id);
        assert_eq!(pick(2), Ok(current.attempt_id));
        assert_eq!(pick(0), Ok(prior[0].attempt_id));
        assert_eq!(pick(1), Ok(prior[1].attempt_id));
        assert_eq!(pick(3), Err(NoSuchAttempt::Invalid));
        assert_eq!(
            select_attempt(&current, &prior[1..], 0).map(|e| e.attempt_id),
            Err(NoSuchAttempt::NotKept)
        );
    }
}
