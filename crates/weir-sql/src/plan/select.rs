//! SELECT blocks: projection and filter into one `Calc`; with GROUP BY or aggregate
//! calls, `Calc(keys, arguments, where)` → `GroupAggregate` or `WindowAggregate` →
//! `Calc(select, having)`. Group keys and aggregate calls of the SELECT list and HAVING
//! are bound to the aggregation's output columns by an `AggHook` (`plan::agg_hook`).

use super::agg_hook::{contains_aggregate, key_text, legacy_window, AggHook};
use super::window_tvf::WindowTvf;
use super::{PlanKind, PlanNode, WindowKind};
use crate::error::{Result, SqlError};
use crate::expr::bind::{bind, bind_with, Scope, ScopeColumn};
use crate::expr::Expr;
use crate::types::DataType;
use sqlparser::ast::{Expr as Ast, GroupByExpr, Select, SelectItem};

/// Plans one SELECT block over its planned FROM clause (`input`, and the window TVF
/// applied there, if any).
pub fn bind_select(s: &Select, input: PlanNode, tvf: Option<WindowTvf>) -> Result<PlanNode> {
    if s.distinct.is_some() {
        return Err(SqlError::unsupported("SELECT DISTINCT"));
    }
    let scope = Scope {
        columns: input.schema.clone(),
    };
    let filter = match &s.selection {
        Some(w) => {
            if contains_aggregate(w) {
                return Err(SqlError::validation("Aggregate functions are not allowed in WHERE"));
            }
            let b = bind(w, &scope)?;
            if !matches!(b.ty, DataType::Boolean | DataType::Null) {
                return Err(SqlError::validation(format!(
                    "WHERE clause must be a condition, not {}",
                    b.ty
                )));
            }
            Some((b.expr, w.to_string()))
        }
        None => None,
    };
    let group_by = match &s.group_by {
        GroupByExpr::Expressions(exprs, mods) if mods.is_empty() => exprs.clone(),
        _ => return Err(SqlError::unsupported("GROUP BY ALL / ROLLUP / CUBE / GROUPING SETS")),
    };
    let aggregating = !group_by.is_empty()
        || s.having.is_some()
        || s.projection.iter().any(|p| match p {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => contains_aggregate(e),
            _ => false,
        });
    if !aggregating {
        if tvf.is_some() {
            return Err(SqlError::unsupported("A window TVF without a window aggregation"));
        }
        let (exprs, schema, names) = project(&s.projection, &scope, None)?;
        let mut desc = format!("Calc(select=[{}]", names.join(", "));
        if let Some((_, w)) = &filter {
            desc.push_str(&format!(", where=[{w}]"));
        }
        desc.push(')');
        let updates_from = input.updates_from.clone();
        return Ok(PlanNode {
            kind: PlanKind::Calc {
                input: Box::new(input),
                exprs,
                filter: filter.map(|f| f.0),
                desc,
            },
            schema,
            updates_from,
        });
    }
    plan_aggregate(s, input, scope, filter, group_by, tvf)
}

type Projection = (Vec<Expr>, Vec<ScopeColumn>, Vec<String>);

fn project(items: &[SelectItem], scope: &Scope, mut hook: Option<&mut AggHook>) -> Result<Projection> {
    let (mut exprs, mut schema, mut names) = (Vec::new(), Vec::new(), Vec::new());
    for item in items {
        let (e, alias) = match item {
            SelectItem::UnnamedExpr(e) => (e, None),
            SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias.value.clone())),
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) if hook.is_none() => {
                for (i, c) in scope.columns.iter().enumerate() {
                    exprs.push(Expr::Column(i));
                    names.push(c.name.clone());
                    schema.push(ScopeColumn {
                        qualifier: None,
                        ..c.clone()
                    });
                }
                continue;
            }
            _ => return Err(SqlError::validation("'*' is not allowed in an aggregating query")),
        };
        let b = match hook.as_deref_mut() {
            Some(h) => bind_with(e, scope, h)?,
            None => bind(e, scope)?,
        };
        let name = alias.clone().unwrap_or_else(|| match e {
            Ast::Identifier(i) => i.value.clone(),
            Ast::CompoundIdentifier(ids) => ids.last().map(|i| i.value.clone()).unwrap_or_default(),
            _ => format!("EXPR${}", exprs.len()),
        });
        names.push(match &alias {
            Some(a) => format!("{e} AS {a}"),
            None => e.to_string(),
        });
        exprs.push(b.expr);
        schema.push(ScopeColumn {
            name,
            qualifier: None,
            data_type: b.ty,
        });
    }
    Ok((exprs, schema, names))
}

fn plan_aggregate(
    s: &Select,
    input: PlanNode,
    scope: Scope,
    filter: Option<(Expr, String)>,
    group_by: Vec<Ast>,
    tvf: Option<WindowTvf>,
) -> Result<PlanNode> {
    let mut keys = Vec::new();
    let mut key_exprs = Vec::new();
    let mut key_types = Vec::new();
    let mut window_props = Vec::new();
    let mut legacy = None;
    for g in &group_by {
        let text = key_text(g);
        if tvf.is_some() && matches!(text.as_str(), "window_start" | "window_end" | "window_time") {
            window_props.push(text);
            continue;
        }
        if let Some(w) = legacy_window(g, &input)? {
            if tvf.is_some() || legacy.is_some() {
                return Err(SqlError::validation("A query can group by one window only"));
            }
            legacy = Some(w);
            continue;
        }
        let b = bind(g, &scope)?;
        keys.push(text);
        key_exprs.push(b.expr);
        key_types.push(b.ty);
    }
    if let Some(t) = tvf.as_ref().filter(|_| legacy.is_none()) {
        if !(window_props.iter().any(|p| p == "window_start") && window_props.iter().any(|p| p == "window_end")) {
            return Err(SqlError::unsupported(format!(
                "A window TVF aggregation without both window_start and window_end in GROUP BY ({})",
                t.desc
            )));
        }
    }
    if let Some(t) = tvf.as_ref().filter(|t| matches!(t.kind, WindowKind::Session { .. })) {
        check_session_keys(t, &keys)?;
    }
    let legacy_form = legacy.is_some();
    let tvf = tvf.or(legacy);
    let window_type = tvf.as_ref().map(|t| {
        let time_type = scope
            .columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(&t.time_col))
            .map(|c| c.data_type);
        match time_type {
            Some(DataType::TimestampLtz(_)) => DataType::TimestampLtz(3),
            _ => DataType::Timestamp(3),
        }
    });
    let offset = if tvf.is_some() { 3 } else { 0 };
    let mut hook = AggHook {
        input: &scope,
        keys: keys.clone(),
        key_types: key_types.clone(),
        offset,
        window_type,
        legacy_form,
        aggs: Vec::new(),
        agg_args: Vec::new(),
        agg_texts: Vec::new(),
    };
    let (post_exprs, post_schema, post_names) = project(&s.projection, &scope, Some(&mut hook))?;
    let having = match &s.having {
        Some(h) => Some((bind_with(h, &scope, &mut hook)?, h.to_string())),
        None => None,
    };
    if let Some((b, _)) = &having {
        if !matches!(b.ty, DataType::Boolean | DataType::Null) {
            return Err(SqlError::validation(format!(
                "HAVING clause must be a condition, not {}",
                b.ty
            )));
        }
    }
    let AggHook {
        aggs,
        agg_args,
        agg_texts,
        ..
    } = hook;
    if let Some(from) = &input.updates_from {
        if tvf.is_some() {
            return Err(SqlError::Planner(format!(
                "WindowAggregate doesn't support consuming update changes which is produced by node {from}"
            )));
        }
    }
    // The Calc before the aggregation: keys, then the aggregates' arguments.
    let mut pre_exprs = key_exprs;
    pre_exprs.extend(agg_args);
    let mut pre_schema: Vec<ScopeColumn> = keys
        .iter()
        .zip(&key_types)
        .map(|(k, t)| ScopeColumn {
            name: k.clone(),
            qualifier: None,
            data_type: *t,
        })
        .collect();
    for (i, a) in aggs.iter().enumerate() {
        if a.arg.is_some() {
            pre_schema.push(ScopeColumn {
                name: format!("$f{}", pre_schema.len() + i),
                qualifier: None,
                data_type: a.arg_type,
            });
        }
    }
    let mut pre_desc = format!(
        "Calc(select=[{}]",
        pre_schema
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some((_, w)) = &filter {
        pre_desc.push_str(&format!(", where=[{w}]"));
    }
    pre_desc.push(')');
    let updates_in = input.updates_from.clone();
    let pre = PlanNode {
        kind: PlanKind::Calc {
            input: Box::new(input),
            exprs: pre_exprs,
            filter: filter.map(|f| f.0),
            desc: pre_desc,
        },
        schema: pre_schema,
        updates_from: updates_in,
    };
    let select_list = keys
        .iter()
        .cloned()
        .chain(agg_texts.iter().cloned())
        .collect::<Vec<_>>()
        .join(", ");
    let mut agg_schema = Vec::new();
    if let Some(wt) = window_type {
        for p in ["window_start", "window_end", "window_time"] {
            agg_schema.push(ScopeColumn {
                name: p.into(),
                qualifier: None,
                data_type: wt,
            });
        }
    }
    for (k, t) in keys.iter().zip(&key_types) {
        agg_schema.push(ScopeColumn {
            name: k.clone(),
            qualifier: None,
            data_type: *t,
        });
    }
    for (a, text) in aggs.iter().zip(&agg_texts) {
        agg_schema.push(ScopeColumn {
            name: text.clone(),
            qualifier: None,
            data_type: a.result_type,
        });
    }
    let n_keys = keys.len();
    let (kind, updates_from) = match &tvf {
        Some(t) => {
            let desc = format!(
                "WindowAggregate(groupBy=[{}], window=[{}], select=[{}{}window_start, window_end])",
                keys.join(", "),
                t.desc,
                select_list,
                if select_list.is_empty() { "" } else { ", " }
            );
            (
                PlanKind::WindowAggregate {
                    input: Box::new(pre),
                    window: t.kind,
                    keys: n_keys,
                    aggs,
                    desc,
                },
                None,
            )
        }
        None => {
            let desc = format!("GroupAggregate(groupBy=[{}], select=[{select_list}])", keys.join(", "));
            (
                PlanKind::GroupAggregate {
                    input: Box::new(pre),
                    keys: n_keys,
                    aggs,
                    desc: desc.clone(),
                },
                Some(desc),
            )
        }
    };
    let agg_node = PlanNode {
        kind,
        schema: agg_schema,
        updates_from: updates_from.clone(),
    };
    let mut desc = format!("Calc(select=[{}]", post_names.join(", "));
    if let Some((_, h)) = &having {
        desc.push_str(&format!(", where=[{h}]"));
    }
    desc.push(')');
    Ok(PlanNode {
        kind: PlanKind::Calc {
            input: Box::new(agg_node),
            exprs: post_exprs,
            filter: having.map(|h| h.0.expr),
            desc,
        },
        schema: post_schema,
        updates_from,
    })
}

/// A SESSION window TVF's sessions are per `PARTITION BY` value, and Weir computes them
/// per group key: the two must be the same columns.
fn check_session_keys(t: &WindowTvf, keys: &[String]) -> Result<()> {
    let mut partition: Vec<String> = t.partition_keys.iter().map(|k| k.to_ascii_lowercase()).collect();
    let mut grouped: Vec<String> = keys.to_vec();
    partition.sort();
    grouped.sort();
    if partition == grouped {
        Ok(())
    } else {
        Err(SqlError::unsupported(format!(
            "A SESSION window aggregation grouped by other columns ([{}]) than its PARTITION BY keys ([{}])",
            keys.join(", "),
            t.partition_keys.join(", ")
        )))
    }
}
