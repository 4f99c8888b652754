//! `weir jobmanager`, `weir taskmanager`, `weir start-cluster`, `weir stop-cluster`.
//!
//! Settings read at process start (slots, memory, ports, heartbeats) come from
//! `conf/config.yaml` and `-D key=value`, as Flink reads them when its processes start.
//! `start-cluster` keeps pid files and logs in `cluster.dir` (default
//! `$HOME/.weir/cluster`): `jobmanager.pid`, `jobmanager.log`, `taskmanager-<i>.pid`,
//! `taskmanager-<i>.log`. It tells each daemon its log file in the environment variable
//! [`LOG_FILE_ENV`] (as Flink's scripts pass `-Dlog.file`), so that the JobManager
//! serves its log at `/jobmanager/logs` and each TaskManager reports its own.
//!
//! Internal mutual TLS is on by default for a cluster `start-cluster` starts, with
//! certificates of its own CA in `cluster.dir/tls/`, and for a TaskManager joining it
//! with `weir taskmanager --cluster-dir` ([`super::internal_tls`]); a process started
//! by hand otherwise keeps Flink's plaintext default and says so in a warning.

use super::settings::{install_file_policy, jobmanager_settings, taskmanager_settings, ConfigArgs};
use super::startup::Startup;
use crate::programs::registry;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use weir_config::options as o;
use weir_config::Configuration;

/// The environment variable naming the file a daemon's output goes to.
pub const LOG_FILE_ENV: &str = "WEIR_LOG_FILE";

/// The log file this process was started with ([`LOG_FILE_ENV`]), if any.
fn log_file_from_env() -> Option<PathBuf> {
    std::env::var_os(LOG_FILE_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Options of `weir jobmanager`.
#[derive(Debug, Args, Clone, Default)]
pub struct JobManagerArgs {
    /// Configuration.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Application mode: run this program as the cluster's one job at start, and exit
    /// when it ends (0 when it FINISHED), as Flink's standalone application mode.
    #[arg(long = "application", value_name = "PROGRAM")]
    pub application: Option<String>,
    /// Default parallelism of the application (`parallelism.default`).
    #[arg(short = 'p', long = "parallelism", requires = "application")]
    pub parallelism: Option<u32>,
    /// An argument `key=value` of the application; repeatable.
    #[arg(long = "arg", value_name = "KEY=VALUE", requires = "application")]
    pub args: Vec<String>,
}

/// `weir jobmanager`, and with `--application` Flink's standalone application mode.
pub fn jobmanager(args: &JobManagerArgs) -> Result<()> {
    let config = args.config.load()?;
    match &args.application {
        None => {
            install_file_policy(&config)?;
            let mut settings = jobmanager_settings(&config)?;
            settings.log_file = log_file_from_env();
            super::security::warn_if_plaintext("JobManager", settings.internal_tls.is_none());
            weir_jobmanager::run_jobmanager(settings, registry().clone())?;
            Ok(())
        }
        Some(program) => super::application::run(&config, program, args.parallelism, &args.args),
    }
}

/// Options of `weir taskmanager`.
#[derive(Debug, Args, Clone, Default)]
pub struct TaskManagerArgs {
    /// Configuration.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Join the cluster `weir start-cluster` started in this `cluster.dir`: the
    /// JobManager RPC port it bound, and (unless `security.ssl.internal.enabled: false`
    /// or own `security.ssl.internal.*` files) a certificate of its CA.
    #[arg(long = "cluster-dir", value_name = "DIR")]
    pub cluster_dir: Option<PathBuf>,
}

/// `weir taskmanager`.
pub fn taskmanager(args: &TaskManagerArgs) -> Result<()> {
    let mut config = args.config.load()?;
    let joined = match &args.cluster_dir {
        Some(dir) => super::internal_tls::join(&mut config, dir)?,
        None => None,
    };
    install_file_policy(&config)?;
    let mut settings = taskmanager_settings(&config)?;
    if let Some(tls) = joined {
        settings.network.tls = Some(super::security::data_plane_tls(&tls));
        settings.internal_tls = Some(tls);
    }
    settings.log_file = log_file_from_env();
    super::security::warn_if_plaintext("TaskManager", settings.internal_tls.is_none());
    if config.get(&o::NUM_TASK_SLOTS)? == 0 {
        bail!("taskmanager.numberOfTaskSlots must be at least 1");
    }
    weir_taskmanager::run_taskmanager(settings, registry().clone())?;
    Ok(())
}

/// Options of `weir start-cluster`.
#[derive(Debug, Args, Clone)]
pub struct StartClusterArgs {
    /// Configuration.
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Number of TaskManagers to start.
    #[arg(long, default_value_t = 1)]
    pub taskmanagers: u32,
}

fn cluster_dir(config: &Configuration) -> Result<PathBuf> {
    Ok(config.cluster_dir()?)
}

/// Starts `weir <role>` with `args` and then `extra` as `-D` entries, its output in
/// `dir/<name>.log`, its pid in `dir/<name>.pid`.
fn spawn_daemon(
    dir: &Path,
    name: &str,
    role: &str,
    args: &ConfigArgs,
    extra: &[String],
) -> Result<std::process::Child> {
    let exe = std::env::current_exe().context("cannot find the weir binary")?;
    let log_path = dir.join(format!("{name}.log"));
    let log = std::fs::File::create(&log_path).with_context(|| format!("cannot create {}", log_path.display()))?;
    let mut cmd = Command::new(exe);
    cmd.arg(role).env(LOG_FILE_ENV, &log_path);
    if let Some(c) = &args.conf_dir {
        cmd.arg("-c").arg(c);
    }
    for d in args.dynamic.iter().chain(extra) {
        cmd.arg("-D").arg(d);
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(log.try_clone().context("cannot open log")?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("cannot start {role}"))?;
    let pid = child.id();
    std::fs::write(dir.join(format!("{name}.pid")), pid.to_string())
        .with_context(|| format!("cannot write {}", dir.join(format!("{name}.pid")).display()))?;
    Ok(child)
}

/// `weir start-cluster`: a JobManager and N TaskManagers as background processes;
/// returns once every slot is registered, which it checks through the REST API with
/// the cluster's own `security.ssl.rest.*` settings (HTTPS when REST SSL is on). The
/// ports the JobManager really bound (`0` asks for ephemeral ones) are read from its
/// start-up line, given to the TaskManagers and recorded for the client commands
/// ([`super::discovery`]). Internal TLS follows [`super::internal_tls::prepare`]; the
/// time reported includes making the certificates. When any step fails, what was
/// started is stopped again.
pub fn start_cluster(args: &StartClusterArgs) -> Result<()> {
    let config = args.config.load()?;
    super::client::configure_with(&config)?;
    let dir = cluster_dir(&config)?;
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    if dir.join("jobmanager.pid").exists() {
        bail!(
            "a cluster seems to be running already ({}); run `weir stop-cluster` first",
            dir.join("jobmanager.pid").display()
        );
    }
    let start = Instant::now();
    let tls = super::internal_tls::prepare(&config, &dir, args.taskmanagers)?;
    let with = |entries: &[String]| -> Result<Configuration> {
        let mut c = config.clone();
        c.apply_dynamic_properties(entries)?;
        Ok(c)
    };
    jobmanager_settings(&with(&tls.jobmanager)?)?;
    if let Some(first) = tls.taskmanagers.first() {
        taskmanager_settings(&with(first)?)?;
    }
    println!("{}", tls.source.describe(&dir));
    let mut startup = Startup::new(&dir);
    let jm = spawn_daemon(&dir, "jobmanager", "jobmanager", &args.config, &tls.jobmanager)?;
    println!("Starting standalonesession daemon (jobmanager, pid {}).", jm.id());
    startup.add("jobmanager", jm);
    let bound = startup.jobmanager_addresses(Duration::from_secs(30))?;
    bound.write(&dir)?;
    let mut tm_config = args.config.clone();
    tm_config
        .dynamic
        .push(format!("{}={}", o::JOBMANAGER_RPC_PORT.key(), bound.rpc_port));
    for (i, entries) in tls.taskmanagers.iter().enumerate() {
        let name = format!("taskmanager-{i}");
        let tm = spawn_daemon(&dir, &name, "taskmanager", &tm_config, entries)?;
        println!("Starting taskexecutor daemon ({name}, pid {}).", tm.id());
        startup.add(&name, tm);
    }
    let rest = format!("{}:{}", config.get(&o::REST_ADDRESS)?, bound.rest_port);
    let slots = config.get(&o::NUM_TASK_SLOTS)? * args.taskmanagers;
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        startup.check_alive()?;
        if let Ok(body) = super::client::get(&rest, "/overview") {
            let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            if v["slots-total"].as_u64() == Some(slots as u64) {
                startup.succeeded();
                println!(
                    "Cluster ready in {} ms: {} TaskManagers, {} slots, REST on {}://{rest}",
                    start.elapsed().as_millis(),
                    args.taskmanagers,
                    slots,
                    super::client::scheme()
                );
                return Ok(());
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!(
        "the cluster did not register {slots} slots within 30 s; see the logs in {}",
        dir.display()
    )
}

/// `weir stop-cluster`: stops the processes `start-cluster` started.
pub fn stop_cluster(args: &ConfigArgs) -> Result<()> {
    let config = args.load()?;
    let dir = cluster_dir(&config)?;
    let mut stopped = 0;
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(_) => {
            println!("No cluster running (no {}).", dir.display());
            return Ok(());
        }
    };
    let mut failures = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("pid") {
            continue;
        }
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_string();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        match stop_process(text.trim()) {
            Ok(true) => {
                stopped += 1;
                println!("Stopped {name} (pid {}).", text.trim());
            }
            Ok(false) => println!("{name} (pid {}) was not running.", text.trim()),
            Err(e) => {
                // Keep the pid file: the process may still run, and a second
                // stop-cluster should try again.
                failures.push(format!("cannot stop {name} ({}): {e}", path.display()));
                continue;
            }
        }
        if let Err(e) = std::fs::remove_file(&path) {
            failures.push(format!("cannot remove {}: {e}", path.display()));
        }
    }
    if !failures.is_empty() {
        bail!("{}", failures.join("; "));
    }
    if stopped == 0 {
        println!("No cluster running.");
    }
    let address = dir.join(super::discovery::ADDRESS_FILE);
    if address.exists() {
        std::fs::remove_file(&address).with_context(|| format!("cannot remove {}", address.display()))?;
    }
    Ok(())
}

/// Sends SIGTERM to the process `pid` names: `Ok(true)` when it was signalled,
/// `Ok(false)` when no such process runs any more, an error for anything else (a pid
/// file that holds no process id, a process this user may not signal).
fn stop_process(pid: &str) -> Result<bool> {
    let pid: libc::pid_t = match pid.parse() {
        Ok(p) if p > 0 => p,
        _ => bail!("not a process id: {pid:?}"),
    };
    // SAFETY: kill(2) takes plain integers and touches no memory of this process.
    if unsafe { libc::kill(pid, libc::SIGTERM) } == 0 {
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::ESRCH) {
        return Ok(false);
    }
    Err(err.into())
}
