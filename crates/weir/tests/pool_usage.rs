//! Flink's buffer pool usage metrics: a source behind a slow operator fills its output
//! pool (`outPoolUsage` near 1), a free-running one does not.

mod common;

use common::{get, wait_until, Cluster};
use serde_json::json;
use std::time::Duration;

fn max_out_pool_usage(cluster: &Cluster, jid: &str, vid: &str) -> Option<f64> {
    let (_, v) = get(
        &cluster.rest,
        &format!("/jobs/{jid}/vertices/{vid}/subtasks/metrics?get=Shuffle.Netty.Output.Buffers.outPoolUsage,buffers.outPoolUsage&agg=max"),
    );
    let values: Vec<f64> = v.as_array()?.iter().filter_map(|m| m["max"].as_f64()).collect();
    (values.len() == 2 && values[0] == values[1]).then(|| values[0])
}

#[test]
fn a_backpressured_source_reports_its_output_pool_full() {
    let cluster = Cluster::start(1, 1, &[]);
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 1,
        "args": {"records": "100000000", "work_us": "2000"},
    }));
    cluster.wait_running(&jid);
    let (_, job) = get(&cluster.rest, &format!("/jobs/{jid}"));
    let source = job["vertices"][0]["id"].as_str().unwrap().to_string();
    let sum = job["vertices"][1]["id"].as_str().unwrap().to_string();
    wait_until(Duration::from_secs(30), || {
        max_out_pool_usage(&cluster, &jid, &source).is_some_and(|u| u >= 0.9)
    });
    // The sum writes to a chained print sink: no network output, no pool.
    assert_eq!(max_out_pool_usage(&cluster, &jid, &sum), Some(0.0));
}
