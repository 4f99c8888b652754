//! Errors of the network stack: [`NetworkError`].
//!
//! Owns the error type only. Every blocking call that is cancelled returns
//! [`NetworkError::Cancelled`]; protocol violations (which indicate a bug, never bad
//! input) are [`NetworkError::Protocol`].

use super::partition::partition_id::PartitionId;
use thiserror::Error;

/// Why a network operation failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NetworkError {
    /// The task's [`CancelToken`](super::CancelToken) was cancelled while it waited.
    #[error("the network operation was cancelled")]
    Cancelled,
    /// The global buffer pool cannot guarantee a new local pool its minimum size.
    #[error(
        "Insufficient number of network buffers: required {required}, but only {available} available. \
         The total number of network buffers is currently set to {total} of {segment_size} bytes each."
    )]
    PoolExhausted {
        /// Buffers the new pool needs at least.
        required: usize,
        /// Buffers not yet guaranteed to other pools.
        available: usize,
        /// Buffers in the global pool.
        total: usize,
        /// Bytes per buffer.
        segment_size: usize,
    },
    /// The consumer of a subpartition released it (it finished, failed or was
    /// cancelled); nothing more can be written to it.
    #[error("the consumer of subpartition {subpartition} has released it")]
    ConsumerReleased {
        /// The released subpartition.
        subpartition: usize,
    },
    /// The producer of an input channel went away before it sent EndOfPartition
    /// (it failed or was cancelled).
    #[error("the producer of input channel {channel} released its partition before EndOfPartition")]
    ProducerReleased {
        /// The input channel whose producer is gone.
        channel: usize,
    },
    /// A subpartition is already read by an input gate.
    #[error("subpartition {subpartition} of partition {partition} is already consumed by an input gate")]
    AlreadyConnected {
        /// Process-local number of the result partition.
        partition: u64,
        /// The subpartition.
        subpartition: usize,
    },
    /// A subpartition or channel index out of range, or an empty partition or gate.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The network configuration is unusable.
    #[error("invalid network configuration: {0}")]
    InvalidConfig(String),
    /// A record could not be encoded into a buffer.
    #[error("cannot encode record: {0}")]
    Encode(String),
    /// The byte stream of a channel could not be decoded.
    #[error("corrupt network stream: {0}")]
    Corrupt(String),
    /// The flow-control protocol was violated (a bug in the network stack, or a peer
    /// that does not follow the data protocol).
    #[error("network protocol violation: {0}")]
    Protocol(String),
    /// The data server could not be started.
    #[error("cannot start the data server on {address}: {reason}")]
    Bind {
        /// The address it should listen on.
        address: String,
        /// Why binding failed.
        reason: String,
    },
    /// No data connection to a TaskManager could be established (connect or
    /// handshake failed, e.g. a protocol version mismatch).
    #[error("cannot connect to the data server at {address}: {reason}")]
    Connect {
        /// The remote data server (`host:port`).
        address: String,
        /// Why.
        reason: String,
    },
    /// The data connection to a TaskManager broke while channels were using it.
    #[error("connection to the data server at {address} lost: {reason}")]
    ConnectionLost {
        /// The remote data server (`host:port`).
        address: String,
        /// What happened (I/O error, corrupt stream, peer closed, shutdown).
        reason: String,
    },
    /// A consumed result partition was not registered within the partition request
    /// timeout (its producer was not deployed in time, or it was released).
    #[error(
        "result partition {partition} (subpartition {subpartition}) not found at {address} within {timeout_ms} ms"
    )]
    PartitionNotFound {
        /// The partition (shown as `job/edge/subtask/attempt`).
        partition: PartitionId,
        /// The requested subpartition.
        subpartition: u32,
        /// The data server asked, or `local` for a partition of this process.
        address: String,
        /// How long the consumer waited.
        timeout_ms: u64,
    },
    /// A consumed result partition existed but is gone (Flink's
    /// `PartitionNotFoundException` for a released partition): its consumers finished
    /// and the JobManager released it, or its job released it. Its producer must run
    /// again before it can be read.
    #[error("result partition {partition} (subpartition {subpartition}) at {address} is gone: {reason}")]
    PartitionGone {
        /// The partition (shown as `job/edge/subtask/attempt`).
        partition: PartitionId,
        /// The requested subpartition.
        subpartition: u32,
        /// The data server asked, or `local` for a partition of this process.
        address: String,
        /// Why it is gone.
        reason: String,
    },
    /// A blocking partition could not write or read its spill file.
    #[error("blocking partition {partition}: spill file {path}: {reason}")]
    Spill {
        /// The partition.
        partition: String,
        /// The spill file (or its directory when it could not be created).
        path: String,
        /// What failed.
        reason: String,
    },
    /// The remote data server rejected a partition request or failed a channel for a
    /// reason other than its producer going away.
    #[error("the data server at {address} reported: {message}")]
    Remote {
        /// The remote data server (`host:port`).
        address: String,
        /// Its error message.
        message: String,
    },
}

impl NetworkError {
    /// True for [`NetworkError::Cancelled`].
    pub fn is_cancelled(&self) -> bool {
        matches!(self, NetworkError::Cancelled)
    }

    /// The error of reading `partition` when this one stopped it: a failed connection to
    /// the producer's data server means the partition is gone for this consumer
    /// ([`NetworkError::PartitionGone`] with the connection's error as the reason, as
    /// Flink's `PartitionConnectionException`); other errors are unchanged.
    pub fn for_partition(self, partition: &PartitionId, subpartition: u32) -> NetworkError {
        match self {
            NetworkError::Connect { address, reason } => NetworkError::PartitionGone {
                partition: partition.clone(),
                subpartition,
                address,
                reason: format!("cannot connect to its data server: {reason}"),
            },
            other => other,
        }
    }

    /// The partition this error says is missing (not found or gone): its producer must
    /// run again for a consumer to read it.
    pub fn missing_partition(&self) -> Option<&PartitionId> {
        match self {
            NetworkError::PartitionNotFound { partition, .. } | NetworkError::PartitionGone { partition, .. } => {
                Some(partition)
            }
            _ => None,
        }
    }

    /// True when the task at the other end of a local exchange went away first (its
    /// producer released the partition before EndOfPartition, or its consumer released
    /// the subpartition): that task failed or was cancelled and reports its own cause,
    /// so this one ends as cancelled, as Flink's `ProducerFailedException` (a
    /// `CancelTaskException`) makes it.
    pub fn is_peer_gone(&self) -> bool {
        matches!(
            self,
            NetworkError::ProducerReleased { .. } | NetworkError::ConsumerReleased { .. }
        )
    }
}
