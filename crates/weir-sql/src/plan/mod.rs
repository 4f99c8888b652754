//! The logical plan of a query: a tree of streaming operators (Flink's physical
//! nodes `TableSourceScan`, `Calc`, `GroupAggregate`, `WindowAggregate`, `Union`), each
//! with its output schema, whether it produces updates, and a description that becomes
//! the operator's name (`Calc(select=[...], where=[...])`).

pub mod agg_hook;
pub mod explain;
pub mod pushdown;
pub mod query;
pub mod select;
pub mod table;
pub mod window_tvf;

#[cfg(test)]
mod tests;

use crate::expr::bind::ScopeColumn;
use crate::expr::Expr;
use crate::types::DataType;
use std::sync::Arc;
pub use table::ResolvedTable;

/// An aggregate function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    /// `COUNT(*)` or `COUNT(x)` (non-NULL x).
    Count,
    /// `SUM(x)`.
    Sum,
    /// `AVG(x)`.
    Avg,
    /// `MIN(x)`.
    Min,
    /// `MAX(x)`.
    Max,
}

/// One aggregate call of an aggregation.
#[derive(Debug, Clone)]
pub struct AggCall {
    /// The function.
    pub func: AggFunc,
    /// `DISTINCT`.
    pub distinct: bool,
    /// The argument's column in the aggregation's input (`None` for `COUNT(*)`).
    pub arg: Option<usize>,
    /// The argument's type.
    pub arg_type: DataType,
    /// The result type.
    pub result_type: DataType,
}

/// The window of a window aggregation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowKind {
    /// `TUMBLE(size)`.
    Tumble {
        /// Size in ms.
        size: i64,
    },
    /// `HOP(slide, size)`.
    Hop {
        /// Slide in ms.
        slide: i64,
        /// Size in ms.
        size: i64,
    },
    /// `CUMULATE(step, max size)`.
    Cumulate {
        /// Step in ms.
        step: i64,
        /// Max size in ms.
        size: i64,
    },
    /// `SESSION(gap)`: rows of one key less than `gap` apart share a window.
    Session {
        /// Gap in ms.
        gap: i64,
    },
}

/// A plan node.
#[derive(Debug, Clone)]
pub struct PlanNode {
    /// What it does.
    pub kind: PlanKind,
    /// Its output columns.
    pub schema: Vec<ScopeColumn>,
    /// The description of the node that makes this stream updating, if it is.
    pub updates_from: Option<String>,
}

/// The operators.
#[derive(Debug, Clone)]
pub enum PlanKind {
    /// Reads a table.
    Scan(Arc<ResolvedTable>),
    /// Projection and filter in one operator.
    Calc {
        /// The input.
        input: Box<PlanNode>,
        /// The output columns.
        exprs: Vec<Expr>,
        /// The filter, if any.
        filter: Option<Expr>,
        /// The operator's name.
        desc: String,
    },
    /// A streaming, updating aggregation by the first `keys` input columns.
    GroupAggregate {
        /// The input: keys first, then the aggregates' arguments.
        input: Box<PlanNode>,
        /// The number of key columns.
        keys: usize,
        /// The aggregates.
        aggs: Vec<AggCall>,
        /// The operator's name.
        desc: String,
    },
    /// An event-time window aggregation: output `window_start, window_end,
    /// window_time`, then the keys, then the aggregates.
    WindowAggregate {
        /// The input: keys first, then the aggregates' arguments.
        input: Box<PlanNode>,
        /// The window.
        window: WindowKind,
        /// The number of key columns.
        keys: usize,
        /// The aggregates.
        aggs: Vec<AggCall>,
        /// The operator's name.
        desc: String,
    },
    /// `UNION ALL`.
    Union(Vec<PlanNode>),
}

impl PlanNode {
    /// The output column types.
    pub fn types(&self) -> Vec<DataType> {
        self.schema.iter().map(|c| c.data_type).collect()
    }

    /// The node's description.
    pub fn describe(&self) -> String {
        match &self.kind {
            PlanKind::Scan(t) => {
                let fields = t.schema.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ");
                let project = if t.projected {
                    format!(", project=[{fields}]")
                } else {
                    String::new()
                };
                format!(
                    "TableSourceScan(table=[[default_catalog, default_database, {}{project}]], fields=[{fields}])",
                    t.name
                )
            }
            PlanKind::Calc { desc, .. }
            | PlanKind::GroupAggregate { desc, .. }
            | PlanKind::WindowAggregate { desc, .. } => desc.clone(),
            PlanKind::Union(inputs) => format!(
                "Union(all=[true], union=[{}])",
                inputs
                    .first()
                    .map(|i| i.schema.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "))
                    .unwrap_or_default()
            ),
        }
    }
}

/// A duration in Flink's plan notation (`1 min`, `5 s`, `100 ms`).
pub fn format_duration(ms: i64) -> String {
    match ms {
        m if m % 86_400_000 == 0 => format!("{} d", m / 86_400_000),
        m if m % 3_600_000 == 0 => format!("{} h", m / 3_600_000),
        m if m % 60_000 == 0 => format!("{} min", m / 60_000),
        m if m % 1000 == 0 => format!("{} s", m / 1000),
        m => format!("{m} ms"),
    }
}
