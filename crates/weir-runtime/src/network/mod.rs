//! The network stack: how records travel between operator chains.
//!
//! A producer's chain ends in a [`RecordWriter`] that serialises records into
//! fixed-size [`Buffer`]s taken from its result partition's [`LocalBufferPool`], a
//! share of the process-wide [`NetworkBufferPool`]. Finished buffers and in-band events
//! are queued, in order, in one subpartition per consumer. A consumer's
//! [`InputGate`] has one input channel per subpartition it reads and takes buffers
//! from them under credit-based flow control ([`credit`]); a [`RecordReader`] decodes
//! them back into records. The barrier of an unaligned checkpoint travels as a
//! *priority event*: it overtakes the buffers queued in the subpartition (which the
//! producer persists as output channel state) and in a remote channel's receive queue
//! (which the consumer persists as input channel state), see `channel_queue`.
//! Within a process buffers are moved, never copied, from
//! producer to consumer, and return to their pool when dropped. Between processes
//! ([`transport`]) a subpartition is read by the producer process's data server and sent
//! over one multiplexed TCP connection per pair of processes, under the same credit
//! protocol, into receive buffers of the consumer's gate.
//!
//! Memory is bounded everywhere: every buffer is one of `total_buffers` segments, a
//! partition holds at most its pool's size, a subpartition at most
//! `max_buffers_per_channel` and [`partition::subpartition::MAX_QUEUED_EVENTS`] events, and a
//! channel receives only against credit. Backpressure is a producer blocked in
//! [`ResultPartitionWriter::request_buffer`]; a stalled channel stalls only itself.
//!
//! Folders and files, as Flink's `io.network` packages:
//! - [`buffer`]: network buffers and their pools;
//! - [`partition`]: the producer side (record writer, result partitions, pipelined and
//!   blocking subpartitions, the partition registry);
//! - [`consumer`]: the consumer side (input gates, channel specs, the record reader);
//! - [`transport`]: channels between processes over TCP (data server, client
//!   connections, wire protocol, TLS streams);
//! - shared by both sides: [`credit`] (the flow-control state machines),
//!   `channel_queue` (a channel's queue with priority events at its head), [`cancel`]
//!   (waking blocked calls), [`config`] (sizes), [`error`], and [`environment`]
//!   (creating partitions and gates: the one place that wires them together).

pub mod buffer;
pub mod cancel;
pub(crate) mod channel_queue;
pub mod config;
pub mod consumer;
pub mod credit;
pub mod environment;
pub mod error;
pub mod partition;
pub mod transport;

#[cfg(test)]
mod tests;

pub use buffer::{Buffer, BufferOrEvent, LocalBufferPool, NetworkBufferPool, PoolUsage, PriorityEvent};
pub use cancel::{CancelToken, CANCEL_POLL_INTERVAL};
pub use config::NetworkConfig;
pub use consumer::channel_spec::ChannelSpec;
pub use consumer::input_gate::InputGate;
pub use consumer::record_reader::{ReaderEvent, RecordReader};
pub use credit::{ReceiverCredits, ReceiverDecision, SenderCredit, SenderDecision};
pub use environment::{BlockingPartitionBytes, NetworkEnvironment};
pub use error::NetworkError;
pub use partition::blocking_partition::{BlockingPartition, BlockingPartitionSettings, MemoryBudget};
pub use partition::partition_id::PartitionId;
pub use partition::record_writer::RecordWriter;
pub use partition::result_partition::ResultPartitionWriter;
pub use partition::subpartition::SubpartitionHandle;
pub use transport::DataPlaneTls;
