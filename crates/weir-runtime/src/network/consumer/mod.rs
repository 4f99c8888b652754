//! The consumer side of an exchange: a task's input as input gates with one input
//! channel per producer subpartition it reads (Flink's `io.network.partition.consumer`).
//!
//! - [`channel_spec`]: where a channel reads from (in-process handle, a partition of
//!   this process, or one in another process).
//! - [`input_gate`]: the `InputGate`, with the queue of
//!   available channels, receive buffers and credit for remote channels, priority
//!   events first.
//! - [`record_reader`]: buffers decoded back into typed records and events.
//!
//! The remote channel itself (the client end of a connection) is in
//! [`transport`](super::transport).

pub mod channel_spec;
pub mod input_gate;
pub mod record_reader;
