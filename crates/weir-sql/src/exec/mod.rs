//! Compiling plans to the DataStream API: every plan node becomes operators of a
//! [`StreamExecutionEnvironment`] (so Weir's StreamGraph, chaining and keyed state
//! apply), named by the node's description.

pub mod acc;
pub mod calc;
pub mod collect;
pub mod group_agg;
pub mod window_agg;

#[cfg(test)]
mod tests;

use crate::error::Result;
use crate::plan::{PlanKind, PlanNode, WindowKind};
use crate::value::{GroupKey, Row};
use calc::{CalcOperator, CalcSpec};
use std::sync::Arc;
use weir_api::prelude::*;
use weir_graph::NodeKind;
use weir_runtime::operator::OperatorFactory;
use window_agg::{CumulativeWindows, EmitWindow, RowAggregate};

fn key_of(keys: usize) -> impl Fn(&Row) -> GroupKey + Send + Sync + 'static {
    move |r: &Row| GroupKey::of(&r.values[..keys])
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
            upstream
                .key_by(key_of(*keys))
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
            let keyed = upstream.key_by(key_of(*keys));
            let agg = RowAggregate {
                aggs: Arc::new(aggs.clone()),
            };
            let ms = |v: i64| Duration::from_millis(v.max(1) as u64);
            let out = match *window {
                WindowKind::Tumble { size } => keyed
                    .window(TumblingEventTimeWindows::of(ms(size)))
                    .aggregate_with_process(agg, EmitWindow),
                WindowKind::Hop { slide, size } => keyed
                    .window(SlidingEventTimeWindows::of(ms(size), ms(slide)))
                    .aggregate_with_process(agg, EmitWindow),
                WindowKind::Cumulate { step, size } => keyed
                    .window(CumulativeWindows { step, size })
                    .aggregate_with_process(agg, EmitWindow),
                WindowKind::Session { gap } => keyed
                    .window(EventTimeSessionWindows::with_gap(ms(gap)))
                    .aggregate_with_process(agg, EmitWindow),
            };
            out.name(desc.clone())
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
