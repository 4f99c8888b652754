//! Compiling plans to the DataStream API: every plan node becomes operators of a
//! [`StreamExecutionEnvironment`] (so Weir's StreamGraph, chaining and keyed state
//! apply), named by the node's description.

pub mod acc;
pub mod cache_warm;
pub mod calc;
pub mod collect;
pub mod group_agg;
pub mod int_key_index;
pub mod key_dictionary;
pub mod key_entries;
pub mod radix_sort;
pub mod slice_assigner;
pub mod slice_snapshot;
pub mod slice_table;
pub mod slicing_window;
pub mod typed_acc;
pub mod window_agg;
pub mod window_rows;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod typed_acc_props;

use crate::error::Result;
use crate::expr::Expr;
use crate::key::{key_hash_of, GroupKey};
use crate::plan::{PlanKind, PlanNode, WindowKind};
use crate::value::Row;
use calc::{CalcOperator, CalcSpec};
use slice_assigner::SliceAssigner;
use slicing_window::{SlicingWindowOperator, WindowAggSpec};
use std::sync::Arc;
use weir_api::prelude::*;
use weir_graph::NodeKind;
use weir_runtime::operator::metric_group::NUM_LATE_RECORDS_DROPPED;
use weir_runtime::operator::{register_checkpointed, OperatorFactory};
use weir_runtime::TaskError;
use window_agg::{EmitWindow, RowAggregate};

fn key_of(keys: usize) -> impl Fn(&Row) -> GroupKey + Send + Sync + 'static {
    move |r: &Row| GroupKey::of(&r.values[..keys])
}

/// Partitions `stream` by its first `keys` columns, routing rows by the key hash of
/// those columns (no key is built per row to route it).
fn key_by_columns(stream: &DataStream<Row>, keys: usize) -> KeyedStream<GroupKey, Row> {
    stream.key_by_with_hash(key_of(keys), move |r: &Row| key_hash_of(&r.values[..keys]))
}

/// Adds the operators of `node` to `env`; the stream of its output rows.
pub fn compile(node: &PlanNode, env: &StreamExecutionEnvironment) -> Result<DataStream<Row>> {
    Ok(match &node.kind {
        PlanKind::Scan(t) => crate::connectors::source(env, t.clone())?,
        PlanKind::Calc {
            input,
            exprs,
            filter,
            desc,
        } => {
            if let Some(fused) = fused_window_projection(input, exprs, filter.as_ref(), desc, env) {
                return fused;
            }
            let upstream = compile(input, env)?;
            let spec = Arc::new(CalcSpec {
                name: desc.clone(),
                exprs: exprs.clone(),
                filter: filter.clone(),
            });
            upstream.transform(
                desc.clone(),
                NodeKind::Operator,
                false,
                OperatorFactory::one_input::<Row, Row>(move |_ctx, out| {
                    Ok(Box::new(CalcOperator::new(spec.clone(), out)))
                }),
            )
        }
        PlanKind::GroupAggregate {
            input,
            keys,
            aggs,
            desc,
        } => {
            let upstream = compile(input, env)?;
            key_by_columns(&upstream, *keys)
                .process(group_agg::GroupAggFunction::new(
                    *keys,
                    aggs.clone(),
                    env.runtime_mode_handle(),
                ))
                .name(desc.clone())
        }
        PlanKind::WindowAggregate {
            input,
            window,
            keys,
            aggs,
            desc,
        } => {
            let upstream = compile(input, env)?;
            let keyed = key_by_columns(&upstream, *keys);
            match (SliceAssigner::of(*window), *window) {
                (Some(assigner), _) => {
                    let spec = WindowAggSpec {
                        name: desc.clone(),
                        assigner,
                        keys: *keys,
                        aggs: Arc::new(aggs.clone()),
                        projection: None,
                    };
                    keyed.transform(desc.clone(), slicing_window_factory(spec, env))
                }
                (None, kind) => {
                    let gap = match kind {
                        WindowKind::Session { gap } => gap,
                        _ => 0,
                    };
                    let agg = RowAggregate {
                        aggs: Arc::new(aggs.clone()),
                    };
                    keyed
                        .window(EventTimeSessionWindows::with_gap(Duration::from_millis(
                            gap.max(1) as u64
                        )))
                        .aggregate_with_process(agg, EmitWindow)
                        .name(desc.clone())
                }
            }
        }
        PlanKind::Union(inputs) => {
            let mut streams = Vec::new();
            for i in inputs {
                streams.push(compile(i, env)?);
            }
            let first = streams.remove(0);
            first.union(&streams)
        }
    })
}

/// A Calc that only selects columns of a slicing window aggregate (the usual
/// `SELECT window_start, key, COUNT(*) ... GROUP BY window_start, window_end, key`)
/// compiled into the aggregate: it emits the selected columns as it fires, so no row of
/// all its columns is built to be cut down. The operator is named as the chain of the
/// two (`WindowAggregate(...) -> Calc(...)`) is; `None` for any other Calc.
fn fused_window_projection(
    input: &PlanNode,
    exprs: &[Expr],
    filter: Option<&Expr>,
    desc: &str,
    env: &StreamExecutionEnvironment,
) -> Option<Result<DataStream<Row>>> {
    let PlanKind::WindowAggregate {
        input: agg_input,
        window,
        keys,
        aggs,
        desc: agg_desc,
    } = &input.kind
    else {
        return None;
    };
    let assigner = SliceAssigner::of(*window)?;
    let width = 3 + keys + aggs.len();
    let projection = exprs
        .iter()
        .map(|e| match e {
            Expr::Column(c) if *c < width => Some(*c),
            _ => None,
        })
        .collect::<Option<Vec<usize>>>()?;
    if filter.is_some() {
        return None;
    }
    let spec = WindowAggSpec {
        name: agg_desc.clone(),
        assigner,
        keys: *keys,
        aggs: Arc::new(aggs.clone()),
        projection: Some(projection),
    };
    Some(compile(agg_input, env).map(|upstream| {
        key_by_columns(&upstream, *keys).transform(format!("{agg_desc} -> {desc}"), slicing_window_factory(spec, env))
    }))
}

/// The factory of the slicing window aggregate of `spec` in `env`: each subtask restores
/// the slices of its key groups from the checkpoint it starts from, if any, and learns
/// the job's runtime mode (resolved once the program is built).
fn slicing_window_factory(spec: WindowAggSpec, env: &StreamExecutionEnvironment) -> OperatorFactory {
    let mode = env.runtime_mode_handle();
    OperatorFactory::one_input::<Row, Row>(move |ctx, out| {
        let restored = match ctx.state().restored(ctx.key_group_range()) {
            Some(snapshot) => slice_snapshot::restore(&snapshot, &spec.aggs).map_err(|reason| TaskError::Restore {
                checkpoint_id: ctx.state().restored_checkpoint().unwrap_or(0),
                reason: format!("{}: {reason}", ctx.task_name),
            })?,
            None => Default::default(),
        };
        let op = SlicingWindowOperator::new(
            spec.clone(),
            restored,
            mode.is_batch(),
            ctx.max_parallelism,
            out,
            ctx.operator_counter(NUM_LATE_RECORDS_DROPPED),
        );
        register_checkpointed(ctx, op)
    })
}
