//! The adaptive batch scheduler at runtime (Flink's `AdaptiveBatchScheduler`, the
//! default for BATCH jobs): the vertices whose parallelism the user did not set
//! ([`weir_graph::adaptive_graph::adaptive_vertices`]) are decided by the JobMaster.
//! Sources when the job is submitted (from their splits or the default source
//! parallelism); every other one once all its inputs finished, from the bytes per
//! subpartition their producers reported with FINISHED.
//!
//! Until it is decided a vertex has parallelism 0: no subtasks, its consumers' regions
//! wait, its producers write one subpartition per key group of its max parallelism
//! (`.max-parallelism` when the user set none). Deciding it gives it its subtasks and
//! computes the pipelined regions again; a decision is never taken back (a failover
//! reruns a stage at its decided parallelism). Every deployment carries the decided
//! values, which the TaskManager applies to its own build of the JobGraph.
//!
//! Invariants: only vertices of the adaptive set change; a decided parallelism lies in
//! `[1, max parallelism]`; bytes are kept per (edge, producer subtask), the latest
//! FINISHED report winning, so a rerun producer replaces its earlier report.

use super::JobMaster;
use std::collections::{BTreeSet, HashMap};
use weir_config::options as o;
use weir_config::{ConfigError, Configuration};
use weir_graph::adaptive_graph::{
    adaptive_input, adaptive_vertices, decide_vertex_parallelism, EdgeEnds, FinishedInput,
};
use weir_graph::adaptive_parallelism::{decide_source_parallelism, AdaptiveParallelismOptions};
use weir_graph::{ExecutionState, ExecutionVertex, JobEdge, JobGraph, PipelinedRegions};

/// The adaptive batch scheduler's state of one job.
#[derive(Debug, Clone)]
pub struct AdaptiveBatch {
    options: AdaptiveParallelismOptions,
    /// The vertices it decides.
    vertices: BTreeSet<usize>,
    /// Bytes per subpartition of each (job edge, producer subtask).
    bytes: HashMap<(usize, u32), Vec<u64>>,
}

/// The options of `execution.batch.adaptive.auto-parallelism.*`, or `None` when the
/// job is not BATCH or auto-parallelism is disabled. `.max-parallelism` falls back to
/// `parallelism.default` when that is set, else 128; `.default-source-parallelism` to
/// `parallelism.default`.
pub fn adaptive_options(
    config: &Configuration,
    job_graph: &JobGraph,
    parallelism_default: u32,
) -> Result<Option<AdaptiveParallelismOptions>, ConfigError> {
    if !job_graph.config.runtime_mode.is_batch() || !config.get(&o::BATCH_AUTO_PARALLELISM_ENABLED)? {
        return Ok(None);
    }
    let fallback_max = if config.contains(&o::PARALLELISM_DEFAULT) {
        parallelism_default
    } else {
        AdaptiveParallelismOptions::default().max_parallelism
    };
    Ok(Some(AdaptiveParallelismOptions {
        min_parallelism: config.get(&o::BATCH_AUTO_PARALLELISM_MIN)?.max(1),
        max_parallelism: config
            .get(&o::BATCH_AUTO_PARALLELISM_MAX)?
            .unwrap_or(fallback_max)
            .max(1),
        avg_data_volume_per_task: config.get(&o::BATCH_AUTO_PARALLELISM_AVG_DATA_VOLUME)?.0.max(1),
        default_source_parallelism: config
            .get(&o::BATCH_AUTO_PARALLELISM_DEFAULT_SOURCE)?
            .unwrap_or(parallelism_default)
            .max(1),
    }))
}

/// Prepares `job_graph` for the adaptive batch scheduler: adaptive sources get their
/// parallelism, every other adaptive vertex parallelism 0 (undecided) and, unless the
/// user set one, the scheduler's max parallelism as its number of key groups.
pub fn prepare_job_graph(job_graph: &mut JobGraph, options: &AdaptiveParallelismOptions) -> AdaptiveBatch {
    let vertices = adaptive_vertices(job_graph);
    for &v in &vertices {
        let vertex = &mut job_graph.vertices[v];
        if vertex.is_source {
            vertex.parallelism = decide_source_parallelism(options, vertex.source_splits).min(vertex.max_parallelism);
            continue;
        }
        vertex.parallelism = 0;
        if !vertex.max_parallelism_configured {
            vertex.max_parallelism = options.max_parallelism;
        }
    }
    AdaptiveBatch {
        options: *options,
        vertices,
        bytes: HashMap::new(),
    }
}

impl JobMaster {
    /// Lets the adaptive batch scheduler decide the job's undecided vertices
    /// (`job_graph` went through [`prepare_job_graph`]).
    pub fn enable_adaptive_batch(&mut self, adaptive: AdaptiveBatch) {
        self.adaptive = Some(adaptive);
    }

    /// A FINISHED attempt reported the bytes of its blocking result partitions.
    pub fn record_result_bytes(&mut self, attempt_id: &str, partitions: Vec<(u32, Vec<u64>)>) {
        let Some(d) = self.attempts.get(attempt_id) else {
            return;
        };
        let subtask = d.subtask;
        if let Some(adaptive) = self.adaptive.as_mut() {
            for (edge, bytes) in partitions {
                adaptive.bytes.insert((edge as usize, subtask), bytes);
            }
        }
    }

    /// The parallelisms and max parallelism `edge`'s wiring depends on.
    pub(super) fn edge_ends(&self, edge: &JobEdge) -> EdgeEnds {
        let (producer, consumer) = (
            &self.job_graph.vertices[edge.source_vertex],
            &self.job_graph.vertices[edge.target_vertex],
        );
        EdgeEnds {
            producer_parallelism: producer.parallelism,
            consumer_parallelism: consumer.parallelism,
            consumer_max_parallelism: consumer.max_parallelism,
            consumer_adaptive: self
                .adaptive
                .as_ref()
                .is_some_and(|a| a.vertices.contains(&edge.target_vertex)),
        }
    }

    /// What deployments carry: the current parallelism and max parallelism of every
    /// adaptive vertex.
    pub(super) fn vertex_parallelism_overrides(&self) -> Vec<weir_rpc::VertexParallelism> {
        let Some(adaptive) = self.adaptive.as_ref() else {
            return Vec::new();
        };
        adaptive
            .vertices
            .iter()
            .map(|&v| weir_rpc::VertexParallelism {
                vertex_index: v as u32,
                parallelism: self.job_graph.vertices[v].parallelism,
                max_parallelism: self.job_graph.vertices[v].max_parallelism,
            })
            .collect()
    }

    /// True while some vertex waits for its parallelism.
    pub(super) fn has_undecided_vertices(&self) -> bool {
        self.job_graph.vertices.iter().any(|v| v.parallelism == 0)
    }

    /// Decides every undecided vertex whose inputs all finished; gives it its subtasks
    /// and computes the regions again.
    pub(super) fn decide_ready_vertices(&mut self, now_ms: i64) {
        let Some(adaptive) = self.adaptive.as_ref() else {
            return;
        };
        let ready: Vec<(usize, u32)> = adaptive
            .vertices
            .iter()
            .filter(|v| self.job_graph.vertices[**v].parallelism == 0)
            .filter(|v| self.inputs_finished(**v))
            .map(|&v| (v, self.decide(adaptive, v)))
            .collect();
        if ready.is_empty() {
            return;
        }
        for &(v, p) in &ready {
            let vertex = &mut self.job_graph.vertices[v];
            vertex.parallelism = p;
            tracing::info!(job = %self.job_id, vertex = %vertex.name, parallelism = p, "the adaptive batch scheduler decided a parallelism");
            let ejv = &mut self.execution_graph.job_vertices[v];
            ejv.parallelism = p;
            ejv.task_vertices = (0..p).map(|i| ExecutionVertex::new(v, i, p, now_ms)).collect();
        }
        let regions = PipelinedRegions::compute(&self.job_graph);
        if let Some(batch) = self.batch.as_mut() {
            batch.replace_regions(&self.regions, &regions);
        }
        self.regions = regions;
    }

    /// True when every producer vertex of `vertex` is decided and all its subtasks
    /// finished.
    fn inputs_finished(&self, vertex: usize) -> bool {
        self.job_graph.in_edges(vertex).all(|e| {
            let producer = &self.execution_graph.job_vertices[e.source_vertex];
            producer.parallelism > 0
                && producer
                    .task_vertices
                    .iter()
                    .all(|t| t.current.state == ExecutionState::Finished)
        })
    }

    fn decide(&self, adaptive: &AdaptiveBatch, vertex: usize) -> u32 {
        let inputs: Vec<FinishedInput> = self
            .job_graph
            .edges
            .iter()
            .enumerate()
            .filter(|(_, e)| e.target_vertex == vertex)
            .filter_map(|(ei, e)| {
                let producers = self.job_graph.vertices[e.source_vertex].parallelism;
                let mut subpartition_bytes: Vec<u64> = Vec::new();
                for p in 0..producers {
                    let reported = adaptive.bytes.get(&(ei, p)).map(Vec::as_slice).unwrap_or_default();
                    if subpartition_bytes.len() < reported.len() {
                        subpartition_bytes.resize(reported.len(), 0);
                    }
                    for (sum, b) in subpartition_bytes.iter_mut().zip(reported) {
                        *sum += b;
                    }
                }
                Some(FinishedInput {
                    input: adaptive_input(e)?,
                    producer_parallelism: producers,
                    subpartition_bytes,
                })
            })
            .collect();
        let max = self.job_graph.vertices[vertex].max_parallelism;
        decide_vertex_parallelism(&adaptive.options, max, &inputs)
    }
}

#[cfg(test)]
#[path = "adaptive_batch_tests.rs"]
mod tests;
