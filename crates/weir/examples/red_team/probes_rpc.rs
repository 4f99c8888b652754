//! Forged RPCs from a peer without certificates: absurd registrations, spoofed
//! heartbeats, job-scoped calls without the JobMaster's fencing token, checkpoint
//! acknowledgements naming files elsewhere; and a plaintext peer against a cluster
//! with the default internal TLS.

use crate::cluster::{poll, Throwaway};
use crate::forger::{self, binary_identity as identity, registration};
use anyhow::{anyhow, bail, Result};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use weir_rpc::job_master_gateway_client::JobMasterGatewayClient;
use weir_rpc::resource_manager_client::ResourceManagerClient;
use weir_rpc::task_executor_gateway_client::TaskExecutorGatewayClient;

/// Runs `f` on a fresh single-threaded runtime.
fn block_on<T>(f: impl std::future::Future<Output = T>) -> Result<T> {
    forger::block_on(f).ok_or_else(|| anyhow!("no runtime"))
}

/// A plaintext gRPC channel to `address`.
async fn channel(address: &str) -> Result<tonic::transport::Channel> {
    forger::channel(address).await.map_err(|e| anyhow!(e))
}

fn register(rpc: &str, r: weir_rpc::RegisterTaskExecutorRequest) -> Result<weir_rpc::RegisterTaskExecutorResponse> {
    block_on(async {
        Ok::<_, anyhow::Error>(
            ResourceManagerClient::new(channel(rpc).await?)
                .register_task_executor(r)
                .await?
                .into_inner(),
        )
    })?
}

/// Finding 1: `RegisterTaskExecutor` with 4,294,967,295 slots.
pub fn four_billion_slots(c: &Throwaway) -> Result<String> {
    let forged = registration("f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0", "127.0.0.1:9", u32::MAX, identity());
    let answer = register(&c.rpc, forged)?;
    if answer.accepted {
        bail!("the registration was accepted");
    }
    if !answer
        .rejection_reason
        .contains("resourcemanager.taskmanager.max-slots")
    {
        bail!("the refusal does not name the key: {}", answer.rejection_reason);
    }
    serving(c)?;
    Ok(format!("refused: {}", answer.rejection_reason))
}

/// Finding 1: a refusal for another binary must not echo the JobManager's fingerprint.
pub fn refusal_hides_fingerprint(c: &Throwaway) -> Result<String> {
    let answer = register(
        &c.rpc,
        registration("f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1", "127.0.0.1:9", 1, "guess".into()),
    )?;
    let own = identity();
    let fingerprint = own.rsplit("fingerprint ").next().unwrap_or(&own).trim_end_matches(')');
    if answer.accepted || answer.rejection_reason.contains(fingerprint) {
        bail!("accepted or echoed the fingerprint: {}", answer.rejection_reason);
    }
    Ok(format!("refused without the fingerprint: {}", answer.rejection_reason))
}

/// Finding 6: a heartbeat with a real TaskManager's resource id but no instance id.
pub fn spoofed_heartbeat(c: &Throwaway) -> Result<String> {
    let tms = c.taskmanagers()?;
    let id = tms
        .first()
        .and_then(|t| t["id"].as_str())
        .ok_or_else(|| anyhow!("no TaskManager registered"))?
        .to_string();
    let spoofed = weir_rpc::TaskExecutorHeartbeat {
        resource_id: id.clone(),
        process: Some(weir_rpc::ProcessMetrics {
            cpu_load: Some(f64::NAN),
            rss_bytes: Some(i64::MAX as u64),
            ..Default::default()
        }),
        logs: vec![weir_rpc::LogFile {
            name: "../../etc/passwd".into(),
            size: 1,
            mtime_ms: 1,
        }],
        instance_id: "00000000000000000000000000000000".into(),
        ..Default::default()
    };
    let known = block_on(async {
        Ok::<_, anyhow::Error>(
            ResourceManagerClient::new(channel(&c.rpc).await?)
                .heartbeat(spoofed)
                .await?
                .into_inner()
                .known,
        )
    })??;
    if known {
        bail!("the spoofed heartbeat was believed");
    }
    let (_, logs) = c.get(&format!("/taskmanagers/{id}/logs"))?;
    let (_, metrics) = c.get(&format!("/taskmanagers/{id}/metrics?get=Status.JVM.CPU.Load"))?;
    let shown = format!("{logs}{metrics}");
    if shown.contains("passwd") || shown.contains("NaN") {
        bail!("spoofed values reached REST: {shown}");
    }
    Ok("not believed (known = false); REST shows the real TaskManager's values".into())
}

/// A throttled keyed-sum of parallelism 2 (about five seconds).
pub fn slow_job(out: &Path) -> Value {
    json!({
        "program": "keyed-sum",
        "parallelism": 2,
        "args": { "keys": "40", "records": "20000", "rate_per_sec": "4000", "seed": "7",
                  "output": out.display().to_string() },
    })
}

/// The attempt id of subtask 0 of the job's first vertex.
fn first_attempt_id(c: &Throwaway, jid: &str) -> Result<String> {
    let (_, job) = c.get(&format!("/jobs/{jid}"))?;
    let vertex = job["vertices"][0]["id"].as_str().ok_or_else(|| anyhow!("no vertex"))?;
    let (_, accs) = c.get(&format!(
        "/jobs/{jid}/vertices/{vertex}/subtasks/0/attempts/0/accumulators"
    ))?;
    accs["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| anyhow!("no attempt id: {accs}"))
}

/// Finding 5: `ReleaseJob` and `CancelTask` without the JobMaster's fencing token.
pub fn forged_release_job(c: &Throwaway, work: &Path) -> Result<String> {
    let out = work.join("release-job-out");
    let jid = c.submit(&slow_job(&out))?;
    c.wait_state(&jid, Duration::from_secs(60), |s| s == "RUNNING")?;
    let tm = c
        .taskmanagers()?
        .iter()
        .find_map(|t| t["path"].as_str().map(str::to_string))
        .ok_or_else(|| anyhow!("no TaskManager address"))?;
    let attempt = first_attempt_id(c, &jid)?;
    let (released, cancelled) = block_on(async {
        let mut client = TaskExecutorGatewayClient::new(channel(&tm).await?);
        let released = client.release_job(forger::release_job(&jid)).await;
        let cancelled = client.cancel_task(forger::cancel_task(&jid, &attempt)).await;
        Ok::<_, anyhow::Error>((released.map(drop), cancelled.map(drop)))
    })??;
    for (what, answer) in [("ReleaseJob", released), ("CancelTask", cancelled)] {
        match answer {
            Err(status) if status.code() == tonic::Code::PermissionDenied => {}
            other => bail!("a forged {what} was answered {other:?}"),
        }
    }
    let state = c.wait_terminal(&jid)?;
    if state != "FINISHED" {
        bail!("the job ended {state}");
    }
    Ok("both refused (PERMISSION_DENIED); the job FINISHED".into())
}

/// Finding 3 and its kin: a task failure and a checkpoint acknowledgement naming a file
/// outside the checkpoint, forged for a running task with the ids REST lists but
/// without the JobMaster's fencing token.
pub fn forged_reports(c: &Throwaway, work: &Path) -> Result<String> {
    let secret_dir = work.join("some").join("dir");
    std::fs::create_dir_all(&secret_dir)?;
    let secret = secret_dir.join("secret.conf");
    std::fs::write(&secret, b"password=1")?;
    let jid = c.submit(&slow_job(&work.join("ack-out")))?;
    c.wait_state(&jid, Duration::from_secs(60), |s| s == "RUNNING")?;
    poll(Duration::from_secs(60), || {
        Ok((completed_checkpoints(c, &jid)? >= 2).then_some(()))
    })?
    .ok_or_else(|| anyhow!("job {jid} completed no two checkpoints"))?;
    let attempt = first_attempt_id(c, &jid)?;
    let failure = forger::failure_report(&jid, &attempt);
    let ack = forger::file_acknowledgement(&jid, &attempt, &secret);
    let (failed, acknowledged) = block_on(async {
        let mut client = JobMasterGatewayClient::new(channel(&c.rpc).await?);
        let failed = client.update_task_execution_state(failure).await.map(drop);
        let acknowledged = client.acknowledge_checkpoint(ack).await.map(drop);
        Ok::<_, anyhow::Error>((failed, acknowledged))
    })??;
    for (what, answer) in [("task failure", failed), ("acknowledgement", acknowledged)] {
        match answer {
            Err(s) if s.code() == tonic::Code::PermissionDenied => {}
            Err(s) => bail!("the forged {what} was refused as {:?}: {}", s.code(), s.message()),
            Ok(()) => bail!("the forged {what} was accepted"),
        }
    }
    if std::fs::read(&secret).ok().as_deref() != Some(b"password=1".as_slice()) {
        bail!("{} was moved or deleted", secret.display());
    }
    let state = c.wait_terminal(&jid)?;
    if state != "FINISHED" {
        bail!("the job ended {state}");
    }
    let (_, exceptions) = c.get(&format!("/jobs/{jid}/exceptions"))?;
    if exceptions["exceptionHistory"]["entries"] != json!([]) {
        bail!("the job restarted: {}", first_line(&exceptions.to_string()));
    }
    Ok("both refused (PERMISSION_DENIED); the file untouched; the job FINISHED without a restart".into())
}

fn completed_checkpoints(c: &Throwaway, jid: &str) -> Result<u64> {
    Ok(c.get(&format!("/jobs/{jid}/checkpoints"))?.1["counts"]["completed"]
        .as_u64()
        .unwrap_or(0))
}

/// Default `start-cluster` (internal mutual TLS on): a plaintext forger cannot speak
/// RPC at all.
pub fn plaintext_peer_against_default_tls(c: &Throwaway) -> Result<String> {
    let forged = registration("f3f3f3f3f3f3f3f3f3f3f3f3f3f3f3f3", "127.0.0.1:9", 1, identity());
    match register(&c.rpc, forged) {
        Ok(answer) => bail!("a plaintext registration was answered: accepted={}", answer.accepted),
        Err(e) => {
            serving(c)?;
            Ok(format!("refused at the transport: {}", first_line(&format!("{e:#}"))))
        }
    }
}

/// Fails unless the REST API still answers `/overview`.
pub fn serving(c: &Throwaway) -> Result<()> {
    let (code, _) = c.get("/overview")?;
    if code != 200 {
        bail!("/overview answered {code}");
    }
    Ok(())
}

/// The first line of `text`, at most 160 characters.
pub fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().chars().take(160).collect()
}
