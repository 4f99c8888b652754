//! Typed deserialisation from an input gate: [`RecordReader`].
//!
//! Owns the gate, one [`FrameDecoder`] per channel (frames may span buffers of the
//! same channel) and a small queue of the records decoded from the current buffer.
//! A delivered buffer is decoded whole and dropped at once, which returns its credit
//! and its segment early; the decoded records are then handed out one at a time.
//!
//! A priority event (an unaligned checkpoint's barrier) comes out as soon as the gate
//! delivers it, with the channel's *in-flight data* at that moment: the raw bytes of a
//! record frame the channel's decoder holds in part, followed by the bytes of the
//! buffers it overtook in the channel's receive queue. That byte stream in the record
//! frame format (which may end inside a frame) is what the consumer has received of
//! the channel and not processed; the records it holds still come out afterwards.
//! A restored reader is given such bytes back per channel
//! ([`RecordReader::resume_channel`]) before it reads anything.
//!
//! Invariants: records of one channel come out in the order they were written, and an
//! event of a channel comes out after every record written before it on that channel
//! (a priority event: after the records of buffers taken before it); an event or
//! EndOfPartition arriving inside a record frame is a [`NetworkError::Corrupt`] stream
//! (a priority event may: the frame continues after it).

use crate::network::buffer::BufferOrEvent;
use crate::network::consumer::input_gate::InputGate;
use crate::network::error::NetworkError;
use serde::de::DeserializeOwned;
use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};
use weir_core::codec::FrameDecoder;
use weir_core::{Event, StreamRecord};

/// What [`RecordReader::next`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum ReaderEvent<T> {
    /// The next record (of channel [`RecordReader::current_channel`]).
    Record(StreamRecord<T>),
    /// An in-band event of `channel`.
    Event {
        /// The input channel it arrived on.
        channel: usize,
        /// The event.
        event: Event,
    },
    /// A priority event of `channel` (the barrier of an unaligned checkpoint), which
    /// overtook the data of that channel not yet processed.
    PriorityEvent {
        /// The input channel it arrived on.
        channel: usize,
        /// The event.
        event: Event,
        /// The channel's data received and not yet processed, as a byte stream in the
        /// record frame format that may end inside a frame (see the module docs).
        in_flight: Vec<u8>,
    },
    /// Nothing arrived within the timeout.
    Timeout,
    /// Every channel delivered EndOfPartition.
    Finished,
}

/// Reads records of type `T` from an input gate.
pub struct RecordReader<T> {
    gate: InputGate,
    decoders: Vec<FrameDecoder>,
    pending: VecDeque<StreamRecord<T>>,
    pending_channel: usize,
    current_channel: Option<usize>,
    records_in: u64,
    bytes_in: u64,
}

impl<T> fmt::Debug for RecordReader<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordReader")
            .field("gate", &self.gate)
            .field("pending", &self.pending.len())
            .field("records_in", &self.records_in)
            .finish()
    }
}

impl<T: DeserializeOwned> RecordReader<T> {
    /// Reads from `gate`.
    pub fn new(gate: InputGate) -> Self {
        let n = gate.num_channels();
        Self {
            gate,
            decoders: (0..n).map(|_| FrameDecoder::new()).collect(),
            pending: VecDeque::new(),
            pending_channel: 0,
            current_channel: None,
            records_in: 0,
            bytes_in: 0,
        }
    }

    /// Number of input channels.
    pub fn num_channels(&self) -> usize {
        self.decoders.len()
    }

    /// The next record or event, waiting up to `timeout` (`None`: until something
    /// arrives) for input; [`ReaderEvent::Timeout`] when nothing came, and
    /// [`ReaderEvent::Finished`] once every channel has ended.
    pub fn next(&mut self, timeout: Option<Duration>) -> Result<ReaderEvent<T>, NetworkError> {
        if let Some(record) = self.pending.pop_front() {
            return Ok(self.record(record));
        }
        let deadline = match timeout {
            Some(t) if !t.is_zero() => Instant::now().checked_add(t),
            _ => None,
        };
        loop {
            let wait = match (timeout, deadline) {
                (Some(_), Some(end)) => Some(end.saturating_duration_since(Instant::now())),
                (wait, _) => wait,
            };
            match self.gate.poll_next(wait)? {
                None => {
                    return Ok(if self.gate.is_finished() {
                        ReaderEvent::Finished
                    } else {
                        ReaderEvent::Timeout
                    });
                }
                Some((channel, BufferOrEvent::Buffer(buffer))) => {
                    let Some(decoder) = self.decoders.get_mut(channel) else {
                        return Err(NetworkError::Corrupt(format!("buffer from unknown channel {channel}")));
                    };
                    self.bytes_in += buffer.len() as u64;
                    let pending = &mut self.pending;
                    decoder
                        .decode_buffer(&buffer, |r| {
                            pending.push_back(r);
                            Ok(())
                        })
                        .map_err(|e| NetworkError::Corrupt(format!("channel {channel}: {e}")))?;
                    // Returns the segment and the credit right away.
                    drop(buffer);
                    if let Some(record) = self.pending.pop_front() {
                        self.pending_channel = channel;
                        return Ok(self.record(record));
                    }
                }
                Some((channel, BufferOrEvent::Priority(priority))) => {
                    let Some(decoder) = self.decoders.get(channel) else {
                        return Err(NetworkError::Corrupt(format!("event from unknown channel {channel}")));
                    };
                    let mut in_flight = decoder.pending_bytes().to_vec();
                    in_flight.extend_from_slice(&priority.overtaken);
                    return Ok(ReaderEvent::PriorityEvent {
                        channel,
                        event: priority.event,
                        in_flight,
                    });
                }
                Some((channel, BufferOrEvent::Event(event))) => {
                    if self.decoders.get(channel).is_some_and(FrameDecoder::has_pending) {
                        return Err(NetworkError::Corrupt(format!(
                            "channel {channel}: event {event:?} inside a record frame"
                        )));
                    }
                    return Ok(ReaderEvent::Event { channel, event });
                }
            }
            // A buffer with only part of a frame: keep waiting within the timeout.
        }
    }

    #[inline]
    fn record(&mut self, record: StreamRecord<T>) -> ReaderEvent<T> {
        self.records_in += 1;
        self.current_channel = Some(self.pending_channel);
        ReaderEvent::Record(record)
    }

    /// Feeds `bytes`, restored in-flight data of `channel` (see
    /// [`ReaderEvent::PriorityEvent`]), into the channel's decoder and returns the
    /// records it completes, in order; a frame it holds in part stays in the decoder, to
    /// be completed by the channel's first buffers. Call it before reading anything.
    pub fn resume_channel(&mut self, channel: usize, bytes: &[u8]) -> Result<Vec<StreamRecord<T>>, NetworkError> {
        let decoder = self
            .decoders
            .get_mut(channel)
            .ok_or_else(|| NetworkError::InvalidArgument(format!("no input channel {channel}")))?;
        let mut records = Vec::new();
        decoder
            .decode_buffer(bytes, |r| {
                records.push(r);
                Ok(())
            })
            .map_err(|e| NetworkError::Corrupt(format!("channel {channel}: {e}")))?;
        Ok(records)
    }

    /// The channel of the record returned last.
    pub fn current_channel(&self) -> Option<usize> {
        self.current_channel
    }

    /// Records read so far.
    pub fn records_in(&self) -> u64 {
        self.records_in
    }

    /// Buffer bytes received so far.
    pub fn bytes_in(&self) -> u64 {
        self.bytes_in
    }

    /// The usage of its gate's receive buffers.
    pub fn pool_usage(&self) -> crate::network::buffer::PoolUsage {
        self.gate.pool_usage()
    }

    /// True once every channel has ended and every decoded record was returned.
    pub fn is_finished(&self) -> bool {
        self.pending.is_empty() && self.gate.is_finished()
    }

    /// The input gate, to block and unblock its channels.
    pub fn gate_mut(&mut self) -> &mut InputGate {
        &mut self.gate
    }

    /// The gate it reads.
    pub fn gate(&self) -> &InputGate {
        &self.gate
    }
}
