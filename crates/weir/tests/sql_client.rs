//! `weir sql -f` end to end: SQL files run on the embedded MiniCluster (or a cluster
//! with `-m`), their output compared with a direct computation or with the DataStream
//! program `orders-per-minute` over the same file.

mod common;

use common::{orders_csv, read_parts, run_sql, weir_cli as weir};
use std::collections::BTreeMap;
use std::io::Write;
use weir::programs::orders_per_minute::parse_order;

fn orders_ddl(path: &std::path::Path) -> String {
    format!(
        "CREATE TABLE orders (order_id BIGINT, user_id BIGINT, amount DECIMAL(10, 2), ts_millis BIGINT,\n\
         ts AS TO_TIMESTAMP_LTZ(ts_millis, 3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)\n\
         WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n",
        path.display()
    )
}

#[test]
fn a_group_by_over_a_csv_file_prints_an_updating_changelog_ending_in_the_direct_counts_and_sums() {
    let dir = tempfile::tempdir().unwrap();
    let csv = orders_csv(dir.path(), 500);
    let sql = format!(
        "{}CREATE TABLE out (user_id BIGINT, cnt BIGINT, total DECIMAL(38, 2)) WITH ('connector' = 'print');\n\
         SET 'table.dml-sync' = 'true';\n\
         INSERT INTO out SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total FROM orders GROUP BY user_id;\n",
        orders_ddl(&csv)
    );
    let (code, out, err) = run_sql(dir.path(), &sql, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("[INFO] Submitting SQL update statement to the cluster..."),
        "{out}"
    );
    let jid = out
        .lines()
        .find_map(|l| l.strip_prefix("Job ID: "))
        .expect("a Job ID line");
    assert_eq!(jid.len(), 32, "{jid}");
    let mut last: BTreeMap<String, String> = BTreeMap::new();
    let mut retractions = 0;
    for line in out.lines() {
        if let Some(body) = line.strip_prefix("+I[").or_else(|| line.strip_prefix("+U[")) {
            let body = body.trim_end_matches(']');
            let (user, rest) = body.split_once(", ").unwrap();
            last.insert(user.to_string(), rest.to_string());
        } else if line.starts_with("-U[") {
            retractions += 1;
        }
    }
    let mut expected: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for line in std::fs::read_to_string(&csv).unwrap().lines() {
        let o = parse_order(line).unwrap();
        let e = expected.entry(o.user_id.to_string()).or_default();
        e.0 += 1;
        e.1 += o.amount_cents;
    }
    let expected: BTreeMap<String, String> = expected
        .into_iter()
        .map(|(u, (c, cents))| {
            (
                u,
                format!("{c}, {}", weir::programs::orders_per_minute::format_cents(cents)),
            )
        })
        .collect();
    assert_eq!(last, expected);
    assert_eq!(retractions, 500 - expected.len(), "one -U per update");
}

#[test]
fn a_tumble_window_tvf_over_the_orders_csv_equals_orders_per_minute_on_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let csv = orders_csv(dir.path(), 20_000);
    let sql_out = dir.path().join("sql-out");
    let sql = format!(
        "{}CREATE TABLE per_minute (ws BIGINT, we BIGINT, user_id BIGINT, cnt BIGINT, total DECIMAL(38, 2))\n\
         WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         SET 'table.dml-sync' = 'true';\n\
         INSERT INTO per_minute\n\
         SELECT EXTRACT(EPOCH FROM window_start) * 1000, EXTRACT(EPOCH FROM window_end) * 1000, user_id, COUNT(*), SUM(amount)\n\
         FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE))\n\
         GROUP BY window_start, window_end, user_id;\n",
        orders_ddl(&csv),
        sql_out.display()
    );
    let (code, out, err) = run_sql(dir.path(), &sql, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    let ds_out = dir.path().join("ds-out");
    let (code, out, err) = weir(&[
        "local",
        "orders-per-minute",
        "--arg",
        &format!("input={}", csv.display()),
        "--arg",
        &format!("output={}", ds_out.display()),
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let sql_rows = read_parts(&sql_out);
    assert!(sql_rows.len() > 7, "{sql_rows:?}");
    assert_eq!(sql_rows, read_parts(&ds_out));
}

#[test]
fn an_updating_query_into_a_filesystem_sink_is_refused_at_planning_with_flinks_message() {
    let dir = tempfile::tempdir().unwrap();
    let csv = orders_csv(dir.path(), 10);
    let sql = format!(
        "{}CREATE TABLE x (user_id BIGINT, cnt BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         INSERT INTO x SELECT user_id, COUNT(*) AS cnt FROM orders GROUP BY user_id;\n\
         SHOW TABLES;\n",
        orders_ddl(&csv),
        dir.path().join("x").display()
    );
    let (code, out, _) = run_sql(dir.path(), &sql, &[]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("[ERROR] Table sink 'default_catalog.default_database.x' doesn't support consuming update changes which is produced by node GroupAggregate(groupBy=[user_id], select=[user_id, COUNT(*)])"),
        "{out}"
    );
    assert!(!out.contains("table name"), "-f stops at the first failure: {out}");
}

#[test]
fn unknown_options_and_missing_options_are_refused_with_flinks_wording() {
    let dir = tempfile::tempdir().unwrap();
    let sql = "CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'rows-per-sec' = '5');\n\
               CREATE TABLE p (a INT) WITH ('connector' = 'print');\n\
               INSERT INTO p SELECT a FROM g;\n";
    let (code, out, _) = run_sql(dir.path(), sql, &[]);
    assert_ne!(code, 0);
    assert!(out.contains("Unsupported options found for 'datagen'."), "{out}");
    assert!(out.contains("rows-per-sec"), "{out}");
    let sql = "CREATE TABLE f (a INT) WITH ('connector' = 'filesystem', 'format' = 'csv');\n\
               CREATE TABLE p (a INT) WITH ('connector' = 'print');\n\
               INSERT INTO p SELECT a FROM f;\n";
    let (_, out, _) = run_sql(dir.path(), sql, &[]);
    assert!(out.contains("Missing required options are:\n\npath"), "{out}");
}

#[test]
fn the_repl_reports_a_syntax_error_and_an_unknown_table_and_goes_on() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["sql"])
        .env("HOME", tempfile::tempdir().unwrap().path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"SELECT a FORM t;\nSELECT * FROM nope;\nCREATE TABLE t (a INT) WITH ('connector' = 'datagen');\nSHOW TABLES;\n",
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("[ERROR] SQL parse failed. Encountered \"t\" at line 1, column 15."),
        "{stdout}"
    );
    assert!(
        stdout.contains("[ERROR] SQL validation failed. Object 'nope' not found"),
        "{stdout}"
    );
    assert!(stdout.contains("|          t |"), "{stdout}");
}

#[test]
fn a_failing_cast_fails_the_job_with_flinks_cause_in_the_exception_history() {
    let cluster = common::Cluster::start(1, 2, &[]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.csv"), "1\nabc\n").unwrap();
    let sql = format!(
        "CREATE TABLE src (s STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         CREATE TABLE sink (n INT) WITH ('connector' = 'blackhole');\n\
         SET 'table.dml-sync' = 'true';\n\
         INSERT INTO sink SELECT CAST(s AS INT) FROM src;\n",
        dir.path().join("in.csv").display()
    );
    let (code, out, _) = run_sql(dir.path(), &sql, &["-m", &cluster.rest]);
    assert_ne!(code, 0, "{out}");
    let jid = out
        .lines()
        .find_map(|l| l.strip_prefix("Job ID: "))
        .expect("a Job ID line")
        .to_string();
    // Flink's default name of an INSERT job: the sink's full identifier.
    let (_, job) = common::get(&cluster.rest, &format!("/jobs/{jid}"));
    assert_eq!(job["name"], "insert-into_default_catalog.default_database.sink");
    let (_, exceptions) = common::get(&cluster.rest, &format!("/jobs/{jid}/exceptions"));
    let trace = exceptions["exceptionHistory"]["entries"][0]["stacktrace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    // As real Flink 2.3 prints it: the restart strategy's verdict first, the cast's
    // cause at the end of the `Caused by:` chain.
    assert!(
        trace.starts_with("weir.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy"),
        "{trace}"
    );
    let last_cause = trace
        .lines()
        .rfind(|l| l.starts_with("Caused by: "))
        .unwrap_or_default();
    assert!(
        last_cause.contains("For input string: 'abc'. Invalid character found."),
        "{trace}"
    );
    assert!(out.contains("[ERROR]"), "{out}");
}

#[test]
fn a_select_is_shown_as_a_tableau_with_the_changelog_column_and_explain_shows_plan_and_job_graph() {
    let dir = tempfile::tempdir().unwrap();
    let sql = "CREATE TABLE seq (id BIGINT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '10',\n\
               'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '10', 'fields.name.length' = '3');\n\
               SELECT id, CHAR_LENGTH(name) AS len FROM seq WHERE id > 5;\n\
               EXPLAIN SELECT id FROM seq WHERE id > 5;\n";
    let (code, out, err) = run_sql(dir.path(), sql, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("| op |"), "{out}");
    // Columns as wide as their types (BIGINT 20, INT 11), as Flink's streaming tableau.
    assert!(out.contains("| op |                   id |         len |\n"), "{out}");
    assert!(out.contains("| +I |                   10 |           3 |\n"), "{out}");
    assert!(out.contains("Received a total of 5 rows"), "{out}");
    assert!(
        out.contains("== Optimized Execution Plan ==\nCalc(select=[id], where=[id > 5])"),
        "{out}"
    );
    assert!(out.contains("== JobGraph =="), "{out}");
}

#[test]
fn a_statement_set_runs_two_inserts_of_a_union_and_a_subquery_as_one_job() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let sql = format!(
        "CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '6');\n\
         CREATE TABLE a (id BIGINT, tag STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         CREATE TABLE b (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');\n\
         CREATE VIEW evens AS SELECT id FROM seq WHERE MOD(id, 2) = 0;\n\
         SET 'table.dml-sync' = 'true';\n\
         EXECUTE STATEMENT SET BEGIN\n\
         INSERT INTO a SELECT id, 'even' FROM evens UNION ALL SELECT id * 10, 'big' FROM (SELECT id FROM seq WHERE id > 5);\n\
         INSERT INTO b SELECT id FROM seq WHERE id <= 2;\n\
         END;\n",
        a.display(),
        b.display()
    );
    let (code, out, err) = run_sql(dir.path(), &sql, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(out.matches("Job ID: ").count(), 1, "{out}");
    assert_eq!(read_parts(&a), vec!["2,even", "4,even", "6,even", "60,big"]);
    assert_eq!(read_parts(&b), vec!["{\"id\":1}", "{\"id\":2}"]);
}

/// Sessions computed directly: per user, rows sorted by time, a new session where the
/// next row is more than `gap` after the previous one (Flink's session windows
/// `[t, t + gap)` merge when they touch); `(start, end, user, count, cents)` with
/// end = last row + gap.
fn direct_sessions(rows: &[(u64, i64, i64)], gap: i64) -> Vec<String> {
    let mut by_user: BTreeMap<u64, Vec<(i64, i64)>> = BTreeMap::new();
    for &(user, cents, ts) in rows {
        by_user.entry(user).or_default().push((ts, cents));
    }
    let mut out = Vec::new();
    for (user, mut v) in by_user {
        v.sort();
        let mut i = 0;
        while i < v.len() {
            let (start, mut last, mut count, mut cents) = (v[i].0, v[i].0, 0, 0);
            while i < v.len() && v[i].0 <= last + gap {
                last = v[i].0;
                count += 1;
                cents += v[i].1;
                i += 1;
            }
            out.push(format!(
                "{start},{},{user},{count},{}.{:02}",
                last + gap,
                cents / 100,
                cents % 100
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn session_windows_of_the_tvf_and_the_legacy_group_window_equal_sessions_computed_directly() {
    let dir = tempfile::tempdir().unwrap();
    // 3,000 orders of 5 users, 37 ms apart with up to 3 s of disorder (all within the
    // 5 s watermark bound, so none is late): some users' rows are closer than the gap,
    // some farther, and out-of-order rows make sessions merge.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut rows = Vec::new();
    let mut csv = String::new();
    for i in 0..3_000u64 {
        let user = next(5);
        let cents = next(10_000) as i64;
        let ts = 1_700_000_000_000 + (i * 37) as i64 + next(3_000) as i64;
        rows.push((user, cents, ts));
        csv.push_str(&format!("{i},{user},{}.{:02},{ts}\n", cents / 100, cents % 100));
    }
    let path = dir.path().join("orders.csv");
    std::fs::write(&path, csv).unwrap();
    let expected = direct_sessions(&rows, 400);
    assert!(
        expected.len() > 50,
        "the data must make many sessions: {}",
        expected.len()
    );

    let (tvf_out, legacy_out) = (dir.path().join("tvf"), dir.path().join("legacy"));
    let sink = |name: &str, path: &std::path::Path| {
        format!(
            "CREATE TABLE {name} (ws BIGINT, we BIGINT, user_id BIGINT, cnt BIGINT, total DECIMAL(38, 2))\n\
             WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n",
            path.display()
        )
    };
    let sql = format!(
        "{}{}{}SET 'table.dml-sync' = 'true';\n\
         INSERT INTO tvf\n\
         SELECT EXTRACT(EPOCH FROM window_start) * 1000 + EXTRACT(MILLISECOND FROM window_start),\n\
                EXTRACT(EPOCH FROM window_end) * 1000 + EXTRACT(MILLISECOND FROM window_end), user_id, COUNT(*), SUM(amount)\n\
         FROM TABLE(SESSION(TABLE orders PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '0.4' SECOND))\n\
         GROUP BY window_start, window_end, user_id;\n\
         INSERT INTO legacy\n\
         SELECT EXTRACT(EPOCH FROM SESSION_START(ts, INTERVAL '0.4' SECOND)) * 1000\n\
                  + EXTRACT(MILLISECOND FROM SESSION_START(ts, INTERVAL '0.4' SECOND)),\n\
                EXTRACT(EPOCH FROM SESSION_END(ts, INTERVAL '0.4' SECOND)) * 1000\n\
                  + EXTRACT(MILLISECOND FROM SESSION_END(ts, INTERVAL '0.4' SECOND)), user_id, COUNT(*), SUM(amount)\n\
         FROM orders GROUP BY SESSION(ts, INTERVAL '0.4' SECOND), user_id;\n",
        orders_ddl(&path),
        sink("tvf", &tvf_out),
        sink("legacy", &legacy_out)
    );
    let (code, out, err) = run_sql(dir.path(), &sql, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    let mut tvf_rows = read_parts(&tvf_out);
    tvf_rows.sort();
    assert_eq!(tvf_rows, expected);
    let mut legacy_rows = read_parts(&legacy_out);
    legacy_rows.sort();
    assert_eq!(legacy_rows, expected);

    // Sessions are per PARTITION BY key; grouping by other columns is refused clearly.
    let sql = format!(
        "{}{}INSERT INTO tvf SELECT 0, 0, order_id, COUNT(*), SUM(amount)\n\
         FROM TABLE(SESSION(TABLE orders PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '1' SECOND))\n\
         GROUP BY window_start, window_end, order_id;\n",
        orders_ddl(&path),
        sink("tvf", &tvf_out)
    );
    let (code, out, err) = run_sql(dir.path(), &sql, &[]);
    assert_ne!(code, 0, "{out}\n{err}");
    assert!(
        format!("{out}{err}").contains("grouped by other columns ([order_id]) than its PARTITION BY keys ([user_id])"),
        "{out}\n{err}"
    );
}

#[test]
fn a_select_over_an_unbounded_source_shows_its_rows_while_the_job_runs() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.sql");
    std::fs::write(
        &file,
        "CREATE TABLE ticks (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20',\n\
         'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000000');\n\
         SELECT id FROM ticks WHERE MOD(id, 2) = 0;\n",
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["sql", "-f", file.to_str().unwrap()])
        .env_remove("WEIR_CONF_DIR")
        .env_remove("WEIR_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // The job never ends (the source is unbounded), so every row seen here was printed
    // while it ran.
    let mut seen = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if line.starts_with("| +I |") {
            seen.push(line);
            if seen.len() == 3 {
                break;
            }
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        seen,
        vec![
            "| +I |                    2 |",
            "| +I |                    4 |",
            "| +I |                    6 |"
        ]
    );
}
