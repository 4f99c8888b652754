//! Bounds of one job submission, checked before anything is allocated per subtask:
//! the number of subtasks (the sum of every vertex's parallelism) is at most
//! `jobmanager.submission.max-subtasks`, and the number of input channels (what the
//! deployment descriptors grow with: producers times consumers for an all-to-all
//! edge) at most
//! `jobmanager.submission.max-exchange-channels`, so one POST /jobs cannot make the
//! JobManager allocate without bound.

use thiserror::Error;
use weir_graph::{DistributionPattern, JobGraph};

/// The key bounding a submission's subtasks.
pub const MAX_SUBTASKS_KEY: &str = "jobmanager.submission.max-subtasks";
/// The key bounding a submission's input channels.
pub const MAX_CHANNELS_KEY: &str = "jobmanager.submission.max-exchange-channels";

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
    /// More input channels than allowed.
    #[error("the job's data exchanges have {channels} input channels (an all-to-all edge has producers times consumers), more than the limit of {limit} ({key}); lower the parallelism")]
    TooManyChannels {
        /// Input channels of all edges.
        channels: u64,
        /// The configured ceiling.
        limit: u64,
        /// The key.
        key: &'static str,
    },
}

/// Input channels of `job_graph`: producers times consumers for an all-to-all edge,
/// the larger side for a pointwise one.
pub fn input_channels(job_graph: &JobGraph) -> u64 {
    let parallelism = |v: usize| job_graph.vertices.get(v).map_or(0, |v| u64::from(v.parallelism));
    job_graph
        .edges
        .iter()
        .map(|e| {
            let (p, c) = (parallelism(e.source_vertex), parallelism(e.target_vertex));
            match e.distribution {
                DistributionPattern::AllToAll => p.saturating_mul(c),
                DistributionPattern::Pointwise => p.max(c),
            }
        })
        .fold(0u64, u64::saturating_add)
}

/// Refuses a job graph whose subtasks exceed `max_subtasks` or whose input channels
/// exceed `max_channels`.
pub fn check_submission_size(
    job_graph: &JobGraph,
    max_subtasks: u32,
    max_channels: u64,
) -> Result<(), SubmissionTooLarge> {
    let subtasks: u64 = job_graph.vertices.iter().map(|v| u64::from(v.parallelism)).sum();
    if subtasks > u64::from(max_subtasks) {
        let largest = job_graph.vertices.iter().max_by_key(|v| v.parallelism);
        return Err(SubmissionTooLarge::TooManySubtasks {
            subtasks,
            vertex: largest.map(|v| v.name.clone()).unwrap_or_default(),
            parallelism: largest.map_or(0, |v| v.parallelism),
            limit: max_subtasks,
        });
    }
    let channels = input_channels(job_graph);
    if channels > max_channels {
        return Err(SubmissionTooLarge::TooManyChannels {
            channels,
            limit: max_channels,
            key: MAX_CHANNELS_KEY,
        });
    }
    Ok(())
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
        let err = check_submission_size(&graph, 16384, u64::MAX).unwrap_err().to_string();
        assert!(err.contains("65536 subtasks"), "{err}");
        assert!(err.contains("has 32768"), "{err}");
        assert!(
            err.contains("limit of 16384 (jobmanager.submission.max-subtasks)"),
            "{err}"
        );
        assert_eq!(check_submission_size(&graph, 65536, u64::MAX), Ok(()));
        assert_eq!(check_submission_size(&keyed(4), 8, 16), Ok(()));
    }

    #[test]
    fn an_all_to_all_exchange_of_too_many_channels_is_refused_naming_the_key() {
        assert_eq!(input_channels(&keyed(4096)), 4096 * 4096);
        let err = check_submission_size(&keyed(4096), 16384, 4_194_304)
            .unwrap_err()
            .to_string();
        assert!(err.contains("16777216 input channels"), "{err}");
        assert!(
            err.contains("limit of 4194304 (jobmanager.submission.max-exchange-channels)"),
            "{err}"
        );
        assert_eq!(check_submission_size(&keyed(2048), 16384, 4_194_304), Ok(()));
    }
}
