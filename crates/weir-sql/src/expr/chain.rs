//! Chains: an integer column through arithmetic with constants and narrowing CASTs
//! (`CAST(MOD(seq * 7919, 10000) AS INT)`), and such an integer converted to a double
//! and carried on through double arithmetic with constants
//! (`CAST(MOD(seq * 7, 100000) AS DOUBLE) / 100`), each evaluated by one loop over
//! plain steps instead of a closure per expression node. The node kinds the kernels of
//! [`super::kernel`] are compiled by are here too.
//!
//! Invariant: a chain computes exactly what the expression tree computes (Java's
//! wrapping integer arithmetic narrowed to each node's type, doubles as doubles) or
//! answers `None` (a non-integer column value, a zero integer divisor).

use super::func::ScalarFn;
use super::{ArithOp, Expr};
use crate::types::DataType;
use crate::value::Value;
use smallvec::SmallVec;

/// The kind of number a node gives, when it does not depend on the row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Int,
    Double,
    Timestamp,
}

pub(super) fn is_double(t: DataType) -> bool {
    matches!(t, DataType::Float | DataType::Double)
}

/// The operands of an arithmetic node (`MOD` included), with its result type.
pub(super) fn arith_parts(e: &Expr) -> Option<(ArithOp, &Expr, &Expr, DataType)> {
    match e {
        Expr::Arith(op, a, b, t) if t.is_integer() || is_double(*t) => Some((*op, a, b, *t)),
        Expr::Call(ScalarFn::Mod(t), args) if args.len() == 2 && (t.is_integer() || is_double(*t)) => {
            Some((ArithOp::Mod, &args[0], &args[1], *t))
        }
        _ => None,
    }
}

/// The kind of `e`'s number; `None` for a column (its value says) or an expression
/// without a kernel.
pub(super) fn kind(e: &Expr) -> Option<Kind> {
    match e {
        Expr::Literal(Value::Int(_)) => Some(Kind::Int),
        Expr::Literal(Value::Double(_)) => Some(Kind::Double),
        Expr::Call(ScalarFn::ToTimestampLtz(_), args) if args.len() == 1 => Some(Kind::Timestamp),
        Expr::Cast { to, .. } if to.is_integer() => Some(Kind::Int),
        Expr::Cast { to, .. } if is_double(*to) => Some(Kind::Double),
        Expr::Cast { to, .. } if to.is_timestamp() => Some(Kind::Timestamp),
        e => arith_parts(e).map(|(_, _, _, t)| if t.is_integer() { Kind::Int } else { Kind::Double }),
    }
}

/// Double `x op y`, as [`super::arith`] computes it.
#[inline]
pub(super) fn double_op(op: ArithOp, x: f64, y: f64) -> f64 {
    match op {
        ArithOp::Add => x + y,
        ArithOp::Sub => x - y,
        ArithOp::Mul => x * y,
        ArithOp::Div => x / y,
        ArithOp::Mod => x % y,
    }
}

pub(super) fn int_constant(e: &Expr) -> Option<i64> {
    match e {
        Expr::Literal(Value::Int(i)) => Some(*i),
        _ => None,
    }
}

pub(super) fn double_constant(e: &Expr) -> Option<f64> {
    match e {
        Expr::Literal(Value::Int(i)) => Some(*i as f64),
        Expr::Literal(Value::Double(d)) => Some(*d),
        _ => None,
    }
}

/// One step of an [`IntChain`], Java's wrapping arithmetic with a constant `c` or a
/// narrowing to a smaller integer type.
#[derive(Debug, Clone, Copy)]
enum Step {
    Add(i64),
    /// `x - c`.
    Sub(i64),
    /// `c - x`.
    SubFrom(i64),
    Mul(i64),
    /// `x / c`, `c` not zero.
    Div(i64),
    /// `c / x`.
    DivInto(i64),
    /// `MOD(x, c)`, `c` not zero.
    Rem(i64),
    /// `MOD(c, x)`.
    RemInto(i64),
    /// To `TINYINT`, `SMALLINT`, `INT`.
    Narrow8,
    Narrow16,
    Narrow32,
}

impl Step {
    /// The step of `x op c` (`c op x` when `constant_left`); `None` for a zero divisor.
    fn op(op: ArithOp, c: i64, constant_left: bool) -> Option<Step> {
        Some(match (op, constant_left) {
            (ArithOp::Add, _) => Step::Add(c),
            (ArithOp::Mul, _) => Step::Mul(c),
            (ArithOp::Sub, false) => Step::Sub(c),
            (ArithOp::Sub, true) => Step::SubFrom(c),
            (ArithOp::Div | ArithOp::Mod, false) if c == 0 => return None,
            (ArithOp::Div, false) => Step::Div(c),
            (ArithOp::Div, true) => Step::DivInto(c),
            (ArithOp::Mod, false) => Step::Rem(c),
            (ArithOp::Mod, true) => Step::RemInto(c),
        })
    }

    /// The narrowing to `t`, if `t` is narrower than `BIGINT`.
    fn narrow(t: DataType) -> Option<Step> {
        match t {
            DataType::TinyInt => Some(Step::Narrow8),
            DataType::SmallInt => Some(Step::Narrow16),
            DataType::Int => Some(Step::Narrow32),
            _ => None,
        }
    }

    #[inline]
    fn apply(self, x: i64) -> Option<i64> {
        Some(match self {
            Step::Add(c) => x.wrapping_add(c),
            Step::Sub(c) => x.wrapping_sub(c),
            Step::SubFrom(c) => c.wrapping_sub(x),
            Step::Mul(c) => x.wrapping_mul(c),
            Step::Div(c) => x.wrapping_div(c),
            Step::Rem(c) => x.wrapping_rem(c),
            Step::DivInto(_) | Step::RemInto(_) if x == 0 => return None,
            Step::DivInto(c) => c.wrapping_div(x),
            Step::RemInto(c) => c.wrapping_rem(x),
            Step::Narrow8 => x as i8 as i64,
            Step::Narrow16 => x as i16 as i64,
            Step::Narrow32 => x as i32 as i64,
        })
    }
}

/// An integer column through steps that each take one constant
/// (`CAST(MOD(seq * 7919, 10000) AS INT)`): one closure and a loop instead of a
/// closure per node.
pub(super) struct IntChain {
    column: usize,
    steps: SmallVec<[Step; 6]>,
}

impl IntChain {
    /// The chain `e` is, if it is one.
    pub(super) fn of(e: &Expr) -> Option<IntChain> {
        let (mut chain, steps) = match e {
            Expr::Column(c) => {
                return Some(IntChain {
                    column: *c,
                    steps: SmallVec::new(),
                })
            }
            Expr::Cast { expr, to, .. } if to.is_integer() && kind(expr) == Some(Kind::Int) => {
                (IntChain::of(expr)?, [None, Step::narrow(*to)])
            }
            e => {
                let (op, a, b, t) = arith_parts(e)?;
                if !t.is_integer() {
                    return None;
                }
                let (chain, step) = match (int_constant(a), int_constant(b)) {
                    (_, Some(y)) => (IntChain::of(a)?, Step::op(op, y, false)?),
                    (Some(x), None) => (IntChain::of(b)?, Step::op(op, x, true)?),
                    (None, None) => return None,
                };
                (chain, [Some(step), Step::narrow(t)])
            }
        };
        chain.steps.extend(steps.into_iter().flatten());
        Some(chain)
    }

    /// The chain's number for `row`; `None` where the column is not an integer or a
    /// divisor is zero.
    #[inline]
    pub(super) fn eval(&self, row: &[Value]) -> Option<i64> {
        let mut x = match row.get(self.column)? {
            Value::Int(x) => *x,
            _ => return None,
        };
        for step in &self.steps {
            x = step.apply(x)?;
        }
        Some(x)
    }

    /// Whether the chain does more than read its column.
    pub(super) fn has_steps(&self) -> bool {
        !self.steps.is_empty()
    }
}

/// One step of a [`DoubleChain`]: double arithmetic with the constant `c`, as
/// `x op c`, or as `c op x` when `constant_left`.
#[derive(Debug, Clone, Copy)]
struct DoubleStep {
    op: ArithOp,
    c: f64,
    constant_left: bool,
}

/// An integer chain converted to a double, then double arithmetic with constants
/// (`CAST(MOD(seq * 7, 100000) AS DOUBLE) / 100`): one closure and two loops instead of
/// a closure per node.
pub(super) struct DoubleChain {
    int: IntChain,
    steps: SmallVec<[DoubleStep; 4]>,
}

impl DoubleChain {
    /// The chain `e` (an expression of a double, or of an integer read as a double) is,
    /// if it is one.
    pub(super) fn of(e: &Expr) -> Option<DoubleChain> {
        match (kind(e), e) {
            (Some(Kind::Int), e) => Some(DoubleChain {
                int: IntChain::of(e)?,
                steps: SmallVec::new(),
            }),
            (Some(Kind::Double), Expr::Cast { expr, .. }) => DoubleChain::of(expr),
            (Some(Kind::Double), e) => {
                let (op, a, b, _) = arith_parts(e)?;
                let (mut chain, step) = match (double_constant(a), double_constant(b)) {
                    (_, Some(c)) => (
                        DoubleChain::of(a)?,
                        DoubleStep {
                            op,
                            c,
                            constant_left: false,
                        },
                    ),
                    (Some(c), None) => (
                        DoubleChain::of(b)?,
                        DoubleStep {
                            op,
                            c,
                            constant_left: true,
                        },
                    ),
                    (None, None) => return None,
                };
                chain.steps.push(step);
                Some(chain)
            }
            _ => None,
        }
    }

    /// The chain's number for `row`; `None` where its integer chain gives none.
    #[inline]
    pub(super) fn eval(&self, row: &[Value]) -> Option<f64> {
        let mut x = self.int.eval(row)? as f64;
        for s in &self.steps {
            x = if s.constant_left {
                double_op(s.op, s.c, x)
            } else {
                double_op(s.op, x, s.c)
            };
        }
        Some(x)
    }
}
