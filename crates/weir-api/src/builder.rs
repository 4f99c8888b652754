//! Accumulates the nodes, edges and operator code of a pipeline while the program
//! builds it, and resolves them into an [`ExecutableGraph`].
//!
//! Misuse of the API that Rust's types cannot rule out (a parallelism of 0, a forward
//! edge across different parallelisms, a setting on a union) is recorded here and
//! reported as one clear error when the graph is built, never as a panic.

use crate::error::ApiError;
use crate::watermark::DEFAULT_AUTO_WATERMARK_INTERVAL_MS;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use weir_core::key_group::check_parallelism;
use weir_core::RuntimeExecutionMode;
use weir_graph::{
    ChainingStrategy, ExecutionConfig, NodeKind, Partitioner, StreamEdge, StreamGraph, StreamNode, StreamNodeId,
    DEFAULT_SLOT_SHARING_GROUP,
};
use weir_runtime::executor::ExecutableGraph;
use weir_runtime::operator::{OperatorFactory, SelectorFactory};

/// A node whose parallelism may still be the environment default.
pub(crate) struct PendingNode {
    pub name: String,
    pub kind: NodeKind,
    pub parallelism: Option<u32>,
    pub max_parallelism: Option<u32>,
    pub chaining_strategy: ChainingStrategy,
    pub slot_sharing_group: Option<String>,
    pub uid: Option<String>,
    pub keyed: bool,
    /// Sources only: whether the source ends (Flink's `Boundedness`).
    pub boundedness: Boundedness,
    /// Sources only: the splits the source knows at planning time.
    pub source_splits: Option<u32>,
}

/// Whether a source ends (Flink's `Boundedness`): what `execution.runtime-mode`
/// AUTOMATIC decides by, and what BATCH requires of every source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Boundedness {
    /// The source reads a finite input and ends.
    Bounded,
    /// The source may run forever (the default of `add_source`, as Flink's
    /// `SourceFunction`).
    #[default]
    ContinuousUnbounded,
}

/// The runtime mode a job was built in (`STREAMING` or `BATCH`), shared with the
/// operators whose behaviour depends on it: they read it when they are built on their
/// task, after the graph was resolved, so a mode decided by AUTOMATIC (which needs every
/// source of the program) still applies to operators added before the last source.
#[derive(Debug, Clone, Default)]
pub struct RuntimeModeHandle(Arc<AtomicBool>);

impl RuntimeModeHandle {
    /// True when the job runs in BATCH mode.
    pub fn is_batch(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    pub(crate) fn set(&self, mode: RuntimeExecutionMode) {
        self.0.store(mode.is_batch(), Ordering::Relaxed);
    }
}

/// An edge whose partitioner may still be the default (forward or rebalance).
pub(crate) struct PendingEdge {
    pub source: StreamNodeId,
    pub target: StreamNodeId,
    pub partitioner: Option<Partitioner>,
    pub input: u32,
}

/// `pipeline.auto-watermark-interval` in ms, shared with the operators that emit
/// periodic watermarks: they read it when they are built on their task, so a setting
/// made after `from_source` still applies (as in Flink, where it is read at runtime).
#[derive(Debug, Clone)]
pub struct WatermarkInterval(Arc<AtomicI64>);

impl Default for WatermarkInterval {
    fn default() -> Self {
        Self(Arc::new(AtomicI64::new(DEFAULT_AUTO_WATERMARK_INTERVAL_MS)))
    }
}

impl WatermarkInterval {
    /// The interval in ms (0: no periodic watermarks).
    pub fn get(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }

    pub(crate) fn set(&self, ms: i64) {
        self.0.store(ms.max(0), Ordering::Relaxed);
    }
}

/// The pipeline under construction.
#[derive(Default)]
pub struct GraphBuilder {
    pub(crate) nodes: Vec<PendingNode>,
    pub(crate) factories: Vec<OperatorFactory>,
    pub(crate) edges: Vec<PendingEdge>,
    pub(crate) selectors: HashMap<(StreamNodeId, StreamNodeId), SelectorFactory>,
    pub(crate) errors: Vec<String>,
    pub(crate) watermark_interval: WatermarkInterval,
    pub(crate) runtime_mode: RuntimeModeHandle,
    pub(crate) limits: crate::limits::PlanLimits,
}

impl GraphBuilder {
    pub(crate) fn add_node(
        &mut self,
        name: impl Into<String>,
        kind: NodeKind,
        factory: OperatorFactory,
    ) -> StreamNodeId {
        let id = self.nodes.len() as StreamNodeId;
        self.nodes.push(PendingNode {
            name: name.into(),
            kind,
            parallelism: None,
            max_parallelism: None,
            chaining_strategy: ChainingStrategy::Always,
            slot_sharing_group: None,
            uid: None,
            keyed: false,
            boundedness: Boundedness::ContinuousUnbounded,
            source_splits: None,
        });
        self.factories.push(factory);
        id
    }

    /// Resolves defaults and checks the pipeline.
    pub(crate) fn build(&self, job_name: &str, config: &ExecutionConfig) -> Result<ExecutableGraph, ApiError> {
        if let Some(e) = self.errors.first() {
            return Err(ApiError::InvalidPipeline(e.clone()));
        }
        if self.nodes.is_empty() {
            return Err(ApiError::InvalidPipeline(
                "the pipeline has no operators: add a source and a sink".into(),
            ));
        }
        check_parallelism(config.parallelism, config.max_parallelism)
            .map_err(|e| ApiError::InvalidPipeline(e.to_string()))?;
        let config = &self.resolve_runtime_mode(config)?;
        let nodes: Vec<StreamNode> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| StreamNode {
                id: i as StreamNodeId,
                name: n.name.clone(),
                kind: n.kind,
                parallelism: n.parallelism.unwrap_or(config.parallelism),
                parallelism_configured: n.parallelism.is_some(),
                source_splits: n.source_splits,
                max_parallelism: n.max_parallelism,
                chaining_strategy: n.chaining_strategy,
                slot_sharing_group: n
                    .slot_sharing_group
                    .clone()
                    .unwrap_or_else(|| DEFAULT_SLOT_SHARING_GROUP.to_string()),
                uid: n.uid.clone(),
                keyed: n.keyed,
            })
            .collect();
        for n in &nodes {
            let max = n.max_parallelism.or(config.max_parallelism);
            check_parallelism(n.parallelism, max).map_err(|e| match e {
                weir_core::CoreError::ParallelismAboveMax {
                    parallelism,
                    max_parallelism,
                } => ApiError::InvalidPipeline(format!(
                    "operator '{}' has parallelism {parallelism}, higher than its max parallelism {max_parallelism}",
                    n.name
                )),
                other => ApiError::InvalidPipeline(format!("{other} (operator '{}')", n.name)),
            })?;
        }
        let mut edges = Vec::with_capacity(self.edges.len());
        for e in &self.edges {
            let (up, down) = (&nodes[e.source as usize], &nodes[e.target as usize]);
            let partitioner = match e.partitioner {
                None if up.parallelism == down.parallelism => Partitioner::Forward,
                None => Partitioner::Rebalance,
                Some(Partitioner::Forward) if up.parallelism != down.parallelism => {
                    return Err(ApiError::InvalidPipeline(format!(
                        "Forward partitioning does not allow change of parallelism. Upstream operation: {} parallelism: {}, downstream operation: {} parallelism: {} You must use another partitioning strategy, such as broadcast, rebalance, shuffle or global.",
                        up.name, up.parallelism, down.name, down.parallelism
                    )))
                }
                Some(p) => p,
            };
            edges.push(StreamEdge {
                source: e.source,
                target: e.target,
                partitioner,
                input: e.input,
            });
        }
        Ok(ExecutableGraph {
            stream_graph: StreamGraph {
                job_name: job_name.to_string(),
                config: config.clone(),
                nodes,
                edges,
            },
            factories: self.factories.clone(),
            selectors: self.selectors.clone(),
        })
    }

    /// The config with its runtime mode resolved (AUTOMATIC by the sources'
    /// boundedness); BATCH with an unbounded source is refused naming the source. A
    /// batch job's sources emit no periodic watermarks, only the final one.
    fn resolve_runtime_mode(&self, config: &ExecutionConfig) -> Result<ExecutionConfig, ApiError> {
        let mut sources = self.nodes.iter().filter(|n| n.kind == NodeKind::Source);
        let unbounded = sources.find(|n| n.boundedness == Boundedness::ContinuousUnbounded);
        let mode = config.runtime_mode.resolve(unbounded.is_none());
        if let (true, Some(source)) = (mode.is_batch(), unbounded) {
            return Err(ApiError::InvalidPipeline(format!(
                "Detected an UNBOUNDED source with the 'execution.runtime-mode' set to 'BATCH'. This combination is not allowed, please set the 'execution.runtime-mode' to STREAMING or AUTOMATIC (unbounded source: '{}')",
                source.name
            )));
        }
        self.runtime_mode.set(mode);
        if mode.is_batch() {
            self.watermark_interval.set(0);
        }
        Ok(ExecutionConfig {
            runtime_mode: mode,
            ..config.clone()
        })
    }
}
