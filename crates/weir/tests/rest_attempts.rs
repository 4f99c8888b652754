//! Flink's attempt, accumulator and execution-result endpoints on a real cluster: a
//! throttled keyed-sum whose TaskManager is killed restarts its subtasks, after which
//! `/subtasks/:idx/attempts/:attempt` serves both the failed first attempt and the
//! running second one, and `/jobs/:jid/execution-result` moves from IN_PROGRESS to
//! COMPLETED with SUCCEEDED once the job finishes.

mod common;

use common::*;
use serde_json::{json, Value};
use std::time::Duration;

const RECORDS: u64 = 24_000;

/// The id of the job's Sum vertex.
fn sum_vertex(cluster: &Cluster, jid: &str) -> String {
    let (_, job) = get(&cluster.rest, &format!("/jobs/{jid}"));
    job["vertices"]
        .as_array()
        .and_then(|vs| {
            vs.iter()
                .find(|v| v["name"].as_str().unwrap_or_default().starts_with("Sum"))
        })
        .and_then(|v| v["id"].as_str())
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no Sum vertex in {job}"))
}

fn attempt(cluster: &Cluster, path: &str) -> (u16, Value) {
    get(&cluster.rest, path)
}

#[test]
fn a_restarted_subtask_serves_its_failed_and_its_current_attempt_and_the_result_completes() {
    let chk = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut cluster = Cluster::start_checkpointing(chk.path());
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 2,
        "args": {"keys": "50", "records": RECORDS.to_string(), "rate_per_sec": "3000",
                 "output": out.path().display().to_string()},
    }));
    cluster.wait_running(&jid);
    assert_eq!(
        get(&cluster.rest, &format!("/jobs/{jid}/execution-result")),
        (200, json!({"status": {"id": "IN_PROGRESS"}}))
    );
    let sum = sum_vertex(&cluster, &jid);
    let v = format!("/jobs/{jid}/vertices/{sum}");

    // Before any failure: attempt 0 is the current one, attempt 1 does not exist yet.
    let (code, first) = attempt(&cluster, &format!("{v}/subtasks/0/attempts/0"));
    assert_eq!(code, 200, "{first}");
    assert_eq!(first["attempt"], 0);
    let (code, err) = attempt(&cluster, &format!("{v}/subtasks/0/attempts/1"));
    assert_eq!(code, 404);
    assert_eq!(
        err["errors"][0],
        "org.apache.flink.runtime.rest.handler.RestHandlerException: Invalid attempt num 1"
    );

    // Vertex and subtask accumulators: Flink's shapes, one entry per subtask.
    assert_eq!(
        get(&cluster.rest, &format!("{v}/accumulators")),
        (200, json!({"id": sum, "user-accumulators": []}))
    );
    let (code, subtasks) = get(&cluster.rest, &format!("{v}/subtasks/accumulators"));
    assert_eq!(code, 200, "{subtasks}");
    assert_eq!(subtasks["id"], sum.as_str());
    assert_eq!(subtasks["parallelism"], 2);
    for (i, s) in subtasks["subtasks"].as_array().expect("subtasks").iter().enumerate() {
        assert_eq!(s["subtask"], i);
        assert_eq!(s["attempt"], 0);
        assert_eq!(s["host"], "127.0.0.1", "{s}");
        assert_eq!(s["user-accumulators"], json!([]));
    }

    // A TaskManager dies: the job restarts and subtask 0 gets attempt 1.
    cluster.kill_after_checkpoints(&jid, 0);
    wait_until(Duration::from_secs(30), || {
        get(&cluster.rest, &format!("{v}/subtasks/0")).1["attempt"].as_u64() >= Some(1)
    });
    let (code, current) = attempt(&cluster, &format!("{v}/subtasks/0/attempts/1"));
    assert_eq!(code, 200, "{current}");
    assert_eq!(current["attempt"], 1);
    let (code, failed) = attempt(&cluster, &format!("{v}/subtasks/0/attempts/0"));
    assert_eq!(code, 200, "{failed}");
    assert_eq!(failed["attempt"], 0);
    assert!(
        ["FAILED", "CANCELED"].contains(&failed["status"].as_str().unwrap_or_default()),
        "the first attempt ended: {failed}"
    );
    assert!(failed["end-time"].as_i64() > Some(0), "{failed}");
    let (code, accs) = attempt(&cluster, &format!("{v}/subtasks/0/attempts/0/accumulators"));
    assert_eq!(code, 200, "{accs}");
    assert_eq!(accs["subtask"], 0);
    assert_eq!(accs["attempt"], 0);
    assert_eq!(accs["user-accumulators"], json!([]));
    let (_, current_accs) = attempt(&cluster, &format!("{v}/subtasks/0/attempts/1/accumulators"));
    assert_ne!(accs["id"], current_accs["id"], "each attempt has its own id");
    assert_eq!(attempt(&cluster, &format!("{v}/subtasks/0/attempts/9")).0, 404);
    assert_eq!(attempt(&cluster, &format!("{v}/subtasks/0/attempts/-1")).0, 404);
    assert_eq!(attempt(&cluster, &format!("{v}/subtasks/0/attempts/x")).0, 400);
    assert_eq!(attempt(&cluster, &format!("{v}/subtasks/2/attempts/0")).0, 404);

    // The job finishes: the result is complete and successful.
    assert_eq!(cluster.wait_terminal(&jid, Duration::from_secs(90)), "FINISHED");
    let (code, result) = get(&cluster.rest, &format!("/jobs/{jid}/execution-result"));
    assert_eq!(code, 200, "{result}");
    assert_eq!(result["status"], json!({"id": "COMPLETED"}));
    let r = &result["job-execution-result"];
    assert_eq!(r["id"], jid.as_str());
    assert_eq!(r["application-status"], "SUCCEEDED");
    assert_eq!(r["accumulator-results"], json!({}));
    assert!(r.get("failure-cause").is_none(), "{r}");
    let (start, end) = (r["start-time"].as_i64().unwrap(), r["end-time"].as_i64().unwrap());
    assert!(end >= start && start > 0, "{r}");
    assert_eq!(r["net-runtime"].as_i64(), Some(end - start), "{r}");
    let unknown = "00000000000000000000000000000001";
    assert_eq!(get(&cluster.rest, &format!("/jobs/{unknown}/execution-result")).0, 404);
}
