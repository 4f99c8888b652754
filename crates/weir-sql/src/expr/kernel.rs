//! Numeric kernels: an expression compiled once into closures over unboxed numbers
//! (`i64`, `f64`, epoch milliseconds), for the arithmetic, `MOD`, numeric `CAST`s and
//! `TO_TIMESTAMP_LTZ` that computed columns and projections are made of.
//!
//! Every node's kind of number is known when it is compiled (a column's is read from
//! its value), so each closure returns its plain number and calls its children
//! directly; an operand that is a constant is captured, not called. An integer column
//! through constant-operand arithmetic and narrowing CASTs is one closure over an
//! `IntChain` of steps (`super::chain`).
//!
//! Invariant: a kernel computes exactly what [`Expr::eval`] computes (Java's wrapping
//! integer arithmetic narrowed to the result type, doubles as doubles), or gives up on
//! the row (a NULL, a value of another kind, a zero divisor): then [`Compiled::eval`]
//! evaluates the expression tree, which answers NULLs and raises errors as always. An
//! expression whose kernel would give up on every row gets none.

use super::cast::narrow;
use super::chain::{arith_parts, double_constant, double_op, int_constant, kind, DoubleChain, IntChain, Kind};
use super::func::ScalarFn;
use super::{ArithOp, EvalResult, Expr};
use crate::types::DataType;
use crate::value::Value;
use std::fmt;
use std::sync::Arc;

/// A compiled node: its number for a row, or `None` to leave the row to the tree.
type Kernel<T> = Arc<dyn Fn(&[Value]) -> Option<T> + Send + Sync>;

/// Integer `x op y` of type `t`, as [`super::arith`] computes it; `None` for a zero
/// divisor.
#[inline]
fn int_op(op: ArithOp, x: i64, y: i64, t: DataType) -> Option<i64> {
    let r = match op {
        ArithOp::Add => x.wrapping_add(y),
        ArithOp::Sub => x.wrapping_sub(y),
        ArithOp::Mul => x.wrapping_mul(y),
        ArithOp::Div | ArithOp::Mod if y == 0 => return None,
        ArithOp::Div => x.wrapping_div(y),
        ArithOp::Mod => x.wrapping_rem(y),
    };
    Some(narrow(r, t))
}

/// `f(a, b)` over two compiled operands, a constant operand captured rather than called.
fn binary<T: Copy + Send + Sync + 'static>(
    a: &Expr,
    b: &Expr,
    operand: fn(&Expr) -> Option<Kernel<T>>,
    constant: fn(&Expr) -> Option<T>,
    f: impl Fn(T, T) -> Option<T> + Send + Sync + 'static,
) -> Option<Kernel<T>> {
    Some(match (constant(a), constant(b)) {
        (_, Some(y)) => {
            let fa = operand(a)?;
            Arc::new(move |r| f(fa(r)?, y))
        }
        (Some(x), None) => {
            let fb = operand(b)?;
            Arc::new(move |r| f(x, fb(r)?))
        }
        (None, None) => {
            let (fa, fb) = (operand(a)?, operand(b)?);
            Arc::new(move |r| f(fa(r)?, fb(r)?))
        }
    })
}

/// Column `c`'s number, as `read` takes it from the column's value.
fn column<T: 'static>(c: usize, read: impl Fn(&Value) -> Option<T> + Send + Sync + 'static) -> Kernel<T> {
    Arc::new(move |r| read(r.get(c)?))
}

/// `e` as an integer (where the tree's value is an `Int`).
fn int_kernel(e: &Expr) -> Option<Kernel<i64>> {
    if let Some(i) = int_constant(e) {
        return Some(Arc::new(move |_| Some(i)));
    }
    if let Some(chain) = IntChain::of(e).filter(IntChain::has_steps) {
        return Some(Arc::new(move |r| chain.eval(r)));
    }
    match e {
        Expr::Column(c) => Some(column(*c, |v| match v {
            Value::Int(x) => Some(*x),
            _ => None,
        })),
        Expr::Cast { expr, to, .. } if to.is_integer() => {
            let t = *to;
            match (kind(expr), &**expr) {
                (Some(Kind::Int), _) => {
                    let f = int_kernel(expr)?;
                    Some(Arc::new(move |r| Some(narrow(f(r)?, t))))
                }
                (Some(Kind::Double), _) => {
                    let f = double_kernel(expr)?;
                    Some(Arc::new(move |r| Some(narrow(f(r)? as i64, t))))
                }
                (None, Expr::Column(c)) => Some(column(*c, move |v| match v {
                    Value::Int(x) => Some(narrow(*x, t)),
                    Value::Double(d) => Some(narrow(*d as i64, t)),
                    _ => None,
                })),
                _ => None,
            }
        }
        e => match arith_parts(e)? {
            (op, a, b, t) if t.is_integer() => binary(a, b, int_kernel, int_constant, move |x, y| int_op(op, x, y, t)),
            _ => None,
        },
    }
}

/// `e` as a double, where the tree's value is an `Int` (converted) or a `Double`: an
/// operand of double arithmetic, of a CAST to a double or of `TO_TIMESTAMP_LTZ`.
fn double_kernel(e: &Expr) -> Option<Kernel<f64>> {
    if let Some(d) = double_constant(e) {
        return Some(Arc::new(move |_| Some(d)));
    }
    if let Some(chain) = DoubleChain::of(e) {
        return Some(Arc::new(move |r| chain.eval(r)));
    }
    match (kind(e), e) {
        (None, Expr::Column(c)) => Some(column(*c, |v| match v {
            Value::Int(x) => Some(*x as f64),
            Value::Double(d) => Some(*d),
            _ => None,
        })),
        (Some(Kind::Int), e) => {
            let f = int_kernel(e)?;
            Some(Arc::new(move |r| Some(f(r)? as f64)))
        }
        (Some(Kind::Double), Expr::Cast { expr, .. }) => double_kernel(expr),
        (Some(Kind::Double), e) => {
            let (op, a, b, _) = arith_parts(e)?;
            binary(a, b, double_kernel, double_constant, move |x, y| {
                Some(double_op(op, x, y))
            })
        }
        _ => None,
    }
}

/// `e` as epoch milliseconds (where the tree's value is a `Timestamp`).
fn timestamp_kernel(e: &Expr) -> Option<Kernel<i64>> {
    match e {
        Expr::Column(c) => Some(column(*c, |v| match v {
            Value::Timestamp(ms) => Some(*ms),
            _ => None,
        })),
        Expr::Cast { expr, to, .. } if to.is_timestamp() => timestamp_kernel(expr),
        Expr::Call(ScalarFn::ToTimestampLtz(precision), args) if args.len() == 1 => {
            let scale = if *precision == 0 { Some(1000.0) } else { None };
            // A chain argument is called directly, not through its own closure.
            Some(match DoubleChain::of(&args[0]) {
                Some(chain) => epoch_millis(move |r| chain.eval(r), scale),
                None => {
                    let f = double_kernel(&args[0])?;
                    epoch_millis(move |r| f(r), scale)
                }
            })
        }
        _ => None,
    }
}

/// `TO_TIMESTAMP_LTZ` of the number `n` gives: epoch milliseconds, from seconds when
/// `scale` is `Some(1000.0)` (precision 0).
fn epoch_millis(n: impl Fn(&[Value]) -> Option<f64> + Send + Sync + 'static, scale: Option<f64>) -> Kernel<i64> {
    Arc::new(move |r| {
        let n = n(r)?;
        Some(scale.map_or(n, |s| n * s) as i64)
    })
}

/// The kernel of a whole expression, giving its value.
#[derive(Clone)]
enum Root {
    Int(Kernel<i64>),
    Double(Kernel<f64>),
    Timestamp(Kernel<i64>),
}

impl Root {
    fn compile(e: &Expr) -> Option<Root> {
        match kind(e)? {
            // A constant is a copy already.
            _ if matches!(e, Expr::Literal(_)) => None,
            Kind::Int => int_kernel(e).map(Root::Int),
            Kind::Double => double_kernel(e).map(Root::Double),
            Kind::Timestamp => timestamp_kernel(e).map(Root::Timestamp),
        }
    }

    #[inline]
    fn eval(&self, row: &[Value]) -> Option<Value> {
        match self {
            Root::Int(f) => f(row).map(Value::Int),
            Root::Double(f) => f(row).map(Value::Double),
            Root::Timestamp(f) => f(row).map(Value::Timestamp),
        }
    }
}

/// An expression with its kernel, if it has one.
#[derive(Clone)]
pub struct Compiled {
    expr: Expr,
    kernel: Option<Root>,
}

impl fmt::Debug for Compiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compiled")
            .field("expr", &self.expr)
            .field("kernel", &self.kernel.is_some())
            .finish()
    }
}

impl Compiled {
    /// Compiles `expr`.
    pub fn new(expr: Expr) -> Self {
        let kernel = Root::compile(&expr);
        Self { expr, kernel }
    }

    /// The expression's value for `row`.
    #[inline]
    pub fn eval(&self, row: &[Value]) -> EvalResult {
        match (&self.kernel, &self.expr) {
            (Some(k), _) => {
                if let Some(v) = k.eval(row) {
                    return Ok(v);
                }
            }
            // A column is a copy, as the tree makes it.
            (None, Expr::Column(i)) => return Ok(row.get(*i).cloned().unwrap_or(Value::Null)),
            (None, _) => {}
        }
        self.eval_tree(row)
    }

    /// The kernel's value for `row`; `None` when there is no kernel or it leaves the
    /// row to the tree (then [`Compiled::eval`] answers).
    #[inline]
    pub fn kernel_value(&self, row: &[Value]) -> Option<Value> {
        self.kernel.as_ref()?.eval(row)
    }

    /// The epoch milliseconds the timestamp kernel gives for `row`; `None` as for
    /// [`Compiled::kernel_value`] (and for an expression of another kind).
    #[inline]
    pub fn kernel_millis(&self, row: &[Value]) -> Option<i64> {
        match &self.kernel {
            Some(Root::Timestamp(f)) => f(row),
            _ => None,
        }
    }

    /// The tree's value for `row` (out of line: the kernels' callers stay small).
    #[inline(never)]
    fn eval_tree(&self, row: &[Value]) -> EvalResult {
        self.expr.eval(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::bind::{bind, Scope};

    fn compiled(sql: &str, columns: &[(&str, DataType)]) -> Compiled {
        let scope = Scope::unqualified(columns);
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
            "100 - seq * 3",
            "CAST(seq * 40000 AS SMALLINT) + 1",
            "MOD(seq * 7, 0)",
            "1000 / (n - 3)",
            "2.5E0 - CAST(seq * 3 AS DOUBLE) * 4",
            "CAST(n + 1 AS DOUBLE) / 0",
            "5E-1 / CAST(MOD(seq, 3) AS DOUBLE)",
            "TO_TIMESTAMP_LTZ(seq * 1000 + 7, 0)",
            "TO_TIMESTAMP_LTZ(CAST(seq + 2 AS DOUBLE) * 15E-1 + 1, 3)",
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
