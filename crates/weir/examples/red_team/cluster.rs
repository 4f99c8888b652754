//! A throwaway cluster for the probes: `weir start-cluster` in a temporary
//! `cluster.dir` on ephemeral ports, stopped with `weir stop-cluster` when dropped; and
//! the REST calls the probes make against it (each bounded by a timeout).

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long one REST call may take.
const REST_TIMEOUT: Duration = Duration::from_secs(10);

/// A cluster started by `weir start-cluster`.
pub struct Throwaway {
    weir: PathBuf,
    dir: tempfile::TempDir,
    options: Vec<String>,
    /// `host:port` of the REST endpoint.
    pub rest: String,
    /// `host:port` of the JobManager's RPC endpoint.
    pub rpc: String,
    stopped: bool,
}

/// What a `weir` command printed.
pub struct Output {
    /// The exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `weir <args>` without the caller's `WEIR_CONF_DIR`/`WEIR_LOG`.
pub fn run_weir(weir: &Path, args: &[&str]) -> Result<Output> {
    let out = Command::new(weir)
        .args(args)
        .env_remove("WEIR_CONF_DIR")
        .env_remove("WEIR_LOG")
        .output()
        .with_context(|| format!("cannot run {}", weir.display()))?;
    Ok(Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

impl Throwaway {
    /// Starts a JobManager and `taskmanagers` TaskManagers with `options` (`key=value`)
    /// on top of ephemeral ports and a temporary `cluster.dir`.
    pub fn start(weir: &Path, taskmanagers: u32, options: &[String]) -> Result<Throwaway> {
        let dir = tempfile::tempdir().context("a temporary cluster.dir")?;
        let mut all = vec![
            format!("cluster.dir={}", dir.path().display()),
            "rest.port=0".to_string(),
            "jobmanager.rpc.port=0".to_string(),
        ];
        all.extend(options.iter().cloned());
        let mut cluster = Throwaway {
            weir: weir.to_path_buf(),
            dir,
            options: all,
            rest: String::new(),
            rpc: String::new(),
            stopped: false,
        };
        let n = taskmanagers.to_string();
        let started = cluster.weir(&["start-cluster", "--taskmanagers", &n])?;
        if started.code != 0 {
            bail!("start-cluster failed: {}{}", started.stdout, started.stderr);
        }
        let recorded = std::fs::read_to_string(cluster.dir.path().join("jobmanager.address"))
            .context("start-cluster recorded no jobmanager.address")?;
        let port = |key: &str| {
            recorded
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(str::to_string)
                .ok_or_else(|| anyhow!("no {key} in jobmanager.address: {recorded}"))
        };
        cluster.rest = format!("127.0.0.1:{}", port("rest_port=")?);
        cluster.rpc = format!("127.0.0.1:{}", port("rpc_port=")?);
        Ok(cluster)
    }

    /// Runs `weir <command> -D <options>...` with this cluster's options.
    pub fn weir(&self, command: &[&str]) -> Result<Output> {
        let mut args: Vec<&str> = command.to_vec();
        for o in &self.options {
            args.extend(["-D", o.as_str()]);
        }
        run_weir(&self.weir, &args)
    }

    /// The `weir` binary.
    pub fn binary(&self) -> &Path {
        &self.weir
    }

    /// The pid `start-cluster` recorded for `name` (`jobmanager`, `taskmanager-0`, ...).
    pub fn pid(&self, name: &str) -> Result<u32> {
        let path = self.dir.path().join(format!("{name}.pid"));
        let text = std::fs::read_to_string(&path).with_context(|| format!("no {}", path.display()))?;
        text.trim()
            .parse()
            .with_context(|| format!("{}: not a pid", path.display()))
    }

    /// The value of `key=` on the start-up line in `name`'s log.
    pub fn startup_field(&self, name: &str, key: &str) -> Result<String> {
        let path = self.dir.path().join(format!("{name}.log"));
        let log = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let prefix = format!("{key}=");
        log.lines()
            .flat_map(str::split_whitespace)
            .find_map(|w| w.strip_prefix(&prefix))
            .map(str::to_string)
            .ok_or_else(|| anyhow!("no {key}= in {}", path.display()))
    }

    /// An HTTP request to the REST API: (status, JSON body or Null).
    pub fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Result<(u16, Value)> {
        send(&self.rest, method, path, body)
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> Result<(u16, Value)> {
        self.send("GET", path, None)
    }

    /// Submits `body` to `POST /jobs`; the job id.
    pub fn submit(&self, body: &Value) -> Result<String> {
        let (code, answer) = self.send("POST", "/jobs", Some(body))?;
        answer["jobid"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| anyhow!("submission answered {code}: {answer}"))
    }

    /// Waits (up to `bound`) until job `jid` has a state `done` accepts; that state.
    pub fn wait_state(&self, jid: &str, bound: Duration, done: impl Fn(&str) -> bool) -> Result<String> {
        let mut last = String::new();
        poll(bound, || {
            let (_, job) = self.get(&format!("/jobs/{jid}"))?;
            last = job["state"].as_str().unwrap_or_default().to_string();
            Ok(done(&last).then(|| last.clone()))
        })?
        .ok_or_else(|| anyhow!("job {jid} still {last} after {bound:?}"))
    }

    /// Waits for job `jid` to end; its final state.
    pub fn wait_terminal(&self, jid: &str) -> Result<String> {
        self.wait_state(jid, Duration::from_secs(120), |s| {
            matches!(s, "FINISHED" | "FAILED" | "CANCELED")
        })
    }

    /// The registered TaskManagers (`/taskmanagers`).
    pub fn taskmanagers(&self) -> Result<Vec<Value>> {
        let (_, answer) = self.get("/taskmanagers")?;
        Ok(answer["taskmanagers"].as_array().cloned().unwrap_or_default())
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        match self.weir(&["stop-cluster"]) {
            Ok(out) if out.code == 0 => {}
            Ok(out) => eprintln!("stop-cluster failed: {}{}", out.stdout, out.stderr),
            Err(e) => eprintln!("stop-cluster failed: {e:#}"),
        }
    }
}

/// Asks `check` every 50 ms until it gives a value, for at most `bound` (the cluster's
/// state is only visible through its REST API, so waiting on it is polling); `None`
/// when the bound passed first.
pub fn poll<T>(bound: Duration, mut check: impl FnMut() -> Result<Option<T>>) -> Result<Option<T>> {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(value) = check()? {
            return Ok(Some(value));
        }
        if Instant::now() > deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An HTTP request to `rest`: (status, JSON body or Null).
pub fn send(rest: &str, method: &str, path: &str, body: Option<&Value>) -> Result<(u16, Value)> {
    let url = format!("http://{rest}{path}");
    let request = ureq::request(method, &url).timeout(REST_TIMEOUT);
    let result = match body {
        Some(b) => request
            .set("Content-Type", "application/json")
            .send_string(&b.to_string()),
        None => request.call(),
    };
    let (code, text) = match result {
        Ok(r) => (r.status(), r.into_string().unwrap_or_default()),
        Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap_or_default()),
        Err(e) => bail!("{method} {url}: {e}"),
    };
    Ok((code, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// The peak resident memory (VmHWM) of process `pid`, in bytes.
pub fn peak_rss(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).context("no /proc status")?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow!("no VmHWM for pid {pid}"))?;
    Ok(kib * 1024)
}

/// How many file descriptors process `pid` has open.
pub fn open_descriptors(pid: u32) -> Result<usize> {
    Ok(std::fs::read_dir(format!("/proc/{pid}/fd"))
        .with_context(|| format!("cannot list the descriptors of pid {pid}"))?
        .count())
}
