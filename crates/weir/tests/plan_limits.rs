//! Plans that would grow without bound are refused when they are submitted: a HOP
//! window with more windows per record than `pipeline.window.max-windows-per-record`,
//! and a statement longer than `table.sql.max-statement-size` (which travels to every
//! task and would otherwise fail deployment at the RPC message limit).

mod common;

use common::*;
use serde_json::json;

/// Five rows of `orders` with a rowtime, and a print sink.
const TABLES: &str = "CREATE TABLE orders (\n\
       seq BIGINT,\n\
       ts AS CAST(TO_TIMESTAMP_LTZ(1700000000000 + seq * 10, 3) AS TIMESTAMP(3)),\n\
       WATERMARK FOR ts AS ts - INTERVAL '1' SECOND\n\
     ) WITH (\n\
       'connector' = 'datagen', 'number-of-rows' = '5',\n\
       'fields.seq.kind' = 'sequence', 'fields.seq.start' = '1', 'fields.seq.end' = '5'\n\
     );\n\
     CREATE TABLE out (ws TIMESTAMP(3), cnt BIGINT) WITH ('connector' = 'print');\n";

/// An INSERT counting `orders` per HOP window of `size` every `slide`.
fn hop_insert(slide: &str, size: &str) -> String {
    format!(
        "INSERT INTO out SELECT window_start, COUNT(*) FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), {slide}, {size})) \
         GROUP BY window_start, window_end"
    )
}

/// A SELECT with an `IN` list of `n` numbers.
fn in_list_insert(n: usize) -> String {
    let list: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    format!(
        "INSERT INTO out SELECT ts, seq FROM orders WHERE seq IN ({})",
        list.join(", ")
    )
}

#[test]
fn a_hop_window_of_a_millisecond_slide_over_a_hundred_days_is_refused_naming_the_limit_key() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "{TABLES}{};\n",
        hop_insert("INTERVAL '0.001' SECOND", "INTERVAL '100' DAY")
    );
    let (code, out, err) = run_sql(dir.path(), &script, &[]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("8640000000 windows"), "{out} {err}");
    assert!(out.contains("pipeline.window.max-windows-per-record"), "{out}");

    let raised = run_sql(
        dir.path(),
        &format!("{TABLES}{};\n", hop_insert("INTERVAL '1' SECOND", "INTERVAL '4' HOUR")),
        &["-D", "pipeline.window.max-windows-per-record=100000"],
    );
    assert_eq!(
        raised.0, 0,
        "14,400 windows per record run under a raised limit: {} {}",
        raised.1, raised.2
    );
}

#[test]
fn a_statement_over_the_size_limit_is_refused_by_the_sql_client_and_at_rest_submission() {
    let dir = tempfile::tempdir().unwrap();
    // Over the 1 MiB default, under the REST endpoint's 2 MiB request body limit.
    let statement = in_list_insert(200_000);
    assert!(
        statement.len() > 1 << 20 && statement.len() < 3 << 19,
        "{}",
        statement.len()
    );
    let (code, out, err) = run_sql(dir.path(), &format!("{TABLES}{statement};\n"), &[]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("table.sql.max-statement-size"), "{out} {err}");
    assert!(
        out.lines().count() < 40,
        "a short error: {}",
        &out[..out.len().min(4000)]
    );

    let cluster = Cluster::start(1, 1, &[]);
    let (code, answer) = send(
        &cluster.rest,
        "POST",
        "/jobs",
        Some(json!({
            "program": "sql",
            "args": { "catalog": TABLES, "statement": statement },
        })),
    );
    assert!((400..500).contains(&code), "{code} {answer}");
    assert!(answer.to_string().contains("table.sql.max-statement-size"), "{answer}");
    let (code, jobs) = get(&cluster.rest, "/jobs/overview");
    assert_eq!(code, 200);
    assert_eq!(jobs["jobs"].as_array().map(Vec::len), Some(0), "{jobs}");
}
