//! `weir savepoint` and `weir stop`: trigger a savepoint (and stop the job with it)
//! through the REST API, poll the operation, print Flink's lines.

use super::client::{get, post, Target};
use anyhow::{anyhow, bail, Result};
use clap::Args;
use std::time::{Duration, Instant};

/// How long the commands wait for the savepoint.
const SAVEPOINT_WAIT: Duration = Duration::from_secs(600);

/// Options of `weir savepoint`.
#[derive(Debug, Args, Clone)]
pub struct SavepointArgs {
    /// The JobManager.
    #[command(flatten)]
    pub target: Target,
    /// The job id (32 hex chars).
    pub jid: String,
    /// Directory for the savepoint; `execution.checkpointing.savepoint-dir` when absent.
    pub target_directory: Option<String>,
}

/// Options of `weir stop`.
#[derive(Debug, Args, Clone)]
pub struct StopArgs {
    /// The JobManager.
    #[command(flatten)]
    pub target: Target,
    /// Emit the MAX watermark before stopping, so event-time windows and timers fire.
    #[arg(short = 'd', long = "drain")]
    pub drain: bool,
    /// Directory for the savepoint; `execution.checkpointing.savepoint-dir` when absent.
    #[arg(short = 'p', long = "savepointPath")]
    pub savepoint_path: Option<String>,
    /// The job id (32 hex chars).
    pub jid: String,
}

/// `weir savepoint`.
pub fn savepoint(args: &SavepointArgs) -> Result<()> {
    println!("Triggering savepoint for job {}.", args.jid);
    let mut body = serde_json::json!({ "cancel-job": false });
    if let Some(dir) = &args.target_directory {
        body["target-directory"] = dir.clone().into();
    }
    let trigger = post(
        &args.target.jobmanager,
        &format!("/jobs/{}/savepoints", args.jid),
        &body.to_string(),
    )?;
    println!("Waiting for response...");
    let path = wait_for(&args.target.jobmanager, &args.jid, &trigger)?;
    println!("Savepoint completed. Path: {path}");
    println!("You can resume your program from this savepoint with the run command.");
    Ok(())
}

/// `weir stop`: prints the savepoint path once the savepoint is written and the job
/// has finished.
pub fn stop(args: &StopArgs) -> Result<()> {
    println!("Suspending job \"{}\" with a CANONICAL savepoint.", args.jid);
    let mut body = serde_json::json!({ "drain": args.drain });
    if let Some(dir) = &args.savepoint_path {
        body["targetDirectory"] = dir.clone().into();
    }
    let trigger = post(
        &args.target.jobmanager,
        &format!("/jobs/{}/stop", args.jid),
        &body.to_string(),
    )?;
    let path = wait_for(&args.target.jobmanager, &args.jid, &trigger)?;
    let started = Instant::now();
    loop {
        let detail: serde_json::Value =
            serde_json::from_str(&get(&args.target.jobmanager, &format!("/jobs/{}", args.jid))?)?;
        match detail["state"].as_str().unwrap_or_default() {
            "FINISHED" => break,
            "FAILED" | "CANCELED" => bail!("job {} ended {} after the savepoint {path}", args.jid, detail["state"]),
            _ if started.elapsed() > SAVEPOINT_WAIT => {
                bail!("job {} did not finish after its savepoint {path}", args.jid)
            }
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    println!("Savepoint completed. Path: {path}");
    Ok(())
}

/// Polls the operation of the trigger answer `trigger` until it completes; its path.
fn wait_for(jobmanager: &str, jid: &str, trigger: &str) -> Result<String> {
    let v: serde_json::Value = serde_json::from_str(trigger)?;
    let request_id = v["request-id"]
        .as_str()
        .ok_or_else(|| anyhow!("unexpected response: {trigger}"))?;
    let started = Instant::now();
    loop {
        let status: serde_json::Value =
            serde_json::from_str(&get(jobmanager, &format!("/jobs/{jid}/savepoints/{request_id}"))?)?;
        if status["status"]["id"] == "COMPLETED" {
            let op = &status["operation"];
            if let Some(location) = op["location"].as_str() {
                return Ok(location.to_string());
            }
            let cause = op["failure-cause"]["stack-trace"].as_str().unwrap_or("unknown cause");
            bail!("the savepoint of job {jid} failed: {cause}");
        }
        if started.elapsed() > SAVEPOINT_WAIT {
            bail!(
                "the savepoint of job {jid} did not complete within {} s",
                SAVEPOINT_WAIT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
