//! Numeric kernels: an expression compiled once into a flat tree over unboxed numbers
//! (`i64`, `f64`, epoch milliseconds), for the arithmetic, `MOD`, numeric `CAST`s and
//! `TO_TIMESTAMP_LTZ` that computed columns and projections are made of.
//!
//! Invariant: a kernel computes exactly what [`Expr::eval`] computes (Java's wrapping
//! integer arithmetic narrowed to the result type, doubles as doubles), or gives up on
//! the row (a NULL, a value of another kind, a zero divisor): then [`Compiled::eval`]
//! evaluates the expression tree, which answers NULLs and raises errors as always.

use super::cast::narrow;
use super::func::ScalarFn;
use super::{ArithOp, EvalResult, Expr};
use crate::types::DataType;
use crate::value::Value;

/// An unboxed intermediate value.
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i64),
    Double(f64),
    Timestamp(i64),
}

/// One node of a kernel.
#[derive(Debug, Clone)]
enum Node {
    Column(usize),
    Const(Num),
    Arith(ArithOp, Box<Node>, Box<Node>, DataType),
    Cast(Box<Node>, DataType),
    ToTimestampLtz(Box<Node>, u8),
}

impl Node {
    fn compile(e: &Expr) -> Option<Node> {
        Some(match e {
            Expr::Column(i) => Node::Column(*i),
            Expr::Literal(Value::Int(i)) => Node::Const(Num::Int(*i)),
            Expr::Literal(Value::Double(d)) => Node::Const(Num::Double(*d)),
            Expr::Arith(op, a, b, t) if t.is_integer() || is_double(*t) => {
                Node::Arith(*op, Box::new(Node::compile(a)?), Box::new(Node::compile(b)?), *t)
            }
            Expr::Call(ScalarFn::Mod(t), args) if args.len() == 2 && (t.is_integer() || is_double(*t)) => Node::Arith(
                ArithOp::Mod,
                Box::new(Node::compile(&args[0])?),
                Box::new(Node::compile(&args[1])?),
                *t,
            ),
            Expr::Call(ScalarFn::ToTimestampLtz(p), args) if args.len() == 1 => {
                Node::ToTimestampLtz(Box::new(Node::compile(&args[0])?), *p)
            }
            Expr::Cast { expr, to, .. } if to.is_integer() || is_double(*to) || to.is_timestamp() => {
                Node::Cast(Box::new(Node::compile(expr)?), *to)
            }
            _ => return None,
        })
    }

    /// The node's value for `row`; `None` to leave the row to the expression tree.
    fn eval(&self, row: &[Value]) -> Option<Num> {
        match self {
            Node::Column(i) => match row.get(*i)? {
                Value::Int(x) => Some(Num::Int(*x)),
                Value::Double(d) => Some(Num::Double(*d)),
                Value::Timestamp(ms) => Some(Num::Timestamp(*ms)),
                _ => None,
            },
            Node::Const(n) => Some(*n),
            Node::Arith(op, a, b, t) => arith(*op, a.eval(row)?, b.eval(row)?, *t),
            Node::Cast(e, to) => match (e.eval(row)?, *to) {
                (Num::Int(x), t) if t.is_integer() => Some(Num::Int(narrow(x, t))),
                (Num::Double(d), t) if t.is_integer() => Some(Num::Int(narrow(d as i64, t))),
                (Num::Int(x), t) if is_double(t) => Some(Num::Double(x as f64)),
                (Num::Double(d), t) if is_double(t) => Some(Num::Double(d)),
                (Num::Timestamp(ms), t) if t.is_timestamp() => Some(Num::Timestamp(ms)),
                _ => None,
            },
            Node::ToTimestampLtz(e, precision) => {
                let n = match e.eval(row)? {
                    Num::Int(x) => x as f64,
                    Num::Double(d) => d,
                    Num::Timestamp(_) => return None,
                };
                let ms = if *precision == 0 { n * 1000.0 } else { n };
                Some(Num::Timestamp(ms as i64))
            }
        }
    }
}

fn is_double(t: DataType) -> bool {
    matches!(t, DataType::Float | DataType::Double)
}

/// `a op b` of type `t`, as [`super::arith`] computes it for numbers.
fn arith(op: ArithOp, a: Num, b: Num, t: DataType) -> Option<Num> {
    let double = |n: Num| match n {
        Num::Int(x) => Some(x as f64),
        Num::Double(d) => Some(d),
        Num::Timestamp(_) => None,
    };
    if t.is_integer() {
        let (Num::Int(x), Num::Int(y)) = (a, b) else {
            return None;
        };
        let r = match op {
            ArithOp::Add => x.wrapping_add(y),
            ArithOp::Sub => x.wrapping_sub(y),
            ArithOp::Mul => x.wrapping_mul(y),
            ArithOp::Div | ArithOp::Mod if y == 0 => return None,
            ArithOp::Div => x.wrapping_div(y),
            ArithOp::Mod => x.wrapping_rem(y),
        };
        return Some(Num::Int(narrow(r, t)));
    }
    let (x, y) = (double(a)?, double(b)?);
    Some(Num::Double(match op {
        ArithOp::Add => x + y,
        ArithOp::Sub => x - y,
        ArithOp::Mul => x * y,
        ArithOp::Div => x / y,
        ArithOp::Mod => x % y,
    }))
}

/// An expression with its kernel, if it has one.
#[derive(Debug, Clone)]
pub struct Compiled {
    expr: Expr,
    kernel: Option<Node>,
}

impl Compiled {
    /// Compiles `expr`.
    pub fn new(expr: Expr) -> Self {
        let kernel = match &expr {
            // A column or a constant is a copy already.
            Expr::Column(_) | Expr::Literal(_) => None,
            e => Node::compile(e),
        };
        Self { expr, kernel }
    }

    /// The expression's value for `row`.
    pub fn eval(&self, row: &[Value]) -> EvalResult {
        if let Some(n) = self.kernel.as_ref().and_then(|k| k.eval(row)) {
            return Ok(match n {
                Num::Int(x) => Value::Int(x),
                Num::Double(d) => Value::Double(d),
                Num::Timestamp(ms) => Value::Timestamp(ms),
            });
        }
        self.expr.eval(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::bind::{bind, Scope, ScopeColumn};

    fn compiled(sql: &str, columns: &[(&str, DataType)]) -> Compiled {
        let scope = Scope {
            columns: columns
                .iter()
                .map(|(n, t)| ScopeColumn {
                    name: n.to_string(),
                    qualifier: None,
                    data_type: *t,
                })
                .collect(),
        };
        let mut tokens = crate::parser::tokenize(sql).expect("tokenizes");
        tokens.pop();
        let ast = crate::parser::ddl::parse_expr_tokens(tokens).expect("parses");
        Compiled::new(bind(&ast, &scope).expect("binds").expr)
    }

    #[test]
    fn kernels_compute_what_the_expression_tree_computes() {
        let columns = [("seq", DataType::BigInt), ("n", DataType::Int), ("d", DataType::Double)];
        let exprs = [
            "CAST(MOD(seq * 7919, 10000) AS INT)",
            "CAST(MOD(seq * 7, 100000) AS DOUBLE) / 100",
            "CAST(TO_TIMESTAMP_LTZ(1700000000000 + seq * 10, 3) AS TIMESTAMP(3))",
            "TO_TIMESTAMP_LTZ(seq, 0)",
            "n * 2147483647 + n",
            "seq / n",
            "MOD(seq, n)",
            "d * 3 - seq",
            "CAST(d AS INT) + 1",
            "CAST(d AS BIGINT) % 7",
        ];
        let rows = [
            vec![Value::Int(1), Value::Int(3), Value::Double(2.5)],
            vec![Value::Int(-9_000_000_000), Value::Int(-7), Value::Double(-1e300)],
            vec![Value::Int(i64::MAX), Value::Int(0), Value::Double(f64::NAN)],
            vec![Value::Null, Value::Int(2), Value::Null],
        ];
        for sql in exprs {
            let c = compiled(sql, &columns);
            assert!(c.kernel.is_some(), "{sql} has a kernel");
            for row in &rows {
                let tree = c.expr.eval(row);
                let kernel = c.eval(row);
                assert_eq!(format!("{kernel:?}"), format!("{tree:?}"), "{sql} over {row:?}");
            }
        }
    }

    #[test]
    fn rows_a_kernel_cannot_read_are_left_to_the_tree() {
        let c = compiled("CAST(s AS INT) + 1", &[("s", DataType::STRING)]);
        assert!(c.kernel.is_some());
        assert_eq!(c.eval(&[Value::Str("41".into())]).unwrap(), Value::Int(42));
        assert_eq!(
            c.eval(&[Value::Str("abc".into())]).unwrap_err().0,
            "For input string: 'abc'. Invalid character found."
        );
        assert!(compiled("UPPER(s)", &[("s", DataType::STRING)]).kernel.is_none());
    }
}
