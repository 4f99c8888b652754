//! A real cluster of `weir` processes on loopback with ephemeral ports, for tests.

#![allow(dead_code)]

pub mod enrich;
pub mod forger;
pub mod security;

use std::process::Stdio;
use std::time::{Duration, Instant};

/// One `weir` process, killed on drop.
pub type Proc = weir::cli::daemon::Daemon;

/// Starts `weir <role> -D ...` and waits for its start-up line.
fn spawn(role: &str, dynamic: &[String]) -> Proc {
    Proc::start(
        std::path::Path::new(env!("CARGO_BIN_EXE_weir")),
        role,
        dynamic,
        Stdio::inherit(),
    )
    .expect("start weir")
}

/// A JobManager and TaskManagers.
pub struct Cluster {
    pub jm: Proc,
    pub tms: Vec<Proc>,
    pub rest: String,
    pub rpc_port: String,
    pub slots_per_tm: u32,
    pub tm_dynamic: Vec<String>,
}

impl Cluster {
    /// A cluster of two TaskManagers with two slots each that checkpoints every 200 ms
    /// into `dir` and restarts a failed job at once (up to 20 times).
    pub fn start_checkpointing(dir: &std::path::Path) -> Cluster {
        let chk_dir = format!("execution.checkpointing.dir={}", dir.display());
        Cluster::start(
            2,
            2,
            &[
                "execution.checkpointing.interval=200 ms",
                &chk_dir,
                "restart-strategy.type=fixed-delay",
                "restart-strategy.fixed-delay.delay=0 s",
                "restart-strategy.fixed-delay.attempts=20",
            ],
        )
    }

    /// How many checkpoints job `jid` has completed.
    pub fn completed_checkpoints(&self, jid: &str) -> u64 {
        get(&self.rest, &format!("/jobs/{jid}/checkpoints")).1["counts"]["completed"]
            .as_u64()
            .unwrap_or(0)
    }

    /// Kills TaskManager `victim` once job `jid` is running and has completed two more
    /// checkpoints than now, with a replacement started first.
    pub fn kill_after_checkpoints(&mut self, jid: &str, victim: usize) {
        let baseline = self.completed_checkpoints(jid);
        self.wait_running(jid);
        wait_until(Duration::from_secs(30), || {
            self.completed_checkpoints(jid) >= baseline + 2
        });
        self.add_taskmanager();
        self.tms[victim].kill();
    }

    /// A JobManager with `jm_dynamic` settings and `tms` TaskManagers of `slots` slots.
    pub fn start(tms: u32, slots: u32, jm_dynamic: &[&str]) -> Cluster {
        Cluster::start_with(tms, slots, jm_dynamic, &[])
    }

    /// [`Cluster::start`] with `common` settings given to the JobManager and every
    /// TaskManager (process settings both read, such as the `s3.*` options).
    pub fn start_with(tms: u32, slots: u32, jm_dynamic: &[&str], common: &[String]) -> Cluster {
        let mut d: Vec<String> = vec![
            "jobmanager.rpc.port=0".into(),
            "rest.port=0".into(),
            "heartbeat.interval=300 ms".into(),
            "heartbeat.timeout=3 s".into(),
        ];
        d.extend(jm_dynamic.iter().map(|s| s.to_string()));
        d.extend(common.iter().cloned());
        let jm = spawn("jobmanager", &d);
        let rest = jm.field("rest").expect("rest address");
        let rpc_port = jm
            .field("rpc")
            .expect("rpc address")
            .rsplit(':')
            .next()
            .unwrap_or("0")
            .to_string();
        let mut tm_dynamic = vec![
            format!("jobmanager.rpc.port={rpc_port}"),
            format!("taskmanager.numberOfTaskSlots={slots}"),
            "heartbeat.interval=300 ms".into(),
            "heartbeat.timeout=3 s".into(),
        ];
        tm_dynamic.extend(common.iter().cloned());
        let mut c = Cluster {
            jm,
            tms: Vec::new(),
            rest,
            rpc_port,
            slots_per_tm: slots,
            tm_dynamic,
        };
        for _ in 0..tms {
            c.add_taskmanager();
        }
        c.wait_for_slots(tms * slots);
        c
    }

    /// Starts one more TaskManager.
    pub fn add_taskmanager(&mut self) {
        let tm = spawn("taskmanager", &self.tm_dynamic);
        self.tms.push(tm);
    }

    /// Waits until the ResourceManager counts `n` slots.
    pub fn wait_for_slots(&self, n: u32) {
        wait_until(Duration::from_secs(30), || {
            get(&self.rest, "/overview").1["slots-total"].as_u64() == Some(n as u64)
        });
    }

    /// Submits a job; returns the job id.
    pub fn submit(&self, body: serde_json::Value) -> String {
        let (code, v) = send(&self.rest, "POST", "/jobs", Some(body));
        assert_eq!(code, 202, "submission refused: {v}");
        v["jobid"].as_str().expect("jobid").to_string()
    }

    /// Waits for a job to reach a globally terminal state and returns it.
    pub fn wait_terminal(&self, jid: &str, timeout: Duration) -> String {
        let mut state = String::new();
        wait_until(timeout, || {
            state = get(&self.rest, &format!("/jobs/{jid}")).1["state"]
                .as_str()
                .unwrap_or("")
                .to_string();
            matches!(state.as_str(), "FINISHED" | "FAILED" | "CANCELED")
        });
        state
    }

    /// Records the second vertex of job `jid` has read (`read-records`).
    pub fn second_vertex_records_in(&self, jid: &str) -> u64 {
        get(&self.rest, &format!("/jobs/{jid}")).1["vertices"][1]["metrics"]["read-records"]
            .as_u64()
            .unwrap_or(0)
    }

    /// `weir stop -p <dir> <jid>`: asserts it succeeded and the job ended FINISHED;
    /// the savepoint's path.
    pub fn stop_with_savepoint(&self, jid: &str, dir: &str) -> String {
        let (code, out, err) = weir_cli(&["stop", "-m", &self.rest, "-p", dir, jid]);
        assert_eq!(code, 0, "{out}{err}");
        assert_eq!(self.wait_terminal(jid, Duration::from_secs(10)), "FINISHED");
        savepoint_path(&out)
    }

    /// Waits until a job has every task RUNNING.
    pub fn wait_running(&self, jid: &str) {
        wait_until(Duration::from_secs(30), || {
            let v = get(&self.rest, &format!("/jobs/{jid}")).1;
            let running = v["status-counts"]["RUNNING"].as_u64().unwrap_or(0);
            let total: u64 = v["vertices"]
                .as_array()
                .map(|vs| vs.iter().map(|x| x["parallelism"].as_u64().unwrap_or(0)).sum())
                .unwrap_or(u64::MAX);
            running == total
        });
    }
}

/// Polls `f` every 50 ms until it is true; panics after `timeout`.
pub fn wait_until(timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("condition not reached within {timeout:?}");
}

/// An HTTP request; (status, JSON body or Null).
pub fn send(rest: &str, method: &str, path: &str, body: Option<serde_json::Value>) -> (u16, serde_json::Value) {
    let url = format!("http://{rest}{path}");
    let req = ureq::request(method, &url).timeout(Duration::from_secs(10));
    let result = match body {
        Some(b) => req.set("Content-Type", "application/json").send_string(&b.to_string()),
        None => req.call(),
    };
    let (code, text) = match result {
        Ok(r) => (r.status(), r.into_string().unwrap_or_default()),
        Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap_or_default()),
        Err(e) => panic!("{method} {url}: {e}"),
    };
    (code, serde_json::from_str(&text).unwrap_or(serde_json::Value::Null))
}

/// GET.
pub fn get(rest: &str, path: &str) -> (u16, serde_json::Value) {
    send(rest, "GET", path, None)
}

/// The value of metric `id` in a metric list answer of the REST API, as a number.
pub fn metric_value(answer: &serde_json::Value, id: &str) -> Option<f64> {
    answer
        .as_array()?
        .iter()
        .find(|m| m["id"] == id)
        .and_then(|m| m["value"].as_str())
        .and_then(|v| v.parse().ok())
}

/// Every line of every committed part file under `dir`, sorted: files whose names
/// start with `.` (in-progress and pending parts of the file sink) are not output yet.
pub fn read_parts(dir: &std::path::Path) -> Vec<String> {
    let mut lines = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            lines.extend(text.lines().map(str::to_string));
        }
    }
    lines.sort();
    lines
}

/// A cluster started in the background by `weir start-cluster` with its own
/// `cluster.dir` and free ports; stopped with `weir stop-cluster` when dropped (also
/// when a test fails midway).
pub struct BackgroundCluster {
    /// Its `cluster.dir` (pid files and logs).
    pub dir: tempfile::TempDir,
    /// `host:port` of its REST API.
    pub rest: String,
    /// What `start-cluster` printed.
    pub start_output: String,
    options: Vec<String>,
    stopped: bool,
}

impl BackgroundCluster {
    /// Runs `weir start-cluster --taskmanagers <n>` with `-D` `dynamic` settings on top;
    /// panics (after stopping whatever started) when it fails.
    pub fn start(taskmanagers: u32, dynamic: &[&str]) -> BackgroundCluster {
        let dir = tempfile::tempdir().expect("temporary cluster.dir");
        let free_port = || {
            std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| a.port())
                .expect("a free port")
        };
        let (port, rpc) = (free_port(), free_port());
        let mut options = vec![
            format!("cluster.dir={}", dir.path().display()),
            format!("rest.port={port}"),
            format!("jobmanager.rpc.port={rpc}"),
        ];
        options.extend(dynamic.iter().map(|d| d.to_string()));
        let mut cluster = BackgroundCluster {
            dir,
            rest: format!("127.0.0.1:{port}"),
            start_output: String::new(),
            options,
            stopped: false,
        };
        let n = taskmanagers.to_string();
        let (code, out, err) = cluster.run(&["start-cluster", "--taskmanagers", &n]);
        if code != 0 {
            cluster.stop();
            panic!("start-cluster failed: {out} {err}");
        }
        cluster.start_output = out;
        cluster
    }

    fn run(&self, command: &[&str]) -> (i32, String, String) {
        let mut args: Vec<&str> = command.to_vec();
        for o in &self.options {
            args.extend(["-D", o.as_str()]);
        }
        weir_cli(&args)
    }

    /// Runs `weir stop-cluster`; (exit code, stdout, stderr).
    pub fn stop(&mut self) -> (i32, String, String) {
        self.stopped = true;
        self.run(&["stop-cluster"])
    }
}

impl Drop for BackgroundCluster {
    fn drop(&mut self) {
        if !self.stopped {
            self.stop();
        }
    }
}

/// `-D` options of a restart strategy that restarts a failed job at once, up to three
/// times.
pub const FIXED_DELAY: [&str; 6] = [
    "-D",
    "restart-strategy.type=fixed-delay",
    "-D",
    "restart-strategy.fixed-delay.attempts=3",
    "-D",
    "restart-strategy.fixed-delay.delay=0 s",
];

/// Runs the `weir` binary with `args`: exit code, stdout, stderr.
pub fn weir_cli(args: &[&str]) -> (i32, String, String) {
    weir_with_env(args, &[], None)
}

/// Runs `weir <args>` with extra environment variables and working directory, without
/// the caller's `WEIR_CONF_DIR` and `WEIR_LOG`; (exit code, stdout, stderr).
pub fn weir_with_env(args: &[&str], env: &[(&str, &str)], cwd: Option<&std::path::Path>) -> (i32, String, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_weir"));
    cmd.args(args).env_remove("WEIR_CONF_DIR").env_remove("WEIR_LOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let out = cmd.output().expect("run weir");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A CSV of `n` orders of the `orders-per-minute` generator (7 users, none late) in
/// `dir`.
pub fn orders_csv(dir: &std::path::Path, n: u64) -> std::path::PathBuf {
    use std::io::Write;
    let cfg = weir::programs::orders_per_minute::GeneratorConfig {
        users: 7,
        bound_ms: 5_000,
        late_fraction: 0.0,
    };
    let path = dir.join("orders.csv");
    let mut f = std::fs::File::create(&path).unwrap();
    for i in 0..n {
        let line =
            weir::programs::orders_per_minute::generate_line(&cfg, i, &mut weir_api::prelude::Rng::for_index(42, i));
        writeln!(f, "{line}").unwrap();
    }
    path
}

/// `user_id,count,sum` per user of an orders CSV, computed directly, sorted.
pub fn direct_orders_per_user(csv: &std::path::Path) -> Vec<String> {
    use weir::programs::orders_per_minute::{format_cents, parse_order};
    let mut per_user: std::collections::BTreeMap<i64, (u64, i64)> = std::collections::BTreeMap::new();
    for line in std::fs::read_to_string(csv).unwrap().lines() {
        let o = parse_order(line).unwrap();
        let e = per_user.entry(o.user_id as i64).or_default();
        e.0 += 1;
        e.1 += o.amount_cents;
    }
    per_user
        .into_iter()
        .map(|(u, (c, cents))| format!("{u},{c},{}", format_cents(cents)))
        .collect()
}

/// JobManager settings: a failed job restarts up to 3 times without delay.
pub const RESTART_THREE_TIMES: [&str; 3] = [
    "restart-strategy.type=fixed-delay",
    "restart-strategy.fixed-delay.attempts=3",
    "restart-strategy.fixed-delay.delay=0 s",
];

/// Runs `statements` as `weir sql -f <dir>/job.sql <extra>`.
pub fn run_sql(dir: &std::path::Path, statements: &str, extra: &[&str]) -> (i32, String, String) {
    let file = dir.join("job.sql");
    std::fs::write(&file, statements).unwrap();
    let mut args = vec!["sql", "-f", file.to_str().unwrap()];
    args.extend(extra);
    weir_cli(&args)
}

/// The sorted output lines (`key,sum`) of `keyed-sum` over `records` records.
pub fn keyed_sum_output(keys: u64, seed: u64, records: u64) -> Vec<String> {
    let gen = weir::programs::keyed_sum::generate(keys);
    let mut sums: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
    for i in 0..records {
        let (k, v) = gen(i, &mut weir_api::prelude::Rng::for_index(seed, i));
        *sums.entry(k).or_default() += v;
    }
    let mut lines: Vec<String> = sums.iter().map(|(k, s)| format!("{k},{s}")).collect();
    lines.sort();
    lines
}

/// The job id `weir run` printed (`Job has been submitted with JobID <id>`).
pub fn job_id(stdout: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("Job has been submitted with JobID "))
        .unwrap_or_else(|| panic!("no job id in {stdout}"))
        .trim()
        .to_string()
}

/// The path `weir savepoint`/`weir stop` printed (`Savepoint completed. Path: <path>`).
pub fn savepoint_path(stdout: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("Savepoint completed. Path: "))
        .unwrap_or_else(|| panic!("no savepoint path in {stdout}"))
        .trim()
        .to_string()
}

/// `weir run -m <rest> <options> <program> --arg a ...` for every `key=value` in `args`.
pub fn run_program(rest: &str, options: &[&str], program: &str, args: &[String]) -> (i32, String, String) {
    let mut cmd: Vec<&str> = vec!["run", "-m", rest];
    cmd.extend_from_slice(options);
    cmd.push(program);
    for a in args {
        cmd.push("--arg");
        cmd.push(a);
    }
    weir_cli(&cmd)
}
