//! Hostile SQL and hostile table lines: arbitrary and mutated statement texts are
//! parsed, applied to a catalog or planned and compiled (never run) with a
//! `SqlError` for anything wrong; arbitrary CSV and JSON lines parse to values or to
//! an error whose quote of the line is bounded; never a panic.

use proptest::prelude::*;
use weir_api::prelude::StreamExecutionEnvironment;
use weir_core::fuzz::{cases, corpus, mutate, mutations};
use weir_sql::catalog::Catalog;
use weir_sql::connectors::format::{parse_csv, parse_json};
use weir_sql::parser::{parse_statement, split_statements};
use weir_sql::program::build_statement;
use weir_sql::types::DataType;

const DDL: &str = "CREATE TABLE orders (order_id BIGINT, user_id BIGINT, amount DECIMAL(10, 2), ts_millis BIGINT,
  ts AS TO_TIMESTAMP_LTZ(ts_millis, 3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '/nonexistent/orders.csv', 'format' = 'csv');
CREATE TABLE seq (id BIGINT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE out (user_id BIGINT, cnt BIGINT, total DECIMAL(38, 2)) WITH ('connector' = 'print');";

const VALID: &[&str] = &[
    "INSERT INTO out SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total FROM orders GROUP BY user_id",
    "SELECT window_start, user_id, COUNT(*) FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, user_id",
    "SELECT id, CHAR_LENGTH(name) AS len, CAST(name AS INT) FROM seq WHERE id > 5 AND name LIKE 'a%'",
    "CREATE VIEW v AS SELECT user_id, amount * 2 AS a FROM orders WHERE amount > 1.5",
    "EXPLAIN SELECT id FROM seq UNION ALL SELECT order_id FROM orders",
];

fn catalog() -> Catalog {
    Catalog::from_script(DDL).expect("the DDL is valid")
}

/// Parses `sql`; DDL is applied to a copy of the catalog, queries and INSERTs are
/// planned and compiled into a job that is not run.
fn plan_statement(catalog: &Catalog, sql: &str) {
    let Ok(stmt) = parse_statement(sql) else { return };
    let mut scratch = catalog.clone();
    if matches!(scratch.apply(&stmt, sql), Ok(true)) {
        return;
    }
    let env = StreamExecutionEnvironment::new();
    if let Err(e) = build_statement(&stmt, catalog, &env, None) {
        assert!(!e.to_string().is_empty());
    }
}

const TYPES: [DataType; 5] = [
    DataType::BigInt,
    DataType::STRING,
    DataType::Decimal(10, 2),
    DataType::Boolean,
    DataType::Double,
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn arbitrary_statement_text_is_planned_or_refused(sql in "(?s).{0,120}") {
        plan_statement(&catalog(), &sql);
        split_statements(&sql);
    }

    #[test]
    fn mutated_valid_statements_are_planned_or_refused(
        which in 0..VALID.len(),
        mutations in mutations(1..6),
    ) {
        let bytes = mutate(VALID[which].as_bytes(), &mutations);
        plan_statement(&catalog(), &String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn arbitrary_csv_and_json_lines_parse_or_fail(line in "(?s).{0,80}") {
        if let Err(e) = parse_csv(&line, &TYPES) {
            prop_assert!(e.len() < 400, "{e}");
        }
        let columns: Vec<(String, DataType)> = ["a", "b", "c", "d", "e"]
            .iter()
            .zip(TYPES)
            .map(|(n, t)| (n.to_string(), t))
            .collect();
        if let Err(e) = parse_json(&line, &columns) {
            prop_assert!(e.len() < 400, "{e}");
        }
    }
}

#[test]
fn a_field_of_a_megabyte_is_quoted_bounded_in_the_cast_error() {
    let line = format!("{},x,1.00,true,2.5", "9".repeat(1 << 20));
    let err = parse_csv(&line, &TYPES).unwrap_err();
    assert!(err.len() < 400, "{} bytes", err.len());
    assert!(err.contains("bytes; first 120 characters shown"), "{err}");
}

#[test]
fn the_sql_corpus_replays_without_panicking() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/sql");
    let catalog = catalog();
    for (_, bytes) in corpus(&dir).expect("corpus readable") {
        plan_statement(&catalog, &String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn very_long_expression_chains_are_refused_before_they_overflow_the_stack() {
    let catalog = catalog();
    let sum = vec!["id"; 2000].join(" + ");
    let err = parse_statement(&format!("SELECT {sum} FROM seq"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("Expression nested too deeply"), "{err}");
    for n in [200usize, 1_000, 20_000] {
        let sum = vec!["id"; n].join(" + ");
        plan_statement(&catalog, &format!("SELECT {sum} FROM seq"));
        let and = vec!["id > 1"; n].join(" AND ");
        plan_statement(&catalog, &format!("SELECT id FROM seq WHERE {and}"));
        let nested = format!("SELECT {}id{} FROM seq", "(".repeat(n), ")".repeat(n));
        plan_statement(&catalog, &nested);
    }
}
