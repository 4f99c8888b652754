//! Programs built in this process by closures: a process-local table of built
//! pipelines, keyed by the id of the job they run as.
//!
//! A program registered by name is rebuilt by every process that runs part of its job
//! (DESIGN.md, "User code"). A pipeline built on a [`StreamExecutionEnvironment`] by
//! closures has no name; it can only run in the process that built it, on the
//! MiniCluster. Its executor registers the built graph here under the job's id before
//! submitting the job, and the JobManager and TaskExecutors of this process find it
//! through [`ProgramRegistry::build_job`] instead of by name.
//!
//! Invariants:
//! - an entry lives exactly as long as its [`InProcessProgram`] guard: the executor
//!   holds it until the job has ended;
//! - a job id has at most one entry (registering a second is an error);
//! - the invocation of such a job names the program [`IN_PROCESS_PROGRAM`], which no
//!   registry holds: a process without the entry refuses the job with
//!   [`ProgramError::NotInThisProcess`](crate::program::ProgramError::NotInThisProcess).
//!
//! [`StreamExecutionEnvironment`]: crate::StreamExecutionEnvironment
//! [`ProgramRegistry::build_job`]: crate::program::ProgramRegistry::build_job

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, MutexGuard};
use thiserror::Error;
use weir_core::ids::JobId;
use weir_runtime::executor::ExecutableGraph;

/// The program name a job built in-process is submitted under.
pub const IN_PROCESS_PROGRAM: &str = "<in-process>";

static PROGRAMS: LazyLock<Mutex<HashMap<JobId, ExecutableGraph>>> = LazyLock::new(Mutex::default);

fn table() -> MutexGuard<'static, HashMap<JobId, ExecutableGraph>> {
    PROGRAMS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A job id that already has an in-process program.
#[derive(Debug, Error)]
#[error("job {0} already has an in-process program")]
pub struct DuplicateJob(pub JobId);

/// The registration of one job's in-process program; dropping it removes the entry.
#[derive(Debug)]
pub struct InProcessProgram {
    job: JobId,
}

impl InProcessProgram {
    /// Registers `graph` as the program of `job`.
    pub fn register(job: JobId, graph: ExecutableGraph) -> Result<Self, DuplicateJob> {
        let mut programs = table();
        if programs.contains_key(&job) {
            return Err(DuplicateJob(job));
        }
        programs.insert(job, graph);
        Ok(Self { job })
    }

    /// The job the program is registered for.
    pub fn job(&self) -> JobId {
        self.job
    }
}

impl Drop for InProcessProgram {
    fn drop(&mut self) {
        table().remove(&self.job);
    }
}

/// The in-process program of `job`, if this process registered one.
pub fn lookup(job: JobId) -> Option<ExecutableGraph> {
    table().get(&job).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StreamExecutionEnvironment;

    fn graph() -> ExecutableGraph {
        let env = StreamExecutionEnvironment::new();
        env.from_collection(vec![1u64]).discard();
        env.build_graph("in-process").unwrap()
    }

    #[test]
    fn an_entry_lives_as_long_as_its_guard_and_a_job_has_one() {
        let job = JobId::random();
        let guard = InProcessProgram::register(job, graph()).unwrap();
        assert_eq!(guard.job(), job);
        assert_eq!(
            lookup(job).map(|g| g.stream_graph.job_name),
            Some("in-process".to_string())
        );
        let err = InProcessProgram::register(job, graph()).unwrap_err();
        assert_eq!(err.to_string(), format!("job {job} already has an in-process program"));
        drop(guard);
        assert!(lookup(job).is_none());
    }
}
