//! The network stack of one TaskManager: [`NetworkEnvironment`] (one per process in
//! the local runtime) creates result partitions and input gates over one
//! [`NetworkBufferPool`]; a [`SubpartitionHandle`] is how a consumer names the
//! subpartition it reads.
//!
//! Invariants: every buffer of every partition comes from the one global pool, so at
//! most `total_buffers` segments exist; a partition's local pool is sized as in Flink
//! (`min = n + 1`, `max = n × max_buffers_per_channel`, the excess shared among
//! pools); a subpartition is read by at most one input gate, ever.
//!
//! In-process channels move buffers from producer to consumer, so an input gate needs
//! no segments of its own: its exclusive and floating buffers exist as credits only.
//! A TCP transport will reserve real receive buffers for its remote channels.

use super::buffer::NetworkBufferPool;
use super::cancel::CancelToken;
use super::config::NetworkConfig;
use super::error::NetworkError;
use super::input_gate::InputGate;
use super::result_partition::ResultPartitionWriter;
use super::subpartition::Subpartition;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The network stack of one TaskManager.
#[derive(Debug)]
pub struct NetworkEnvironment {
    config: NetworkConfig,
    pool: Arc<NetworkBufferPool>,
    next_partition: AtomicU64,
}

impl NetworkEnvironment {
    /// A network stack with a pool of `config.total_buffers` segments of
    /// `config.segment_size` bytes (allocated lazily). An invalid config is reported
    /// by the `create_*` calls.
    pub fn new(config: NetworkConfig) -> Arc<Self> {
        let pool = NetworkBufferPool::new(config.total_buffers, config.segment_size);
        Arc::new(Self {
            config,
            pool,
            next_partition: AtomicU64::new(0),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &NetworkConfig {
        &self.config
    }

    /// The global buffer pool.
    pub fn buffer_pool(&self) -> &Arc<NetworkBufferPool> {
        &self.pool
    }

    /// A result partition with `num_subpartitions` subpartitions: the producer's
    /// writer and one handle per subpartition for the consumers to connect to.
    /// Fails with [`NetworkError::PoolExhausted`] when the global pool cannot
    /// guarantee the partition `num_subpartitions + 1` buffers.
    pub fn create_result_partition(
        &self,
        num_subpartitions: usize,
        cancel: CancelToken,
    ) -> Result<(ResultPartitionWriter, Vec<SubpartitionHandle>), NetworkError> {
        self.config.validate()?;
        if num_subpartitions == 0 {
            return Err(NetworkError::InvalidArgument(
                "a result partition needs at least one subpartition".into(),
            ));
        }
        let min = num_subpartitions + 1;
        let max = num_subpartitions
            .saturating_mul(self.config.max_buffers_per_channel)
            .max(min);
        let pool = self
            .pool
            .create_local_pool(min, max, num_subpartitions, self.config.max_buffers_per_channel)?;
        let partition = self.next_partition.fetch_add(1, Ordering::Relaxed);
        let subs: Vec<_> = (0..num_subpartitions)
            .map(|i| Subpartition::new(partition, i))
            .collect();
        let handles = subs.iter().map(|s| SubpartitionHandle { inner: s.clone() }).collect();
        Ok((ResultPartitionWriter::new(partition, pool, subs, cancel), handles))
    }

    /// An input gate reading the given subpartitions, one input channel per handle in
    /// order. Fails with [`NetworkError::AlreadyConnected`] if a subpartition is
    /// already read by a gate (or listed twice).
    pub fn create_input_gate(
        &self,
        channels: Vec<SubpartitionHandle>,
        cancel: CancelToken,
    ) -> Result<InputGate, NetworkError> {
        InputGate::connect(channels.into_iter().map(|h| h.inner).collect(), &self.config, cancel)
    }

    /// Segments not held by any partition (Flink's `AvailableMemorySegments`).
    pub fn available_buffers(&self) -> usize {
        self.pool.available_buffers()
    }

    /// Segments in the pool.
    pub fn total_buffers(&self) -> usize {
        self.pool.total_buffers()
    }

    /// Segments currently in use as buffers.
    pub fn buffers_in_use(&self) -> usize {
        self.pool.buffers_in_use()
    }
}

/// A consumer's reference to one subpartition (an in-process "local" channel).
#[derive(Clone)]
pub struct SubpartitionHandle {
    inner: Arc<Subpartition>,
}

impl SubpartitionHandle {
    /// Process-local number of the result partition.
    pub fn partition_number(&self) -> u64 {
        self.inner.partition
    }

    /// Index of the subpartition in its partition.
    pub fn subpartition_index(&self) -> usize {
        self.inner.index
    }
}

impl fmt::Debug for SubpartitionHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SubpartitionHandle({}:{})", self.inner.partition, self.inner.index)
    }
}
