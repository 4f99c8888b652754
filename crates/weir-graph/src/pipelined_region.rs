//! Pipelined regions (Flink's `SchedulingPipelinedRegion`): the sets of subtasks that
//! exchange data through pipelined results, and so must fail over together.
//!
//! Every result of a streaming job is pipelined, so a region is a connected component
//! of the subtask graph: an all-to-all edge joins every producer with every consumer, a
//! pointwise (forward, rescale) edge only the subtasks it wires together
//! ([`consumed_subpartitions`]). A job of parallel forward pipelines thus has one region
//! per pipeline, a job with a keyBy one region for everything connected through it.
//!
//! Invariants: the regions partition the job's subtasks (each is in exactly one);
//! regions are numbered in the order of their smallest (vertex, subtask).

use crate::execution_graph::consumed_subpartitions;
use crate::job_graph::JobGraph;
use std::collections::{BTreeMap, BTreeSet};

/// A subtask: (vertex index, subtask index).
pub type SubtaskRef = (usize, u32);

/// The pipelined regions of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelinedRegions {
    regions: Vec<BTreeSet<SubtaskRef>>,
    region_of: BTreeMap<SubtaskRef, usize>,
}

impl PipelinedRegions {
    /// The regions of `job_graph`.
    pub fn compute(job_graph: &JobGraph) -> Self {
        let mut index: BTreeMap<SubtaskRef, usize> = BTreeMap::new();
        for (vi, v) in job_graph.vertices.iter().enumerate() {
            for i in 0..v.parallelism {
                let n = index.len();
                index.insert((vi, i), n);
            }
        }
        let mut parent: Vec<usize> = (0..index.len()).collect();
        for e in &job_graph.edges {
            let (Some(source), Some(target)) = (
                job_graph.vertices.get(e.source_vertex),
                job_graph.vertices.get(e.target_vertex),
            ) else {
                continue;
            };
            for consumer in 0..target.parallelism {
                for (producer, _) in
                    consumed_subpartitions(e.distribution, source.parallelism, target.parallelism, consumer)
                {
                    if let (Some(&a), Some(&b)) = (
                        index.get(&(e.source_vertex, producer)),
                        index.get(&(e.target_vertex, consumer)),
                    ) {
                        union(&mut parent, a, b);
                    }
                }
            }
        }
        let mut by_root: BTreeMap<usize, BTreeSet<SubtaskRef>> = BTreeMap::new();
        for (subtask, &n) in &index {
            by_root.entry(find(&mut parent, n)).or_default().insert(*subtask);
        }
        let mut regions: Vec<BTreeSet<SubtaskRef>> = by_root.into_values().collect();
        regions.sort_by_key(|r| r.first().copied());
        let region_of = regions
            .iter()
            .enumerate()
            .flat_map(|(r, set)| set.iter().map(move |s| (*s, r)))
            .collect();
        Self { regions, region_of }
    }

    /// Number of regions.
    pub fn len(&self) -> usize {
        self.regions.len()
    }

    /// True for a job without subtasks.
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
    }

    /// The region holding `subtask`, if it exists.
    pub fn region_of(&self, subtask: SubtaskRef) -> Option<&BTreeSet<SubtaskRef>> {
        self.region_of.get(&subtask).and_then(|r| self.regions.get(*r))
    }

    /// Every subtask of the regions holding any of `failed`: what a region failover
    /// restarts (unknown subtasks are ignored).
    pub fn to_restart(&self, failed: &[SubtaskRef]) -> BTreeSet<SubtaskRef> {
        failed
            .iter()
            .filter_map(|s| self.region_of(*s))
            .flat_map(|r| r.iter().copied())
            .collect()
    }
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[ra.max(rb)] = ra.min(rb);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream_graph::{
        ChainingStrategy, ExecutionConfig, NodeKind, Partitioner, StreamEdge, StreamGraph, StreamNode,
    };

    fn node(id: u32, p: u32) -> StreamNode {
        StreamNode {
            id,
            name: format!("n{id}"),
            kind: if id == 0 { NodeKind::Source } else { NodeKind::Operator },
            parallelism: p,
            max_parallelism: None,
            chaining_strategy: ChainingStrategy::Never,
            slot_sharing_group: "default".into(),
            uid: None,
            keyed: false,
        }
    }

    /// A chain of `parallelisms`, consecutive nodes joined by `partitioners`.
    fn job(parallelisms: &[u32], partitioners: &[Partitioner]) -> JobGraph {
        let g = StreamGraph {
            job_name: "j".into(),
            config: ExecutionConfig::default(),
            nodes: parallelisms
                .iter()
                .enumerate()
                .map(|(i, p)| node(i as u32, *p))
                .collect(),
            edges: partitioners
                .iter()
                .enumerate()
                .map(|(i, partitioner)| StreamEdge {
                    source: i as u32,
                    target: i as u32 + 1,
                    partitioner: *partitioner,
                    input: 0,
                })
                .collect(),
        };
        JobGraph::from_stream_graph(&g).unwrap()
    }

    #[test]
    fn parallel_forward_pipelines_are_one_region_each() {
        let jg = job(&[3, 3, 3], &[Partitioner::Forward, Partitioner::Forward]);
        let regions = PipelinedRegions::compute(&jg);
        assert_eq!(regions.len(), 3);
        for i in 0..3 {
            let expected: BTreeSet<SubtaskRef> = (0..3).map(|v| (v, i)).collect();
            assert_eq!(regions.region_of((1, i)), Some(&expected));
        }
        assert_eq!(regions.to_restart(&[(2, 1)]).len(), 3);
        assert!(regions.to_restart(&[(2, 1)]).iter().all(|(_, s)| *s == 1));
    }

    #[test]
    fn an_all_to_all_edge_joins_everything_it_connects() {
        let jg = job(&[2, 2, 2], &[Partitioner::Forward, Partitioner::Hash]);
        let regions = PipelinedRegions::compute(&jg);
        assert_eq!(regions.len(), 1);
        assert_eq!(regions.to_restart(&[(0, 0)]).len(), 6);
    }

    #[test]
    fn rescale_edges_join_only_the_subtasks_they_wire() {
        // 2 producers rescaled onto 4 consumers: each producer feeds two.
        let jg = job(&[2, 4], &[Partitioner::Rescale]);
        let regions = PipelinedRegions::compute(&jg);
        assert_eq!(regions.len(), 2);
        let first = regions.region_of((0, 0)).unwrap();
        assert_eq!(first.len(), 3);
        assert!(first.contains(&(1, 0)) && first.contains(&(1, 1)));
    }

    #[test]
    fn regions_partition_the_subtasks_and_unknown_subtasks_restart_nothing() {
        let jg = job(&[4, 2, 3], &[Partitioner::Rescale, Partitioner::Rescale]);
        let regions = PipelinedRegions::compute(&jg);
        let total: usize = (0..regions.len()).map(|r| regions.regions[r].len()).sum();
        assert_eq!(total, 9);
        assert!(regions.to_restart(&[(7, 0)]).is_empty());
    }
}
