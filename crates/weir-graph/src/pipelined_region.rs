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
//! A region's blocking inputs are kept as consumed partition groups (Flink's
//! `ConsumedPartitionGroup`): the partitions of one job edge that a consumer reads
//! together. Every consumer of an all-to-all edge reads the same group, which is kept
//! once, so the regions of a BATCH job take memory linear in its subtasks, not in its
//! channels (producers times consumers).
//!
//! Invariants: the regions partition the job's subtasks (each is in exactly one);
//! regions are numbered in the order of their smallest (vertex, subtask); a region's
//! blocking inputs are subtasks of other regions; no two groups hold the same edge and
//! producers. A vertex of parallelism 0 (not yet
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

/// Blocking result partitions consumers read together (Flink's
/// `ConsumedPartitionGroup`): what `producers` of vertex `producer_vertex` wrote for job
/// edge `edge`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ConsumedGroup {
    edge: usize,
    producer_vertex: usize,
    /// Ascending producer subtask indexes.
    producers: Vec<u32>,
}

impl ConsumedGroup {
    fn partitions(&self) -> impl Iterator<Item = ResultPartitionRef> + '_ {
        self.producers.iter().map(|p| ResultPartitionRef {
            edge: self.edge,
            producer: (self.producer_vertex, *p),
        })
    }
}

/// The pipelined regions of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelinedRegions {
    regions: Vec<BTreeSet<SubtaskRef>>,
    region_of: BTreeMap<SubtaskRef, usize>,
    /// Per region: the undecided producer vertices it waits on (`UNDECIDED_SUBTASK`).
    undecided_inputs: Vec<BTreeSet<SubtaskRef>>,
    groups: Vec<ConsumedGroup>,
    /// Per region: the groups it reads.
    consumed: Vec<BTreeSet<usize>>,
    /// Per group: the regions reading it.
    group_consumers: Vec<BTreeSet<usize>>,
    /// Per blocking result partition: the groups holding it.
    groups_of: BTreeMap<ResultPartitionRef, Vec<usize>>,
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
        // Each group with the consumer subtasks reading it: (vertex, subtask range).
        let mut blocking: Vec<(ConsumedGroup, (usize, std::ops::Range<u32>))> = Vec::new();
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
            if e.distribution == DistributionPattern::AllToAll && source.parallelism > 0 && target.parallelism > 0 {
                if e.partition_type == ResultPartitionType::Blocking {
                    // Every consumer reads every producer's partition: one group.
                    let group = ConsumedGroup {
                        edge: ei,
                        producer_vertex: e.source_vertex,
                        producers: (0..source.parallelism).collect(),
                    };
                    blocking.push((group, (e.target_vertex, 0..target.parallelism)));
                    continue;
                }
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
                let consumed = consumed_subpartitions(e.distribution, source.parallelism, target.parallelism, consumer);
                if e.partition_type == ResultPartitionType::Blocking {
                    let mut producers: Vec<u32> = consumed.into_iter().map(|(producer, _)| producer).collect();
                    producers.sort_unstable();
                    producers.dedup();
                    if producers.is_empty() {
                        continue;
                    }
                    let group = ConsumedGroup {
                        edge: ei,
                        producer_vertex: e.source_vertex,
                        producers,
                    };
                    blocking.push((group, (e.target_vertex, consumer..consumer + 1)));
                    continue;
                }
                for (producer, _) in consumed {
                    let (p, c) = ((e.source_vertex, producer), (e.target_vertex, consumer));
                    if let (Some(&a), Some(&b)) = (index.get(&p), index.get(&c)) {
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
        let mut undecided_inputs = vec![BTreeSet::new(); regions.len()];
        for (producer, consumer) in undecided {
            if let Some(&r) = region_of.get(&consumer) {
                undecided_inputs[r].insert(producer);
            }
        }
        let mut group_ids: BTreeMap<ConsumedGroup, usize> = BTreeMap::new();
        let mut groups: Vec<ConsumedGroup> = Vec::new();
        let mut consumed = vec![BTreeSet::new(); regions.len()];
        let mut group_consumers: Vec<BTreeSet<usize>> = Vec::new();
        for (group, (consumer_vertex, consumers)) in blocking {
            let g = match group_ids.get(&group) {
                Some(&g) => g,
                None => {
                    let g = groups.len();
                    group_ids.insert(group.clone(), g);
                    groups.push(group);
                    group_consumers.push(BTreeSet::new());
                    g
                }
            };
            for consumer in consumers {
                if let Some(&r) = region_of.get(&(consumer_vertex, consumer)) {
                    consumed[r].insert(g);
                    group_consumers[g].insert(r);
                }
            }
        }
        let mut groups_of: BTreeMap<ResultPartitionRef, Vec<usize>> = BTreeMap::new();
        for (g, group) in groups.iter().enumerate() {
            for partition in group.partitions() {
                groups_of.entry(partition).or_default().push(g);
            }
        }
        Self {
            regions,
            region_of,
            undecided_inputs,
            groups,
            consumed,
            group_consumers,
            groups_of,
        }
    }

    /// The groups region `region` reads.
    fn consumed_groups(&self, region: usize) -> impl Iterator<Item = &ConsumedGroup> + '_ {
        self.consumed
            .get(region)
            .into_iter()
            .flat_map(|gs| gs.iter().filter_map(|g| self.groups.get(*g)))
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
    /// only once they all finished. Undecided producer vertices first, then group by
    /// group in ascending producers; a producer read through two groups (two edges from
    /// its vertex) comes once per group.
    pub fn blocking_inputs(&self, region: usize) -> impl Iterator<Item = SubtaskRef> + '_ {
        let undecided = self.undecided_inputs.get(region).into_iter().flatten().copied();
        undecided.chain(
            self.consumed_groups(region)
                .flat_map(|g| g.producers.iter().map(move |p| (g.producer_vertex, *p))),
        )
    }

    /// The blocking result partitions region `region` reads (a partition read through
    /// two groups comes once per group).
    pub fn consumed_partitions(&self, region: usize) -> impl Iterator<Item = ResultPartitionRef> + '_ {
        self.consumed_groups(region).flat_map(ConsumedGroup::partitions)
    }

    /// The regions reading blocking result partition `partition` (none for a partition
    /// whose consumers are not decided yet; a region reading it through two groups
    /// comes once per group).
    pub fn consumer_regions(&self, partition: ResultPartitionRef) -> impl Iterator<Item = usize> + '_ {
        self.groups_of
            .get(&partition)
            .into_iter()
            .flatten()
            .filter_map(|g| self.group_consumers.get(*g))
            .flat_map(|regions| regions.iter().copied())
    }

    /// The regions reading any blocking result partition a subtask of region `region`
    /// produces (its consumer regions; none before their parallelism is decided).
    pub fn consumer_regions_of(&self, region: usize) -> BTreeSet<usize> {
        self.groups
            .iter()
            .zip(&self.group_consumers)
            .filter(|(g, _)| {
                g.producers
                    .iter()
                    .any(|p| self.region_index((g.producer_vertex, *p)) == Some(region))
            })
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
    fn an_all_to_all_blocking_edge_is_one_group_however_many_consumers_read_it() {
        let jg = job_in(
            weir_core::RuntimeExecutionMode::Batch,
            &[2048, 2048],
            &[Partitioner::Hash],
        );
        let regions = PipelinedRegions::compute(&jg);
        assert_eq!(regions.len(), 4096);
        assert_eq!(regions.groups.len(), 1);
        assert_eq!(regions.groups[0].producers.len(), 2048);
        assert_eq!(regions.group_consumers[0].len(), 2048);
        let consumer = regions.region_index((1, 2047)).unwrap();
        assert_eq!(regions.blocking_inputs(consumer).count(), 2048);
        let producer = regions.region_index((0, 5)).unwrap();
        assert_eq!(regions.consumer_regions_of(producer).len(), 2048);
    }

    /// The regions' blocking inputs, consumed partitions and consumers, computed one
    /// channel at a time as the groups stand for: (per region: inputs, partitions),
    /// per partition: consumer regions.
    type Channelwise = (
        Vec<(BTreeSet<SubtaskRef>, BTreeSet<ResultPartitionRef>)>,
        BTreeMap<ResultPartitionRef, BTreeSet<usize>>,
    );

    fn channelwise(jg: &JobGraph, regions: &PipelinedRegions) -> Channelwise {
        let mut per_region = vec![(BTreeSet::new(), BTreeSet::new()); regions.len()];
        let mut consumers: BTreeMap<ResultPartitionRef, BTreeSet<usize>> = BTreeMap::new();
        for (ei, e) in jg.edges.iter().enumerate() {
            if e.partition_type != ResultPartitionType::Blocking {
                continue;
            }
            let (sp, tp) = (
                jg.vertices[e.source_vertex].parallelism,
                jg.vertices[e.target_vertex].parallelism,
            );
            for consumer in 0..tp {
                let r = regions.region_index((e.target_vertex, consumer)).unwrap();
                for (producer, _) in consumed_subpartitions(e.distribution, sp, tp, consumer) {
                    let partition = ResultPartitionRef {
                        edge: ei,
                        producer: (e.source_vertex, producer),
                    };
                    per_region[r].0.insert(partition.producer);
                    per_region[r].1.insert(partition);
                    consumers.entry(partition).or_default().insert(r);
                }
            }
        }
        (per_region, consumers)
    }

    proptest::proptest! {
        #[test]
        fn the_groups_stand_for_exactly_the_channels_they_replace(
            parallelisms in proptest::collection::vec(1u32..7, 2..5),
            kinds in proptest::collection::vec(0usize..4, 4),
            batch in proptest::bool::ANY,
        ) {
            let partitioners: Vec<Partitioner> = parallelisms[1..]
                .iter()
                .zip(&kinds)
                .map(|(_, k)| [Partitioner::Hash, Partitioner::Rescale, Partitioner::Forward, Partitioner::Rebalance][*k])
                .collect();
            // Forward needs equal parallelism: rescale instead.
            let partitioners: Vec<Partitioner> = partitioners
                .iter()
                .zip(parallelisms.windows(2))
                .map(|(p, w)| if *p == Partitioner::Forward && w[0] != w[1] { Partitioner::Rescale } else { *p })
                .collect();
            let mode = if batch { weir_core::RuntimeExecutionMode::Batch } else { weir_core::RuntimeExecutionMode::Streaming };
            let jg = job_in(mode, &parallelisms, &partitioners);
            let regions = PipelinedRegions::compute(&jg);
            let (per_region, consumers) = channelwise(&jg, &regions);
            for (r, (inputs, partitions)) in per_region.iter().enumerate() {
                proptest::prop_assert_eq!(&regions.blocking_inputs(r).collect::<BTreeSet<_>>(), inputs);
                proptest::prop_assert_eq!(&regions.consumed_partitions(r).collect::<BTreeSet<_>>(), partitions);
                let expected: BTreeSet<usize> = consumers
                    .iter()
                    .filter(|(p, _)| regions.region_index(p.producer) == Some(r))
                    .flat_map(|(_, rs)| rs.iter().copied())
                    .collect();
                proptest::prop_assert_eq!(regions.consumer_regions_of(r), expected);
            }
            for (partition, expected) in &consumers {
                proptest::prop_assert_eq!(&regions.consumer_regions(*partition).collect::<BTreeSet<_>>(), expected);
            }
            let groups: BTreeSet<&ConsumedGroup> = regions.groups.iter().collect();
            proptest::prop_assert_eq!(groups.len(), regions.groups.len(), "a group is kept twice");
        }
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
