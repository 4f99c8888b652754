//! Data exchange between TaskManager processes over TCP: a consumer's input channel in
//! one process reads a producer's subpartition in another.
//!
//! # Parts
//!
//! - [`PartitionId`] names a result partition cluster-wide; a producer makes its
//!   subpartitions reachable with `NetworkEnvironment::register_partition` (kept in
//!   the process's `PartitionRegistry`).
//! - The **data server** (`server`) of a process accepts connections from the other
//!   processes and serves their partition requests: per requested channel it reads the
//!   subpartition directly (the subpartition's consumer is the connection instead of
//!   an in-process gate) and forwards buffers only against the credit the remote
//!   consumer announced ([`SenderCredit`](crate::network::SenderCredit), exactly as in-process).
//! - The **client** (`client`) side opens at most one connection per remote address,
//!   lazily, shared by every remote input channel of the process to that address. A
//!   remote channel is an input channel of an ordinary
//!   [`InputGate`](crate::network::InputGate), next to local ones; its gate owns real receive
//!   buffers (see below) and drives the same [`ReceiverCredits`](crate::network::ReceiverCredits).
//! - `protocol` encodes and decodes the frames; `transport` carries them over plain
//!   TCP or mutual TLS ([`DataPlaneTls`]).
//! - Bounds: the data server serves at most `data_max_connections` connections and as
//!   many in their handshake, at most `data_max_connections_per_peer` from one address
//!   (`weir_core::admission`: a new connection closes the oldest one still in its
//!   handshake instead of being refused; a refused burst logs one warning), closes a
//!   connection whose TLS handshake and hello take longer than
//!   `data_handshake_timeout_ms`, and one that serves no channel and stays silent for
//!   `data_idle_timeout_ms`.
//!
//! # Wire protocol (version [`PROTOCOL_VERSION`])
//!
//! All integers are big-endian. A connection starts with a **handshake**: the client
//! sends `magic: u32 = MAGIC ("WEIR") | version: u16 | reserved: u16 = 0`; the server
//! answers with its own 8 bytes of the same layout. A server that reads a wrong magic
//! logs a warning and closes the connection without answering; a server that reads
//! another version answers with its hello and a connection-wide `ErrorResponse`
//! (`VersionMismatch`) and closes. A client that reads a wrong magic or version fails
//! with [`NetworkError::Connect`], which a gate being created reports as
//! [`NetworkError::PartitionGone`] of the partition it wanted to read.
//!
//! Then both directions carry **frames**:
//!
//! ```text
//! frame := length: u32 | type: u8 | body          length = 1 + body length, at most MAX_FRAME_LENGTH
//!
//! type 1 PartitionRequest        (client → server)
//!        channel: u64 | subpartition: u32 | credit: u32 | event_credit: u32
//!        | job_edge: u32 | producer_subtask: u32 | attempt: u32 | job_id_len: u16 | job_id: utf-8
//! type 2 AddCredit               (client → server)  channel: u64 | credit: u32 | event_credit: u32
//! type 3 CancelPartitionRequest  (client → server)  channel: u64
//! type 4 PartitionRequestAccepted (server → client) channel: u64
//! type 5 BufferResponse          (server → client)
//!        channel: u64 | sequence: u64 | backlog: u32
//!        | kind: u8 (0 data buffer, 1 event, 2 priority event)
//!        | size: u32 | bytes[size]    (a buffer's bytes, or the Event in weir_core's codec;
//!                                     since version 2 a barrier's options include its
//!                                     alignment and aligned-checkpoint timeout)
//! type 6 BacklogAnnouncement     (server → client)  channel: u64 | backlog: u32
//! type 7 ErrorResponse           (server → client)
//!        channel: u64 (u64::MAX = the whole connection) | code: u8 | message_len: u32 | message: utf-8
//! ```
//!
//! `channel` is chosen by the client, unique per connection, and names one logical
//! channel (one subpartition read by one input channel) in every later frame.
//! `sequence` counts the BufferResponses of a channel from 0; a gap is a protocol
//! violation that fails the channel. Error codes: 1 PartitionNotFound (the client
//! retries with backoff until `partition_request_timeout_ms`), 2 ProducerFailed (the
//! producer went away before EndOfPartition; the consumer sees
//! [`NetworkError::ProducerReleased`] as
//! in-process), 3 PartitionReleased (`release_job_partitions`; the same), 4
//! AlreadyConsumed, 5 InvalidRequest, 6 VersionMismatch, 7 PartitionGone (a blocking
//! partition released once its consumers finished; the consumer fails at once with
//! [`NetworkError::PartitionGone`] and the message as its reason), 8 PartitionFailed (a
//! blocking partition's replay could not read its stored data, e.g. a truncated spill
//! file; the consumer fails with [`NetworkError::Remote`] carrying the message).
//!
//! # Flow control
//!
//! - A request carries the channel's initial credit (its `buffers_per_channel`
//!   exclusive buffers) and its event window. The server sends a **data buffer** only
//!   against credit, and every buffer carries the backlog left behind it; a sender at
//!   zero credit with a backlog sends one **BacklogAnnouncement** (so that channels
//!   without exclusive buffers get floating ones). The receiver grants floating
//!   buffers on backlog and returns credit with **AddCredit** when the consumer drops a
//!   buffer ([`ReceiverCredits`](crate::network::ReceiverCredits), the same state machine as
//!   in-process).
//! - **Events** need no buffer credit but are bounded by an event window
//!   ([`EVENT_WINDOW`] in flight per channel, returned with AddCredit as the consumer
//!   takes them), so a consumer that never reads cannot make its receive queue grow.
//! - **Priority events** (version 3; the barriers of unaligned checkpoints) are events
//!   that overtook the buffers queued in the producer's subpartition: the server sends
//!   one as soon as it is queued, serving its channel first, and the client queues it
//!   ahead of the buffers of that channel it received before it (which travel with it
//!   to the consumer as the data it overtook) and makes its gate serve the channel
//!   first. They count in the event window like every event; the sequence numbers
//!   stay in sending order.
//! - Receive buffers are real: an input gate with remote channels takes a fixed local
//!   pool of `remote channels × buffers_per_channel + floating_buffers_per_gate`
//!   segments from the process's `NetworkBufferPool` (allocated when the gate is
//!   created) and copies every received data buffer into one of them. Credit
//!   guarantees the pool never runs dry: a data buffer without a free receive buffer
//!   is a protocol violation.
//!
//! # Invariants
//!
//! - A stalled channel never stalls the connection: the client's reader thread never
//!   blocks on anything but the socket (receive buffers exist by credit, control
//!   frames are coalesced per channel in a table bounded by the number of channels),
//!   and the server sends only what the receiver can take.
//! - No unbounded queue: per connection the server's queue of available channels holds
//!   each channel at most once, its control queue at most [`MAX_CONTROL_QUEUE`]
//!   frames (the connection's reader waits beyond); the client's per-channel receive
//!   queue holds at most its credit in buffers and [`EVENT_WINDOW`] events.
//! - Per connection, one reader thread and one writer thread on each side; the writers
//!   batch frames in a `BufWriter` and flush when they run out of work. Locks are
//!   taken per buffer, never per record.
//! - Untrusted input never panics: a peer sending garbage (bad magic, unknown frame
//!   type, length beyond [`MAX_FRAME_LENGTH`], truncated or malformed frame) gets its
//!   connection closed with a `tracing::warn!`; the server keeps serving the others.
//! - Losing a connection fails every remote channel on it with
//!   [`NetworkError::ConnectionLost`] naming the
//!   address (after the data received before), and releases every subpartition the
//!   server served on it (their producers see `ConsumerReleased`). A consumer that
//!   goes away (gate dropped) sends CancelPartitionRequest, with the same effect for
//!   its channels only.
//!
//! Lock order (extends the in-process one): subpartition → server connection queue;
//! remote channel → gate; the client connection's table is a leaf (nothing else is
//! locked while it is held).
//!
//! [`NetworkError::Connect`]: crate::network::NetworkError::Connect
//! [`NetworkError::ConnectionLost`]: crate::network::NetworkError::ConnectionLost
//! [`NetworkError::PartitionGone`]: crate::network::NetworkError::PartitionGone
//! [`NetworkError::ProducerReleased`]: crate::network::NetworkError::ProducerReleased
//! [`NetworkError::Remote`]: crate::network::NetworkError::Remote

#[cfg(test)]
mod admission_tests;
pub(crate) mod client;
pub(crate) mod protocol;
#[cfg(test)]
mod protocol_fuzz;
pub(crate) mod server;
pub(crate) mod stream;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tls_tests;

use crate::network::partition::subpartition::MAX_QUEUED_EVENTS;

pub use crate::network::consumer::channel_spec::ChannelSpec;
pub use crate::network::partition::partition_id::PartitionId;
pub use protocol::{MAGIC, MAX_FRAME_LENGTH, PROTOCOL_VERSION};
pub use stream::DataPlaneTls;

/// Events one remote channel may have in flight (sent and not yet taken by the
/// consumer).
pub const EVENT_WINDOW: usize = MAX_QUEUED_EVENTS;

/// Control frames a server connection queues before its reader stops reading requests.
pub const MAX_CONTROL_QUEUE: usize = 1024;
