//! Configuration into process settings: where the configuration comes from
//! (`config.yaml`, `$WEIR_PROPERTIES`, `-D`) and the JobManager and TaskManager settings
//! read from it. Every process (`jobmanager`, `taskmanager`, the MiniCluster, an
//! application cluster) starts from these.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
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
        metric_fetcher_update_interval: config.get(&o::METRICS_FETCHER_UPDATE_INTERVAL)?,
        slot_request_timeout: config.get(&o::SLOT_REQUEST_TIMEOUT)?,
        exception_history_size: config.get(&o::EXCEPTION_HISTORY_SIZE)? as usize,
        max_slots_per_taskmanager: config.get(&o::RESOURCEMANAGER_TASKMANAGER_MAX_SLOTS)?,
        max_submission_subtasks: config.get(&o::JOBMANAGER_SUBMISSION_MAX_SUBTASKS)?,
        max_submission_channels: u64::from(config.get(&o::JOBMANAGER_SUBMISSION_MAX_EXCHANGE_CHANNELS)?),
        config: config.clone(),
        object_stores: ObjectStoreOptions::from_config(config)?,
        log_file: None,
        metric_reporters: prometheus_reporters(config)?,
        internal_tls: super::security::internal_tls(config)?,
        rest_server: super::security::rest_server_options(config)?,
    })
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
        state_backends: std::sync::Arc::new(state_backends(config, memory.managed)?),
    })
}

/// The TaskManager's state backend (from `config`) and a loader of the backends jobs
/// ask for with `state.backend.*` settings of their own, applied over `config`.
fn state_backends(config: &Configuration, managed: u64) -> Result<weir_taskmanager::state_backends::StateBackends> {
    use weir_taskmanager::state_backends::{StateBackendLoader, StateBackends};
    let slots = config.get(&o::NUM_TASK_SLOTS)?.max(1);
    let own = keyed_state_store(config, managed, slots)?;
    let base = config.clone();
    let loader: StateBackendLoader = std::sync::Arc::new(move |settings| {
        let mut merged = base.clone();
        for (key, value) in settings {
            merged.set_string(key, value);
        }
        // A directory the job chose is one of the files it opens: the TaskManager's
        // `security.job.allowed-paths` decides.
        let chosen = merged.get(&o::ROCKSDB_LOCAL_DIR).map_err(|e| e.to_string())?;
        if let Some(dir) = chosen.filter(|d| base.get(&o::ROCKSDB_LOCAL_DIR).ok().flatten().as_ref() != Some(d)) {
            weir_connectors::file_policy::check(std::path::Path::new(&dir))
                .map_err(|e| format!("{}: {e}", o::ROCKSDB_LOCAL_DIR.key()))?;
        }
        keyed_state_store(&merged, managed, slots).map_err(|e| format!("{e:#}"))
    });
    Ok(StateBackends::new(own, Some(loader)))
}

/// The store keyed state spills to under `state.backend.type: rocksdb` (none for
/// `hashmap`): RocksDB under `state.backend.rocksdb.localdir` (else the first of
/// `io.tmp.dirs`, else the system's temp directory), its block cache and write buffers
/// sized from the TaskManager's `managed` memory when
/// `state.backend.rocksdb.memory.managed` is on.
fn keyed_state_store(
    config: &Configuration,
    managed: u64,
    slots: u32,
) -> Result<Option<std::sync::Arc<dyn weir_state::KeyedStateStoreFactory>>> {
    use weir_config::StateBackendType;
    use weir_state_rocksdb::{RocksDbOptions, RocksDbStateBackend};
    if config.get(&o::STATE_BACKEND_TYPE)? == StateBackendType::HashMap {
        return Ok(None);
    }
    let local_dir = match config.get(&o::ROCKSDB_LOCAL_DIR)? {
        Some(dir) => std::path::PathBuf::from(dir),
        None => tmp_dirs(config.get(&o::IO_TMP_DIRS)?.as_deref())
            .into_iter()
            .next()
            .unwrap_or_else(std::env::temp_dir),
    };
    std::fs::create_dir_all(&local_dir)
        .with_context(|| format!("state.backend.rocksdb.localdir: cannot create {}", local_dir.display()))?;
    let ratio = config.get(&o::ROCKSDB_WRITE_BUFFER_RATIO)?;
    if !(ratio > 0.0 && ratio < 1.0) {
        anyhow::bail!("state.backend.rocksdb.memory.write-buffer-ratio must be above 0 and below 1, not {ratio}");
    }
    // Unmanaged: RocksDB's own defaults for one store (8 MiB cache, 64 MiB memtables).
    let memory = if config.get(&o::ROCKSDB_MEMORY_MANAGED)? {
        managed
    } else {
        (8 << 20) + (64 << 20)
    };
    let write_buffers = (memory as f64 * ratio) as u64;
    let backend = RocksDbStateBackend::new(RocksDbOptions {
        local_dir,
        block_cache_bytes: usize::try_from(memory - write_buffers).unwrap_or(usize::MAX),
        write_buffer_bytes: usize::try_from(write_buffers / u64::from(slots)).unwrap_or(usize::MAX),
        cache_entries: config.get(&o::ROCKSDB_CACHE_ENTRIES)?.max(1) as usize,
        local_recovery: config.get(&o::STATE_RECOVERY_FROM_LOCAL)?,
    })?;
    Ok(Some(std::sync::Arc::new(backend)))
}

/// Restricts the files jobs of this process may open to `security.job.allowed-paths`.
pub fn install_file_policy(config: &Configuration) -> Result<()> {
    let paths = config.get(&o::JOB_ALLOWED_PATHS)?.unwrap_or_default();
    weir_connectors::file_policy::install(&paths)
        .with_context(|| format!("cannot resolve {}", weir_connectors::file_policy::ALLOWED_PATHS_KEY))
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
