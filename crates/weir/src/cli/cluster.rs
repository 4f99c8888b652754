//! `weir jobmanager`, `weir taskmanager`, `weir start-cluster`, `weir stop-cluster`.
//!
//! Settings read at process start (slots, memory, ports, heartbeats) come from
//! `conf/config.yaml` and `-D key=value`, as Flink reads them when its processes start.
//! `start-cluster` keeps pid files and logs in `cluster.dir` (default
//! `$HOME/.weir/cluster`): `jobmanager.pid`, `jobmanager.log`, `taskmanager-<i>.pid`,
//! `taskmanager-<i>.log`. It tells each daemon its log file in the environment variable
//! [`LOG_FILE_ENV`] (as Flink's scripts pass `-Dlog.file`), so that the JobManager
//! serves its log at `/jobmanager/logs` and each TaskManager reports its own.

use crate::programs::registry;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use weir_config::options as o;
use weir_config::{Configuration, TaskExecutorMemory};
use weir_filesystem::ObjectStoreOptions;
use weir_jobmanager::JobManagerSettings;
use weir_metrics::reporter_config::prometheus_reporters;
use weir_runtime::network::NetworkConfig;
use weir_taskmanager::TaskManagerSettings;

/// Where configuration comes from.
#[derive(Debug, Args, Clone, Default)]
pub struct ConfigArgs {
    /// Directory holding `config.yaml` (default: `$WEIR_CONF_DIR`, else `./conf` if present).
    #[arg(short = 'c', long = "conf-dir")]
    pub conf_dir: Option<PathBuf>,
    /// A configuration entry `key=value`, overriding the file; repeatable.
    #[arg(short = 'D', value_name = "KEY=VALUE")]
    pub dynamic: Vec<String>,
}

/// The environment variable with extra configuration lines (`key: value` or
/// `key=value`, one per line), applied over `config.yaml` and under `-D`, as Flink's
/// container images read `FLINK_PROPERTIES`.
pub const PROPERTIES_ENV: &str = "WEIR_PROPERTIES";

/// The entries of a `WEIR_PROPERTIES` text as `key=value`; blank lines and `#`
/// comments are skipped; a line with neither `:` nor `=` is an error naming it.
pub fn properties_entries(text: &str) -> Result<Vec<String>> {
    let mut entries = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(at) = line.find([':', '=']) else {
            bail!(
                "{PROPERTIES_ENV} line {}: '{line}' is not 'key: value' nor 'key=value'",
                n + 1
            );
        };
        let (key, value) = (line[..at].trim(), line[at + 1..].trim());
        if key.is_empty() {
            bail!("{PROPERTIES_ENV} line {}: '{line}' has no key", n + 1);
        }
        entries.push(format!("{key}={value}"));
    }
    Ok(entries)
}

impl ConfigArgs {
    /// Loads the configuration: `config.yaml`, then `$WEIR_PROPERTIES`, then `-D`.
    pub fn load(&self) -> Result<Configuration> {
        let dir = self
            .conf_dir
            .clone()
            .or_else(|| std::env::var_os("WEIR_CONF_DIR").map(PathBuf::from))
            .or_else(|| {
                let d = PathBuf::from("conf");
                d.join("config.yaml").exists().then_some(d)
            });
        let mut dynamic = match std::env::var(PROPERTIES_ENV) {
            Ok(text) => properties_entries(&text)?,
            Err(_) => Vec::new(),
        };
        dynamic.extend(self.dynamic.iter().cloned());
        let config = Configuration::load(dir.as_deref(), &dynamic)?;
        for k in config.unknown_keys() {
            tracing::warn!("unknown configuration key '{k}' is ignored");
        }
        Ok(config)
    }
}

/// The JobManager settings of a configuration; refuses an invalid restart strategy.
pub fn jobmanager_settings(config: &Configuration) -> Result<JobManagerSettings> {
    weir_jobmanager::RestartStrategyConfig::from_config(config, false)?;
    let rpc_address: String = config.get(&o::JOBMANAGER_RPC_ADDRESS)?;
    let rest_address: String = config.get(&o::REST_ADDRESS)?;
    Ok(JobManagerSettings {
        host: config.get(&o::JOBMANAGER_BIND_HOST)?.unwrap_or(rpc_address),
        rpc_port: config.get(&o::JOBMANAGER_RPC_PORT)?,
        rest_address: config.get(&o::REST_BIND_ADDRESS)?.unwrap_or(rest_address),
        rest_port: config.get(&o::REST_PORT)?,
        heartbeat_interval: config.get(&o::HEARTBEAT_INTERVAL)?,
        heartbeat_timeout: config.get(&o::HEARTBEAT_TIMEOUT)?,
        slot_request_timeout: config.get(&o::SLOT_REQUEST_TIMEOUT)?,
        exception_history_size: config.get(&o::EXCEPTION_HISTORY_SIZE)? as usize,
        config: config.clone(),
        object_stores: ObjectStoreOptions::from_config(config)?,
        log_file: None,
        metric_reporters: prometheus_reporters(config)?,
        internal_tls: super::security::internal_tls(config)?,
        rest_server: super::security::rest_server_options(config)?,
    })
}

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
            let mut settings = jobmanager_settings(&config)?;
            settings.log_file = log_file_from_env();
            weir_jobmanager::run_jobmanager(settings, registry().clone())?;
            Ok(())
        }
        Some(program) => super::application::run(&config, program, args.parallelism, &args.args),
    }
}

/// The directories of `io.tmp.dirs` (split at ',' and the path separator); none when
/// unset.
fn tmp_dirs(value: Option<&str>) -> Vec<std::path::PathBuf> {
    let Some(value) = value else {
        return Vec::new();
    };
    value
        .split(',')
        .flat_map(std::env::split_paths)
        .filter(|p| !p.as_os_str().is_empty())
        .collect()
}

/// The TaskManager settings of a configuration; refuses a memory model whose task heap
/// comes out negative.
pub fn taskmanager_settings(config: &Configuration) -> Result<TaskManagerSettings> {
    let memory = TaskExecutorMemory::from_config(config)?;
    let segment_size = config.get(&o::MEMORY_SEGMENT_SIZE)?.bytes();
    let rpc_port: u16 = config
        .get(&o::TASKMANAGER_RPC_PORT)?
        .trim()
        .parse()
        .context("taskmanager.rpc.port: Weir accepts a single port number (0 = any free port)")?;
    let internal_tls = super::security::internal_tls(config)?;
    let mut network = NetworkConfig {
        segment_size: segment_size as usize,
        buffers_per_channel: config.get(&o::NETWORK_BUFFERS_PER_CHANNEL)? as usize,
        floating_buffers_per_gate: config.get(&o::NETWORK_FLOATING_BUFFERS_PER_GATE)? as usize,
        max_buffers_per_channel: config.get(&o::NETWORK_MAX_BUFFERS_PER_CHANNEL)? as usize,
        total_buffers: memory.network_buffers(segment_size),
        blocking_memory_budget: usize::try_from(config.get(&o::BLOCKING_PARTITION_MEMORY_BUDGET)?.bytes())
            .unwrap_or(usize::MAX),
        tmp_dirs: tmp_dirs(config.get(&o::IO_TMP_DIRS)?.as_deref()),
        ..NetworkConfig::default()
    };
    super::security::secure_data_plane(&mut network, config, internal_tls.as_deref())?;
    network.validate()?;
    let jm_host: String = config.get(&o::JOBMANAGER_RPC_ADDRESS)?;
    let jm_port: u16 = config.get(&o::JOBMANAGER_RPC_PORT)?;
    let host: String = config.get(&o::TASKMANAGER_HOST)?;
    Ok(TaskManagerSettings {
        resource_id: weir_core::ids::JobId::random().to_string(),
        bind_host: config.get(&o::TASKMANAGER_BIND_HOST)?.unwrap_or_else(|| host.clone()),
        host,
        rpc_port,
        data_port: config.get(&o::TASKMANAGER_DATA_PORT)?,
        jobmanager_rpc: format!("{jm_host}:{jm_port}"),
        num_slots: config.get(&o::NUM_TASK_SLOTS)?.max(1),
        heartbeat_interval: config.get(&o::HEARTBEAT_INTERVAL)?,
        heartbeat_timeout: config.get(&o::HEARTBEAT_TIMEOUT)?,
        memory: weir_rpc::MemoryConfiguration {
            framework_heap: memory.framework_heap,
            task_heap: memory.task_heap,
            framework_off_heap: memory.framework_off_heap,
            task_off_heap: memory.task_off_heap,
            network_memory: memory.network,
            managed_memory: memory.managed,
            jvm_metaspace: memory.jvm_metaspace,
            jvm_overhead: memory.jvm_overhead,
            total_flink_memory: memory.total_flink,
            total_process_memory: memory.total_process,
        },
        network,
        object_stores: ObjectStoreOptions::from_config(config)?,
        log_file: None,
        metric_reporters: prometheus_reporters(config)?,
        metrics_collection: config.get(&o::METRICS_COLLECTION_ENABLED)?,
        internal_tls,
    })
}

/// `weir taskmanager`.
pub fn taskmanager(args: &ConfigArgs) -> Result<()> {
    let config = args.load()?;
    let mut settings = taskmanager_settings(&config)?;
    settings.log_file = log_file_from_env();
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

fn spawn_daemon(dir: &Path, name: &str, role: &str, args: &ConfigArgs) -> Result<u32> {
    let exe = std::env::current_exe().context("cannot find the weir binary")?;
    let log_path = dir.join(format!("{name}.log"));
    let log = std::fs::File::create(&log_path).with_context(|| format!("cannot create {}", log_path.display()))?;
    let mut cmd = Command::new(exe);
    cmd.arg(role).env(LOG_FILE_ENV, &log_path);
    if let Some(c) = &args.conf_dir {
        cmd.arg("-c").arg(c);
    }
    for d in &args.dynamic {
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
    Ok(pid)
}

/// `weir start-cluster`: a JobManager and N TaskManagers as background processes;
/// returns once every slot is registered, which it checks through the REST API with
/// the cluster's own `security.ssl.rest.*` settings (HTTPS when REST SSL is on).
pub fn start_cluster(args: &StartClusterArgs) -> Result<()> {
    let config = args.config.load()?;
    taskmanager_settings(&config)?;
    jobmanager_settings(&config)?;
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
    let jm = spawn_daemon(&dir, "jobmanager", "jobmanager", &args.config)?;
    println!("Starting standalonesession daemon (jobmanager, pid {jm}).");
    for i in 0..args.taskmanagers {
        let pid = spawn_daemon(&dir, &format!("taskmanager-{i}"), "taskmanager", &args.config)?;
        println!("Starting taskexecutor daemon (taskmanager-{i}, pid {pid}).");
    }
    let rest = format!("{}:{}", config.get(&o::REST_ADDRESS)?, config.get(&o::REST_PORT)?);
    let slots = config.get(&o::NUM_TASK_SLOTS)? * args.taskmanagers;
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(body) = super::client::get(&rest, "/overview") {
            let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            if v["slots-total"].as_u64() == Some(slots as u64) {
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
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("pid") {
            continue;
        }
        let pid = std::fs::read_to_string(&path).unwrap_or_default();
        let pid = pid.trim();
        if pid.parse::<u32>().is_ok() {
            let _ = Command::new("kill").arg(pid).status();
            stopped += 1;
            println!(
                "Stopped {} (pid {pid}).",
                path.file_stem().and_then(|s| s.to_str()).unwrap_or("?")
            );
        }
        let _ = std::fs::remove_file(&path);
    }
    if stopped == 0 {
        println!("No cluster running.");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_lines_in_yaml_or_equals_form_become_entries_and_comments_are_skipped() {
        let text = "# set by the image\ntaskmanager.numberOfTaskSlots: 4\n\n  execution.checkpointing.dir: s3://b/x  \nrest.port=9000\n";
        assert_eq!(
            properties_entries(text).unwrap(),
            vec![
                "taskmanager.numberOfTaskSlots=4",
                "execution.checkpointing.dir=s3://b/x",
                "rest.port=9000"
            ]
        );
    }

    #[test]
    fn a_properties_line_without_separator_or_key_is_an_error_naming_its_line() {
        let err = properties_entries("a: 1\nnot a setting\n").unwrap_err().to_string();
        assert!(
            err.contains("WEIR_PROPERTIES line 2") && err.contains("not a setting"),
            "{err}"
        );
        let err = properties_entries(": 1").unwrap_err().to_string();
        assert!(err.contains("has no key"), "{err}");
    }
}
