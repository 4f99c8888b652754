//! `weir top` against a real cluster: the running job and each of its vertices, with
//! their parallelism and rates.

mod common;

use common::{get, wait_until, weir_cli, Cluster};
use serde_json::json;
use std::time::Duration;

#[test]
fn top_shows_the_running_job_and_its_vertices_with_rates() {
    let cluster = Cluster::start(1, 2, &[]);
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 2,
        "args": {"records": "100000000", "rate_per_sec": "4000"},
    }));
    cluster.wait_running(&jid);
    let (_, job) = get(&cluster.rest, &format!("/jobs/{jid}"));
    let names: Vec<String> = job["vertices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 2, "{job}");
    let frame = || {
        let (code, out, err) = weir_cli(&["top", "-m", &cluster.rest, "--once"]);
        assert_eq!(code, 0, "{err}");
        out
    };
    // The columns after a vertex's name: P, IN/s, OUT/s, BUSY, BACKP, WM LAG.
    let columns = |frame: &str, name: &str| -> Vec<String> {
        let line = frame
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no line for vertex {name}:\n{frame}"));
        line[4 + 40..].split_whitespace().map(str::to_string).collect()
    };
    // Rates need two heartbeats of counters.
    let mut last = String::new();
    wait_until(Duration::from_secs(30), || {
        last = frame();
        columns(&last, &names[0])[2] != "-" && columns(&last, &names[1])[1] != "-"
    });
    let lines: Vec<&str> = last.lines().collect();
    assert_eq!(lines[0], format!("weir top  {}  1 jobs, 1 running", cluster.rest));
    let job_line = lines.iter().find(|l| l.starts_with(&jid)).expect("the job's line");
    assert!(
        job_line.contains("keyed-sum") && job_line.contains("RUNNING"),
        "{job_line}"
    );
    for name in &names {
        assert_eq!(columns(&last, name)[0], "2", "parallelism of {name}:\n{last}");
    }
    // The source writes records and the keyed Sum reads them, thousands per second.
    assert_ne!(columns(&last, &names[0])[2], "0", "{last}");
    assert_ne!(columns(&last, &names[1])[1], "0", "{last}");

    let (code, _, err) = weir_cli(&["top", "-m", "127.0.0.1:1", "--once"]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot reach the JobManager at 127.0.0.1:1"), "{err}");
}
