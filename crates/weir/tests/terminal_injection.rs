//! Hostile text never reaches the operator's terminal raw: job names, exception texts
//! and SQL values with escape sequences, newlines and NUL bytes are printed escaped by
//! `weir list`, `weir run`, `weir cancel` and `weir sql`; `weir list` prints start times
//! as Flink's CLI does (`dd.MM.yyyy HH:mm:ss`).

mod common;

use common::*;
use serde_json::json;
use std::time::Duration;

/// A name that clears the screen, retitles the terminal and forges a second job line.
const HOSTILE_NAME: &str = "sum\u{1b}[2J\u{1b}]0;owned\u{7}\n01.01.2020 00:00:00 : ffffffffffffffffffffffffffffffff : forged (RUNNING)\u{0}\u{9b}";

/// Whether `text` holds a byte a terminal would act on (other than the line breaks
/// the command itself prints).
fn has_control(text: &str) -> bool {
    text.chars().any(|c| c != '\n' && c.is_control())
}

/// Whether `s` is `dd.MM.yyyy HH:mm:ss`.
fn is_flink_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 19
        && b.iter().enumerate().all(|(i, &c)| match i {
            2 | 5 => c == b'.',
            10 => c == b' ',
            13 | 16 => c == b':',
            _ => c.is_ascii_digit(),
        })
}

#[test]
fn a_job_named_with_escape_sequences_and_a_newline_is_listed_on_one_escaped_line_with_a_flink_date() {
    let cluster = Cluster::start(1, 1, &[]);
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 1,
        "job-name": HOSTILE_NAME,
        "args": { "keys": "3", "records": "100" },
    }));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");

    let (code, out, err) = weir_cli(&["list", "-m", &cluster.rest]);
    assert_eq!(code, 0, "{err}");
    assert!(!has_control(&out), "raw control characters in {out:?}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "one job, one line: {out:?}");
    let fields: Vec<&str> = lines[0].splitn(3, " : ").collect();
    assert!(is_flink_date(fields[0]), "{out}");
    assert_eq!(fields[1], jid);
    assert!(fields[2].starts_with("sum\\e[2J\\e]0;owned\\x07\\n01.01.2020"), "{out}");
    assert!(fields[2].ends_with("\\0\\u{009b} (FINISHED)"), "{out}");
}

#[test]
fn a_failure_quoting_an_escape_sequence_and_a_cancel_of_a_hostile_id_print_escaped() {
    let cluster = Cluster::start(1, 1, &[]);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("orders.csv");
    std::fs::write(&csv, "1,1,2.50,1700000000000\n\u{1b}[2J\u{1b}]0;owned\u{7},x\n").unwrap();
    let input = format!("input={}", csv.display());
    let output = format!("output={}", dir.path().join("out").display());
    let (code, out, err) = weir_cli(&[
        "run",
        "-m",
        &cluster.rest,
        "orders-per-minute",
        "--arg",
        &input,
        "--arg",
        &output,
    ]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("FAILED"), "{err}");
    assert!(err.contains("\\e[2J"), "the cause quotes the line escaped: {err}");
    assert!(!has_control(&out) && !has_control(&err), "{out:?} {err:?}");

    let (code, out, err) = weir_cli(&["cancel", "-m", &cluster.rest, "\u{1b}[2Jnosuch\nline"]);
    assert_ne!(code, 0, "{out}");
    assert!(!has_control(&out) && !has_control(&err), "{out:?} {err:?}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn the_sql_client_never_echoes_nul_bytes_or_escape_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let (_code, out, err) = run_sql(
        dir.path(),
        "CREATE TABLE `t\u{0}\u{1b}[2J` (x INT) WITH ('connector' = 'datagen');\nSHOW TABLES;\nSELECT \u{0}\u{1b}[31m FROM nowhere;\n",
        &[],
    );
    assert!(!has_control(&out), "{out:?}");
    assert!(!has_control(&err), "{err:?}");
    assert!(out.contains("\\0\\e[2J") || out.contains("\\0\\e[31m"), "{out}");
}
