//! The adaptive batch scheduler end to end (issue 9, item 8): on real processes, the
//! parallelism of a vertex the user did not set is decided from the bytes its inputs
//! produced, a vertex the user set keeps its parallelism, and turning auto-parallelism
//! off gives every vertex `parallelism.default`; results equal direct computations.

mod common;

use common::{
    direct_orders_per_user, get, keyed_sum_output, orders_csv, read_parts, run_sql, Cluster, RESTART_THREE_TIMES,
};
use serde_json::json;
use std::time::Duration;
use weir_graph::adaptive_parallelism::{decide_parallelism, AdaptiveParallelismOptions, BlockingInput};

/// Seed 002's batch aggregate: the orders CSV per user into a filesystem table, with
/// `settings` as `SET` statements. Returns the job's `/jobs/:jid` and the sorted rows.
fn aggregate(cluster: &Cluster, csv: &std::path::Path, settings: &[(&str, &str)]) -> (serde_json::Value, Vec<String>) {
    let dir = csv.parent().unwrap();
    let out_dir = tempfile::tempdir_in(dir).unwrap();
    let sets: String = settings.iter().map(|(k, v)| format!("SET '{k}' = '{v}';\n")).collect();
    let sql = format!(
        "CREATE TABLE orders (order_id BIGINT, user_id BIGINT, amount DECIMAL(10, 2), ts_millis BIGINT)\n\
         WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         CREATE TABLE per_user (user_id BIGINT, cnt BIGINT, total DECIMAL(38, 2))\n\
         WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');\n\
         SET 'execution.runtime-mode' = 'batch';\n\
         SET 'table.dml-sync' = 'true';\n\
         {sets}\
         INSERT INTO per_user SELECT user_id, COUNT(*), SUM(amount) FROM orders GROUP BY user_id;\n",
        csv.display(),
        out_dir.path().display()
    );
    let (code, out, err) = run_sql(dir, &sql, &["-m", &cluster.rest]);
    assert_eq!(code, 0, "{out}\n{err}");
    let jid = out
        .lines()
        .find_map(|l| l.strip_prefix("Job ID: "))
        .unwrap_or_else(|| panic!("no Job ID line in {out}"))
        .trim()
        .to_string();
    let mut rows: Vec<String> = read_parts(out_dir.path())
        .into_iter()
        .filter(|l| !l.is_empty())
        .collect();
    rows.sort();
    let (_, job) = get(&cluster.rest, &format!("/jobs/{jid}"));
    assert_eq!(job["state"], "FINISHED", "{job}");
    (job, rows)
}

/// The `/jobs/:jid` vertex whose name contains `part`.
fn vertex<'a>(job: &'a serde_json::Value, part: &str) -> &'a serde_json::Value {
    job["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"].as_str().unwrap().contains(part))
        .unwrap_or_else(|| panic!("no vertex named like {part} in {job}"))
}

#[test]
fn seed_002_a_small_file_at_parallelism_2_runs_its_aggregate_at_1_unless_auto_parallelism_is_off() {
    let cluster = Cluster::start(2, 2, &[]);
    let dir = tempfile::tempdir().unwrap();
    let csv = orders_csv(dir.path(), 3_000);
    let expected = direct_orders_per_user(&csv);

    let (job, rows) = aggregate(&cluster, &csv, &[("parallelism.default", "2")]);
    assert_eq!(rows, expected);
    assert_eq!(vertex(&job, "GroupAggregate")["parallelism"], 1, "{job}");
    // One file is one split: the source infers parallelism 1 too.
    assert_eq!(vertex(&job, "Source")["parallelism"], 1, "{job}");

    let (job, rows) = aggregate(
        &cluster,
        &csv,
        &[
            ("parallelism.default", "2"),
            ("execution.batch.adaptive.auto-parallelism.enabled", "false"),
        ],
    );
    assert_eq!(rows, expected);
    assert_eq!(vertex(&job, "GroupAggregate")["parallelism"], 2, "{job}");
    assert_eq!(vertex(&job, "Source")["parallelism"], 2, "{job}");
}

#[test]
fn a_file_source_over_a_directory_runs_one_subtask_per_file() {
    let cluster = Cluster::start(2, 2, &[]);
    let dir = tempfile::tempdir().unwrap();
    let csv = orders_csv(dir.path(), 3_000);
    let expected = direct_orders_per_user(&csv);
    let parts = dir.path().join("parts");
    std::fs::create_dir(&parts).unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for (i, chunk) in lines.chunks(lines.len().div_ceil(3)).enumerate() {
        std::fs::write(parts.join(format!("part-{i}.csv")), chunk.join("\n") + "\n").unwrap();
    }
    let (job, rows) = aggregate(&cluster, &parts, &[]);
    assert_eq!(rows, expected);
    assert_eq!(vertex(&job, "Source")["parallelism"], 3, "{job}");
}

#[test]
fn a_larger_input_gets_the_parallelism_its_bytes_call_for() {
    let cluster = Cluster::start(2, 2, &[]);
    let dir = tempfile::tempdir().unwrap();
    let csv = orders_csv(dir.path(), 100_000);
    let (job, rows) = aggregate(
        &cluster,
        &csv,
        &[
            ("parallelism.default", "2"),
            (
                "execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task",
                "256kb",
            ),
            ("execution.batch.adaptive.auto-parallelism.max-parallelism", "16"),
        ],
    );
    assert_eq!(rows, direct_orders_per_user(&csv));
    // What the sources wrote into their blocking partitions (bytes serialised into
    // buffers, every one of them for the aggregate).
    let written = vertex(&job, "Source")["metrics"]["write-bytes"].as_u64().unwrap();
    let options = AdaptiveParallelismOptions {
        max_parallelism: 16,
        avg_data_volume_per_task: 256 * 1024,
        ..AdaptiveParallelismOptions::default()
    };
    let expected = decide_parallelism(
        &options,
        &[BlockingInput {
            broadcast: false,
            subpartition_bytes: vec![written],
        }],
    );
    assert!(
        expected > 1,
        "the input is large enough for several subtasks: {written} bytes"
    );
    assert_eq!(vertex(&job, "GroupAggregate")["parallelism"], expected, "{job}");
}

/// Runs `keyed-sum` in BATCH over 10 000 records with `parallelism.default = 2` and
/// `args`, checks its output against a direct computation and returns `/jobs/:jid`.
fn keyed_sum(cluster: &Cluster, args: &[(&str, &str)]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out");
    let mut a = json!({"keys": "50", "records": "10000", "output": output.display().to_string()});
    for (k, v) in args {
        a[*k] = json!(v);
    }
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "args": a,
        "config": {"execution.runtime-mode": "BATCH", "parallelism.default": "2"},
    }));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    assert_eq!(read_parts(&output), keyed_sum_output(50, 42, 10_000));
    get(&cluster.rest, &format!("/jobs/{jid}")).1
}

#[test]
fn a_datastream_operator_with_an_explicit_parallelism_keeps_it() {
    let cluster = Cluster::start(2, 2, &[]);
    let job = keyed_sum(&cluster, &[("sum-parallelism", "3")]);
    assert_eq!(vertex(&job, "Sum")["parallelism"], 3, "{job}");
    // The map and sink after it were decided from the few bytes Sum produced.
    assert_eq!(vertex(&job, "Map")["parallelism"], 1, "{job}");
}

#[test]
fn a_failed_stage_reruns_at_its_decided_parallelism() {
    let cluster = Cluster::start(2, 1, &RESTART_THREE_TIMES);
    let job = keyed_sum(&cluster, &[("fail-once-after", "100")]);
    let sum = vertex(&job, "Sum");
    assert_eq!(sum["parallelism"], 1, "{job}");
    let (jid, vid) = (job["jid"].as_str().unwrap(), sum["id"].as_str().unwrap());
    let (_, detail) = get(&cluster.rest, &format!("/jobs/{jid}/vertices/{vid}"));
    let attempts: Vec<u64> = detail["subtasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(
        attempts,
        vec![1],
        "the one Sum subtask failed once and ran again: {detail}"
    );
}
