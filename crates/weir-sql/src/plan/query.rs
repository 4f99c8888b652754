//! Queries to plans: `UNION ALL`, the FROM clause (tables, views, subqueries, window
//! TVFs), with joins and the rest refused as not supported yet. SELECT lists and
//! aggregation are in [`super::select`].

use super::pushdown::push_projection;
use super::select::bind_select;
use super::table::ResolvedTable;
use super::window_tvf::{check_time_attribute, window_of, WindowTvf};
use super::{PlanKind, PlanNode};
use crate::catalog::{Catalog, CatalogObject};
use crate::error::{Result, SqlError};
use crate::expr::bind::{common_type, interval_millis, ScopeColumn};
use crate::parser::object_name;
use sqlparser::ast::{
    Expr as Ast, FunctionArg, FunctionArgExpr, Query, SetExpr, SetOperator, SetQuantifier, TableFactor, TableWithJoins,
};
use std::sync::Arc;

/// Plans `q` against `catalog`.
pub fn plan_query(q: &Query, catalog: &Catalog) -> Result<PlanNode> {
    if q.with.is_some() {
        return Err(SqlError::unsupported("WITH"));
    }
    if q.order_by.is_some() {
        return Err(SqlError::unsupported("ORDER BY (TopN and sorting)"));
    }
    if q.limit_clause.is_some() || q.fetch.is_some() {
        return Err(SqlError::unsupported("LIMIT"));
    }
    plan_set_expr(&q.body, catalog)
}

fn plan_set_expr(body: &SetExpr, catalog: &Catalog) -> Result<PlanNode> {
    match body {
        SetExpr::Select(s) => {
            let (input, tvf) = plan_from(&s.from, catalog)?;
            bind_select(s, input, tvf).map(push_projection)
        }
        SetExpr::Query(q) => plan_query(q, catalog),
        SetExpr::SetOperation {
            op: SetOperator::Union,
            set_quantifier: SetQuantifier::All,
            left,
            right,
        } => {
            let (l, r) = (plan_set_expr(left, catalog)?, plan_set_expr(right, catalog)?);
            if l.schema.len() != r.schema.len() {
                return Err(SqlError::validation(format!(
                    "Column count mismatch in UNION ALL: {} and {} columns",
                    l.schema.len(),
                    r.schema.len()
                )));
            }
            let mut schema = Vec::new();
            for (a, b) in l.schema.iter().zip(&r.schema) {
                let t = common_type(a.data_type, b.data_type).ok_or_else(|| {
                    SqlError::validation(format!(
                        "Type mismatch in column '{}' of UNION ALL: {} and {}",
                        a.name, a.data_type, b.data_type
                    ))
                })?;
                schema.push(ScopeColumn {
                    name: a.name.clone(),
                    qualifier: None,
                    data_type: t,
                });
            }
            let updates_from = l.updates_from.clone().or(r.updates_from.clone());
            let mut inputs = Vec::new();
            for side in [l, r] {
                match side.kind {
                    PlanKind::Union(more) => inputs.extend(more),
                    _ => inputs.push(side),
                }
            }
            Ok(PlanNode {
                kind: PlanKind::Union(inputs),
                schema,
                updates_from,
            })
        }
        SetExpr::SetOperation { op, set_quantifier, .. } => Err(SqlError::unsupported(format!(
            "{op}{}",
            match set_quantifier {
                SetQuantifier::None => String::new(),
                q => format!(" {q}"),
            }
        ))),
        SetExpr::Values(_) => Err(SqlError::unsupported("VALUES")),
        other => Err(SqlError::unsupported(format!("The query '{other}'"))),
    }
}

fn with_qualifier(mut node: PlanNode, q: &str) -> PlanNode {
    for c in &mut node.schema {
        c.qualifier = Some(q.to_string());
    }
    node
}

/// Plans the named table or view.
pub fn plan_table(name: &str, catalog: &Catalog) -> Result<PlanNode> {
    match catalog.get(name)? {
        CatalogObject::Table(def) => {
            let t = ResolvedTable::resolve(def)?;
            Ok(PlanNode {
                schema: t.schema.clone(),
                kind: PlanKind::Scan(Arc::new(t)),
                updates_from: None,
            })
        }
        CatalogObject::View(q) => Ok(with_qualifier(plan_query(q, catalog)?, name)),
    }
}

/// Plans the FROM clause: the input and the window TVF over it, if any.
pub fn plan_from(from: &[TableWithJoins], catalog: &Catalog) -> Result<(PlanNode, Option<WindowTvf>)> {
    let [twj] = from else {
        return Err(if from.is_empty() {
            SqlError::unsupported("SELECT without FROM")
        } else {
            SqlError::unsupported("Join (a FROM list of several tables)")
        });
    };
    if !twj.joins.is_empty() {
        return Err(SqlError::unsupported("Join"));
    }
    match &twj.relation {
        TableFactor::Table { name, alias, args, .. } => {
            let n = object_name(name);
            let node = match args {
                None => (plan_table(&n, catalog)?, None),
                Some(a) => plan_tvf(&n.to_ascii_uppercase(), &a.args, catalog)?,
            };
            Ok(match alias {
                Some(a) => (with_qualifier(node.0, &a.name.value), node.1),
                None => node,
            })
        }
        TableFactor::Derived {
            subquery,
            alias,
            lateral,
            ..
        } => {
            if *lateral {
                return Err(SqlError::unsupported("LATERAL"));
            }
            let node = plan_query(subquery, catalog)?;
            Ok((
                match alias {
                    Some(a) => with_qualifier(node, &a.name.value),
                    None => node,
                },
                None,
            ))
        }
        TableFactor::NestedJoin { .. } => Err(SqlError::unsupported("Join")),
        other => Err(SqlError::unsupported(format!("The table expression '{other}'"))),
    }
}

fn arg_expr(a: &FunctionArg) -> Option<&Ast> {
    match a {
        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
        FunctionArg::Named {
            arg: FunctionArgExpr::Expr(e),
            ..
        } => Some(e),
        _ => None,
    }
}

fn plan_tvf(name: &str, args: &[FunctionArg], catalog: &Catalog) -> Result<(PlanNode, Option<WindowTvf>)> {
    if !matches!(name, "TUMBLE" | "HOP" | "CUMULATE" | "SESSION") {
        return Err(SqlError::validation(format!(
            "Object '{name}' not found (table functions other than TUMBLE, HOP, CUMULATE and SESSION are not supported yet)"
        )));
    }
    let mut exprs: Vec<&Ast> = args.iter().filter_map(arg_expr).collect();
    let usage = || {
        SqlError::validation(format!(
            "Invalid arguments to {name}: expected TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL ..)) (HOP and CUMULATE take two intervals; SESSION takes TABLE t [PARTITION BY k, ..], DESCRIPTOR(ts), INTERVAL gap)"
        ))
    };
    // The parser's rewrite turned `TABLE t PARTITION BY k1, k2` into `t, DESCRIPTOR(k1, k2)`.
    let mut partition_keys = Vec::new();
    if name == "SESSION" && exprs.len() == 4 {
        partition_keys = descriptor_columns(exprs.remove(1)).ok_or_else(usage)?;
    }
    let table = match exprs.first() {
        Some(Ast::Identifier(i)) => i.value.clone(),
        Some(Ast::CompoundIdentifier(ids)) => ids.last().map(|i| i.value.clone()).unwrap_or_default(),
        _ => return Err(usage()),
    };
    let time_col = match exprs.get(1).and_then(|e| descriptor_columns(e)) {
        Some(cols) if cols.len() == 1 => cols[0].clone(),
        _ => return Err(usage()),
    };
    let intervals: Vec<i64> = exprs[2..]
        .iter()
        .map(|e| interval_millis(e))
        .collect::<Option<_>>()
        .ok_or_else(usage)?;
    let mut tvf = window_of(name, time_col, &intervals).ok_or_else(usage)?;
    let input = plan_table(&table, catalog)?;
    check_time_attribute(&input, &tvf.time_col)?;
    for k in &partition_keys {
        if !input.schema.iter().any(|c| c.name.eq_ignore_ascii_case(k)) {
            return Err(SqlError::validation(format!("Column '{k}' not found in any table")));
        }
    }
    if !partition_keys.is_empty() {
        tvf.desc = format!(
            "{}, partition keys=[{}])",
            tvf.desc.trim_end_matches(')'),
            partition_keys.join(", ")
        );
    }
    tvf.partition_keys = partition_keys;
    Ok((input, Some(tvf)))
}

/// The column names of `DESCRIPTOR(a, b, ..)`.
fn descriptor_columns(e: &Ast) -> Option<Vec<String>> {
    match e {
        Ast::Function(f) if f.name.to_string().eq_ignore_ascii_case("DESCRIPTOR") => {
            let text = f.args.to_string();
            let cols: Vec<String> = text
                .trim_matches(['(', ')'])
                .split(',')
                .map(|c| c.trim().to_string())
                .collect();
            cols.iter().all(|c| !c.is_empty()).then_some(cols)
        }
        _ => None,
    }
}
