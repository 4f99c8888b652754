//! Which vertices of a batch job the adaptive batch scheduler decides, and how their
//! inputs are wired (Flink's `AdaptiveBatchScheduler` with its forward groups).
//!
//! A vertex is *adaptive* when the user did not set its parallelism, none of its inputs
//! or outputs needs a fixed subtask count (a RESCALE or CUSTOM edge), and every FORWARD
//! edge touching it joins it to another adaptive vertex (a forward edge keeps both ends
//! at one parallelism). An adaptive source is decided when the job starts, from its
//! splits; any other adaptive vertex once all its inputs finished, from the bytes they
//! produced.
//!
//! Wiring into an adaptive vertex `c` of max parallelism `m` (its number of key groups):
//! - HASH, REBALANCE, SHUFFLE, GLOBAL: every producer writes `m` subpartitions, one per
//!   key group (the key-group partitioner over `m` channels maps a key to its key group
//!   itself), and subtask `i` of `c` reads the subpartitions of its own key-group range
//!   `KeyGroupRange::for_subtask(m, p, i)`, so a keyed subtask sees exactly its keys;
//! - BROADCAST: every producer writes one subpartition that every consumer reads;
//! - FORWARD: the consumer takes its producer's parallelism; wiring as usual.
//!
//! Pure functions over the JobGraph; unit tested without threads.

use crate::adaptive_parallelism::{decide_parallelism, AdaptiveParallelismOptions, BlockingInput};
use crate::execution_graph::{consumed_subpartitions, num_subpartitions};
use crate::job_graph::{JobEdge, JobGraph};
use crate::stream_graph::Partitioner;
use std::collections::BTreeSet;
use std::ops::Range;
use weir_core::KeyGroupRange;

/// How an edge into an adaptive vertex is wired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdaptiveInput {
    /// One subpartition per key group of the consumer; each subtask reads its range.
    KeyGroups,
    /// One subpartition, read by every consumer subtask.
    Broadcast,
    /// The consumer runs at the producer's parallelism.
    Forward,
}

/// The wiring of `edge` when its target is adaptive; `None` for an edge that needs a
/// fixed consumer parallelism (RESCALE, CUSTOM).
pub fn adaptive_input(edge: &JobEdge) -> Option<AdaptiveInput> {
    match edge.ship_strategy {
        Partitioner::Hash | Partitioner::Rebalance | Partitioner::Shuffle | Partitioner::Global => {
            Some(AdaptiveInput::KeyGroups)
        }
        Partitioner::Broadcast => Some(AdaptiveInput::Broadcast),
        Partitioner::Forward => Some(AdaptiveInput::Forward),
        Partitioner::Rescale | Partitioner::Custom => None,
    }
}

/// The vertices the adaptive batch scheduler decides (see the module doc).
pub fn adaptive_vertices(job_graph: &JobGraph) -> BTreeSet<usize> {
    let mut adaptive: BTreeSet<usize> = (0..job_graph.vertices.len())
        .filter(|v| !job_graph.vertices[*v].parallelism_configured)
        .filter(|v| job_graph.in_edges(*v).all(|e| adaptive_input(e).is_some()))
        .filter(|v| {
            job_graph
                .out_edges(*v)
                .all(|e| !matches!(e.ship_strategy, Partitioner::Rescale | Partitioner::Custom))
        })
        .collect();
    // A forward edge must join two adaptive vertices: drop either end until stable.
    loop {
        let broken = job_graph.edges.iter().find(|e| {
            e.ship_strategy == Partitioner::Forward
                && adaptive.contains(&e.source_vertex) != adaptive.contains(&e.target_vertex)
        });
        match broken {
            Some(e) => {
                adaptive.remove(&e.source_vertex);
                adaptive.remove(&e.target_vertex);
            }
            None => return adaptive,
        }
    }
}

/// The subpartitions (key groups) subtask `index` of `parallelism` reads on a
/// [`AdaptiveInput::KeyGroups`] edge into a vertex of `max_parallelism` key groups: its
/// key-group range.
pub fn key_group_subpartitions(max_parallelism: u32, parallelism: u32, index: u32) -> Range<u32> {
    let range = KeyGroupRange::for_subtask(max_parallelism, parallelism, index);
    range.start..range.end + 1
}

/// The parallelisms and max parallelism an edge's wiring depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeEnds {
    /// The producer vertex's parallelism.
    pub producer_parallelism: u32,
    /// The consumer vertex's parallelism (0 while undecided).
    pub consumer_parallelism: u32,
    /// The consumer vertex's max parallelism.
    pub consumer_max_parallelism: u32,
    /// True when the consumer is adaptive.
    pub consumer_adaptive: bool,
}

/// Number of subpartitions producer subtask `producer` writes on `edge`.
pub fn edge_num_subpartitions(edge: &JobEdge, ends: EdgeEnds, producer: u32) -> u32 {
    match ends.consumer_adaptive.then(|| adaptive_input(edge)).flatten() {
        Some(AdaptiveInput::KeyGroups) => ends.consumer_max_parallelism,
        Some(AdaptiveInput::Broadcast) | Some(AdaptiveInput::Forward) => 1,
        None => num_subpartitions(
            edge.distribution,
            ends.producer_parallelism,
            ends.consumer_parallelism,
            producer,
        ),
    }
}

/// What consumer subtask `consumer` reads on `edge`: `(producer subtask,
/// subpartition)` pairs, in producer then subpartition order.
pub fn edge_consumed_subpartitions(edge: &JobEdge, ends: EdgeEnds, consumer: u32) -> Vec<(u32, u32)> {
    let input = ends.consumer_adaptive.then(|| adaptive_input(edge)).flatten();
    if ends.consumer_parallelism == 0 || consumer >= ends.consumer_parallelism {
        return Vec::new();
    }
    match input {
        Some(AdaptiveInput::KeyGroups) => {
            let range = key_group_subpartitions(ends.consumer_max_parallelism, ends.consumer_parallelism, consumer);
            (0..ends.producer_parallelism)
                .flat_map(|p| range.clone().map(move |s| (p, s)))
                .collect()
        }
        Some(AdaptiveInput::Broadcast) => (0..ends.producer_parallelism).map(|p| (p, 0)).collect(),
        Some(AdaptiveInput::Forward) | None => consumed_subpartitions(
            edge.distribution,
            ends.producer_parallelism,
            ends.consumer_parallelism,
            consumer,
        ),
    }
}

/// What one finished input edge of an adaptive vertex produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishedInput {
    /// The edge's wiring.
    pub input: AdaptiveInput,
    /// The producer vertex's parallelism.
    pub producer_parallelism: u32,
    /// Bytes per subpartition, summed over the producer subtasks.
    pub subpartition_bytes: Vec<u64>,
}

/// The parallelism of an adaptive non-source vertex whose inputs all finished: its
/// forward producer's when it has one, else Flink's rule over the bytes, at most
/// `max_parallelism` (its number of key groups).
pub fn decide_vertex_parallelism(
    options: &AdaptiveParallelismOptions,
    max_parallelism: u32,
    inputs: &[FinishedInput],
) -> u32 {
    if let Some(forward) = inputs.iter().find(|i| i.input == AdaptiveInput::Forward) {
        return forward.producer_parallelism;
    }
    let blocking: Vec<BlockingInput> = inputs
        .iter()
        .map(|i| BlockingInput {
            broadcast: i.input == AdaptiveInput::Broadcast,
            subpartition_bytes: i.subpartition_bytes.clone(),
        })
        .collect();
    let options = AdaptiveParallelismOptions {
        max_parallelism: options.max_parallelism.min(max_parallelism).max(1),
        ..*options
    };
    decide_parallelism(&options, &blocking)
}

#[cfg(test)]
#[path = "adaptive_graph_tests.rs"]
mod tests;
