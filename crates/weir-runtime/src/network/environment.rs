//! The network stack of one TaskManager: [`NetworkEnvironment`] (one per process in
//! the local runtime) creates result partitions and input gates over one
//! [`NetworkBufferPool`]; a [`SubpartitionHandle`]
//! is how a consumer names the subpartition it reads.
//!
//! Invariants: every buffer of every partition comes from the one global pool, so at
//! most `total_buffers` segments exist; a partition's local pool is sized as in Flink
//! (`min = n + 1`, `max = n × max_buffers_per_channel`, the excess shared among
//! pools); a subpartition is read by at most one input gate, ever.
//!
//! In-process channels move buffers from producer to consumer, so an input gate needs
//! no segments of its own: its exclusive and floating buffers exist as credits only.
//! Remote channels (see [`remote`](super::transport)) get real receive buffers: a gate
//! with remote channels takes a fixed local pool of `remote channels × exclusive +
//! floating` segments.
//!
//! Across processes: [`NetworkEnvironment::start_data_server`] serves this process's
//! partitions registered with [`NetworkEnvironment::register_partition`];
//! [`NetworkEnvironment::create_input_gate_from_specs`] builds gates over local and
//! remote channels, opening at most one connection per remote address (reused by
//! every later gate until it fails). Dropping the environment (or
//! [`NetworkEnvironment::shutdown`]) stops the data server and closes every
//! connection.

use super::buffer::{lock, LocalBufferPool, NetworkBufferPool};
use super::cancel::{CancelToken, CANCEL_POLL_INTERVAL};
use super::config::NetworkConfig;
use super::consumer::channel_spec::ChannelSpec;
use super::consumer::input_gate::{ChannelSource, GatePools, InputGate};
use super::error::NetworkError;
use super::partition::blocking_partition::{BlockingPartition, BlockingPartitionSettings, MemoryBudget};
use super::partition::partition_id::PartitionId;
use super::partition::registry::PartitionRegistry;
use super::partition::result_partition::ResultPartitionWriter;
use super::partition::stored_subpartition::LocalSubpartition;
use super::partition::subpartition::{Subpartition, SubpartitionHandle};
use super::transport::client::{ClientConnShared, ConnectionLease, RemoteSource};
use super::transport::server::DataServer;
use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Buffers a gate's stored channels read into: the consumer decodes a buffer whole
/// and drops it before it takes the next, so one is in use at a time.
const STORED_READ_BUFFERS: usize = 2;

/// What a new result partition is made of.
struct NewPartition {
    /// Its process-local number.
    number: u64,
    /// Its local buffer pool.
    pool: LocalBufferPool,
    /// Its subpartitions.
    subpartitions: Vec<Arc<Subpartition>>,
}

/// What the blocking partitions of one process hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockingPartitionBytes {
    /// Registered blocking partitions not released yet.
    pub partitions: u64,
    /// Their bytes in memory.
    pub memory: u64,
    /// Their bytes in spill files.
    pub spilled: u64,
}

/// The network stack of one TaskManager.
pub struct NetworkEnvironment {
    config: NetworkConfig,
    pool: Arc<NetworkBufferPool>,
    next_partition: AtomicU64,
    registry: Arc<PartitionRegistry>,
    blocking_budget: Arc<MemoryBudget>,
    server: Mutex<Option<DataServer>>,
    /// Client connections by remote address.
    connections: Mutex<HashMap<String, Arc<ClientConnShared>>>,
}

impl fmt::Debug for NetworkEnvironment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetworkEnvironment")
            .field("config", &self.config)
            .field("pool", &self.pool)
            .field("registry", &self.registry)
            .field("data_server", &self.data_server_address())
            .field("connections", &self.num_connections())
            .finish()
    }
}

impl NetworkEnvironment {
    /// A network stack with a pool of `config.total_buffers` segments of
    /// `config.segment_size` bytes (allocated lazily). An invalid config is reported
    /// by the `create_*` calls.
    pub fn new(config: NetworkConfig) -> Arc<Self> {
        let pool = NetworkBufferPool::new(config.total_buffers, config.segment_size);
        let blocking_budget = MemoryBudget::new(config.blocking_memory_budget);
        Arc::new(Self {
            config,
            pool,
            next_partition: AtomicU64::new(0),
            registry: Arc::new(PartitionRegistry::default()),
            blocking_budget,
            server: Mutex::new(None),
            connections: Mutex::new(HashMap::new()),
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

    /// The number, local pool (guaranteed `num_subpartitions + 1` buffers, growing up to
    /// `max`) and subpartitions of a new partition.
    fn new_partition(&self, num_subpartitions: usize, max: usize) -> Result<NewPartition, NetworkError> {
        self.config.validate()?;
        if num_subpartitions == 0 {
            return Err(NetworkError::InvalidArgument(
                "a result partition needs at least one subpartition".into(),
            ));
        }
        let min = num_subpartitions + 1;
        let pool = self.pool.create_local_pool(
            min,
            max.max(min),
            num_subpartitions,
            self.config.max_buffers_per_channel,
        )?;
        let partition = self.next_partition.fetch_add(1, Ordering::Relaxed);
        let subpartitions = (0..num_subpartitions)
            .map(|i| Subpartition::new(partition, i))
            .collect();
        Ok(NewPartition {
            number: partition,
            pool,
            subpartitions,
        })
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
        let max = num_subpartitions.saturating_mul(self.config.max_buffers_per_channel);
        let NewPartition {
            number: partition,
            pool,
            subpartitions: subs,
        } = self.new_partition(num_subpartitions, max)?;
        let handles = subs.iter().map(|s| SubpartitionHandle { inner: s.clone() }).collect();
        Ok((ResultPartitionWriter::new(partition, pool, subs, cancel), handles))
    }

    /// A blocking result partition with `num_subpartitions` subpartitions (named
    /// `label` in logs): the producer's writer, which stores everything in the returned
    /// partition without backpressure, and the partition to register with
    /// [`register_blocking_partition`](Self::register_blocking_partition).
    pub fn create_blocking_result_partition(
        &self,
        num_subpartitions: usize,
        label: String,
        cancel: CancelToken,
    ) -> Result<(ResultPartitionWriter, Arc<BlockingPartition>), NetworkError> {
        // Buffers go back to the pool as soon as they are stored: it never grows.
        let NewPartition {
            number: partition,
            pool,
            subpartitions: subs,
        } = self.new_partition(num_subpartitions, 0)?;
        let blocking = BlockingPartition::new(
            label,
            num_subpartitions,
            BlockingPartitionSettings {
                budget: self.blocking_budget.clone(),
                spill_dirs: self.config.tmp_dirs.clone(),
                pool: self.pool.clone(),
                max_buffers_per_channel: self.config.max_buffers_per_channel,
            },
        );
        let writer = ResultPartitionWriter::new_blocking(partition, pool, subs, cancel, blocking.clone());
        Ok((writer, blocking))
    }

    /// Bytes of blocking partitions this process holds in memory now.
    pub fn blocking_memory_used(&self) -> usize {
        self.blocking_budget.used()
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

    /// Starts this process's data server on `bind` (e.g. `"127.0.0.1:0"`) and returns
    /// the bound address. It serves the partition requests of remote consumers for
    /// the partitions registered with [`register_partition`](Self::register_partition).
    /// Fails with [`NetworkError::Bind`] when the address cannot be bound, and with
    /// [`NetworkError::InvalidArgument`] when a server runs already.
    pub fn start_data_server(self: &Arc<Self>, bind: &str) -> Result<SocketAddr, NetworkError> {
        let mut server = lock(&self.server);
        if let Some(s) = server.as_ref() {
            return Err(NetworkError::InvalidArgument(format!(
                "the data server runs already on {}",
                s.local_addr()
            )));
        }
        let started = DataServer::start(bind, self.registry.clone(), &self.config)?;
        let addr = started.local_addr();
        *server = Some(started);
        Ok(addr)
    }

    /// The address of the data server, once started.
    pub fn data_server_address(&self) -> Option<SocketAddr> {
        lock(&self.server).as_ref().map(DataServer::local_addr)
    }

    /// Makes a producer's subpartitions (`handles[i]` is subpartition `i`) available to
    /// Local and Remote consumers under `id`. Fails with
    /// [`NetworkError::InvalidArgument`] if `id` is registered already or `handles`
    /// is empty.
    pub fn register_partition(&self, id: PartitionId, handles: Vec<SubpartitionHandle>) -> Result<(), NetworkError> {
        self.registry.register(id, handles)
    }

    /// Makes a blocking partition readable under `id` by Local and Remote consumers,
    /// each read replaying it from the start, until it is released. Fails with
    /// [`NetworkError::InvalidArgument`] if `id` is registered already.
    pub fn register_blocking_partition(
        &self,
        id: PartitionId,
        partition: Arc<BlockingPartition>,
    ) -> Result<(), NetworkError> {
        self.registry.register_blocking(id, partition)
    }

    /// Releases one partition (its consumers are done with it): a blocking partition
    /// drops its data and spill file. False when it is not registered.
    pub fn release_partition(&self, id: &PartitionId) -> bool {
        self.registry.remove(id)
    }

    /// Releases the blocking partition `id` during its job (the JobMaster found every
    /// consumer finished): its memory goes back to the budget and its spill file is
    /// deleted; a later request for it fails at once with
    /// [`NetworkError::PartitionGone`] and `reason`. False when no unreleased blocking
    /// partition `id` is registered.
    pub fn release_blocking_partition(&self, id: &PartitionId, reason: &str) -> bool {
        self.registry.release_blocking(id, reason)
    }

    /// Bytes the registered (unreleased) blocking partitions hold: in memory, and in
    /// spill files.
    pub fn blocking_partition_bytes(&self) -> BlockingPartitionBytes {
        let mut out = BlockingPartitionBytes::default();
        for partition in self.registry.blocking_partitions() {
            let (memory, spilled) = partition.stored_bytes();
            out.memory += memory as u64;
            out.spilled += spilled;
            out.partitions += 1;
        }
        out
    }

    /// Drops every registered partition of a job (it ended or restarts): later
    /// requests for them find nothing, and remote readers still reading them fail
    /// with [`NetworkError::ProducerReleased`] while their producers get
    /// [`NetworkError::ConsumerReleased`]. Local gates already connected are not
    /// touched (their producer's and consumer's tasks end them).
    pub fn release_job_partitions(&self, job_id: &str) {
        self.release_job_partitions_before(job_id, u32::MAX);
    }

    /// Drops the registered partitions of a job whose `attempt` (the job's restart
    /// generation) is below `below_attempt`, leaving those of a newer generation that
    /// may already be deployed.
    pub fn release_job_partitions_before(&self, job_id: &str, below_attempt: u32) {
        self.registry.remove_job(job_id, below_attempt);
        if let Some(server) = lock(&self.server).as_ref() {
            server.release_job(job_id, below_attempt);
        }
    }

    /// Partitions currently registered.
    pub fn num_registered_partitions(&self) -> usize {
        self.registry.len()
    }

    /// An input gate over mixed channels, in the given order (channel index =
    /// position).
    ///
    /// Handles connect at once. Local and Remote specs whose partition is not
    /// registered yet are retried until it is (the producer may deploy after the
    /// consumer), up to `partition_request_timeout_ms` (then
    /// [`NetworkError::PartitionNotFound`]) or until `cancel`
    /// ([`NetworkError::Cancelled`]); the call returns once every remote request was
    /// accepted. Remote channels share one connection per address, opened on first
    /// use (when that fails, [`NetworkError::PartitionGone`] naming the partition and
    /// the connection's error: its producer's TaskManager is unreachable, as Flink's
    /// `PartitionConnectionException`). A gate with remote channels
    /// takes `remote channels × buffers_per_channel + floating_buffers_per_gate`
    /// receive buffers from this process's pool ([`NetworkError::PoolExhausted`] when
    /// they cannot be guaranteed).
    pub fn create_input_gate_from_specs(
        self: &Arc<Self>,
        specs: Vec<ChannelSpec>,
        cancel: CancelToken,
    ) -> Result<InputGate, NetworkError> {
        self.config.validate()?;
        if specs.is_empty() {
            return Err(NetworkError::InvalidArgument(
                "an input gate needs at least one channel".into(),
            ));
        }
        let timeout = self.config.partition_request_timeout();
        let start = Instant::now();
        let deadline = start
            .checked_add(timeout)
            .unwrap_or_else(|| start + Duration::from_secs(365 * 24 * 3600));
        let mut sources = Vec::with_capacity(specs.len());
        for spec in specs {
            sources.push(match spec {
                ChannelSpec::Handle(h) => ChannelSource::Local(h.inner),
                ChannelSpec::Local {
                    partition,
                    subpartition,
                } => match self
                    .registry
                    .wait_for(&partition, subpartition, deadline, timeout, &cancel)?
                {
                    LocalSubpartition::Queue(sub) => ChannelSource::Local(sub),
                    LocalSubpartition::Stored(reader) => ChannelSource::Stored(reader),
                },
                ChannelSpec::Remote {
                    address,
                    partition,
                    subpartition,
                } => ChannelSource::Remote(RemoteSource {
                    lease: self
                        .connection(&address)
                        .map_err(|e| e.for_partition(&partition, subpartition))?,
                    partition,
                    subpartition,
                }),
            });
        }
        let remote = sources.iter().filter(|s| matches!(s, ChannelSource::Remote(_))).count();
        let receive_pool = if remote > 0 {
            // Segments held by shrunk pools come back as they are recycled; wait for
            // them at least a while even with a short request timeout.
            let pool_deadline = deadline.max(Instant::now() + Duration::from_secs(10));
            Some(self.receive_pool(remote, pool_deadline, &cancel)?)
        } else {
            None
        };
        let stored_pool = if sources.iter().any(|s| matches!(s, ChannelSource::Stored(_))) {
            Some(
                self.pool
                    .create_local_pool(1, STORED_READ_BUFFERS, 0, STORED_READ_BUFFERS)?,
            )
        } else {
            None
        };
        let pools = GatePools {
            receive: receive_pool,
            stored: stored_pool,
        };
        let gate = InputGate::build(sources, &self.config, pools, cancel.clone())?;
        if remote > 0 {
            gate.await_remote_requests(deadline, timeout, &cancel)?;
        }
        Ok(gate)
    }

    /// A lease on the connection to `address`, opened if there is none or the last one
    /// failed or closed as idle.
    fn connection(&self, address: &str) -> Result<ConnectionLease, NetworkError> {
        let mut conns = lock(&self.connections);
        if let Some(lease) = conns.get(address).and_then(ClientConnShared::lease) {
            return Ok(lease);
        }
        let idle = Duration::from_millis(self.config.data_idle_timeout_ms.max(1));
        let conn = ClientConnShared::connect(address, self.config.tls.as_ref().map(|t| &t.client), idle)?;
        conns.insert(address.to_owned(), conn.clone());
        conn.lease().ok_or_else(|| NetworkError::Connect {
            address: address.to_owned(),
            reason: "the connection closed right after it was opened".to_owned(),
        })
    }

    /// A fixed pool of receive buffers for `remote` remote channels, with every
    /// segment taken from the global pool now so that the connection's reader never
    /// waits for one.
    fn receive_pool(
        &self,
        remote: usize,
        deadline: Instant,
        cancel: &CancelToken,
    ) -> Result<LocalBufferPool, NetworkError> {
        let size = remote
            .saturating_mul(self.config.buffers_per_channel)
            .saturating_add(self.config.floating_buffers_per_gate)
            .max(1);
        let pool = self
            .pool
            .create_local_pool(size, size, 0, self.config.max_buffers_per_channel)?;
        let mut held = Vec::with_capacity(size);
        while held.len() < size {
            match pool.try_request_buffer(None) {
                Some(b) => held.push(b),
                None => {
                    // Segments still held by pools that shrunk come back as they are recycled.
                    if cancel.is_cancelled() {
                        return Err(NetworkError::Cancelled);
                    }
                    if Instant::now() >= deadline {
                        return Err(NetworkError::PoolExhausted {
                            required: size,
                            available: held.len(),
                            total: self.pool.total_buffers(),
                            segment_size: self.pool.segment_size(),
                        });
                    }
                    std::thread::sleep(CANCEL_POLL_INTERVAL / 4);
                }
            }
        }
        // Back into the pool, which keeps them: its size never changes.
        drop(held);
        Ok(pool)
    }

    /// Live data connections this process opened to other processes' data servers
    /// (one per remote address).
    pub fn num_connections(&self) -> usize {
        lock(&self.connections).values().filter(|c| !c.is_closed()).count()
    }

    /// Remote channels registered at this process's client connections.
    #[cfg(test)]
    pub(crate) fn num_registered_remote_channels(&self) -> usize {
        lock(&self.connections).values().map(|c| c.num_channels()).sum()
    }

    /// Partition requests of this process that a data server answered "not
    /// registered" (each one is re-sent after a backoff).
    #[cfg(test)]
    pub(crate) fn num_partition_not_found_answers(&self) -> u64 {
        lock(&self.connections)
            .values()
            .map(|c| c.num_not_found_answers())
            .sum()
    }

    /// Local consumers waiting for a partition of this process to be registered.
    #[cfg(test)]
    pub(crate) fn num_local_partition_waiters(&self) -> usize {
        self.registry.num_waiting()
    }

    /// Live connections other processes opened to this process's data server.
    pub fn num_server_connections(&self) -> usize {
        lock(&self.server).as_ref().map_or(0, DataServer::num_connections)
    }

    /// Stops the data server and closes every data connection: remote channels of
    /// this process fail with [`NetworkError::ConnectionLost`], subpartitions served
    /// to other processes are released. Local exchange keeps working.
    pub fn shutdown(&self) {
        if let Some(server) = lock(&self.server).take() {
            server.shutdown();
        }
        let conns: Vec<_> = lock(&self.connections).drain().map(|(_, c)| c).collect();
        for c in conns {
            c.fail("the network environment shut down");
        }
    }

    /// Releases every blocking partition of this process: their memory goes back to
    /// the budget and their spill files are deleted (a TaskManager shutting down leaves
    /// no files behind); later readers are told `reason`.
    pub fn release_all_blocking_partitions(&self, reason: &str) {
        self.registry.release_all_blocking(reason);
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

impl Drop for NetworkEnvironment {
    fn drop(&mut self) {
        self.shutdown();
    }
}
