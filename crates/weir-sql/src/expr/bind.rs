//! Binding: a `sqlparser` expression checked against an input [`Scope`] and compiled
//! to an [`Expr`] with its type. Column names are resolved here, once; type errors
//! name the operator and the operand types (`Cannot apply '>' to arguments of type
//! '<STRING> > <INT>'.`). A [`BindHook`] lets the planner claim sub-expressions first
//! (group keys and aggregate calls of an aggregating query).

use super::func::{ScalarFn, TrimSide};
use super::time::unit_millis;
use super::typing::literal;
pub use super::typing::{arith_type, common_type, comparable, like_regex, Bound};
use super::{cast::can_cast, ArithOp, CmpOp, Expr};
use crate::error::{Result, SqlError};
use crate::types::DataType;
use crate::value::Value;
use sqlparser::ast::{
    BinaryOperator as B, CastKind, DateTimeField, Expr as Ast, FunctionArg, FunctionArgExpr, FunctionArguments,
    TrimWhereField, UnaryOperator, Value as AstValue,
};

/// One column visible to an expression.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeColumn {
    /// Its name.
    pub name: String,
    /// The table or alias it comes from, if any.
    pub qualifier: Option<String>,
    /// Its type.
    pub data_type: DataType,
}

/// The columns an expression may reference, by index.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// The columns.
    pub columns: Vec<ScopeColumn>,
}

impl Scope {
    /// A scope of unqualified columns, named and typed as `columns` are.
    pub fn unqualified(columns: &[(&str, DataType)]) -> Scope {
        Scope {
            columns: columns
                .iter()
                .map(|(name, data_type)| ScopeColumn {
                    name: name.to_string(),
                    qualifier: None,
                    data_type: *data_type,
                })
                .collect(),
        }
    }

    /// The index of column `name` (qualified by `qualifier` if given).
    pub fn resolve(&self, qualifier: Option<&str>, name: &str) -> Result<usize> {
        let hits: Vec<usize> = (0..self.columns.len())
            .filter(|&i| {
                let c = &self.columns[i];
                c.name.eq_ignore_ascii_case(name)
                    && qualifier.is_none_or(|q| c.qualifier.as_deref().is_some_and(|cq| cq.eq_ignore_ascii_case(q)))
            })
            .collect();
        match hits.as_slice() {
            [i] => Ok(*i),
            [] => Err(SqlError::validation(match qualifier {
                Some(q) => format!("Column '{q}.{name}' not found in any table"),
                None => format!("Column '{name}' not found in any table"),
            })),
            _ => Err(SqlError::validation(format!("Column '{name}' is ambiguous"))),
        }
    }
}

/// Lets the planner bind some sub-expressions itself.
pub trait BindHook {
    /// `Some` if the hook binds `e` (and its sub-expressions) itself.
    fn intercept(&mut self, e: &Ast) -> Result<Option<Bound>>;
}

/// Binds `e` over `scope`.
pub fn bind(e: &Ast, scope: &Scope) -> Result<Bound> {
    Binder { scope, hook: None }.bind(e)
}

/// Binds `e` over `scope`, offering every sub-expression to `hook` first.
pub fn bind_with(e: &Ast, scope: &Scope, hook: &mut dyn BindHook) -> Result<Bound> {
    Binder {
        scope,
        hook: Some(hook),
    }
    .bind(e)
}

/// The names of the aggregate functions.
pub const AGGREGATES: [&str; 5] = ["COUNT", "SUM", "AVG", "MIN", "MAX"];

/// True if `name` is an aggregate function.
pub fn is_aggregate(name: &str) -> bool {
    AGGREGATES.iter().any(|a| a.eq_ignore_ascii_case(name))
}

/// A literal `INTERVAL 'n' UNIT` in milliseconds.
pub fn interval_millis(e: &Ast) -> Option<i64> {
    let Ast::Interval(iv) = e else { return None };
    let text = match iv.value.as_ref() {
        Ast::Value(v) => match &v.value {
            AstValue::SingleQuotedString(s) | AstValue::Number(s, _) => s.clone(),
            _ => return None,
        },
        _ => return None,
    };
    let unit = match &iv.leading_field {
        Some(f) => f.to_string().to_ascii_uppercase(),
        None => {
            let mut parts = text.split_whitespace();
            let (n, u) = (parts.next()?, parts.next()?.to_ascii_uppercase());
            return Some((n.parse::<f64>().ok()? * unit_millis(&u)? as f64) as i64);
        }
    };
    Some((text.trim().parse::<f64>().ok()? * unit_millis(&unit)? as f64) as i64)
}

fn type_error(op: &str, a: DataType, b: DataType) -> SqlError {
    SqlError::validation(format!("Cannot apply '{op}' to arguments of type '<{a}> {op} <{b}>'."))
}

struct Binder<'s, 'h> {
    scope: &'s Scope,
    hook: Option<&'h mut dyn BindHook>,
}

impl Binder<'_, '_> {
    fn bind(&mut self, e: &Ast) -> Result<Bound> {
        if let Some(h) = self.hook.as_mut() {
            if let Some(b) = h.intercept(e)? {
                return Ok(b);
            }
        }
        let b = |expr, ty| Ok(Bound { expr, ty });
        match e {
            Ast::Identifier(id) => {
                let i = self.scope.resolve(None, &id.value)?;
                b(Expr::Column(i), self.scope.columns[i].data_type)
            }
            Ast::CompoundIdentifier(ids) if ids.len() >= 2 => {
                let q = &ids[ids.len() - 2].value;
                let i = self.scope.resolve(Some(q), &ids[ids.len() - 1].value)?;
                b(Expr::Column(i), self.scope.columns[i].data_type)
            }
            Ast::Value(v) => literal(&v.value),
            Ast::TypedString(ts) => {
                let t = DataType::from_ast(&ts.data_type)?;
                let text = match &ts.value.value {
                    AstValue::SingleQuotedString(s) => s.clone(),
                    other => other.to_string(),
                };
                let v = super::cast::cast(Value::Str(text.clone()), DataType::STRING, t)
                    .map_err(|_| SqlError::validation(format!("Illegal {t} literal '{text}'")))?;
                b(Expr::Literal(v), t)
            }
            Ast::Interval(_) => match interval_millis(e) {
                Some(ms) => b(Expr::Literal(Value::Interval(ms)), DataType::Interval),
                None => Err(SqlError::unsupported(format!("The interval '{e}'"))),
            },
            Ast::Nested(inner) => self.bind(inner),
            Ast::UnaryOp { op, expr } => {
                let x = self.bind(expr)?;
                match op {
                    UnaryOperator::Not => {
                        self.expect_bool("NOT", &x)?;
                        b(Expr::Not(Box::new(x.expr)), DataType::Boolean)
                    }
                    UnaryOperator::Minus if x.ty.is_numeric() || x.ty == DataType::Interval => {
                        b(Expr::Neg(Box::new(x.expr)), x.ty)
                    }
                    UnaryOperator::Plus if x.ty.is_numeric() => Ok(x),
                    _ => Err(SqlError::validation(format!(
                        "Cannot apply '{op}' to arguments of type '<{}>'.",
                        x.ty
                    ))),
                }
            }
            Ast::BinaryOp { left, op, right } => self.binary(left, op, right),
            Ast::IsNull(x) | Ast::IsNotNull(x) => {
                let x = self.bind(x)?;
                b(
                    Expr::IsNull(Box::new(x.expr), matches!(e, Ast::IsNotNull(_))),
                    DataType::Boolean,
                )
            }
            Ast::IsTrue(x) | Ast::IsFalse(x) => {
                let x = self.bind(x)?;
                let want = Expr::Literal(Value::Bool(matches!(e, Ast::IsTrue(_))));
                let cmp = Expr::Compare(CmpOp::Eq, Box::new(x.expr), Box::new(want));
                b(
                    Expr::Call(ScalarFn::Coalesce, vec![cmp, Expr::Literal(Value::Bool(false))]),
                    DataType::Boolean,
                )
            }
            Ast::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let ge = self.compare(CmpOp::GtEq, ">=", expr, low)?;
                let le = self.compare(CmpOp::LtEq, "<=", expr, high)?;
                let both = Expr::And(vec![ge, le]);
                b(
                    if *negated { Expr::Not(Box::new(both)) } else { both },
                    DataType::Boolean,
                )
            }
            Ast::In {
                expr,
                target: sqlparser::ast::InTarget::List(list),
                negated,
                ..
            } => {
                let x = self.bind(expr)?;
                let mut items = Vec::new();
                for item in list {
                    let i = self.bind(item)?;
                    comparable(x.ty, i.ty)
                        .then_some(())
                        .ok_or_else(|| type_error("IN", x.ty, i.ty))?;
                    items.push(i.expr);
                }
                b(Expr::InList(Box::new(x.expr), items, *negated), DataType::Boolean)
            }
            Ast::Like {
                negated, expr, pattern, ..
            } => {
                let x = self.bind(expr)?;
                let Ast::Value(v) = pattern.as_ref() else {
                    return Err(SqlError::unsupported("LIKE with a pattern that is not a literal"));
                };
                let AstValue::SingleQuotedString(p) = &v.value else {
                    return Err(SqlError::validation("LIKE needs a string pattern"));
                };
                if !x.ty.is_string() && x.ty != DataType::Null {
                    return Err(type_error("LIKE", x.ty, DataType::STRING));
                }
                b(
                    Expr::Like(Box::new(x.expr), like_regex(p)?, *negated),
                    DataType::Boolean,
                )
            }
            Ast::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let mut whens = Vec::new();
                let mut ty = DataType::Null;
                for c in conditions {
                    let cond = match operand {
                        Some(op) => Bound {
                            expr: self.compare(CmpOp::Eq, "=", op, &c.condition)?,
                            ty: DataType::Boolean,
                        },
                        None => self.bind(&c.condition)?,
                    };
                    self.expect_bool("CASE WHEN", &cond)?;
                    let r = self.bind(&c.result)?;
                    ty = common_type(ty, r.ty).ok_or_else(|| type_error("CASE", ty, r.ty))?;
                    whens.push((cond.expr, r.expr));
                }
                let otherwise = match else_result {
                    Some(x) => {
                        let r = self.bind(x)?;
                        ty = common_type(ty, r.ty).ok_or_else(|| type_error("CASE", ty, r.ty))?;
                        r.expr
                    }
                    None => Expr::Literal(Value::Null),
                };
                b(Expr::Case(whens, Box::new(otherwise)), ty)
            }
            Ast::Cast {
                kind, expr, data_type, ..
            } => {
                let x = self.bind(expr)?;
                let to = DataType::from_ast(data_type)?;
                if !can_cast(x.ty, to) {
                    return Err(SqlError::validation(format!(
                        "Cast function cannot convert value of type {} to type {to}",
                        x.ty
                    )));
                }
                let try_cast = matches!(kind, CastKind::TryCast | CastKind::SafeCast);
                b(
                    Expr::Cast {
                        expr: Box::new(x.expr),
                        from: x.ty,
                        to,
                        try_cast,
                    },
                    to,
                )
            }
            Ast::Extract { field, expr, .. } => {
                let x = self.bind(expr)?;
                let name = match field {
                    DateTimeField::Custom(c) => c.value.to_ascii_uppercase(),
                    other => other.to_string().to_ascii_uppercase(),
                };
                b(Expr::Call(ScalarFn::Extract(name), vec![x.expr]), DataType::BigInt)
            }
            Ast::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.bind(expr)?.expr];
                args.push(match substring_from {
                    Some(f) => self.bind(f)?.expr,
                    None => Expr::Literal(Value::Int(1)),
                });
                if let Some(f) = substring_for {
                    args.push(self.bind(f)?.expr);
                }
                b(Expr::Call(ScalarFn::Substring, args), DataType::STRING)
            }
            Ast::Trim {
                trim_where,
                trim_what,
                expr,
                ..
            } => {
                let side = match trim_where {
                    Some(TrimWhereField::Leading) => TrimSide::Leading,
                    Some(TrimWhereField::Trailing) => TrimSide::Trailing,
                    _ => TrimSide::Both,
                };
                let mut args = vec![self.bind(expr)?.expr];
                if let Some(w) = trim_what {
                    args.push(self.bind(w)?.expr);
                }
                b(Expr::Call(ScalarFn::Trim(side), args), DataType::STRING)
            }
            Ast::Ceil { expr, .. } | Ast::Floor { expr, .. } => {
                let x = self.bind(expr)?;
                let f = if matches!(e, Ast::Ceil { .. }) {
                    ScalarFn::Ceil
                } else {
                    ScalarFn::Floor
                };
                let ty = match x.ty {
                    DataType::Decimal(p, _) => DataType::Decimal(p, 0),
                    t => t,
                };
                b(Expr::Call(f, vec![x.expr]), ty)
            }
            Ast::Function(f) => {
                let name = f.name.to_string().to_ascii_uppercase();
                if f.over.is_some() {
                    return Err(SqlError::unsupported("OVER aggregation"));
                }
                if is_aggregate(&name) {
                    return Err(SqlError::validation(format!(
                        "Aggregate function '{name}' is not allowed here (only in the SELECT list or HAVING of an aggregating query)"
                    )));
                }
                let mut args = Vec::new();
                if let FunctionArguments::List(list) = &f.args {
                    for a in &list.args {
                        match a {
                            FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => args.push(self.bind(x)?),
                            other => {
                                return Err(SqlError::validation(format!("Unexpected argument '{other}' of {name}")))
                            }
                        }
                    }
                }
                super::bind_fn::call(&name, args)
            }
            Ast::Subquery(_) | Ast::Exists { .. } => Err(SqlError::unsupported("A subquery in an expression")),
            other => Err(SqlError::unsupported(format!("The expression '{other}'"))),
        }
    }

    fn expect_bool(&self, what: &str, x: &Bound) -> Result<()> {
        if matches!(x.ty, DataType::Boolean | DataType::Null) {
            Ok(())
        } else {
            Err(SqlError::validation(format!(
                "{what} requires a BOOLEAN operand, not {}",
                x.ty
            )))
        }
    }

    fn compare(&mut self, op: CmpOp, sym: &str, l: &Ast, r: &Ast) -> Result<Expr> {
        let (a, c) = (self.bind(l)?, self.bind(r)?);
        if !comparable(a.ty, c.ty) {
            return Err(type_error(sym, a.ty, c.ty));
        }
        Ok(Expr::Compare(op, Box::new(a.expr), Box::new(c.expr)))
    }

    fn binary(&mut self, l: &Ast, op: &B, r: &Ast) -> Result<Bound> {
        let cmp = match op {
            B::Eq => Some((CmpOp::Eq, "=")),
            B::NotEq => Some((CmpOp::NotEq, "<>")),
            B::Lt => Some((CmpOp::Lt, "<")),
            B::LtEq => Some((CmpOp::LtEq, "<=")),
            B::Gt => Some((CmpOp::Gt, ">")),
            B::GtEq => Some((CmpOp::GtEq, ">=")),
            _ => None,
        };
        if let Some((c, sym)) = cmp {
            return Ok(Bound {
                expr: self.compare(c, sym, l, r)?,
                ty: DataType::Boolean,
            });
        }
        let (a, c) = (self.bind(l)?, self.bind(r)?);
        match op {
            B::And | B::Or => {
                self.expect_bool(&op.to_string(), &a)?;
                self.expect_bool(&op.to_string(), &c)?;
                let items = vec![a.expr, c.expr];
                Ok(Bound {
                    expr: if *op == B::And {
                        Expr::And(items)
                    } else {
                        Expr::Or(items)
                    },
                    ty: DataType::Boolean,
                })
            }
            B::StringConcat => super::bind_fn::call("CONCAT", vec![a, c]),
            B::Plus | B::Minus | B::Multiply | B::Divide | B::Modulo => {
                let (aop, sym) = match op {
                    B::Plus => (ArithOp::Add, "+"),
                    B::Minus => (ArithOp::Sub, "-"),
                    B::Multiply => (ArithOp::Mul, "*"),
                    B::Divide => (ArithOp::Div, "/"),
                    _ => (ArithOp::Mod, "%"),
                };
                let ty = arith_type(aop, a.ty, c.ty).ok_or_else(|| type_error(sym, a.ty, c.ty))?;
                Ok(Bound {
                    expr: Expr::Arith(aop, Box::new(a.expr), Box::new(c.expr), ty),
                    ty,
                })
            }
            other => Err(SqlError::unsupported(format!("The operator '{other}'"))),
        }
    }
}
