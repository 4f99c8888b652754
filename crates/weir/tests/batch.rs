//! Batch runtime mode end to end (`execution.runtime-mode`): SQL and DataStream jobs on
//! real processes, compared with direct computations.

mod common;

use common::{direct_orders_per_user, get, orders_csv, read_parts, run_sql, weir_cli as weir, weir_with_env, Cluster};
use std::time::Duration;

fn orders_ddl(path: &std::path::Path) -> String {
    format!(
        "CREATE TABLE orders (order_id BIGINT, user_id BIGINT, amount DECIMAL(10, 2), ts_millis BIGINT)\n\
         WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n",
        path.display()
    )
}

fn job_id_line(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("Job ID: "))
        .unwrap_or_else(|| panic!("no Job ID line in {out}"))
        .trim()
        .to_string()
}

/// Runs `INSERT INTO per_user SELECT user_id, COUNT(*), SUM(amount) .. GROUP BY user_id`
/// over `csv` in BATCH mode on `cluster` with the `SET` statements `settings`, writing
/// to `dir/per-user`; checks the rows equal a direct computation and returns stdout.
fn run_per_user_batch(cluster: &Cluster, dir: &std::path::Path, csv: &std::path::Path, settings: &str) -> String {
    let out_dir = dir.join("per-user");
    // A filesystem sink takes no updates: in STREAMING mode this INSERT is refused at
    // planning; in BATCH mode the aggregate emits one final row per user.
    let sql = format!(
        "{}CREATE TABLE per_user (user_id BIGINT, cnt BIGINT, total DECIMAL(38, 2))\n\
         WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         SET 'execution.runtime-mode' = 'batch';\n\
         {settings}\
         SET 'table.dml-sync' = 'true';\n\
         INSERT INTO per_user SELECT user_id, COUNT(*), SUM(amount) FROM orders GROUP BY user_id;\n",
        orders_ddl(csv),
        out_dir.display()
    );
    let (code, out, err) = run_sql(dir, &sql, &["-m", &cluster.rest]);
    assert_eq!(code, 0, "{out}\n{err}");
    let mut rows = read_parts(&out_dir);
    rows.sort();
    assert_eq!(rows, direct_orders_per_user(csv));
    out
}

#[test]
fn a_batch_sql_aggregate_on_a_two_taskmanager_cluster_writes_only_final_rows_equal_to_a_direct_computation() {
    let cluster = Cluster::start(2, 2, &[]);
    let dir = tempfile::tempdir().unwrap();
    let csv = orders_csv(dir.path(), 3_000);
    let out = run_per_user_batch(&cluster, dir.path(), &csv, "SET 'parallelism.default' = '2';\n");

    let jid = job_id_line(&out);
    let (_, job) = get(&cluster.rest, &format!("/jobs/{jid}"));
    assert_eq!(job["job-type"], "BATCH", "{job}");
    assert_eq!(job["state"], "FINISHED", "{job}");
    let (_, plan) = get(&cluster.rest, &format!("/jobs/{jid}/plan"));
    let exchanges: Vec<&str> = plan["plan"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|n| n["inputs"].as_array().cloned().unwrap_or_default())
        .map(|i| {
            if i["exchange"] == "blocking" {
                "blocking"
            } else {
                "other"
            }
        })
        .collect();
    assert!(!exchanges.is_empty(), "{plan}");
    assert!(exchanges.iter().all(|e| *e == "blocking"), "{plan}");
}

#[test]
fn a_csv_file_read_by_three_source_subtasks_in_byte_ranges_gives_every_row_once() {
    let cluster = Cluster::start(2, 2, &[]);
    let dir = tempfile::tempdir().unwrap();
    let csv = orders_csv(dir.path(), 5_000);
    // Auto-parallelism off: every vertex runs at 3, so the one file is cut into three
    // byte ranges, each read by its own subtask.
    let settings = "SET 'execution.batch.adaptive.auto-parallelism.enabled' = 'false';\n\
                    SET 'parallelism.default' = '3';\n";
    let out = run_per_user_batch(&cluster, dir.path(), &csv, settings);

    let jid = job_id_line(&out);
    let (_, job) = get(&cluster.rest, &format!("/jobs/{jid}"));
    let source = job["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"].as_str().is_some_and(|n| n.starts_with("Source: orders")))
        .unwrap_or_else(|| panic!("no source vertex in {job}"));
    assert_eq!(source["parallelism"], 3, "{job}");
}

/// `SELECT user_id, COUNT(*) .. GROUP BY user_id` over 400 orders in runtime mode `mode`,
/// shown by `weir sql`.
fn count_per_user(mode: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let csv = orders_csv(dir.path(), 400);
    let sql = format!(
        "{}SET 'execution.runtime-mode' = '{mode}';\n\
         SELECT user_id, COUNT(*) AS cnt FROM orders GROUP BY user_id;\n",
        orders_ddl(&csv)
    );
    let (code, out, err) = run_sql(dir.path(), &sql, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    out
}

#[test]
fn a_batch_select_shows_final_rows_without_the_changelog_column() {
    let out = count_per_user("BATCH");
    assert!(!out.contains("| op |"), "{out}");
    assert!(!out.contains("-U") && !out.contains("+U"), "{out}");
    assert!(out.contains("\n7 rows in set"), "{out}");
    let streaming = count_per_user("streaming");
    assert!(streaming.contains("| op |"), "{streaming}");
    assert!(streaming.contains("| -U |"), "{streaming}");
}

#[test]
fn automatic_mode_runs_bounded_sql_as_batch_and_batch_refuses_an_unbounded_source_naming_it() {
    let out = count_per_user("automatic");
    assert!(!out.contains("| op |"), "{out}");
    assert!(out.contains("\n7 rows in set"), "{out}");

    let dir = tempfile::tempdir().unwrap();
    let sql = "CREATE TABLE endless (id BIGINT) WITH ('connector' = 'datagen');\n\
               CREATE TABLE sink (id BIGINT) WITH ('connector' = 'blackhole');\n\
               SET 'execution.runtime-mode' = 'BATCH';\n\
               INSERT INTO sink SELECT id FROM endless;\n";
    let (code, out, err) = run_sql(dir.path(), sql, &[]);
    assert_ne!(code, 0, "{out}");
    let all = format!("{out}{err}");
    assert!(
        all.contains("Detected an UNBOUNDED source with the 'execution.runtime-mode' set to 'BATCH'"),
        "{all}"
    );
    assert!(all.contains("endless[datagen]"), "{all}");

    let (code, out, err) = run_sql(dir.path(), "SET 'execution.runtime-mode' = 'bulk';\nSELECT 1;\n", &[]);
    assert_ne!(code, 0, "{out}");
    assert!(format!("{out}{err}").contains("'execution.runtime-mode'"), "{out}{err}");
}

/// The sorted `key,sum` lines `rolling-sum` wrote under `dir`.
fn rolling_sum_lines(dir: &std::path::Path, mode: &str) -> Vec<String> {
    let (code, out, err) = weir(&[
        "local",
        "-D",
        &format!("execution.runtime-mode={mode}"),
        "rolling-sum",
        "-p",
        "2",
        "--arg",
        "keys=10",
        "--arg",
        "records=1000",
        "--arg",
        &format!("output={}", dir.display()),
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let mut lines = read_parts(dir);
    lines.sort();
    lines
}

#[test]
fn a_datastream_keyed_sum_in_batch_mode_prints_only_the_final_sums() {
    let dir = tempfile::tempdir().unwrap();
    let batch = rolling_sum_lines(&dir.path().join("batch"), "BATCH");
    assert_eq!(batch, common::keyed_sum_output(10, 42, 1000));
    let streaming = rolling_sum_lines(&dir.path().join("streaming"), "STREAMING");
    assert_eq!(streaming.len(), 1000, "one running sum per record");
    for last in &batch {
        assert!(streaming.contains(last), "{last} is a running sum too");
    }
}

#[test]
fn no_checkpoint_is_taken_in_batch_mode() {
    let cluster = Cluster::start(
        1,
        2,
        &["execution.checkpointing.interval=50 ms", "execution.runtime-mode=BATCH"],
    );
    let (code, out, err) = common::run_program(
        &cluster.rest,
        &[],
        "keyed-sum",
        &["records=3000".into(), "rate_per_sec=5000".into()],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let jid = common::job_id(&out);
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    let (_, counts) = get(&cluster.rest, &format!("/jobs/{jid}/checkpoints"));
    assert_eq!(counts["counts"]["total"], 0, "{counts}");
}

#[test]
fn the_embedded_cluster_deletes_the_spill_files_of_a_finished_batch_job_before_weir_sql_exits() {
    let dir = tempfile::tempdir().unwrap();
    let csv = orders_csv(dir.path(), 400);
    let (tmp, out_dir) = (dir.path().join("tmp"), dir.path().join("per-user"));
    std::fs::create_dir(&tmp).unwrap();
    let sql = format!(
        "{}CREATE TABLE per_user (user_id BIGINT, cnt BIGINT) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         SET 'execution.runtime-mode' = 'batch';\n\
         SET 'table.dml-sync' = 'true';\n\
         INSERT INTO per_user SELECT user_id, COUNT(*) FROM orders GROUP BY user_id;\n",
        orders_ddl(&csv),
        out_dir.display()
    );
    let file = dir.path().join("job.sql");
    std::fs::write(&file, sql).unwrap();
    let tmp_setting = format!("io.tmp.dirs={}", tmp.display());
    let args = [
        "sql",
        "-f",
        file.to_str().unwrap(),
        "-D",
        "taskmanager.network.blocking-partition.memory-budget=0",
        "-D",
        &tmp_setting,
    ];
    let (code, out, err) = weir_with_env(&args, &[("WEIR_LOG", "info")], None);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("spilling blocking partition to a file"),
        "a budget of 0 spills every buffer: {err}"
    );
    assert_eq!(read_parts(&out_dir).len(), 7, "one row per user");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(left.is_empty(), "spill files left behind: {left:?}");
}
