//! Operator-scoped metrics on real clusters of `weir` processes, with exact values on
//! jobs whose numbers are known: each operator of keyed-sum's chains counts its records
//! under Flink's ids (`<operator>.numRecordsIn`), a one-minute window of
//! orders-per-minute counts exactly the orders it drops as late (over REST, and over
//! Prometheus while it runs), and the interval join of clicks-orders-join ("Clicks before orders") reports the
//! watermark of each of its two inputs.

mod common;

use common::{get, metric_value, wait_until, Cluster};
use prometheus_parse::{Sample, Scrape, Value};
use serde_json::json;
use std::time::Duration;
use weir::programs::orders_per_minute::{generate_line, parse_order, GeneratorConfig, Order, WINDOW_MS};
use weir_api::prelude::Rng;

/// The id of the job's vertex whose name starts with `prefix`.
fn vertex(cluster: &Cluster, jid: &str, prefix: &str) -> String {
    let (_, job) = get(&cluster.rest, &format!("/jobs/{jid}"));
    job["vertices"]
        .as_array()
        .and_then(|vs| {
            vs.iter()
                .find(|v| v["name"].as_str().unwrap_or_default().starts_with(prefix))
        })
        .and_then(|v| v["id"].as_str())
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no vertex '{prefix}…' in {job}"))
}

/// The sums over a vertex's subtasks of the metrics `ids`, by id.
fn sums(cluster: &Cluster, jid: &str, vid: &str, ids: &[&str]) -> Vec<Option<f64>> {
    let path = format!(
        "/jobs/{jid}/vertices/{vid}/subtasks/metrics?get={}&agg=sum",
        ids.join(",")
    );
    let (code, answer) = get(&cluster.rest, &path);
    assert_eq!(code, 200, "{answer}");
    ids.iter()
        .map(|id| {
            answer
                .as_array()
                .and_then(|a| a.iter().find(|m| m["id"] == *id))
                .and_then(|m| m["sum"].as_f64())
        })
        .collect()
}

/// The ids a vertex's subtasks have.
fn ids(cluster: &Cluster, jid: &str, vid: &str) -> Vec<String> {
    let (_, answer) = get(&cluster.rest, &format!("/jobs/{jid}/vertices/{vid}/subtasks/metrics"));
    answer
        .as_array()
        .map(|a| a.iter().filter_map(|m| m["id"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// One subtask's metric values, by id.
fn subtask_values(cluster: &Cluster, jid: &str, vid: &str, ids: &[&str]) -> Vec<Option<i64>> {
    let (_, answer) = get(
        &cluster.rest,
        &format!("/jobs/{jid}/vertices/{vid}/subtasks/0/metrics?get={}", ids.join(",")),
    );
    ids.iter()
        .map(|id| metric_value(&answer, id).map(|v| v as i64))
        .collect()
}

#[test]
fn each_operator_of_a_finished_keyed_sum_counts_its_records_under_flinks_ids() {
    const RECORDS: u64 = 30_000;
    const KEYS: u64 = 50;
    let cluster = Cluster::start(2, 2, &[]);
    let out = tempfile::tempdir().unwrap();
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 2,
        "args": {"keys": KEYS.to_string(), "records": RECORDS.to_string(), "output": out.path().display().to_string()},
    }));
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    let source = vertex(&cluster, &jid, "Source");
    let sum = vertex(&cluster, &jid, "Sum");

    // Sum -> Map -> Sink: Sum reads every record and emits one sum per key at the end;
    // the chained Map takes and emits those, and the sink takes them.
    let listed = ids(&cluster, &jid, &sum);
    let sink = listed
        .iter()
        .find(|id| id.starts_with("Sink__") && id.ends_with(".numRecordsIn"))
        .unwrap_or_else(|| panic!("a sink operator with Flink's filtered name: {listed:?}"))
        .clone();
    assert_eq!(
        sums(
            &cluster,
            &jid,
            &sum,
            &[
                "Sum.numRecordsIn",
                "Sum.numRecordsOut",
                "Map.numRecordsIn",
                "Map.numRecordsOut",
                &sink
            ]
        ),
        vec![
            Some(RECORDS as f64),
            Some(KEYS as f64),
            Some(KEYS as f64),
            Some(KEYS as f64),
            Some(KEYS as f64)
        ]
    );
    // The head's records in are the task's; the vertex lists each subtask's.
    let (_, per_subtask) = get(
        &cluster.rest,
        &format!("/jobs/{jid}/vertices/{sum}/metrics?get=0.Sum.numRecordsIn,1.Sum.numRecordsIn,0.numRecordsIn,1.numRecordsIn"),
    );
    let of = |id: &str| metric_value(&per_subtask, id).unwrap_or_else(|| panic!("{id} in {per_subtask}"));
    assert_eq!(of("0.Sum.numRecordsIn") + of("1.Sum.numRecordsIn"), RECORDS as f64);
    assert_eq!(of("0.Sum.numRecordsIn"), of("0.numRecordsIn"));

    // The generator emits every record: FLIP-33's source counts them in and out.
    let source_ids = ids(&cluster, &jid, &source);
    let generator = source_ids
        .iter()
        .find(|id| id.starts_with("Source__") && id.ends_with(".numRecordsOut"))
        .unwrap_or_else(|| panic!("the source operator: {source_ids:?}"))
        .trim_end_matches(".numRecordsOut")
        .to_string();
    assert_eq!(
        sums(
            &cluster,
            &jid,
            &source,
            &[
                &format!("{generator}.numRecordsOut"),
                &format!("{generator}.numRecordsIn")
            ]
        ),
        vec![Some(RECORDS as f64), Some(RECORDS as f64)]
    );
}

/// The orders of `orders-per-minute`'s generator with `cfg`, `seed` and `n` orders.
fn generated(n: u64, seed: u64, cfg: &GeneratorConfig) -> Vec<Order> {
    (0..n)
        .map(|i| parse_order(&generate_line(cfg, i, &mut Rng::for_index(seed, i))).unwrap())
        .collect()
}

/// How many of `orders`, read in order on one channel with a watermark `bound_ms + 1`
/// behind the largest timestamp after each (per-record watermarks), a one-minute
/// window drops as late (allowed lateness 0, no late-data output).
fn late_orders(orders: &[Order], bound_ms: i64) -> u64 {
    let mut max = i64::MIN + bound_ms + 1;
    let mut late = 0;
    for o in orders {
        let window_max = o.ts_millis.div_euclid(WINDOW_MS) * WINDOW_MS + WINDOW_MS - 1;
        if window_max < max - bound_ms {
            late += 1;
        }
        max = max.max(o.ts_millis);
    }
    late
}

fn gauge(s: &Sample) -> f64 {
    match s.value {
        Value::Gauge(v) | Value::Untyped(v) => v,
        ref other => panic!("{} is not a gauge: {other:?}", s.metric),
    }
}

/// The window operator's records in and late records dropped from one scrape of a
/// TaskManager, if it runs there and has taken records.
fn window_counts(url: &str, jid: &str) -> Option<(u64, u64)> {
    let text = ureq::get(url).call().ok()?.into_string().ok()?;
    let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("valid Prometheus text");
    let find = |metric: &str| {
        scrape
            .samples
            .iter()
            .find(|s| {
                s.metric == metric
                    && s.labels.get("job_id") == Some(jid)
                    && s.labels.get("operator_name").is_some_and(|n| n.starts_with("Window("))
            })
            .map(|s| gauge(s) as u64)
    };
    let records_in = find("flink_taskmanager_job_task_operator_numRecordsIn")?;
    let late = find("flink_taskmanager_job_task_operator_numLateRecordsDropped")?;
    Some((records_in, late))
}

#[test]
fn a_window_counts_exactly_the_orders_it_drops_as_late_over_rest_and_prometheus() {
    const ORDERS: u64 = 24_000;
    let cfg = GeneratorConfig {
        users: 7,
        bound_ms: 5_000,
        late_fraction: 0.05,
    };
    let orders = generated(ORDERS, 11, &cfg);
    let total_late = late_orders(&orders, 5_000);
    assert!(total_late > 500, "the run must have late orders: {total_late}");

    let reporter = vec![
        "metrics.reporter.prom.factory.class=org.apache.flink.metrics.prometheus.PrometheusReporterFactory".to_string(),
        "metrics.reporter.prom.port=0".to_string(),
    ];
    let cluster = Cluster::start_with(1, 2, &[], &reporter);
    let tm_url = cluster.tms[0]
        .field("metrics.prom")
        .expect("the TaskManager's reporter");
    let out = tempfile::tempdir().unwrap();
    let jid = cluster.submit(json!({
        "program": "orders-per-minute",
        "parallelism": 1,
        "args": {
            "orders": ORDERS.to_string(), "users": "7", "seed": "11", "late_fraction": "0.05",
            "watermarks": "per-record", "rate_per_sec": "4000",
            "output": out.path().display().to_string(),
        },
    }));
    cluster.wait_running(&jid);

    // While it runs: the late orders among those the window has taken, exactly, as one
    // scrape of its TaskManager shows them.
    let mut seen = None;
    wait_until(Duration::from_secs(30), || {
        seen = window_counts(&tm_url, &jid).filter(|(records_in, late)| *late > 0 && *records_in < ORDERS);
        seen.is_some()
    });
    let (taken, late) = seen.expect("a scrape while the window runs");
    assert_eq!(
        late,
        late_orders(&orders[..taken as usize], 5_000),
        "after {taken} orders"
    );

    // Finished: every late order, over REST, on the window's operator.
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(60)), "FINISHED");
    let window = vertex(&cluster, &jid, "Window(");
    let listed = ids(&cluster, &jid, &window);
    let dropped = listed
        .iter()
        .find(|id| id.ends_with(".numLateRecordsDropped"))
        .unwrap_or_else(|| panic!("the window's late records: {listed:?}"))
        .clone();
    assert!(dropped.starts_with("Window("), "{dropped}");
    assert_eq!(
        sums(&cluster, &jid, &window, &[&dropped]),
        vec![Some(total_late as f64)]
    );
}

#[test]
fn a_two_input_task_reports_the_watermark_of_each_input_beside_their_minimum() {
    let cluster = Cluster::start(1, 4, &[]);
    let out = tempfile::tempdir().unwrap();
    let jid = cluster.submit(json!({
        "program": "clicks-orders-join",
        "parallelism": 1,
        "args": {"clicks": "10000000", "orders": "1000000", "rate_per_sec": "2000", "output": out.path().display().to_string()},
    }));
    cluster.wait_running(&jid);
    let join = vertex(&cluster, &jid, "Clicks before orders");
    let wanted = [
        "Clicks_before_orders.currentInput1Watermark",
        "Clicks_before_orders.currentInput2Watermark",
        "Clicks_before_orders.currentInputWatermark",
        "currentInputWatermark",
    ];
    let mut last = Vec::new();
    wait_until(Duration::from_secs(30), || {
        last = subtask_values(&cluster, &jid, &join, &wanted);
        matches!(last.as_slice(), [Some(a), Some(b), Some(_), Some(_)] if a != b)
    });
    let [first, second, min, task] = [last[0], last[1], last[2], last[3]].map(Option::unwrap);
    assert_eq!(min, first.min(second), "{last:?}");
    assert_eq!(task, min, "the task's input watermark is its head's: {last:?}");

    // Flink's source `watermarkLag`: the source's watermark behind the JobManager's
    // clock (its events are from 2023), read with the watermark it is measured from;
    // a task that is no source has none.
    let clicks = vertex(&cluster, &jid, "Source: clicks");
    let before = now_ms();
    let lagged = subtask_values(&cluster, &jid, &clicks, &["watermarkLag", "currentOutputWatermark"]);
    let after = now_ms();
    let [Some(lag), Some(watermark)] = lagged[..] else {
        panic!("the source's lag and output watermark: {lagged:?}")
    };
    assert!(watermark > 0 && watermark < before, "{lagged:?}");
    // Both from the same report; the lag measured between the two clock readings,
    // give or take one report interval for a watermark that moved meanwhile.
    assert!(
        lag >= before - watermark - 1_000 && lag <= after - watermark + 1_000,
        "lag {lag} for watermark {watermark} read between {before} and {after}"
    );
    assert_eq!(subtask_values(&cluster, &jid, &join, &["watermarkLag"]), vec![None]);

    let (code, _) = common::send(&cluster.rest, "PATCH", &format!("/jobs/{jid}?mode=cancel"), None);
    assert_eq!(code, 202);
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
