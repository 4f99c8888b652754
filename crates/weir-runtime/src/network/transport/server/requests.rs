//! What a data connection's reader does after the handshake: reads the client's
//! partition requests, credit and cancels until the client closes, the connection idles
//! (serves no channel and is silent for `taskmanager.data.idle-timeout`) or the client
//! breaks the protocol.
//!
//! Invariant: a channel is registered and accepted before its subpartition can queue
//! it, so the acceptance precedes the channel's data and the writer finds the channel.

use super::super::protocol::{self, ControlFrame, ErrorCode, Frame, WireError};
use super::connection::{ServerChannel, ServerConnShared};
use crate::network::buffer::lock;
use crate::network::partition::partition_id::PartitionId;
use crate::network::partition::registry::{Lookup, PartitionRegistry};
use std::io::{BufRead, BufReader, ErrorKind};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// How a connection ended without a protocol error.
pub(super) enum Closed {
    /// The peer closed it.
    ByPeer,
    /// It served no channel and stayed silent for the idle timeout.
    Idle,
}

impl ServerConnShared {
    /// Reads requests until the peer closes or the connection idles (`Ok`), or the
    /// peer misbehaves (`Err` with the reason). The socket's read timeout is `idle`:
    /// a timeout between frames closes a connection that serves no channel; one
    /// inside a frame is an error.
    pub(super) fn read_loop(self: &Arc<Self>, registry: &PartitionRegistry, idle: Duration) -> Result<Closed, String> {
        let Some(stream) = lock(&self.reader).take() else {
            return Err("no reading end".into());
        };
        let mut input = BufReader::with_capacity(64 * 1024, stream);
        let mut scratch = Vec::new();
        loop {
            match input.fill_buf() {
                Ok([]) => return Ok(Closed::ByPeer),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if self.state().channels.is_empty() {
                        tracing::debug!(peer = %self.peer, idle_ms = idle.as_millis() as u64, "data connection idle");
                        return Ok(Closed::Idle);
                    }
                    continue;
                }
                Err(_) if self.state().closed => return Ok(Closed::ByPeer),
                Err(e) => return Err(format!("read failed: {e}")),
            }
            let frame = match protocol::read_frame(&mut input, &mut scratch) {
                Ok(Some(Frame::Control(frame))) => frame,
                Ok(Some(Frame::Buffer(_))) => return Err("a client sent a BufferResponse".into()),
                Ok(None) => return Ok(Closed::ByPeer),
                Err(WireError::Io(e)) if self.state().closed => {
                    tracing::debug!(peer = %self.peer, error = %e, "data connection closed");
                    return Ok(Closed::ByPeer);
                }
                Err(e) => return Err(e.to_string()),
            };
            match frame {
                ControlFrame::PartitionRequest {
                    channel,
                    partition,
                    subpartition,
                    credit,
                    event_credit,
                } => self.on_partition_request(registry, channel, partition, subpartition, credit, event_credit)?,
                ControlFrame::AddCredit {
                    channel,
                    credit,
                    event_credit,
                } => {
                    let ch = self.state().channels.get(&channel).cloned();
                    // Credit for a channel that ended or was cancelled is stale, not an error.
                    if let Some(ch) = ch {
                        if ch.sub.add_remote_credit(credit as usize, event_credit as usize) {
                            self.enqueue_channel(channel);
                        }
                    }
                }
                ControlFrame::CancelPartitionRequest { channel } => {
                    if let Some(ch) = self.remove_channel(channel) {
                        ch.sub.release_consumer();
                    }
                }
                other => return Err(format!("unexpected frame from a client: {other:?}")),
            }
        }
    }

    fn on_partition_request(
        self: &Arc<Self>,
        registry: &PartitionRegistry,
        channel: u64,
        partition: PartitionId,
        subpartition: u32,
        credit: u32,
        event_credit: u32,
    ) -> Result<(), String> {
        if channel == protocol::CONNECTION_WIDE || self.state().channels.contains_key(&channel) {
            return Err(format!("partition request on channel {channel}, which is in use"));
        }
        let error = |code, message| ControlFrame::ErrorResponse {
            channel: Some(channel),
            code,
            message,
        };
        let sub = match registry.lookup(&partition, subpartition) {
            Lookup::Found(sub) => sub,
            Lookup::NotFound => {
                let message = format!("partition {partition} is not registered");
                self.push_control(error(ErrorCode::PartitionNotFound, message), true);
                return Ok(());
            }
            Lookup::NoSuchSubpartition(n) => {
                let message = format!("partition {partition} has {n} subpartitions; {subpartition} requested");
                self.push_control(error(ErrorCode::InvalidRequest, message), true);
                return Ok(());
            }
            Lookup::Gone(reason) => {
                self.push_control(error(ErrorCode::PartitionGone, reason), true);
                return Ok(());
            }
            Lookup::Failed(reason) => {
                let message = format!("partition {partition}: {reason}");
                self.push_control(error(ErrorCode::InvalidRequest, message), true);
                return Ok(());
            }
        };
        if !sub.try_claim() {
            let message = format!("subpartition {subpartition} of partition {partition} is consumed already");
            self.push_control(error(ErrorCode::AlreadyConsumed, message), true);
            return Ok(());
        }
        tracing::debug!(peer = %self.peer, channel, partition = %partition, subpartition, "serving a remote channel");
        let ch = Arc::new(ServerChannel {
            id: channel,
            partition,
            sub: sub.clone(),
            next_sequence: AtomicU64::new(0),
        });
        // Registered and accepted before the subpartition can queue the channel, so the
        // acceptance precedes the channel's data and the writer finds the channel.
        {
            let mut st = self.state();
            if st.closed {
                drop(st);
                sub.release_consumer();
                return Ok(());
            }
            st.channels.insert(channel, ch);
        }
        self.push_control(ControlFrame::PartitionRequestAccepted { channel }, true);
        let conn: Weak<ServerConnShared> = Arc::downgrade(self);
        if sub.attach_remote(conn, channel, credit as usize, event_credit as usize) {
            self.enqueue_channel(channel);
        }
        Ok(())
    }
}
