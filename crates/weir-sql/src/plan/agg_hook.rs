//! Binding an aggregating SELECT list and HAVING: group keys, window properties
//! (`window_start`, ..., or `TUMBLE_START(..)` of a legacy group window) and aggregate
//! calls are bound to the aggregation's output columns; aggregate arguments are bound
//! over the input and collected for the Calc before the aggregation.

use super::window_tvf::{check_time_attribute, window_of, WindowTvf};
use super::{AggCall, AggFunc, PlanNode};
use crate::error::{Result, SqlError};
use crate::expr::bind::{bind, is_aggregate, BindHook, Bound, Scope};
use crate::expr::Expr;
use crate::types::DataType;
use sqlparser::ast::{DuplicateTreatment, Expr as Ast, FunctionArg, FunctionArgExpr, FunctionArguments};

/// True if `e` calls an aggregate function.
pub fn contains_aggregate(e: &Ast) -> bool {
    static CALL: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    CALL.get_or_init(|| regex::Regex::new(r"(?i)\b(COUNT|SUM|AVG|MIN|MAX)\s*\(").ok())
        .as_ref()
        .is_some_and(|r| r.is_match(&e.to_string()))
}

/// The window of a legacy `GROUP BY TUMBLE(ts, INTERVAL ..)` key, if `g` is one (a
/// legacy SESSION window's sessions are per group key).
pub fn legacy_window(g: &Ast, input: &PlanNode) -> Result<Option<WindowTvf>> {
    let Ast::Function(f) = g else { return Ok(None) };
    let name = f.name.to_string().to_ascii_uppercase();
    if !matches!(name.as_str(), "TUMBLE" | "HOP" | "CUMULATE" | "SESSION") {
        return Ok(None);
    }
    let args: Vec<&Ast> = match &f.args {
        FunctionArguments::List(l) => l
            .args
            .iter()
            .filter_map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => Some(x),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let usage = || {
        SqlError::validation(format!(
            "Invalid arguments to the group window {name}(time_col, INTERVAL ..)"
        ))
    };
    let Some(Ast::Identifier(col)) = args.first() else {
        return Err(usage());
    };
    let intervals: Vec<i64> = args[1..]
        .iter()
        .map(|a| crate::expr::bind::interval_millis(a))
        .collect::<Option<_>>()
        .ok_or_else(usage)?;
    let w = window_of(&name, col.value.clone(), &intervals).ok_or_else(usage)?;
    check_time_attribute(input, &col.value)?;
    Ok(Some(w))
}

/// A group key's text, to match SELECT items against.
pub fn key_text(e: &Ast) -> String {
    e.to_string().to_ascii_lowercase()
}

/// Binds group keys, window properties and aggregate calls to the aggregation output.
pub(super) struct AggHook<'a> {
    pub(super) input: &'a Scope,
    pub(super) keys: Vec<String>,
    pub(super) key_types: Vec<DataType>,
    /// Output columns before the keys (3 for a window aggregation).
    pub(super) offset: usize,
    pub(super) window_type: Option<DataType>,
    /// Grouped by `TUMBLE(ts, ..)` (its properties are `TUMBLE_START(..)`, ...).
    pub(super) legacy_form: bool,
    pub(super) aggs: Vec<AggCall>,
    pub(super) agg_args: Vec<Expr>,
    pub(super) agg_texts: Vec<String>,
}

impl BindHook for AggHook<'_> {
    fn intercept(&mut self, e: &Ast) -> Result<Option<Bound>> {
        let text = key_text(e);
        if let Some(i) = self.keys.iter().position(|k| *k == text) {
            return Ok(Some(Bound {
                expr: Expr::Column(self.offset + i),
                ty: self.key_types[i],
            }));
        }
        if let Some(wt) = self.window_type {
            let prop = ["window_start", "window_end", "window_time"]
                .iter()
                .position(|p| *p == text);
            if let Some(p) = prop {
                return Ok(Some(Bound {
                    expr: Expr::Column(p),
                    ty: wt,
                }));
            }
        }
        if let (Some(wt), true, Ast::Function(f)) = (self.window_type, self.legacy_form, e) {
            let name = f.name.to_string().to_ascii_uppercase();
            let prop = ["_START", "_END", "_ROWTIME"].iter().position(|p| {
                name.strip_suffix(p)
                    .is_some_and(|w| matches!(w, "TUMBLE" | "HOP" | "CUMULATE" | "SESSION"))
            });
            if let Some(p) = prop {
                return Ok(Some(Bound {
                    expr: Expr::Column(p),
                    ty: wt,
                }));
            }
        }
        match e {
            Ast::Identifier(_) | Ast::CompoundIdentifier(_) => {
                Err(SqlError::validation(format!("Expression '{e}' is not being grouped")))
            }
            Ast::Function(f) if is_aggregate(&f.name.to_string()) => self.aggregate(f, e).map(Some),
            _ => Ok(None),
        }
    }
}

impl AggHook<'_> {
    fn aggregate(&mut self, f: &sqlparser::ast::Function, whole: &Ast) -> Result<Bound> {
        let text = whole.to_string();
        if let Some(j) = self.agg_texts.iter().position(|t| t.eq_ignore_ascii_case(&text)) {
            return Ok(Bound {
                expr: Expr::Column(self.offset + self.keys.len() + j),
                ty: self.aggs[j].result_type,
            });
        }
        let name = f.name.to_string().to_ascii_uppercase();
        let func = match name.as_str() {
            "COUNT" => AggFunc::Count,
            "SUM" => AggFunc::Sum,
            "AVG" => AggFunc::Avg,
            "MIN" => AggFunc::Min,
            _ => AggFunc::Max,
        };
        let FunctionArguments::List(list) = &f.args else {
            return Err(SqlError::validation(format!("{name} needs an argument")));
        };
        if f.filter.is_some() {
            return Err(SqlError::unsupported("FILTER in an aggregate call"));
        }
        let distinct = matches!(list.duplicate_treatment, Some(DuplicateTreatment::Distinct));
        let arg = match list.args.as_slice() {
            [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] if func == AggFunc::Count => None,
            [FunctionArg::Unnamed(FunctionArgExpr::Expr(x))] => {
                if contains_aggregate(x) {
                    return Err(SqlError::validation("Aggregate function calls cannot be nested"));
                }
                Some(bind(x, self.input)?)
            }
            _ => {
                return Err(SqlError::validation(format!(
                    "Invalid number of arguments to function '{name}'"
                )))
            }
        };
        let arg_type = arg.as_ref().map_or(DataType::BigInt, |a| a.ty);
        let numeric = arg_type.is_numeric() || arg_type == DataType::Null;
        let result_type = match func {
            AggFunc::Count => DataType::BigInt,
            AggFunc::Sum | AggFunc::Avg if !numeric => {
                return Err(SqlError::validation(format!(
                    "Cannot apply '{name}' to arguments of type '{name}(<{arg_type}>)'. Supported form(s): '{name}(<NUMERIC>)'"
                )))
            }
            AggFunc::Sum => match arg_type {
                DataType::Decimal(_, s) => DataType::Decimal(38, s),
                DataType::Float => DataType::Double,
                t => t,
            },
            AggFunc::Avg => match arg_type {
                DataType::Decimal(_, s) => DataType::Decimal(38, s.max(6)),
                t => t,
            },
            AggFunc::Min | AggFunc::Max => arg_type,
        };
        let arg_index = arg.map(|a| {
            self.agg_args.push(a.expr);
            self.keys.len() + self.agg_args.len() - 1
        });
        self.aggs.push(AggCall {
            func,
            distinct,
            arg: arg_index,
            arg_type,
            result_type,
        });
        self.agg_texts.push(whole.to_string());
        Ok(Bound {
            expr: Expr::Column(self.offset + self.keys.len() + self.aggs.len() - 1),
            ty: result_type,
        })
    }
}
