//! The consumer side of remote channels: a [`connection`] per data server this
//! process reads from, the [`input_channel`]s of input gates on them, and
//! [`partition_requests`], which waits for their requests to be answered.
//!
//! Dependencies point one way: input channels use their connection; the connection
//! reaches channels only through [`ChannelReceiver`](connection::ChannelReceiver), and channels reach their gate only
//! through [`RemoteGate`].

pub(crate) mod connection;
pub(crate) mod input_channel;
pub(crate) mod partition_requests;

pub(crate) use connection::{ClientConnShared, ConnectionLease};
pub(crate) use input_channel::{RemoteGate, RemoteInputChannel, RemoteSource};
pub(crate) use partition_requests::await_requests;
