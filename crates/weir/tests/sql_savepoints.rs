//! A SQL window TVF job (the built-in program `sql`) stopped with a savepoint while
//! its slicing window aggregate holds slices of many windows and keys, resumed at the
//! same and at other parallelisms: its output equals that of an undisturbed run.

mod common;

use common::*;
use std::time::Duration;

const ROWS: u64 = 12_000;

/// A throttled datagen table of `ROWS` orders, 10 ms apart over 13 users, whose
/// watermark lags an hour behind, so no window fires before the end of the input.
/// Amounts are integers: two source subtasks interleave their rows differently in
/// every run, and integer sums do not depend on the order.
fn catalog() -> String {
    format!(
        "CREATE TABLE orders (\n\
           seq BIGINT,\n\
           user_id AS CAST(MOD(seq * 7919, 13) AS INT),\n\
           amount AS MOD(seq * 7, 1000),\n\
           ts AS CAST(TO_TIMESTAMP_LTZ(1700000000000 + seq * 10, 3) AS TIMESTAMP(3)),\n\
           WATERMARK FOR ts AS ts - INTERVAL '1' HOUR\n\
         ) WITH (\n\
           'connector' = 'datagen', 'number-of-rows' = '{ROWS}', 'rows-per-second' = '3000',\n\
           'fields.seq.kind' = 'sequence', 'fields.seq.start' = '1', 'fields.seq.end' = '{ROWS}'\n\
         );\n"
    )
}

/// The sink table writing CSV part files into `dir`, and the HOP query into it.
fn sink_and_statement(dir: &std::path::Path) -> (String, String) {
    let ddl = format!(
        "CREATE TABLE per_window (ws TIMESTAMP(3), we TIMESTAMP(3), user_id INT, cnt BIGINT, total BIGINT, top BIGINT)\n\
         WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n",
        dir.display()
    );
    let statement = "INSERT INTO per_window\n\
         SELECT window_start, window_end, user_id, COUNT(*), SUM(amount), MAX(amount)\n\
         FROM TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '30' SECOND))\n\
         GROUP BY window_start, window_end, user_id"
        .to_string();
    (ddl, statement)
}

/// `weir run` of the SQL job writing into `dir`; the exit code and output.
fn run_sql_job(cluster: &Cluster, options: &[&str], dir: &std::path::Path) -> (i32, String, String) {
    let (sink, statement) = sink_and_statement(dir);
    run_program(
        &cluster.rest,
        options,
        "sql",
        &[format!("catalog={}{sink}", catalog()), format!("statement={statement}")],
    )
}

#[test]
fn a_hop_window_job_stopped_with_a_savepoint_resumes_at_two_three_and_one_subtasks_with_the_undisturbed_output() {
    let cluster = Cluster::start(2, 2, &[]);
    let undisturbed_dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run_sql_job(&cluster, &["-p", "2"], undisturbed_dir.path());
    assert_eq!(code, 0, "{out}{err}");
    let undisturbed = read_parts(undisturbed_dir.path());
    // 120 s of orders: 14 windows of 30 s every 10 s, 13 users each (fewer at the edges).
    assert!(undisturbed.len() > 100, "{undisturbed:?}");

    let first_dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run_sql_job(&cluster, &["-d", "-p", "2"], first_dir.path());
    assert_eq!(code, 0, "{out}{err}");
    let jid = job_id(&out);
    cluster.wait_running(&jid);
    wait_until(Duration::from_secs(30), || {
        cluster.second_vertex_records_in(&jid) >= ROWS / 4
    });
    let sp_dir = tempfile::tempdir().unwrap();
    let savepoint = cluster.stop_with_savepoint(&jid, &sp_dir.path().display().to_string());
    let processed = cluster.second_vertex_records_in(&jid);
    assert!(processed < ROWS, "the job ran to its end before the stop: {processed}");
    assert!(
        read_parts(first_dir.path()).is_empty(),
        "no window fires before the end of the input"
    );

    for p in ["2", "3", "1"] {
        let dir = tempfile::tempdir().unwrap();
        let (code, out, err) = run_sql_job(&cluster, &["-p", p, "-s", &savepoint], dir.path());
        assert_eq!(code, 0, "p={p}: {out}{err}");
        assert_eq!(read_parts(dir.path()), undisturbed, "resumed at p={p}");
    }
}
