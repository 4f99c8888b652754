//! `weir top`: a terminal view of a cluster for operators without a browser — its jobs
//! and, per running job, each vertex's parallelism, records per second in and out,
//! busy and back-pressured time, and input watermark, refreshed in place.
//!
//! Everything comes from Flink's REST API (`/jobs/overview`, `/jobs/:jid`, and the
//! aggregated subtask metrics of each vertex), so `weir top` works against any Weir
//! JobManager. Fetching ([`fetch`]) and drawing ([`render`]) are separate; a frame is
//! plain text, drawn in place with two ANSI escapes unless `--once` asks for one frame.

use super::client::{get, Target};
use super::terminal::escape;
use anyhow::{Context, Result};
use clap::Args;
use serde_json::Value;
use std::time::Duration;

/// Options of `weir top`.
#[derive(Debug, Args, Clone)]
pub struct TopArgs {
    /// The JobManager.
    #[command(flatten)]
    pub target: Target,
    /// Milliseconds between refreshes.
    #[arg(long, default_value_t = 1000)]
    pub interval_ms: u64,
    /// Print one frame and exit.
    #[arg(long)]
    pub once: bool,
}

/// One vertex of a running job, as `weir top` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct VertexView {
    /// The vertex name (its chained operators).
    pub name: String,
    /// Subtasks.
    pub parallelism: u64,
    /// Its status (`RUNNING`, …).
    pub status: String,
    /// Records read per second, summed over subtasks.
    pub records_in_per_second: Option<f64>,
    /// Records written per second, summed over subtasks.
    pub records_out_per_second: Option<f64>,
    /// The busiest subtask's busy milliseconds per second.
    pub max_busy_ms_per_second: Option<f64>,
    /// The most back-pressured subtask's back-pressured milliseconds per second.
    pub max_backpressured_ms_per_second: Option<f64>,
    /// The least input watermark over subtasks (epoch ms).
    pub min_input_watermark: Option<i64>,
}

/// One job, with its vertices while it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct JobView {
    /// The job id.
    pub jid: String,
    /// The job name.
    pub name: String,
    /// Its state.
    pub state: String,
    /// Milliseconds since it started (to its end once terminal).
    pub duration_ms: i64,
    /// Its vertices (empty unless RUNNING).
    pub vertices: Vec<VertexView>,
}

/// The aggregate `agg` of metric `id` in a `…/subtasks/metrics` answer.
fn aggregate(answer: &Value, id: &str, agg: &str) -> Option<f64> {
    answer
        .as_array()?
        .iter()
        .find(|m| m["id"] == id)
        .and_then(|m| m[agg].as_f64())
}

fn get_json(address: &str, path: &str) -> Result<Value> {
    let body = get(address, path)?;
    serde_json::from_str(&body).with_context(|| format!("GET {path}: not JSON"))
}

fn vertex_view(address: &str, jid: &str, v: &Value) -> Result<VertexView> {
    let vid = v["id"].as_str().unwrap_or_default();
    let base = format!("/jobs/{jid}/vertices/{vid}/subtasks/metrics");
    let rates = get_json(
        address,
        &format!(
            "{base}?get=numRecordsInPerSecond,numRecordsOutPerSecond,busyTimeMsPerSecond,backPressuredTimeMsPerSecond&agg=sum,max"
        ),
    )?;
    // Asked alone: Flink answers nothing for a set with a metric no subtask has yet.
    let watermark = get_json(address, &format!("{base}?get=currentInputWatermark&agg=min"))?;
    Ok(VertexView {
        name: v["name"].as_str().unwrap_or_default().to_string(),
        parallelism: v["parallelism"].as_u64().unwrap_or(0),
        status: v["status"].as_str().unwrap_or_default().to_string(),
        records_in_per_second: aggregate(&rates, "numRecordsInPerSecond", "sum"),
        records_out_per_second: aggregate(&rates, "numRecordsOutPerSecond", "sum"),
        max_busy_ms_per_second: aggregate(&rates, "busyTimeMsPerSecond", "max"),
        max_backpressured_ms_per_second: aggregate(&rates, "backPressuredTimeMsPerSecond", "max"),
        // Long.MIN_VALUE: no watermark arrived yet.
        min_input_watermark: aggregate(&watermark, "currentInputWatermark", "min")
            .map(|w| w as i64)
            .filter(|w| *w != i64::MIN),
    })
}

/// The cluster's jobs now, newest first, with the vertices of running ones.
pub fn fetch(address: &str) -> Result<Vec<JobView>> {
    let overview = get_json(address, "/jobs/overview")?;
    let mut jobs = Vec::new();
    for j in overview["jobs"].as_array().cloned().unwrap_or_default() {
        let jid = j["jid"].as_str().unwrap_or_default().to_string();
        let state = j["state"].as_str().unwrap_or_default().to_string();
        let mut vertices = Vec::new();
        if state == "RUNNING" {
            let detail = get_json(address, &format!("/jobs/{jid}"))?;
            for v in detail["vertices"].as_array().cloned().unwrap_or_default() {
                vertices.push(vertex_view(address, &jid, &v)?);
            }
        }
        jobs.push(JobView {
            name: j["name"].as_str().unwrap_or_default().to_string(),
            duration_ms: j["duration"].as_i64().unwrap_or(0),
            jid,
            state,
            vertices,
        });
    }
    Ok(jobs)
}

fn rate(value: Option<f64>) -> String {
    match value {
        None => "-".into(),
        Some(v) if v >= 1e6 => format!("{:.1}M", v / 1e6),
        Some(v) if v >= 1e4 => format!("{:.1}K", v / 1e3),
        Some(v) => format!("{v:.0}"),
    }
}

fn share(ms_per_second: Option<f64>) -> String {
    ms_per_second.map_or("-".into(), |ms| format!("{:.0}%", ms / 10.0))
}

fn duration(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// A frame: a header line, then per job a line and, while it runs, its vertices with
/// their rates, busy and back-pressured shares and how far their input watermark lags
/// `now_ms`.
pub fn render(address: &str, jobs: &[JobView], now_ms: i64) -> String {
    let running = jobs.iter().filter(|j| j.state == "RUNNING").count();
    let mut out = format!("weir top  {address}  {} jobs, {running} running\n\n", jobs.len());
    out += &format!("{:<32}  {:<24}  {:<10}  {:>8}\n", "JOB ID", "NAME", "STATE", "DURATION");
    for job in jobs {
        out += &format!(
            "{:<32}  {:<24}  {:<10}  {:>8}\n",
            escape(&job.jid),
            escape(&job.name),
            escape(&job.state),
            duration(job.duration_ms)
        );
        if job.vertices.is_empty() {
            continue;
        }
        out += &format!(
            "    {:<40} {:>3}  {:>9}  {:>9}  {:>5}  {:>5}  {:>12}\n",
            "VERTEX", "P", "IN/s", "OUT/s", "BUSY", "BACKP", "WM LAG"
        );
        for v in &job.vertices {
            let lag = v
                .min_input_watermark
                .and_then(|w| now_ms.checked_sub(w))
                .map_or("-".into(), |lag| format!("{:.1}s", lag as f64 / 1000.0));
            let name: String = escape(&v.name).chars().take(40).collect();
            out += &format!(
                "    {:<40} {:>3}  {:>9}  {:>9}  {:>5}  {:>5}  {:>12}\n",
                name,
                v.parallelism,
                rate(v.records_in_per_second),
                rate(v.records_out_per_second),
                share(v.max_busy_ms_per_second),
                share(v.max_backpressured_ms_per_second),
                lag
            );
        }
    }
    out
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// `weir top`.
pub fn run(args: &TopArgs) -> Result<()> {
    let address = &args.target.jobmanager;
    loop {
        let frame = render(address, &fetch(address)?, now_ms());
        if args.once {
            print!("{frame}");
            return Ok(());
        }
        print!("\x1b[2J\x1b[H{frame}");
        std::io::Write::flush(&mut std::io::stdout())?;
        std::thread::sleep(Duration::from_millis(args.interval_ms.max(100)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn aggregates_are_read_by_metric_and_kind() {
        let answer = json!([{"id": "numRecordsInPerSecond", "sum": 1500.0, "max": 900.0}]);
        assert_eq!(aggregate(&answer, "numRecordsInPerSecond", "sum"), Some(1500.0));
        assert_eq!(aggregate(&answer, "numRecordsInPerSecond", "min"), None);
        assert_eq!(aggregate(&answer, "busyTimeMsPerSecond", "max"), None);
        assert_eq!(aggregate(&json!([]), "x", "sum"), None);
    }

    #[test]
    fn a_frame_shows_jobs_and_the_vertices_of_running_ones() {
        let jobs = vec![
            JobView {
                jid: "a".repeat(32),
                name: "keyed-sum".into(),
                state: "RUNNING".into(),
                duration_ms: 3_723_000,
                vertices: vec![VertexView {
                    name: "Sum -> Sink: Print".into(),
                    parallelism: 2,
                    status: "RUNNING".into(),
                    records_in_per_second: Some(25_000.0),
                    records_out_per_second: Some(0.0),
                    max_busy_ms_per_second: Some(412.0),
                    max_backpressured_ms_per_second: None,
                    min_input_watermark: Some(10_000),
                }],
            },
            JobView {
                jid: "b".repeat(32),
                name: "wordcount".into(),
                state: "FINISHED".into(),
                duration_ms: 900,
                vertices: vec![],
            },
        ];
        let frame = render("127.0.0.1:8081", &jobs, 15_500);
        let lines: Vec<&str> = frame.lines().collect();
        assert_eq!(lines[0], "weir top  127.0.0.1:8081  2 jobs, 1 running");
        assert!(lines[3].contains("keyed-sum") && lines[3].contains("RUNNING") && lines[3].ends_with("01:02:03"));
        let vertex = lines[5];
        assert!(vertex.contains("Sum -> Sink: Print"), "{vertex}");
        let columns: Vec<&str> = vertex.split_whitespace().rev().take(6).collect();
        assert_eq!(columns, vec!["5.5s", "-", "41%", "0", "25.0K", "2"]);
        assert!(lines[6].contains("wordcount") && lines[6].contains("FINISHED"));
        assert_eq!(lines.len(), 7);
    }

    #[test]
    fn a_job_name_with_escape_sequences_and_newlines_stays_on_its_line() {
        let jobs = vec![JobView {
            jid: "c".repeat(32),
            name: "evil\u{1b}[2J\nfake line".into(),
            state: "RUNNING".into(),
            duration_ms: 0,
            vertices: vec![],
        }];
        let frame = render("127.0.0.1:8081", &jobs, 0);
        assert!(!frame.contains('\u{1b}'), "{frame:?}");
        assert_eq!(frame.lines().count(), 4, "{frame:?}");
        assert!(frame.contains("evil\\e[2J\\nfake line"), "{frame:?}");
    }
}
