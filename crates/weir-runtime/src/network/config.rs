//! Sizing of the network stack: [`NetworkConfig`].
//!
//! Owns the numbers only; the defaults are Flink's (`taskmanager.network.*`,
//! flink-facts §5). Invariant checked by [`NetworkConfig::validate`]: segments are
//! non-empty, the pool holds at least one segment, and every input channel can get at
//! least one credit (exclusive or floating) so that no channel can starve forever.

use super::error::NetworkError;
use super::transport::stream::DataPlaneTls;
use serde::{Deserialize, Serialize};

/// Sizes of the network buffer pool and of each channel's share of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkConfig {
    /// Bytes per network buffer (`taskmanager.memory.segment-size`, 32 KiB).
    pub segment_size: usize,
    /// Exclusive buffers, i.e. initial credit, per input channel
    /// (`taskmanager.network.memory.buffers-per-channel`, 2).
    pub buffers_per_channel: usize,
    /// Floating buffers shared by the channels of one input gate
    /// (`taskmanager.network.memory.floating-buffers-per-gate`, 8).
    pub floating_buffers_per_gate: usize,
    /// Most buffers one subpartition may hold before its producer blocks
    /// (`taskmanager.network.memory.max-buffers-per-channel`, 10).
    pub max_buffers_per_channel: usize,
    /// Segments in the process-wide pool (2048 × 32 KiB = 64 MiB).
    pub total_buffers: usize,
    /// How long creating an input gate waits for a partition that is not registered
    /// yet (its producer may deploy after the consumer) before it fails with
    /// [`NetworkError::PartitionNotFound`], in milliseconds (60 000).
    #[serde(default = "default_partition_request_timeout_ms")]
    pub partition_request_timeout_ms: u64,
    /// Connections the data server serves at once (`taskmanager.data.max-connections`,
    /// 256); further ones are closed at once. As many more may be in their handshake.
    #[serde(default = "default_data_max_connections")]
    pub data_max_connections: usize,
    /// Connections the data server serves at once for one peer address, in their
    /// handshake or established (`taskmanager.data.max-connections-per-peer`, 64).
    #[serde(default = "default_data_max_connections_per_peer")]
    pub data_max_connections_per_peer: usize,
    /// How long a new data connection may take for its TLS handshake and hello, in
    /// milliseconds (`taskmanager.data.handshake-timeout`, 10 000).
    #[serde(default = "default_data_handshake_timeout_ms")]
    pub data_handshake_timeout_ms: u64,
    /// How long a data connection serving no channel may stay silent before the data
    /// server, or the client that opened it, closes it, in milliseconds
    /// (`taskmanager.data.idle-timeout`, 300 000).
    #[serde(default = "default_data_idle_timeout_ms")]
    pub data_idle_timeout_ms: u64,
    /// Bytes of blocking partitions a process keeps in memory before it spills them to
    /// files (`taskmanager.network.blocking-partition.memory-budget`, Weir's key, 64 MiB).
    #[serde(default = "default_blocking_memory_budget")]
    pub blocking_memory_budget: usize,
    /// Directories for spill files (`io.tmp.dirs`); empty: the system temp directory.
    #[serde(default)]
    pub tmp_dirs: Vec<std::path::PathBuf>,
    /// Mutual TLS for data connections (`security.ssl.internal.*`); `None`: plain TCP.
    #[serde(skip)]
    pub tls: Option<DataPlaneTls>,
}

fn default_data_max_connections() -> usize {
    256
}

fn default_data_max_connections_per_peer() -> usize {
    64
}

fn default_data_handshake_timeout_ms() -> u64 {
    10_000
}

fn default_data_idle_timeout_ms() -> u64 {
    300_000
}

/// 64 MiB.
pub const DEFAULT_BLOCKING_MEMORY_BUDGET: usize = 64 * 1024 * 1024;

fn default_blocking_memory_budget() -> usize {
    DEFAULT_BLOCKING_MEMORY_BUDGET
}

fn default_partition_request_timeout_ms() -> u64 {
    60_000
}

impl Default for NetworkConfig {
    fn default() -> Self {
        Self {
            segment_size: 32 * 1024,
            buffers_per_channel: 2,
            floating_buffers_per_gate: 8,
            max_buffers_per_channel: 10,
            total_buffers: 2048,
            partition_request_timeout_ms: default_partition_request_timeout_ms(),
            data_max_connections: default_data_max_connections(),
            data_max_connections_per_peer: default_data_max_connections_per_peer(),
            data_handshake_timeout_ms: default_data_handshake_timeout_ms(),
            data_idle_timeout_ms: default_data_idle_timeout_ms(),
            blocking_memory_budget: DEFAULT_BLOCKING_MEMORY_BUDGET,
            tmp_dirs: Vec::new(),
            tls: None,
        }
    }
}

impl NetworkConfig {
    /// Checks the invariants listed in the module docs.
    pub fn validate(&self) -> Result<(), NetworkError> {
        if self.segment_size == 0 {
            return Err(NetworkError::InvalidConfig(
                "segment_size must be at least 1 byte".into(),
            ));
        }
        if self.total_buffers == 0 {
            return Err(NetworkError::InvalidConfig("total_buffers must be at least 1".into()));
        }
        if self.buffers_per_channel == 0 && self.floating_buffers_per_gate == 0 {
            return Err(NetworkError::InvalidConfig(
                "buffers_per_channel and floating_buffers_per_gate cannot both be 0: channels would never get credit"
                    .into(),
            ));
        }
        if self.max_buffers_per_channel == 0 {
            return Err(NetworkError::InvalidConfig(
                "max_buffers_per_channel must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// [`partition_request_timeout_ms`](Self::partition_request_timeout_ms) as a duration.
    pub fn partition_request_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.partition_request_timeout_ms)
    }

    /// Total network memory in bytes.
    pub fn total_bytes(&self) -> usize {
        self.segment_size.saturating_mul(self.total_buffers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_flinks() {
        let c = NetworkConfig::default();
        assert_eq!(c.segment_size, 32768);
        assert_eq!(c.buffers_per_channel, 2);
        assert_eq!(c.floating_buffers_per_gate, 8);
        assert_eq!(c.max_buffers_per_channel, 10);
        assert_eq!(c.total_bytes(), 64 * 1024 * 1024);
        assert!(c.validate().is_ok());
    }

    #[test]
    fn configs_that_could_starve_a_channel_are_rejected() {
        let c = NetworkConfig {
            buffers_per_channel: 0,
            floating_buffers_per_gate: 0,
            ..Default::default()
        };
        assert!(matches!(c.validate(), Err(NetworkError::InvalidConfig(_))));
        let c = NetworkConfig {
            segment_size: 0,
            ..Default::default()
        };
        assert!(c.validate().is_err());
        let c = NetworkConfig {
            buffers_per_channel: 0,
            ..Default::default()
        };
        assert!(c.validate().is_ok());
    }
}
