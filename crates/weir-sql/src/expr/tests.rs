use super::bind::{bind, Scope, ScopeColumn};
use super::*;
use crate::parser::ddl::parse_expr_tokens;
use crate::parser::tokenize;

fn scope() -> Scope {
    let col = |n: &str, t| ScopeColumn {
        name: n.into(),
        qualifier: None,
        data_type: t,
    };
    Scope {
        columns: vec![
            col("s", DataType::STRING),
            col("n", DataType::Int),
            col("b", DataType::Boolean),
        ],
    }
}

fn eval(sql: &str, row: &[Value]) -> EvalResult {
    let mut tokens = tokenize(sql).unwrap();
    tokens.pop();
    let e = parse_expr_tokens(tokens).unwrap();
    bind(&e, &scope()).unwrap().expr.eval(row)
}

fn bind_err(sql: &str) -> String {
    let mut tokens = tokenize(sql).unwrap();
    tokens.pop();
    let e = parse_expr_tokens(tokens).unwrap();
    bind(&e, &scope()).unwrap_err().to_string()
}

#[test]
fn null_follows_three_valued_logic() {
    let row = [Value::Null, Value::Null, Value::Null];
    assert_eq!(eval("b AND FALSE", &row).unwrap(), Value::Bool(false));
    assert_eq!(eval("b AND TRUE", &row).unwrap(), Value::Null);
    assert_eq!(eval("b OR TRUE", &row).unwrap(), Value::Bool(true));
    assert_eq!(eval("n > 1", &row).unwrap(), Value::Null);
    assert_eq!(eval("n IS NULL", &row).unwrap(), Value::Bool(true));
    assert_eq!(eval("COALESCE(n, 7)", &row).unwrap(), Value::Int(7));
}

#[test]
fn a_failing_cast_of_a_string_to_a_number_has_flinks_cause_and_try_cast_gives_null() {
    let row = [Value::Str("abc".into()), Value::Int(1), Value::Bool(true)];
    assert_eq!(
        eval("CAST(s AS INT)", &row).unwrap_err().0,
        "For input string: 'abc'. Invalid character found."
    );
    assert_eq!(eval("TRY_CAST(s AS INT)", &row).unwrap(), Value::Null);
    assert_eq!(eval("CAST('12' AS INT) + n", &row).unwrap(), Value::Int(13));
}

#[test]
fn string_numeric_and_time_functions_compute_flinks_results() {
    let row = [Value::Str("Hello,World".into()), Value::Int(-7), Value::Bool(true)];
    assert_eq!(eval("UPPER(s)", &row).unwrap(), Value::Str("HELLO,WORLD".into()));
    assert_eq!(
        eval("SUBSTRING(s FROM 1 FOR 5)", &row).unwrap(),
        Value::Str("Hello".into())
    );
    assert_eq!(
        eval("SPLIT_INDEX(s, ',', 1)", &row).unwrap(),
        Value::Str("World".into())
    );
    assert_eq!(
        eval("REGEXP_EXTRACT(s, '(\\w+),(\\w+)', 2)", &row).unwrap(),
        Value::Str("World".into())
    );
    assert_eq!(
        eval("CONCAT_WS('-', 'a', CAST(NULL AS STRING), 'b')", &row).unwrap(),
        Value::Str("a-b".into())
    );
    assert_eq!(eval("s LIKE 'Hel%'", &row).unwrap(), Value::Bool(true));
    assert_eq!(eval("ABS(n) + MOD(10, 3)", &row).unwrap(), Value::Int(8));
    assert_eq!(eval("ROUND(2.345, 2)", &row).unwrap().to_string(), "2.35");
    assert_eq!(
        eval("CASE WHEN n < 0 THEN 'neg' ELSE 'pos' END", &row).unwrap(),
        Value::Str("neg".into())
    );
    assert_eq!(eval("IF(b, 1, 2)", &row).unwrap(), Value::Int(1));
    assert_eq!(
        eval(
            "DATE_FORMAT(TO_TIMESTAMP_LTZ(1699999980000, 3), 'yyyy-MM-dd HH:mm')",
            &row
        )
        .unwrap(),
        Value::Str("2023-11-14 22:13".into())
    );
    assert_eq!(
        eval("EXTRACT(HOUR FROM TIMESTAMP '2020-01-01 13:45:00')", &row).unwrap(),
        Value::Int(13)
    );
}

#[test]
fn unknown_columns_and_type_mismatches_are_validation_errors_naming_the_culprit() {
    assert_eq!(
        bind_err("y + 1"),
        "SQL validation failed. Column 'y' not found in any table"
    );
    assert_eq!(
        bind_err("s > 1"),
        "SQL validation failed. Cannot apply '>' to arguments of type '<STRING> > <INT>'."
    );
}

#[test]
fn integer_arithmetic_wraps_at_the_width_of_its_type_as_java_does() {
    let max_int = Value::Int(i64::from(i32::MAX));
    assert_eq!(
        eval("n + 1", &[Value::Null, max_int.clone(), Value::Null]).unwrap(),
        Value::Int(i64::from(i32::MIN))
    );
    assert_eq!(
        eval("CAST(n AS BIGINT) + 1", &[Value::Null, max_int, Value::Null]).unwrap(),
        Value::Int(i64::from(i32::MAX) + 1)
    );
    assert_eq!(
        arith(ArithOp::Add, Value::Int(i64::MAX), Value::Int(1), DataType::BigInt).unwrap(),
        Value::Int(i64::MIN)
    );
}

#[test]
fn a_decimal_result_wider_than_its_precision_is_null() {
    let big = Value::Decimal(10i128.pow(37) * 9, 0);
    assert_eq!(
        arith(ArithOp::Add, big.clone(), big.clone(), DataType::Decimal(38, 0)).unwrap(),
        Value::Null
    );
    assert_eq!(
        arith(ArithOp::Add, big, Value::Decimal(1, 0), DataType::Decimal(38, 0)).unwrap(),
        Value::Decimal(10i128.pow(37) * 9 + 1, 0)
    );
}
