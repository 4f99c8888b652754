//! What a data connection's writer thread does: sends queued control frames first,
//! then one element of each channel that has something to send, round-robin, flushing
//! when it runs out of work and at once after a priority event.

use super::super::protocol::{self, ControlFrame, ErrorCode, KIND_DATA, KIND_EVENT, KIND_PRIORITY_EVENT};
use super::connection::{ServerChannel, ServerConnShared, ServerConnState};
use crate::network::partition::subpartition::RemoteTaken;
use std::io::{BufWriter, Write};
use std::net::Shutdown;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use weir_core::Event;

/// Capacity of a connection's write buffer.
const IO_BUFFER: usize = 256 * 1024;

enum Work {
    Control(ControlFrame),
    Channel(Arc<ServerChannel>),
}

impl ServerConnShared {
    /// Sends control frames and channel data until the connection closes.
    pub(super) fn write_loop(self: Arc<Self>, stream: Box<dyn Write + Send>) {
        let mut out = BufWriter::with_capacity(IO_BUFFER, stream);
        let mut dirty = false;
        let result = loop {
            let work = {
                let mut st = self.state();
                if st.closed {
                    break Ok(());
                }
                self.next_work(&mut st)
            };
            let Some(work) = work else {
                if dirty {
                    dirty = false;
                    if let Err(e) = out.flush() {
                        break Err(e);
                    }
                    continue;
                }
                let mut st = self.state();
                while !st.closed && st.control.is_empty() && st.available.is_empty() {
                    st = match self.wake.wait(st) {
                        Ok(g) => g,
                        Err(p) => p.into_inner(),
                    };
                }
                continue;
            };
            dirty = true;
            let written = match work {
                Work::Control(frame) => protocol::write_control(&mut out, &frame).map(|()| false),
                Work::Channel(ch) => self.send_from(&ch, &mut out),
            };
            match written {
                // A priority event leaves at once, not when the writer runs out of work.
                Ok(true) => {
                    dirty = false;
                    if let Err(e) = out.flush() {
                        break Err(e);
                    }
                }
                Ok(false) => {}
                Err(e) => break Err(e),
            }
        };
        if let Err(e) = result {
            if !self.state().closed {
                tracing::warn!(peer = %self.peer, error = %e, "data connection write failed");
            }
            // The reader sees the shut-down socket and closes the connection.
            let _ = self.stream.shutdown(Shutdown::Both);
        }
    }

    fn next_work(&self, st: &mut ServerConnState) -> Option<Work> {
        if let Some(frame) = st.control.pop_front() {
            self.space.notify_one();
            return Some(Work::Control(frame));
        }
        while let Some(id) = st.available.pop_front() {
            if let Some(ch) = st.channels.get(&id) {
                return Some(Work::Channel(ch.clone()));
            }
        }
        None
    }

    /// Takes one element from `ch`'s subpartition and writes it; true when it was a
    /// priority event (to be flushed at once).
    fn send_from<W: Write>(&self, ch: &ServerChannel, out: &mut W) -> std::io::Result<bool> {
        let (taken, requeue) = match ch.sub.take_for_remote() {
            Ok(t) => t,
            Err(e) => {
                tracing::error!(error = %e, "credit-based flow control violated");
                (RemoteTaken::Nothing, false)
            }
        };
        if requeue {
            self.enqueue_channel(ch.id);
        }
        match taken {
            RemoteTaken::Buffer { buffer, backlog } => {
                let seq = ch.next_sequence.fetch_add(1, Ordering::Relaxed);
                protocol::write_buffer(out, ch.id, seq, backlog, KIND_DATA, &buffer).map(|()| false)
                // The buffer returns to the producer's pool here.
            }
            RemoteTaken::Event {
                event,
                priority,
                backlog,
            } => {
                let bytes = weir_core::codec::encode(&event)
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
                let seq = ch.next_sequence.fetch_add(1, Ordering::Relaxed);
                let kind = if priority { KIND_PRIORITY_EVENT } else { KIND_EVENT };
                protocol::write_buffer(out, ch.id, seq, backlog, kind, &bytes)?;
                if event == Event::EndOfPartition {
                    self.remove_channel(ch.id);
                }
                Ok(priority)
            }
            RemoteTaken::Backlog(backlog) => protocol::write_control(
                out,
                &ControlFrame::BacklogAnnouncement {
                    channel: ch.id,
                    backlog: u32::try_from(backlog).unwrap_or(u32::MAX),
                },
            )
            .map(|()| false),
            RemoteTaken::ProducerGone => {
                self.remove_channel(ch.id);
                protocol::write_control(
                    out,
                    &ControlFrame::ErrorResponse {
                        channel: Some(ch.id),
                        code: ErrorCode::ProducerFailed,
                        message: format!(
                            "the producer of partition {} released it before EndOfPartition",
                            ch.partition
                        ),
                    },
                )
                .map(|()| false)
            }
            RemoteTaken::Failed(cause) => {
                self.remove_channel(ch.id);
                protocol::write_control(
                    out,
                    &ControlFrame::ErrorResponse {
                        channel: Some(ch.id),
                        code: ErrorCode::PartitionFailed,
                        message: cause.to_string(),
                    },
                )
                .map(|()| false)
            }
            RemoteTaken::Nothing => Ok(false),
        }
    }
}
