//! Hostile submissions through the REST API and the CLI: huge parallelism, unbounded
//! plans, terminal escapes in names, files outside the allowed paths; and leftovers of
//! `weir local` and of a failed `weir start-cluster`.

use crate::cluster::{peak_rss, run_weir, Throwaway};
use crate::probes_rpc::first_line;
use anyhow::{anyhow, bail, Result};
use serde_json::json;
use std::path::Path;

/// The JobManager's peak resident memory a refused submission may leave.
const REFUSED_SUBMISSION_RSS: u64 = 200 << 20;

/// Finding 2: `POST /jobs` of parallelism 32768.
pub fn parallelism_32768(c: &Throwaway) -> Result<String> {
    let body = json!({ "program": "keyed-sum", "parallelism": 32768 });
    let (code, answer) = c.send("POST", "/jobs", Some(&body))?;
    if !(400..500).contains(&code) || !answer.to_string().contains("jobmanager.submission.max-subtasks") {
        bail!("answered {code}: {answer}");
    }
    let rss = peak_rss(c.pid("jobmanager")?)?;
    if rss > REFUSED_SUBMISSION_RSS {
        bail!("the JobManager's peak RSS is {} MiB", rss >> 20);
    }
    Ok(format!("{code}, naming the key; JobManager peak RSS {} MiB", rss >> 20))
}

/// A name that clears the screen, retitles the terminal and forges a second job line.
const HOSTILE_NAME: &str =
    "sum\u{1b}[2J\u{1b}]0;owned\u{7}\n01.01.2020 00:00:00 : ffffffffffffffffffffffffffffffff : forged (RUNNING)\u{0}\u{9b}";

/// Finding 7: `weir list` of a job named with escape sequences and a newline.
pub fn terminal_injection(c: &Throwaway) -> Result<String> {
    let jid = c.submit(&json!({
        "program": "keyed-sum",
        "parallelism": 1,
        "job-name": HOSTILE_NAME,
        "args": { "keys": "3", "records": "100" },
    }))?;
    c.wait_terminal(&jid)?;
    let listed = run_weir(c.binary(), &["list", "-m", &c.rest])?;
    if listed.code != 0 {
        bail!("weir list failed: {}", listed.stderr);
    }
    let line = listed
        .stdout
        .lines()
        .find(|l| l.contains(&jid))
        .ok_or_else(|| anyhow!("job {jid} not listed"))?;
    let forged_line = listed
        .stdout
        .lines()
        .any(|l| l.starts_with("01.01.2020 00:00:00 : ffff"));
    if forged_line || listed.stdout.chars().any(|ch| ch != '\n' && ch.is_control()) {
        bail!("raw control characters in {:?}", listed.stdout);
    }
    Ok(format!("listed escaped: {}", first_line(line)))
}

/// Five rows with a rowtime and a print sink.
const TABLES: &str = "CREATE TABLE orders (seq BIGINT, \
     ts AS CAST(TO_TIMESTAMP_LTZ(1700000000000 + seq * 10, 3) AS TIMESTAMP(3)), \
     WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', \
     'number-of-rows' = '5', 'fields.seq.kind' = 'sequence', 'fields.seq.start' = '1', \
     'fields.seq.end' = '5'); \
     CREATE TABLE out (ws TIMESTAMP(3), cnt BIGINT) WITH ('connector' = 'print');";

/// Submits a SQL job; refused (4xx) or failed, naming `key`.
fn refused_naming(c: &Throwaway, statement: &str, key: &str) -> Result<String> {
    let body = json!({ "program": "sql", "args": { "catalog": TABLES, "statement": statement } });
    let (code, answer) = c.send("POST", "/jobs", Some(&body))?;
    if (400..500).contains(&code) && answer.to_string().contains(key) {
        return Ok(format!("{code}, naming {key}"));
    }
    let Some(jid) = answer["jobid"].as_str() else {
        bail!("answered {code}: {}", first_line(&answer.to_string()));
    };
    let state = c.wait_terminal(jid)?;
    let (_, exceptions) = c.get(&format!("/jobs/{jid}/exceptions"))?;
    if state == "FAILED" && exceptions.to_string().contains(key) {
        return Ok(format!("the job FAILED naming {key}"));
    }
    bail!("the job ended {state}: {}", first_line(&exceptions.to_string()))
}

/// Finding 9: a HOP window of a 1 ms slide over 100 days.
pub fn hop_window(c: &Throwaway) -> Result<String> {
    let statement = "INSERT INTO out SELECT window_start, COUNT(*) FROM TABLE(HOP(TABLE orders, \
        DESCRIPTOR(ts), INTERVAL '0.001' SECOND, INTERVAL '100' DAY)) GROUP BY window_start, window_end";
    refused_naming(c, statement, "pipeline.window.max-windows-per-record")
}

/// Finding 9: an `IN` list of 200,000 literals (1.3 MB of SQL).
pub fn in_list(c: &Throwaway) -> Result<String> {
    let list: Vec<String> = (0..200_000).map(|i| i.to_string()).collect();
    let statement = format!(
        "INSERT INTO out SELECT ts, seq FROM orders WHERE seq IN ({})",
        list.join(", ")
    );
    refused_naming(c, &statement, "table.sql.max-statement-size")
}

/// Finding 11: a job reading a file outside `security.job.allowed-paths`.
pub fn outside_allowed_paths(c: &Throwaway, work: &Path) -> Result<String> {
    let body = json!({
        "program": "orders-per-minute",
        "parallelism": 1,
        "args": { "input": "/etc/passwd", "output": work.join("opm").display().to_string() },
    });
    let (code, answer) = c.send("POST", "/jobs", Some(&body))?;
    // The JobManager lists the input's splits when it accepts the job, so the refusal
    // comes with the submission; a program that opens its files only in its tasks
    // fails the job instead.
    let (how, text) = if (400..500).contains(&code) {
        (format!("refused at submission ({code})"), answer.to_string())
    } else {
        let jid = answer["jobid"]
            .as_str()
            .ok_or_else(|| anyhow!("submission answered {code}: {answer}"))?
            .to_string();
        let state = c.wait_terminal(&jid)?;
        let (_, exceptions) = c.get(&format!("/jobs/{jid}/exceptions"))?;
        if state != "FAILED" {
            bail!("the job ended {state}");
        }
        ("the job FAILED".to_string(), exceptions.to_string())
    };
    if !text.contains("security.job.allowed-paths") {
        bail!("{how} without naming the key: {}", first_line(&text));
    }
    if text.contains("root:") {
        bail!("the file's contents were quoted back");
    }
    Ok(format!("{how} naming the key, without quoting the file"))
}

/// Finding 8: `weir local` with checkpointing leaves no retained checkpoint behind.
pub fn local_checkpoint_leftovers(weir: &Path, work: &Path) -> Result<String> {
    let dir = work.join("local-checkpoints");
    let interval = "execution.checkpointing.interval=20 ms".to_string();
    let target = format!("execution.checkpointing.dir={}", dir.display());
    let ran = run_weir(
        weir,
        &[
            "local",
            "keyed-sum",
            "--arg",
            "keys=50",
            "--arg",
            "records=300000",
            "-D",
            &interval,
            "-D",
            &target,
        ],
    )?;
    if ran.code != 0 {
        bail!("weir local failed: {}", first_line(&ran.stderr));
    }
    let mut left = Vec::new();
    if dir.exists() {
        for job in std::fs::read_dir(&dir)? {
            for entry in std::fs::read_dir(job?.path())? {
                let name = entry?.file_name().to_string_lossy().into_owned();
                if name.starts_with("chk-") {
                    left.push(name);
                }
            }
        }
    }
    if !left.is_empty() {
        bail!("left behind: {left:?}");
    }
    Ok("no chk-N left (retention NO_EXTERNALIZED_CHECKPOINTS)".into())
}

/// Finding 8: a `weir start-cluster` whose TaskManager cannot start stops the
/// JobManager it started.
pub fn failed_start_leaves_nothing(weir: &Path, work: &Path) -> Result<String> {
    let taken = std::net::TcpListener::bind("127.0.0.1:0")?;
    let port = taken.local_addr()?.port();
    let dir = work.join("failed-cluster");
    let options = [
        format!("cluster.dir={}", dir.display()),
        "rest.port=0".to_string(),
        "jobmanager.rpc.port=0".to_string(),
        format!("taskmanager.data.port={port}"),
    ];
    let mut args = vec!["start-cluster"];
    for o in &options {
        args.extend(["-D", o.as_str()]);
    }
    let started = run_weir(weir, &args)?;
    if started.code == 0 {
        bail!("start-cluster succeeded with its data port taken");
    }
    let pids: Vec<u32> = started
        .stdout
        .lines()
        .filter_map(|l| l.split("pid ").nth(1))
        .filter_map(|p| p.trim_end_matches(").").parse().ok())
        .collect();
    if pids.is_empty() {
        bail!("start-cluster printed no pids: {}", started.stdout);
    }
    let alive: Vec<u32> = pids.iter().copied().filter(|p| running(*p)).collect();
    if !alive.is_empty() {
        bail!("still running after the failed start: {alive:?}");
    }
    Ok(format!(
        "failed ({}), and stopped pids {pids:?}",
        first_line(&started.stderr)
    ))
}

/// Whether process `pid` exists and is not a zombie.
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .map(|rest| !rest.trim_start().starts_with('Z'))
                .unwrap_or(false)
        })
        .unwrap_or(false)
}

/// A 64 MiB request body, far beyond any submission.
const HUGE_BODY: usize = 64 << 20;

/// `POST /jobs` with a 64 MiB body: answered 413 without the JobManager holding it.
/// Written by hand, since the server answers and closes before the body is all sent
/// (an HTTP client reports the broken pipe instead of the answer).
pub fn huge_body(c: &Throwaway) -> Result<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(&c.rest)?;
    stream.set_read_timeout(Some(std::time::Duration::from_secs(60)))?;
    write!(
        stream,
        "POST /jobs HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {HUGE_BODY}\r\n\r\n{{\"program\":\"",
        c.rest
    )?;
    let chunk = vec![b'a'; 1 << 20];
    let mut sent = 0;
    while sent < HUGE_BODY {
        match stream.write(&chunk[..chunk.len().min(HUGE_BODY - sent)]) {
            Ok(n) => sent += n,
            // Refused and closed: the answer is already waiting.
            Err(_) => break,
        }
    }
    let mut answer = Vec::new();
    // The server may reset the connection once it answered; what arrived counts.
    if let Err(e) = stream.read_to_end(&mut answer) {
        if answer.is_empty() {
            bail!("no answer after {} MiB sent: {e}", sent >> 20);
        }
    }
    let status = String::from_utf8_lossy(&answer);
    let status = status.lines().next().unwrap_or_default().to_string();
    if !status.contains(" 413 ") {
        bail!("answered {status:?} after {} MiB sent", sent >> 20);
    }
    let rss = peak_rss(c.pid("jobmanager")?)?;
    if rss > REFUSED_SUBMISSION_RSS {
        bail!("the JobManager's peak RSS is {} MiB", rss >> 20);
    }
    Ok(format!(
        "413 after {} MiB sent; JobManager peak RSS {} MiB",
        sent >> 20,
        rss >> 20
    ))
}
