//! The operator metric groups of a built chain, in the vertex's operator order (head
//! first), as the task publishes them.
//!
//! The head of a task that reads the network counts no records itself: its records in
//! are the records the task read, set here before each publication.

use crate::operator::metric_group::{Counter, OperatorMetricGroup};
use crate::operator::TaskContext;
use crate::task::metrics::TaskMetrics;
use std::rc::Rc;
use weir_graph::JobVertex;

/// A chain's operator metrics.
pub struct ChainMetrics {
    groups: Vec<Rc<OperatorMetricGroup>>,
    /// The head's records in, when the task reads the network.
    head_records_in: Option<Counter>,
}

impl ChainMetrics {
    /// The groups `ctx` holds for the operators of `vertex` (none when the task does
    /// not collect metrics), fixed in `metrics`.
    pub fn of(ctx: &TaskContext, vertex: &JobVertex, reads_network: bool, metrics: &TaskMetrics) -> Self {
        let groups: Vec<Rc<OperatorMetricGroup>> = vertex
            .operators
            .iter()
            .filter_map(|op| ctx.operator_metric_group(op.node_id))
            .collect();
        let head_records_in = ctx
            .operator_metric_group(vertex.head)
            .filter(|_| reads_network)
            .map(|g| g.records_in.clone());
        if !groups.is_empty() {
            metrics.set_operators(&groups);
        }
        Self {
            groups,
            head_records_in,
        }
    }

    /// Publishes every operator's counters to `metrics`, the head's records in being
    /// the task's `records_in`.
    pub fn publish(&self, metrics: &TaskMetrics, records_in: u64) {
        if self.groups.is_empty() {
            return;
        }
        if let Some(head) = &self.head_records_in {
            head.set(records_in);
        }
        metrics.publish_operators(&self.groups);
    }
}
