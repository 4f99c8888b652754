//! Property tests of the expression fast paths against the expression tree: kernels
//! ([`super::kernel`]) and chains ([`super::chain`]) on generated expressions and rows
//! that reach Java's integer limits, narrowing, zero divisors, NULLs, NaN, infinities,
//! negative zero and values of another kind than the column's.

use super::bind::{bind, Scope};
use super::chain::{DoubleChain, IntChain};
use super::kernel::Compiled;
use super::Expr;
use crate::types::DataType;
use crate::value::Value;
use proptest::prelude::*;

/// The columns every generated expression may read, with their types.
const COLUMNS: [(&str, DataType); 6] = [
    ("seq", DataType::BigInt),
    ("n", DataType::Int),
    ("s", DataType::SmallInt),
    ("t", DataType::TinyInt),
    ("d", DataType::Double),
    ("f", DataType::Float),
];

fn bound(sql: &str) -> Option<Expr> {
    let scope = Scope::unqualified(&COLUMNS);
    let mut tokens = crate::parser::tokenize(sql).ok()?;
    tokens.pop();
    let ast = crate::parser::ddl::parse_expr_tokens(tokens).ok()?;
    bind(&ast, &scope).ok().map(|b| b.expr)
}

fn integer_literal() -> impl Strategy<Value = String> {
    prop_oneof![
        (-1000i64..1000).prop_map(|i| i.to_string()),
        prop::sample::select(vec![
            "0",
            "1",
            "-1",
            "7919",
            "127",
            "128",
            "32767",
            "32768",
            "2147483647",
            "2147483648",
            "-2147483648",
            "4294967297",
            "9223372036854775807",
        ])
        .prop_map(str::to_owned),
        any::<i32>().prop_map(|i| i.to_string()),
    ]
}

fn double_literal() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "2.5E0", "15E-1", "0E0", "-0E0", "1E308", "1E-300", "5E-1", "-3.75E2",
    ])
    .prop_map(str::to_owned)
}

const CASTS: [&str; 6] = ["TINYINT", "SMALLINT", "INT", "BIGINT", "DOUBLE", "FLOAT"];

/// Numeric expressions over [`COLUMNS`] of any shape.
fn numeric_expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        3 => prop::sample::select(COLUMNS.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>()),
        2 => integer_literal(),
        1 => double_literal(),
    ];
    leaf.prop_recursive(5, 24, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["+", "-", "*", "/", "%"]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("MOD({a}, {b})")),
            (inner, prop::sample::select(CASTS.to_vec())).prop_map(|(a, t)| format!("CAST({a} AS {t})")),
        ]
    })
}

/// Expressions of the kinds kernels compile: numbers and timestamps made of them.
fn kernel_expr() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => numeric_expr(),
        1 => (numeric_expr(), prop::sample::select(vec![0, 3])).prop_map(|(a, p)| format!("TO_TIMESTAMP_LTZ({a}, {p})")),
        1 => numeric_expr().prop_map(|a| format!("CAST(TO_TIMESTAMP_LTZ({a}, 3) AS TIMESTAMP(3))")),
    ]
}

/// An integer column (through constant-operand arithmetic first, then any of it and
/// narrowing CASTs), then
/// perhaps converted to a double and carried on through double arithmetic with
/// constants: the shapes chains are made for.
fn chain_expr() -> impl Strategy<Value = String> {
    let arith_step = prop_oneof![
        (
            prop::sample::select(vec!["+", "-", "*", "/", "%"]),
            integer_literal(),
            any::<bool>()
        )
            .prop_map(|(op, c, left)| if left {
                format!("{c} {op} ")
            } else {
                format!(" {op} {c}")
            }),
        (integer_literal(), any::<bool>()).prop_map(|(c, left)| if left {
            format!("MOD({c}, ")
        } else {
            format!("MOD(, {c})")
        }),
    ];
    let int_step = prop_oneof![
        2 => arith_step.clone(),
        1 => prop::sample::select(vec!["TINYINT", "SMALLINT", "INT", "BIGINT"]).prop_map(|t| format!("CAST( AS {t})")),
    ];
    let double_step = (
        prop::sample::select(vec!["+", "-", "*", "/", "%"]),
        prop_oneof![double_literal(), integer_literal()],
        any::<bool>(),
    )
        .prop_map(|(op, c, left)| {
            if left {
                format!("{c} {op} ")
            } else {
                format!(" {op} {c}")
            }
        });
    (
        prop::sample::select(vec!["seq", "n", "s", "t"]),
        prop::option::of(arith_step),
        prop::collection::vec(int_step, 0..6),
        prop::option::of(prop::sample::select(vec!["DOUBLE", "FLOAT"])),
        prop::collection::vec(double_step, 0..4),
    )
        .prop_map(|(column, first, int_steps, to_double, double_steps)| {
            let mut e = column.to_string();
            // A chain reads its column bare or begins with arithmetic on it (a CAST of a
            // bare column, whose type is known only from the row, is no chain).
            let first = first.or_else(|| (!int_steps.is_empty() || to_double.is_some()).then(|| " + 0".to_string()));
            for step in first.into_iter().chain(int_steps) {
                e = apply_step(&e, &step);
            }
            if let Some(t) = to_double {
                e = format!("CAST({e} AS {t})");
                for step in double_steps {
                    e = apply_step(&e, &step);
                }
            }
            e
        })
}

/// `step` (a template: `CAST( AS T)`, `MOD(, c)`, `MOD(c, `, ` op c` or `c op `) around `e`.
fn apply_step(e: &str, step: &str) -> String {
    if let Some(t) = step.strip_prefix("CAST( AS ") {
        format!("CAST({e} AS {t}")
    } else if let Some(c) = step.strip_prefix("MOD(, ") {
        format!("MOD({e}, {c}")
    } else if let Some(c) = step.strip_prefix("MOD(") {
        format!("MOD({c}{e})")
    } else if step.starts_with(' ') {
        format!("({e}{step})")
    } else {
        format!("({step}{e})")
    }
}

fn integer_value(bits: u32) -> impl Strategy<Value = Value> {
    let max = i64::MAX >> (64 - bits);
    let min = -max - 1;
    prop_oneof![
        1 => Just(Value::Null),
        1 => Just(Value::Str("41".into())),
        1 => Just(Value::Double(2.5)),
        3 => prop::sample::select(vec![0, 1, -1, 7, max, min, max / 2]).prop_map(Value::Int),
        6 => (min..=max).prop_map(Value::Int),
    ]
}

fn double_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => Just(Value::Int(3)),
        3 => prop::sample::select(crate::edge_values::EDGE_DOUBLES.to_vec())
        .prop_map(Value::Double),
        5 => any::<f64>().prop_map(Value::Double),
        5 => (-1e6f64..1e6).prop_map(Value::Double),
    ]
}

/// A row of [`COLUMNS`].
fn row() -> impl Strategy<Value = Vec<Value>> {
    (
        integer_value(64),
        integer_value(32),
        integer_value(16),
        integer_value(8),
        double_value(),
        double_value(),
    )
        .prop_map(|(seq, n, s, t, d, f)| vec![seq, n, s, t, d, f])
}

/// The same result: the same variant and value, doubles compared by their bits.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// A kernel's value, wherever it gives one, is the tree's; and a compiled
    /// expression (kernel or, where it gives up, the tree) answers what the tree does,
    /// errors included.
    #[test]
    fn kernels_compute_exactly_what_the_expression_tree_computes(
        sql in kernel_expr(),
        rows in prop::collection::vec(row(), 1..8),
    ) {
        let Some(expr) = bound(&sql) else { return Ok(()) };
        let compiled = Compiled::new(expr.clone());
        for row in &rows {
            let tree = expr.eval(row);
            if let Some(fast) = compiled.kernel_value(row) {
                let tree = tree.as_ref().map_err(|e| format!("{e:?}"));
                prop_assert!(matches!(tree, Ok(v) if same(v, &fast)), "{sql} over {row:?}: kernel {fast:?}, tree {tree:?}");
            }
            if let (Some(ms), Ok(Value::Timestamp(tree_ms))) = (compiled.kernel_millis(row), &tree) {
                prop_assert_eq!(ms, *tree_ms, "{} over {:?}", sql, row);
            }
            let got = compiled.eval(row);
            let agree = match (&got, &tree) {
                (Ok(x), Ok(y)) => same(x, y),
                (Err(x), Err(y)) => format!("{x:?}") == format!("{y:?}"),
                _ => false,
            };
            prop_assert!(agree, "{sql} over {row:?}: compiled {got:?}, tree {tree:?}");
        }
    }

    /// A chain's number, wherever it gives one, is the tree's value of the expression
    /// it was made of (shapes a chain declines, such as a zero divisor or a negated
    /// constant, are left to the tree; `the_chain_shapes_are_chains` keeps this from
    /// passing with no chains at all).
    #[test]
    fn chains_compute_exactly_what_the_expression_tree_computes(
        sql in chain_expr(),
        rows in prop::collection::vec(row(), 1..8),
    ) {
        let Some(expr) = bound(&sql) else { return Ok(()) };
        let int = IntChain::of(&expr);
        let double = DoubleChain::of(&expr);
        for row in &rows {
            let tree = expr.eval(row);
            if let Some(x) = int.as_ref().and_then(|c| c.eval(row)) {
                prop_assert!(matches!(&tree, Ok(Value::Int(y)) if *y == x), "{sql} over {row:?}: int chain {x}, tree {tree:?}");
            }
            if let Some(x) = double.as_ref().and_then(|c| c.eval(row)) {
                let as_double = match &tree {
                    Ok(Value::Int(i)) => Some(*i as f64),
                    Ok(Value::Double(d)) => Some(*d),
                    _ => None,
                };
                prop_assert!(
                    as_double.is_some_and(|y| same(&Value::Double(x), &Value::Double(y))),
                    "{sql} over {row:?}: double chain {x}, tree {tree:?}"
                );
            }
        }
    }
}

/// The shapes the chains are made for are chains, so the property above compares
/// chains, not only declined shapes.
#[test]
fn the_chain_shapes_are_chains() {
    for sql in [
        "CAST(MOD(seq * 7919, 10000) AS INT)",
        "(seq + 1)",
        "MOD(5, (n - 3))",
        "CAST((t * 300) AS TINYINT)",
    ] {
        let expr = bound(sql).unwrap();
        assert!(IntChain::of(&expr).is_some(), "{sql}");
    }
    for sql in [
        "(CAST(MOD(seq * 7, 100000) AS DOUBLE) / 100)",
        "(2.5E0 * CAST((n + 1) AS FLOAT))",
    ] {
        let expr = bound(sql).unwrap();
        assert!(DoubleChain::of(&expr).is_some(), "{sql}");
    }
}
