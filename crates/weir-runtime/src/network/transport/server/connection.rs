//! One accepted connection of the data server: the channels it serves, the queue of
//! channels with something to send, the control frames waiting for the writer, and
//! closing it.
//!
//! Invariants: a channel id is in `available` at most once (the subpartition's
//! `in_gate_queue` flag); `control` holds at most [`MAX_CONTROL_QUEUE`] frames pushed
//! by the reader (which waits for space); a channel is in `channels` from its accepted
//! request until EndOfPartition or a failure was written, or until the client cancels
//! it — then its subpartition is released as consumer; closing the connection releases
//! every channel still in `channels`. Lock order: subpartition → connection state.

use super::super::protocol::{ControlFrame, ErrorCode};
use super::super::{PartitionId, MAX_CONTROL_QUEUE};
use crate::network::buffer::lock;
use crate::network::partition::availability::BufferAvailabilityListener;
use crate::network::partition::subpartition::Subpartition;
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// One requested channel on a server connection.
pub(super) struct ServerChannel {
    pub(super) id: u64,
    pub(super) partition: PartitionId,
    pub(super) sub: Arc<Subpartition>,
    /// Sequence number of the next BufferResponse (touched by the writer only).
    pub(super) next_sequence: AtomicU64,
}

/// One accepted connection of the data server.
pub(crate) struct ServerConnShared {
    pub(super) id: u64,
    pub(super) peer: String,
    /// A handle on the socket for shutting it down.
    pub(super) stream: TcpStream,
    /// The reading half, taken by the read loop.
    pub(super) reader: Mutex<Option<Box<dyn Read + Send>>>,
    state: Mutex<ServerConnState>,
    /// Wakes the writer.
    pub(super) wake: Condvar,
    /// Wakes the reader waiting for control queue space.
    pub(super) space: Condvar,
}

pub(super) struct ServerConnState {
    pub(super) channels: HashMap<u64, Arc<ServerChannel>>,
    pub(super) available: VecDeque<u64>,
    pub(super) control: VecDeque<ControlFrame>,
    pub(super) closed: bool,
}

impl ServerConnShared {
    /// Connection `id` with `peer` on `stream`, whose reading half is `reader`, serving
    /// no channel yet.
    pub(super) fn new(id: u64, peer: &str, stream: TcpStream, reader: Box<dyn Read + Send>) -> Self {
        Self {
            id,
            peer: peer.to_owned(),
            stream,
            reader: Mutex::new(Some(reader)),
            state: Mutex::new(ServerConnState {
                channels: HashMap::new(),
                available: VecDeque::new(),
                control: VecDeque::new(),
                closed: false,
            }),
            wake: Condvar::new(),
            space: Condvar::new(),
        }
    }

    pub(super) fn state(&self) -> MutexGuard<'_, ServerConnState> {
        lock(&self.state)
    }

    /// Queues `channel` at the writer (its subpartition marked itself queued).
    pub(crate) fn enqueue_channel(&self, channel: u64) {
        let mut st = self.state();
        if st.closed {
            return;
        }
        st.available.push_back(channel);
        drop(st);
        self.wake.notify_one();
    }

    /// `channel` got a priority event: serve it first. `queued`: it is marked queued
    /// already; it is moved to the front when it is in the queue.
    pub(crate) fn enqueue_priority_channel(&self, channel: u64, queued: bool) {
        let mut st = self.state();
        if st.closed {
            return;
        }
        if queued {
            match st.available.iter().position(|&c| c == channel) {
                Some(at) => {
                    st.available.remove(at);
                }
                None => return,
            }
        }
        st.available.push_front(channel);
        drop(st);
        self.wake.notify_one();
    }

    /// Queues a control frame; with `wait`, waits while the control queue is full.
    pub(super) fn push_control(&self, frame: ControlFrame, wait: bool) {
        let mut st = self.state();
        while wait && !st.closed && st.control.len() >= MAX_CONTROL_QUEUE {
            st = match self.space.wait(st) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
        if st.closed {
            return;
        }
        st.control.push_back(frame);
        drop(st);
        self.wake.notify_one();
    }

    pub(super) fn remove_channel(&self, id: u64) -> Option<Arc<ServerChannel>> {
        self.state().channels.remove(&id)
    }

    /// Closes the connection: the writer stops, the socket is shut down, and every
    /// channel still served is released as consumer.
    pub(crate) fn close(&self, reason: &str) {
        let channels: Vec<_> = {
            let mut st = self.state();
            if st.closed {
                return;
            }
            st.closed = true;
            st.available.clear();
            st.control.clear();
            st.channels.drain().map(|(_, c)| c).collect()
        };
        self.wake.notify_all();
        self.space.notify_all();
        let _ = self.stream.shutdown(Shutdown::Both);
        if !channels.is_empty() {
            tracing::debug!(peer = %self.peer, channels = channels.len(), reason, "releasing remotely read subpartitions");
        }
        for ch in channels {
            ch.sub.release_consumer();
        }
    }

    pub(super) fn release_job(&self, job_id: &str, below_attempt: u32) {
        let released: Vec<_> = {
            let mut st = self.state();
            let ids: Vec<u64> = st
                .channels
                .values()
                .filter(|c| c.partition.job_id == job_id && c.partition.attempt < below_attempt)
                .map(|c| c.id)
                .collect();
            let released: Vec<_> = ids.iter().filter_map(|id| st.channels.remove(id)).collect();
            if !st.closed {
                for ch in &released {
                    st.control.push_back(ControlFrame::ErrorResponse {
                        channel: Some(ch.id),
                        code: ErrorCode::PartitionReleased,
                        message: format!("partition {} was released", ch.partition),
                    });
                }
            }
            released
        };
        if released.is_empty() {
            return;
        }
        self.wake.notify_one();
        for ch in released {
            ch.sub.release_consumer();
        }
    }
}

impl BufferAvailabilityListener for ServerConnShared {
    fn notify_data_available(&self, channel: u64) {
        self.enqueue_channel(channel);
    }

    fn notify_priority_event(&self, channel: u64, queued: bool) {
        self.enqueue_priority_channel(channel, queued);
    }
}
