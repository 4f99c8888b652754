//! `weir run`, `weir list`, `weir cancel`: clients of the Dispatcher's REST API.
//! (`weir savepoint` and `weir stop` are in `savepoint.rs`.)
//!
//! Every REST call of the process goes through one agent, plain HTTP unless
//! [`configure`] found `security.ssl.rest.enabled` (HTTPS trusting
//! `security.ssl.rest.trust-cert`, presenting `security.ssl.rest.cert` when
//! `security.ssl.rest.authentication-enabled`).

use super::submission::submit_request;
use super::terminal::{escape, flink_date};
use super::JobArgs;
use anyhow::{anyhow, bail, Result};
use clap::Args;
use std::sync::OnceLock;
use std::time::Duration;

/// Where the JobManager's REST endpoint is, and how to reach it.
#[derive(Debug, Args, Clone)]
pub struct Target {
    /// host:port of the JobManager's REST endpoint.
    #[arg(short = 'm', long = "jobmanager", default_value = "127.0.0.1:8081")]
    pub jobmanager: String,
    /// A configuration option `key=value` (over `config.yaml` and `$WEIR_PROPERTIES`):
    /// `security.ssl.rest.*` to connect with HTTPS; for `weir run` the others are the
    /// job's configuration (restart strategy, checkpointing, …). Repeatable.
    #[arg(short = 'D', value_name = "KEY=VALUE")]
    pub dynamic: Vec<String>,
}

/// The REST client of this process.
struct RestClient {
    agent: ureq::Agent,
    scheme: &'static str,
}

static CLIENT: OnceLock<RestClient> = OnceLock::new();

/// Sets up this process's REST client from the configuration (`config.yaml`,
/// `$WEIR_PROPERTIES`, then `dynamic`): HTTPS when `security.ssl.rest.enabled`. The
/// first call decides; without one, calls are plain HTTP.
pub fn configure(dynamic: &[String]) -> Result<()> {
    let config = super::settings::ConfigArgs {
        conf_dir: None,
        dynamic: dynamic.to_vec(),
    }
    .load()?;
    configure_with(&config)
}

/// [`configure`] from a loaded configuration (`weir start-cluster` checks the cluster
/// it started with its own configuration).
pub fn configure_with(config: &weir_config::Configuration) -> Result<()> {
    let client = match weir_security::rest_client_tls(config)? {
        Some(tls) => RestClient {
            agent: ureq::AgentBuilder::new().tls_config(tls).build(),
            scheme: "https",
        },
        None => plain_client(),
    };
    // A client set up before (by an earlier call) stays.
    drop(CLIENT.set(client));
    Ok(())
}

/// `https` when this process's REST client uses TLS, else `http`.
pub fn scheme() -> &'static str {
    CLIENT.get_or_init(plain_client).scheme
}

fn plain_client() -> RestClient {
    RestClient {
        agent: ureq::AgentBuilder::new().build(),
        scheme: "http",
    }
}

fn call(method: &str, address: &str, path: &str, body: Option<&str>) -> Result<(u16, String)> {
    let client = CLIENT.get_or_init(plain_client);
    let url = format!("{}://{address}{path}", client.scheme);
    let request = client.agent.request(method, &url).timeout(Duration::from_secs(30));
    let result = match body {
        Some(b) => request.set("Content-Type", "application/json").send_string(b),
        None => request.call(),
    };
    match result {
        Ok(r) => {
            let status = r.status();
            Ok((status, r.into_string().unwrap_or_default()))
        }
        Err(ureq::Error::Status(code, r)) => Ok((code, r.into_string().unwrap_or_default())),
        Err(ureq::Error::Transport(t)) => Err(anyhow!("cannot reach the JobManager at {address}: {t}")),
    }
}

/// The errors of a REST answer, escaped for the terminal (they came from a peer).
fn error_of(body: &str) -> String {
    let errors = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v["errors"]
                .as_array()
                .map(|e| e.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join("; "))
        })
        .unwrap_or_else(|| body.to_string());
    escape(&errors).into_owned()
}

/// `method` on `path`; the response body on 2xx, else the answer's errors.
fn call_ok(method: &str, address: &str, path: &str, body: Option<&str>) -> Result<String> {
    let (code, resp) = call(method, address, path, body)?;
    if (200..300).contains(&code) {
        Ok(resp)
    } else {
        bail!("{}", error_of(&resp))
    }
}

/// GET `path`; the body on 2xx.
pub fn get(address: &str, path: &str) -> Result<String> {
    call_ok("GET", address, path, None)
}

/// POST `body` to `path`; the response body on 2xx.
pub fn post(address: &str, path: &str, body: &str) -> Result<String> {
    call_ok("POST", address, path, Some(body))
}

/// PATCH `path`; the response body on 2xx.
pub fn patch(address: &str, path: &str) -> Result<String> {
    call_ok("PATCH", address, path, None)
}

/// Options of `weir run`.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// The JobManager.
    #[command(flatten)]
    pub target: Target,
    /// Detached: return once the job is submitted.
    #[arg(short = 'd', long = "detached")]
    pub detached: bool,
    /// Start from this savepoint or retained checkpoint (directory or `_metadata`).
    #[arg(short = 's', long = "fromSavepoint")]
    pub from_savepoint: Option<String>,
    /// Start even when savepoint state belongs to no operator of the program.
    #[arg(short = 'n', long = "allowNonRestoredState")]
    pub allow_non_restored_state: bool,
    /// The program and its settings.
    #[command(flatten)]
    pub job: JobArgs,
}

/// `weir run`: submits a job; without `-d` waits for it to end and prints its final state.
pub fn run(args: &RunArgs) -> Result<()> {
    let mut request = submit_request(&args.job)?;
    for entry in &args.target.dynamic {
        let (key, value) = entry
            .split_once('=')
            .filter(|(k, _)| !k.trim().is_empty())
            .ok_or_else(|| anyhow!("invalid -D '{entry}': expected key=value"))?;
        // The client's own settings, not the job's.
        if key.trim().starts_with("security.ssl.") {
            continue;
        }
        request.config.insert(key.trim().to_string(), value.trim().to_string());
    }
    request.savepoint_path = args.from_savepoint.clone();
    request.allow_non_restored_state = args.allow_non_restored_state;
    let body = serde_json::to_string(&request)?;
    let (code, resp) = call("POST", &args.target.jobmanager, "/jobs", Some(&body))?;
    if !(200..300).contains(&code) {
        bail!("submission refused: {}", error_of(&resp));
    }
    let v: serde_json::Value = serde_json::from_str(&resp)?;
    let jid = v["jobid"]
        .as_str()
        .ok_or_else(|| anyhow!("unexpected response: {resp}"))?
        .to_string();
    println!("Job has been submitted with JobID {}", escape(&jid));
    if args.detached {
        return Ok(());
    }
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let detail = get(&args.target.jobmanager, &format!("/jobs/{jid}"))?;
        let v: serde_json::Value = serde_json::from_str(&detail)?;
        let state = v["state"].as_str().unwrap_or("").to_string();
        if matches!(state.as_str(), "FINISHED" | "FAILED" | "CANCELED") {
            let duration = v["duration"].as_i64().unwrap_or(0);
            println!(
                "Job {} reached state {} after {duration} ms",
                escape(&jid),
                escape(&state)
            );
            if state == "FINISHED" {
                return Ok(());
            }
            let exc = get(&args.target.jobmanager, &format!("/jobs/{jid}/exceptions")).unwrap_or_default();
            let e: serde_json::Value = serde_json::from_str(&exc).unwrap_or_default();
            let cause = e["exceptionHistory"]["entries"][0]["stacktrace"]
                .as_str()
                .unwrap_or("")
                .replace('\n', " | ");
            let cause = escape(&cause);
            bail!(
                "job {} {}{}",
                escape(&jid),
                escape(&state),
                if cause.is_empty() {
                    String::new()
                } else {
                    format!(": {cause}")
                }
            );
        }
    }
}

/// `weir list`: the jobs of the cluster, newest first.
pub fn list(target: &Target) -> Result<()> {
    let body = get(&target.jobmanager, "/jobs/overview")?;
    let v: serde_json::Value = serde_json::from_str(&body)?;
    let jobs = v["jobs"].as_array().cloned().unwrap_or_default();
    if jobs.is_empty() {
        println!("No jobs.");
    }
    for j in jobs {
        let jid = j["jid"].as_str().unwrap_or("");
        println!(
            "{} : {} : {} ({}){}",
            flink_date(j["start-time"].as_i64().unwrap_or(0)),
            escape(jid),
            escape(j["name"].as_str().unwrap_or("")),
            escape(j["state"].as_str().unwrap_or("")),
            last_checkpoint(&target.jobmanager, jid)
        );
    }
    Ok(())
}

/// `, last checkpoint <id> at <date>` for a job with a completed checkpoint, else empty.
fn last_checkpoint(jobmanager: &str, jid: &str) -> String {
    let Ok(body) = get(jobmanager, &format!("/jobs/{jid}/checkpoints")) else {
        return String::new();
    };
    let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    let latest = &v["latest"]["completed"];
    match (latest["id"].as_u64(), latest["latest_ack_timestamp"].as_i64()) {
        (Some(id), Some(at)) => format!(", last checkpoint {id} at {}", flink_date(at)),
        _ => String::new(),
    }
}

/// Refuses a job id that is not 32 hexadecimal characters (Flink's `JobID` form)
/// before it is put into a URL or printed.
pub fn check_job_id(jid: &str) -> Result<()> {
    if jid.len() == 32 && jid.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        bail!("invalid job id '{}': expected 32 hexadecimal characters", escape(jid))
    }
}

/// `weir cancel`.
pub fn cancel(target: &Target, jid: &str) -> Result<()> {
    check_job_id(jid)?;
    patch(&target.jobmanager, &format!("/jobs/{jid}?mode=cancel"))?;
    println!("Cancelled job {}.", escape(jid));
    Ok(())
}
