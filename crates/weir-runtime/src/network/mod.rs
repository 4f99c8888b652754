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
//! ([`remote`]) a subpartition is read by the producer process's data server and sent
//! over one multiplexed TCP connection per pair of processes, under the same credit
//! protocol, into receive buffers of the consumer's gate.
//!
//! Memory is bounded everywhere: every buffer is one of `total_buffers` segments, a
//! partition holds at most its pool's size, a subpartition at most
//! `max_buffers_per_channel` and [`subpartition::MAX_QUEUED_EVENTS`] events, and a
//! channel receives only against credit. Backpressure is a producer blocked in
//! [`ResultPartitionWriter::request_buffer`]; a stalled channel stalls only itself.
//!
//! Files: [`config`] (sizes), [`error`], [`cancel`] (waking blocked calls),
//! [`buffer`] (pools and buffers), [`credit`] (the flow-control state machines),
//! `channel_queue` (a channel's queue with priority events at its head),
//! [`subpartition`] (state shared by a subpartition and its local channel),
//! [`partition_id`] (naming a partition cluster-wide), [`result_partition`] (producer side), [`blocking_partition`] (a producer's whole
//! output kept for BLOCKING edges, in memory and spill files), `stored_subpartition` (reading
//! a finished one back: in the consumer's thread, or replayed for a remote consumer),
//! [`input_gate`] (consumer side),
//! [`environment`] (creating partitions and gates), [`record_writer`] and
//! [`record_reader`] (typed records on top), [`remote`] (channels between processes
//! over TCP: data server, connections, wire protocol).

pub mod blocking_partition;
pub mod buffer;
pub mod cancel;
pub(crate) mod channel_queue;
pub mod config;
pub mod credit;
pub mod environment;
pub mod error;
pub mod input_gate;
pub mod partition_id;
pub mod record_reader;
pub mod record_writer;
pub mod remote;
pub mod result_partition;
pub(crate) mod stored_subpartition;
pub mod subpartition;

#[cfg(test)]
mod tests;

pub use blocking_partition::{BlockingPartition, BlockingPartitionSettings, MemoryBudget};
pub use buffer::{Buffer, BufferOrEvent, LocalBufferPool, NetworkBufferPool, PoolUsage, PriorityEvent};
pub use cancel::{CancelToken, CANCEL_POLL_INTERVAL};
pub use config::NetworkConfig;
pub use credit::{ReceiverCredits, ReceiverDecision, SenderCredit, SenderDecision};
pub use environment::{BlockingPartitionBytes, NetworkEnvironment};
pub use error::NetworkError;
pub use input_gate::InputGate;
pub use record_reader::{ReaderEvent, RecordReader};
pub use record_writer::RecordWriter;
pub use remote::{ChannelSpec, DataPlaneTls, PartitionId};
pub use result_partition::ResultPartitionWriter;
pub use subpartition::SubpartitionHandle;
