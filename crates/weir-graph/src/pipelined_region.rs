//! Pipelined regions (Flink's `SchedulingPipelinedRegion`): the sets of subtasks that
//! exchange data through pipelined results, and so must be scheduled and fail over
//! together.
//!
//! A region is a connected component of the subtask graph over the *pipelined* edges:
//! an all-to-all edge joins every producer with every consumer, a pointwise (forward,
//! rescale) edge only the subtasks it wires together ([`consumed_subpartitions`]). A
//! streaming job of parallel forward pipelines thus has one region per pipeline, a job
//! with a keyBy one region for everything connected through it. A *blocking* edge (every
//! non-chained edge of a batch job) is a region boundary: the consumer's region reads
//! the producer subtasks' finished results, its *blocking inputs*, which are the
//! [`ResultPartitionRef`]s (job edge, producer subtask) it consumes.
//!
//! Invariants: the regions partition the job's subtasks (each is in exactly one);
//! regions are numbered in the order of their smallest (vertex, subtask); a region's
//! blocking inputs are subtasks of other regions. A vertex of parallelism 0 (not yet
//! decided by the adaptive batch scheduler) has no subtasks; its consumers' regions
//! wait on `(vertex, UNDECIDED_SUBTASK)`.

use crate::execution_graph::consumed_subpartitions;
use crate::job_graph::JobGraph;
use crate::stream_graph::{DistributionPattern, ResultPartitionType};
use std::collections::{BTreeMap, BTreeSet};

/// A subtask: (vertex index, subtask index).
pub type SubtaskRef = (usize, u32);

/// One blocking result partition: what producer subtask `producer` wrote for job edge
/// `edge` (Flink's `IntermediateResultPartitionID` without the attempt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResultPartitionRef {
    /// The job edge (index into `JobGraph::edges`).
    pub edge: usize,
    /// The producing subtask.
    pub producer: SubtaskRef,
}

/// The blocking input that stands for a producer vertex whose parallelism the adaptive
/// batch scheduler has not decided yet (it never finishes: its consumers wait until
/// the regions are computed again after the decision).
pub const UNDECIDED_SUBTASK: u32 = u32::MAX;

/// The pipelined regions of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelinedRegions {
    regions: Vec<BTreeSet<SubtaskRef>>,
    region_of: BTreeMap<SubtaskRef, usize>,
    blocking_inputs: Vec<BTreeSet<SubtaskRef>>,
    /// Per region: the blocking result partitions it reads.
    consumed: Vec<BTreeSet<ResultPartitionRef>>,
    /// Per blocking result partition: the regions reading it.
    consumers: BTreeMap<ResultPartitionRef, BTreeSet<usize>>,
}

impl PipelinedRegions {
    /// The regions of `job_graph`, cut at its blocking edges.
    pub fn compute(job_graph: &JobGraph) -> Self {
        let mut index: BTreeMap<SubtaskRef, usize> = BTreeMap::new();
        for (vi, v) in job_graph.vertices.iter().enumerate() {
            for i in 0..v.parallelism {
                let n = index.len();
                index.insert((vi, i), n);
            }
        }
        let mut parent: Vec<usize> = (0..index.len()).collect();
        let mut blocking: Vec<(ResultPartitionRef, SubtaskRef)> = Vec::new();
        let mut undecided: Vec<(SubtaskRef, SubtaskRef)> = Vec::new();
        for (ei, e) in job_graph.edges.iter().enumerate() {
            let (Some(source), Some(target)) = (
                job_graph.vertices.get(e.source_vertex),
                job_graph.vertices.get(e.target_vertex),
            ) else {
                continue;
            };
            if source.parallelism == 0 {
                // The producer's parallelism is not decided yet: its consumers wait.
                for consumer in 0..target.parallelism {
                    undecided.push(((e.source_vertex, UNDECIDED_SUBTASK), (e.target_vertex, consumer)));
                }
            }
            if e.distribution == DistributionPattern::AllToAll
                && e.partition_type != ResultPartitionType::Blocking
                && source.parallelism > 0
                && target.parallelism > 0
            {
                // Every producer with every consumer: one region. Joining each subtask
                // to the first of the other side is enough (linear, not one union per
                // producer-consumer pair).
                let first_producer = index.get(&(e.source_vertex, 0)).copied();
                let first_consumer = index.get(&(e.target_vertex, 0)).copied();
                if let (Some(fp), Some(fc)) = (first_producer, first_consumer) {
                    for producer in 0..source.parallelism {
                        if let Some(&p) = index.get(&(e.source_vertex, producer)) {
                            union(&mut parent, p, fc);
                        }
                    }
                    for consumer in 0..target.parallelism {
                        if let Some(&c) = index.get(&(e.target_vertex, consumer)) {
                            union(&mut parent, fp, c);
                        }
                    }
                }
                continue;
            }
            for consumer in 0..target.parallelism {
                for (producer, _) in
                    consumed_subpartitions(e.distribution, source.parallelism, target.parallelism, consumer)
                {
                    let (p, c) = ((e.source_vertex, producer), (e.target_vertex, consumer));
                    if e.partition_type == ResultPartitionType::Blocking {
                        blocking.push((ResultPartitionRef { edge: ei, producer: p }, c));
                    } else if let (Some(&a), Some(&b)) = (index.get(&p), index.get(&c)) {
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
            .collect::<BTreeMap<SubtaskRef, usize>>();
        let mut blocking_inputs = vec![BTreeSet::new(); regions.len()];
        for (producer, consumer) in undecided {
            if let Some(&r) = region_of.get(&consumer) {
                blocking_inputs[r].insert(producer);
            }
        }
        let mut consumed = vec![BTreeSet::new(); regions.len()];
        let mut consumers: BTreeMap<ResultPartitionRef, BTreeSet<usize>> = BTreeMap::new();
        for (partition, consumer) in blocking {
            if let (Some(_), Some(&r)) = (region_of.get(&partition.producer), region_of.get(&consumer)) {
                blocking_inputs[r].insert(partition.producer);
                consumed[r].insert(partition);
                consumers.entry(partition).or_default().insert(r);
            }
        }
        Self {
            regions,
            region_of,
            blocking_inputs,
            consumed,
            consumers,
        }
    }

    /// The subtasks of region `region` (empty for an unknown region).
    pub fn region(&self, region: usize) -> impl Iterator<Item = SubtaskRef> + '_ {
        self.regions.get(region).into_iter().flat_map(|r| r.iter().copied())
    }

    /// The number of the region holding `subtask`.
    pub fn region_index(&self, subtask: SubtaskRef) -> Option<usize> {
        self.region_of.get(&subtask).copied()
    }

    /// The producer subtasks whose blocking results region `region` reads: it may run
    /// only once they all finished.
    pub fn blocking_inputs(&self, region: usize) -> impl Iterator<Item = SubtaskRef> + '_ {
        self.blocking_inputs
            .get(region)
            .into_iter()
            .flat_map(|r| r.iter().copied())
    }

    /// The blocking result partitions region `region` reads.
    pub fn consumed_partitions(&self, region: usize) -> impl Iterator<Item = ResultPartitionRef> + '_ {
        self.consumed.get(region).into_iter().flat_map(|r| r.iter().copied())
    }

    /// The regions reading blocking result partition `partition` (none for a partition
    /// whose consumers are not decided yet).
    pub fn consumer_regions(&self, partition: ResultPartitionRef) -> impl Iterator<Item = usize> + '_ {
        self.consumers
            .get(&partition)
            .into_iter()
            .flat_map(|r| r.iter().copied())
    }

    /// The regions reading any blocking result partition a subtask of region `region`
    /// produces (its consumer regions; none before their parallelism is decided).
    pub fn consumer_regions_of(&self, region: usize) -> BTreeSet<usize> {
        self.consumers
            .iter()
            .filter(|(partition, _)| self.region_index(partition.producer) == Some(region))
            .flat_map(|(_, regions)| regions.iter().copied())
            .collect()
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
pub(crate) mod tests {
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
            parallelism_configured: false,
            source_splits: None,
            max_parallelism: None,
            chaining_strategy: ChainingStrategy::Never,
            slot_sharing_group: "default".into(),
            uid: None,
            keyed: false,
        }
    }

    /// A chain of `parallelisms`, consecutive nodes joined by `partitioners`.
    fn job(parallelisms: &[u32], partitioners: &[Partitioner]) -> JobGraph {
        job_in(weir_core::RuntimeExecutionMode::Streaming, parallelisms, partitioners)
    }

    /// The same job in runtime mode `mode`.
    pub(crate) fn job_in(
        mode: weir_core::RuntimeExecutionMode,
        parallelisms: &[u32],
        partitioners: &[Partitioner],
    ) -> JobGraph {
        let g = StreamGraph {
            job_name: "j".into(),
            config: ExecutionConfig {
                runtime_mode: mode,
                ..ExecutionConfig::default()
            },
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
    fn blocking_edges_of_a_batch_job_cut_it_into_stage_regions_with_their_inputs() {
        let jg = job_in(
            weir_core::RuntimeExecutionMode::Batch,
            &[2, 2, 1],
            &[Partitioner::Hash, Partitioner::Rescale],
        );
        let regions = PipelinedRegions::compute(&jg);
        // Never-chained nodes: three vertices, every edge blocking, so no two subtasks
        // share a region.
        assert_eq!(regions.len(), 5);
        let consumer = regions.region_index((1, 0)).unwrap();
        let inputs: Vec<SubtaskRef> = regions.blocking_inputs(consumer).collect();
        assert_eq!(inputs, vec![(0, 0), (0, 1)]);
        let sink = regions.region_index((2, 0)).unwrap();
        assert_eq!(regions.blocking_inputs(sink).collect::<Vec<_>>(), vec![(1, 0), (1, 1)]);
        let source = regions.region_index((0, 1)).unwrap();
        assert_eq!(regions.blocking_inputs(source).count(), 0);
        assert_eq!(regions.to_restart(&[(1, 0)]), BTreeSet::from([(1, 0)]));
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
