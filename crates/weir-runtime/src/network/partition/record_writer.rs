//! Typed serialisation into a result partition: [`RecordWriter`].
//!
//! Owns one "current" buffer per subpartition, a reusable scratch vector for encoding,
//! and the [`ChannelSelector`] of the edge. Each record is encoded once
//! ([`weir_core::codec::encode_frame`]) and copied into the current buffer of every
//! selected channel; a frame that does not fit spans into the next buffer. No
//! allocation and no lock per record: locks are taken per buffer (request, hand-over).
//!
//! Invariants: a full buffer is handed over at once; an event is only added after the
//! current buffer of its subpartition was flushed, so events stay in order with the
//! records (and a priority event overtakes every record written before it, which it
//! returns as output channel state); [`RecordWriter::flush_all`] hands over every
//! non-empty current buffer (empty ones are kept for reuse). Records are written whole
//! between two calls, so at a priority event the bytes written so far end with a
//! complete frame.

use crate::network::buffer::Buffer;
use crate::network::error::NetworkError;
use crate::network::partition::result_partition::ResultPartitionWriter;
use crate::partitioner::ChannelSelector;
use serde::Serialize;
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;
use weir_core::codec::encode_frame;
use weir_core::{Event, StreamRecord};

/// Serialises records of type `T` into a result partition.
pub struct RecordWriter<T> {
    writer: ResultPartitionWriter,
    selector: Box<dyn ChannelSelector<T>>,
    current: Vec<Option<Buffer>>,
    scratch: Vec<u8>,
    broadcast: bool,
    records_out: u64,
    bytes_out: u64,
    output_watermark: i64,
    _records: PhantomData<fn(&T)>,
}

impl<T> fmt::Debug for RecordWriter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordWriter")
            .field("writer", &self.writer)
            .field("records_out", &self.records_out)
            .field("bytes_out", &self.bytes_out)
            .finish()
    }
}

impl<T: Serialize> RecordWriter<T> {
    /// Writes into `writer`, choosing channels with `selector` (set up here with the
    /// number of subpartitions).
    pub fn new(writer: ResultPartitionWriter, mut selector: Box<dyn ChannelSelector<T>>) -> Self {
        let n = writer.num_subpartitions();
        selector.setup(n);
        let broadcast = selector.is_broadcast();
        Self {
            writer,
            selector,
            current: (0..n).map(|_| None).collect(),
            scratch: Vec::with_capacity(256),
            broadcast,
            records_out: 0,
            bytes_out: 0,
            output_watermark: i64::MIN,
            _records: PhantomData,
        }
    }

    /// Serialises `record` to the channel(s) its selector picks (all of them for a
    /// broadcast selector). Blocks while no buffer is available (backpressure).
    #[inline]
    pub fn emit(&mut self, record: &StreamRecord<T>) -> Result<(), NetworkError> {
        self.scratch.clear();
        encode_frame(&mut self.scratch, record).map_err(|e| NetworkError::Encode(e.to_string()))?;
        let n = self.current.len();
        if n == 0 {
            return Ok(());
        }
        self.records_out += 1;
        if self.broadcast {
            for channel in 0..n {
                self.copy_to(channel)?;
            }
        } else {
            let channel = self.selector.select_channel(&record.value);
            // Selectors return in-range channels; stay safe with a buggy one.
            let channel = if channel < n { channel } else { channel % n };
            self.copy_to(channel)?;
        }
        Ok(())
    }

    /// Copies the encoded frame in `scratch` into `channel`'s buffer(s).
    #[inline]
    fn copy_to(&mut self, channel: usize) -> Result<(), NetworkError> {
        let Self {
            writer,
            current,
            scratch,
            bytes_out,
            ..
        } = self;
        let slot = &mut current[channel];
        let mut rest: &[u8] = scratch;
        *bytes_out += rest.len() as u64;
        loop {
            let buffer = match slot {
                Some(b) => b,
                None => slot.insert(writer.request_buffer_for(channel)?),
            };
            let n = buffer.append(rest);
            rest = &rest[n..];
            if buffer.remaining() == 0 {
                if let Some(full) = slot.take() {
                    writer.add_buffer(channel, full)?;
                }
            }
            if rest.is_empty() {
                return Ok(());
            }
        }
    }

    /// Flushes every channel's current buffer, then adds `event` to every channel.
    pub fn broadcast_event(&mut self, event: Event) -> Result<(), NetworkError> {
        self.flush_all()?;
        if let Event::Watermark(w) = event {
            self.output_watermark = w.0;
        }
        self.writer.broadcast_event(event)
    }

    /// The last watermark sent (`i64::MIN` before the first).
    pub fn output_watermark(&self) -> i64 {
        self.output_watermark
    }

    /// Flushes every channel's current buffer, then adds `event` to every channel as a
    /// priority event (the barrier of an unaligned checkpoint): it overtakes what is
    /// queued. Returns, per channel, the bytes of the buffers it overtook (see
    /// [`ResultPartitionWriter::add_priority_event`]).
    pub fn broadcast_priority_event(&mut self, event: Event) -> Result<Vec<Vec<u8>>, NetworkError> {
        self.flush_all()?;
        self.writer.broadcast_priority_event(event)
    }

    /// Flushes `channel`'s current buffer, then adds `event` to it.
    pub fn emit_event(&mut self, channel: usize, event: Event) -> Result<(), NetworkError> {
        self.flush(channel)?;
        self.writer.add_event(channel, event)
    }

    /// Hands over every non-empty current buffer (the buffer timeout's flush).
    pub fn flush_all(&mut self) -> Result<(), NetworkError> {
        for channel in 0..self.current.len() {
            self.flush(channel)?;
        }
        Ok(())
    }

    /// Hands over `channel`'s current buffer if it holds data.
    pub fn flush(&mut self, channel: usize) -> Result<(), NetworkError> {
        let Some(slot) = self.current.get_mut(channel) else {
            return Err(NetworkError::InvalidArgument(format!("no channel {channel}")));
        };
        if slot.as_ref().is_some_and(|b| !b.is_empty()) {
            if let Some(buffer) = slot.take() {
                self.writer.add_buffer(channel, buffer)?;
            }
        }
        Ok(())
    }

    /// True when some current buffer holds data not yet handed over.
    pub fn has_unflushed_data(&self) -> bool {
        self.current.iter().any(|b| b.as_ref().is_some_and(|b| !b.is_empty()))
    }

    /// The usage of its partition's buffer pool.
    pub fn pool_usage(&self) -> crate::network::buffer::PoolUsage {
        self.writer.pool_usage()
    }

    /// Records emitted (a broadcast record counts once).
    pub fn records_out(&self) -> u64 {
        self.records_out
    }

    /// Bytes serialised into buffers (a broadcast record counts once per channel).
    pub fn bytes_out(&self) -> u64 {
        self.bytes_out
    }

    /// Number of output channels.
    pub fn num_channels(&self) -> usize {
        self.current.len()
    }

    /// Time spent blocked on buffers (backpressure).
    pub fn backpressured_time(&self) -> Duration {
        self.writer.backpressured_time()
    }

    /// The underlying partition writer.
    pub fn partition_writer(&self) -> &ResultPartitionWriter {
        &self.writer
    }

    /// The underlying partition writer, mutably (e.g. to add events directly; flush
    /// first to keep order).
    pub fn partition_writer_mut(&mut self) -> &mut ResultPartitionWriter {
        &mut self.writer
    }
}
