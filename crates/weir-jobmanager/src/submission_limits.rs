//! Bounds of one job submission, checked before anything is allocated per subtask:
//! the number of subtasks (the sum of every vertex's parallelism) is at most
//! `jobmanager.submission.max-subtasks`, so one POST /jobs cannot make the JobManager
//! allocate without bound.

use thiserror::Error;
use weir_graph::JobGraph;

/// The key bounding a submission's subtasks.
pub const MAX_SUBTASKS_KEY: &str = "jobmanager.submission.max-subtasks";

/// A submission beyond the configured bounds.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SubmissionTooLarge {
    /// More subtasks than allowed.
    #[error("the job has {subtasks} subtasks (the sum of its vertices' parallelism; the largest vertex '{vertex}' has {parallelism}), more than the limit of {limit} ({key})", key = MAX_SUBTASKS_KEY)]
    TooManySubtasks {
        /// Sum of the vertices' parallelism.
        subtasks: u64,
        /// The vertex of the highest parallelism.
        vertex: String,
        /// Its parallelism.
        parallelism: u32,
        /// The configured ceiling.
        limit: u32,
    },
}

/// Refuses a job graph whose subtasks exceed `limit`.
pub fn check_submission_size(job_graph: &JobGraph, limit: u32) -> Result<(), SubmissionTooLarge> {
    let subtasks: u64 = job_graph.vertices.iter().map(|v| u64::from(v.parallelism)).sum();
    if subtasks <= u64::from(limit) {
        return Ok(());
    }
    let largest = job_graph.vertices.iter().max_by_key(|v| v.parallelism);
    Err(SubmissionTooLarge::TooManySubtasks {
        subtasks,
        vertex: largest.map(|v| v.name.clone()).unwrap_or_default(),
        parallelism: largest.map_or(0, |v| v.parallelism),
        limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_graph::{ChainingStrategy, ExecutionConfig, NodeKind, Partitioner, StreamEdge, StreamGraph, StreamNode};

    /// A source and a keyed sum of parallelism `p` behind a hash edge.
    fn keyed(p: u32) -> JobGraph {
        let node = |id: u32| StreamNode {
            id,
            name: if id == 0 { "Source".into() } else { "Sum".into() },
            kind: if id == 0 { NodeKind::Source } else { NodeKind::Operator },
            parallelism: p,
            parallelism_configured: false,
            source_splits: None,
            max_parallelism: None,
            chaining_strategy: ChainingStrategy::Always,
            slot_sharing_group: "default".into(),
            uid: None,
            keyed: id == 1,
        };
        let g = StreamGraph {
            job_name: "j".into(),
            config: ExecutionConfig::default(),
            nodes: vec![node(0), node(1)],
            edges: vec![StreamEdge {
                source: 0,
                target: 1,
                partitioner: Partitioner::Hash,
                input: 0,
            }],
        };
        JobGraph::from_stream_graph(&g).unwrap()
    }

    #[test]
    fn a_job_of_more_subtasks_than_the_limit_is_refused_naming_the_key() {
        let graph = keyed(32768);
        let err = check_submission_size(&graph, 16384).unwrap_err().to_string();
        assert!(err.contains("65536 subtasks"), "{err}");
        assert!(err.contains("has 32768"), "{err}");
        assert!(err.contains("limit of 16384 (jobmanager.submission.max-subtasks)"), "{err}");
        assert_eq!(check_submission_size(&graph, 65536), Ok(()));
        assert_eq!(check_submission_size(&keyed(4), 8), Ok(()));
    }
}
