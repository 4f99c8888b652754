//! Projection pushdown (Flink's `PushProjectIntoTableSourceScanRule`): a Calc that
//! only selects columns of a scan, without a filter, becomes the scan of just those
//! columns, so that the source evaluates no computed column the query does not read
//! and no operator moves the columns afterwards; one that selects every column in
//! order (`SELECT *`) is dropped, as Flink removes a trivial Calc.
//!
//! Only sources that build each row from its physical values and stamp the records
//! themselves take a projection: `datagen`'s (see `connectors::datagen`) and
//! `filesystem`'s (which still parses every field of a line, so that a malformed line
//! fails or is skipped whatever the query reads). The plan
//! keeps its output schema, and the scan's name says what was pushed
//! (`project=[..]`).

use super::{PlanKind, PlanNode};
use crate::expr::Expr;
use std::sync::Arc;

/// Whether the source of a table with these options evaluates pushed projections.
fn takes_projection(options: &std::collections::BTreeMap<String, String>) -> bool {
    matches!(
        options.get("connector").map(String::as_str),
        Some("datagen" | "filesystem")
    )
}

/// The columns a Calc picks when it only selects distinct columns without a filter.
fn picked_columns(exprs: &[Expr], filter: Option<&Expr>) -> Option<Vec<usize>> {
    if filter.is_some() {
        return None;
    }
    let picked = exprs
        .iter()
        .map(|e| match e {
            Expr::Column(c) => Some(*c),
            _ => None,
        })
        .collect::<Option<Vec<usize>>>()?;
    let distinct = picked.iter().enumerate().all(|(i, c)| !picked[..i].contains(c));
    distinct.then_some(picked)
}

/// `node` with every selecting Calc over a scan that takes projections, at any depth,
/// turned into the scan of the selected columns.
pub fn push_projection(mut node: PlanNode) -> PlanNode {
    match &mut node.kind {
        PlanKind::Scan(_) => {}
        PlanKind::Calc { input, .. }
        | PlanKind::GroupAggregate { input, .. }
        | PlanKind::WindowAggregate { input, .. } => {
            let child = std::mem::replace(&mut **input, placeholder());
            **input = push_projection(child);
        }
        PlanKind::Union(inputs) => {
            *inputs = std::mem::take(inputs).into_iter().map(push_projection).collect();
        }
    }
    project_scan(node)
}

/// An empty node, held for the moment a child is taken out and put back.
fn placeholder() -> PlanNode {
    PlanNode {
        kind: PlanKind::Union(Vec::new()),
        schema: Vec::new(),
        updates_from: None,
    }
}

/// `node` as the projected scan when it is a selecting Calc over a scan that takes
/// projections.
fn project_scan(node: PlanNode) -> PlanNode {
    let PlanKind::Calc {
        input, exprs, filter, ..
    } = &node.kind
    else {
        return node;
    };
    let PlanKind::Scan(table) = &input.kind else {
        return node;
    };
    if !takes_projection(&table.options) {
        return node;
    }
    let Some(picked) = picked_columns(exprs, filter.as_ref()) else {
        return node;
    };
    if picked.iter().any(|&c| c >= table.schema.len()) {
        return node;
    }
    // Every column in order: the Calc does nothing, and the scan reads what it reads.
    if picked.iter().copied().eq(0..table.schema.len()) {
        return PlanNode {
            kind: PlanKind::Scan(table.clone()),
            schema: node.schema,
            updates_from: None,
        };
    }
    PlanNode {
        kind: PlanKind::Scan(Arc::new(table.project(&picked))),
        schema: node.schema,
        updates_from: None,
    }
}
