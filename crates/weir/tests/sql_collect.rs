//! A SELECT's results through the JobManager: the collect sink hands its rows to its
//! coordinator on the JobMaster and `weir sql` pulls them over REST, with `-m` and on
//! the embedded MiniCluster alike (no socket between the client and the TaskManagers).

mod common;

use common::{run_sql, weir_with_env};
use std::io::Write;

/// The table rows (`| ... |` lines but the header) of a tableau, sorted.
fn sorted_rows(out: &str) -> Vec<String> {
    let mut rows: Vec<String> = out
        .lines()
        .filter(|l| l.starts_with('|') && !l.contains(" op |") && !l.contains("user_id"))
        .map(str::to_string)
        .collect();
    rows.sort();
    rows
}

fn users_csv(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("users.csv");
    let mut text = String::new();
    for i in 0..300 {
        text.push_str(&format!("{i},{},{}\n", i % 7, i * 3));
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn queries(csv: &std::path::Path) -> String {
    format!(
        "CREATE TABLE users (id BIGINT, user_id BIGINT, amount BIGINT) WITH ('connector' = 'filesystem', \
         'path' = '{}', 'format' = 'csv');\n\
         SET 'parallelism.default' = '2';\n\
         SELECT id, user_id, amount FROM users WHERE MOD(id, 5) = 0;\n\
         SET 'execution.runtime-mode' = 'BATCH';\n\
         SET 'execution.batch.adaptive.auto-parallelism.enabled' = 'false';\n\
         SELECT user_id, COUNT(*) AS n, SUM(amount) AS total FROM users GROUP BY user_id;\n",
        csv.display()
    )
}

#[test]
fn a_select_through_the_jobmanager_of_a_two_taskmanager_cluster_equals_the_embedded_run() {
    let cluster = common::Cluster::start(2, 2, &[]);
    let data = tempfile::tempdir().unwrap();
    let sql = queries(&users_csv(data.path()));
    let (code, embedded, err) = run_sql(data.path(), &sql, &[]);
    assert_eq!(code, 0, "{embedded}\n{err}");
    // The client runs elsewhere: its own working directory, only the REST address.
    let client_dir = tempfile::tempdir().unwrap();
    let file = client_dir.path().join("queries.sql");
    std::fs::write(&file, &sql).unwrap();
    let (code, remote, err) = weir_with_env(
        &["sql", "-f", file.to_str().unwrap(), "-m", &cluster.rest],
        &[],
        Some(client_dir.path()),
    );
    assert_eq!(code, 0, "{remote}\n{err}");
    assert!(remote.contains("Received a total of 60 rows"), "{remote}");
    assert_eq!(sorted_rows(&remote), sorted_rows(&embedded));
    // 60 streaming rows and 7 groups, each counted over the ids of its residue.
    assert_eq!(sorted_rows(&remote).len(), 67, "{remote}");
    assert!(
        remote.lines().any(|l| l.contains(" 43 |") && l.contains(" 18963 |")),
        "{remote}"
    );
}

#[test]
fn bad_coordination_requests_get_a_clear_4xx_and_the_jobmanager_keeps_serving() {
    let cluster = common::Cluster::start(1, 1, &[]);
    let data = tempfile::tempdir().unwrap();
    let sql = format!(
        "CREATE TABLE users (id BIGINT, user_id BIGINT, amount BIGINT) WITH ('connector' = 'filesystem', \
         'path' = '{}', 'format' = 'csv');\nSELECT id FROM users WHERE id < 3;\n",
        users_csv(data.path()).display()
    );
    let (code, out, err) = run_sql(data.path(), &sql, &["-m", &cluster.rest]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (_, jobs) = common::get(&cluster.rest, "/jobs");
    let jid = jobs["jobs"][0]["id"].as_str().unwrap().to_string();
    let operator = "0123456789abcdef0123456789abcdef";
    let post = |path: String, body: serde_json::Value| common::send(&cluster.rest, "POST", &path, Some(body));
    let (code, answer) = post(
        format!("/jobs/{jid}/coordinators/{operator}"),
        serde_json::json!({"offset": 0}),
    );
    assert_eq!(code, 404, "{answer}");
    assert!(
        answer["errors"][0]
            .as_str()
            .unwrap()
            .contains(&format!("Coordinator of operator {operator} does not exist")),
        "{answer}"
    );
    let (code, answer) = post(
        format!("/jobs/{jid}/coordinators/xyz"),
        serde_json::json!({"offset": 0}),
    );
    assert_eq!(code, 400, "{answer}");
    assert!(
        answer["errors"][0].as_str().unwrap().contains("(operatorid)"),
        "{answer}"
    );
    let (code, answer) = post(
        format!("/jobs/{jid}/coordinators/{operator}"),
        serde_json::json!({"offset": "zero", "junk": 1}),
    );
    assert_eq!(code, 400, "{answer}");
    assert!(
        answer["errors"][0]
            .as_str()
            .unwrap()
            .starts_with("Request did not match expected format ClientCoordinationRequestBody"),
        "{answer}"
    );
    let unknown_job = "00000000000000000000000000000001";
    let (code, _) = post(
        format!("/jobs/{unknown_job}/coordinators/{operator}"),
        serde_json::json!({"offset": 0}),
    );
    assert_eq!(code, 404);
    let (code, overview) = common::get(&cluster.rest, "/overview");
    assert_eq!(code, 200);
    assert_eq!(overview["jobs-finished"], 1, "{overview}");
}

#[test]
fn a_result_larger_than_the_coordinators_buffer_arrives_whole_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    // 1 KiB batches, a 2 KiB buffer: ~20000 rows of ~30 bytes go through it hundreds
    // of times, the sink waiting whenever the client has not read.
    let sql = "CREATE TABLE seq (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '20000',\n\
               'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '20000');\n\
               SET 'parallelism.default' = '1';\n\
               SET 'collect-sink.batch-size.max' = '1kb';\n\
               SELECT id FROM seq;\n";
    let (code, out, err) = run_sql(dir.path(), sql, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    let ids: Vec<u64> = out
        .lines()
        .filter_map(|l| l.strip_prefix("| +I |"))
        .map(|l| l.trim_end_matches('|').trim().parse().unwrap())
        .collect();
    assert_eq!(ids, (1..=20000).collect::<Vec<u64>>());
    assert!(out.contains("Received a total of 20000 rows"), "{out}");
}

#[test]
fn the_repl_prints_a_failing_selects_cause_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.csv"), "1\nabc\n").unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_weir"))
        .args(["sql"])
        .env("HOME", dir.path())
        .env_remove("WEIR_CONF_DIR")
        .env_remove("WEIR_LOG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = format!(
        "CREATE TABLE src (s STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         SELECT CAST(s AS INT) AS n FROM src;\n\
         SET 'collect-sink.batch-size.max' = 'lots';\n\
         SELECT s FROM src;\n\
         RESET 'collect-sink.batch-size.max';\n\
         SELECT s FROM src;\n",
        dir.path().join("in.csv").display()
    );
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The session ends normally (the exit code reports the failed job, as `close` does).
    assert!(stdout.ends_with("Shutting down the session...\ndone.\n"), "{stdout}");
    assert!(stdout.contains("[ERROR]"), "{stdout}");
    assert!(
        stdout.contains("For input string: 'abc'. Invalid character found."),
        "{stdout}"
    );
    assert!(
        stdout.contains("[ERROR] SQL validation failed. Invalid value 'lots' for 'collect-sink.batch-size.max'"),
        "{stdout}"
    );
    // After both failures the session still runs a SELECT.
    assert!(stdout.contains("| +I |                            abc |"), "{stdout}");
    assert!(stdout.contains("Received a total of 2 rows"), "{stdout}");
}
