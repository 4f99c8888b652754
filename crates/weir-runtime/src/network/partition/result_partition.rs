//! The producer side: [`ResultPartitionWriter`] writes finished buffers and events into
//! the subpartitions of one result partition.
//!
//! Owns the partition's [`LocalBufferPool`] (its bound on queued data: requesting a
//! buffer blocks while the pool is exhausted, which is backpressure) and the producer
//! ends of its subpartitions. Adding never copies a buffer; it moves it into the
//! subpartition's queue, from where the consumer takes it against credit.
//!
//! A priority event ([`ResultPartitionWriter::add_priority_event`], the barrier of an
//! unaligned checkpoint) overtakes the buffers and events queued in its subpartition;
//! the writer hands back a copy of the overtaken buffers' bytes, the subpartition's
//! output channel state, and the buffers are still delivered after it. A restored
//! producer queues its output channel state first
//! ([`ResultPartitionWriter::add_recovered_data`]).
//!
//! A writer of a blocking partition (`ResultPartitionWriter::new_blocking`) hands
//! every buffer's bytes and every event to its `BoundedData` (the blocking partition,
//! which implements it so that this file does not depend on it) and recycles the
//! buffer at once: it is never backpressured and takes no priority events.
//!
//! Invariants: buffers and events of one subpartition are delivered in the order they
//! were added, except that a priority event comes before everything added earlier but
//! earlier priority events; nothing may be added after EndOfPartition; empty buffers
//! are recycled, not queued. Dropping the writer without EndOfPartition makes the
//! consumers fail with [`NetworkError::ProducerReleased`] once they drained what was
//! queued.

use crate::network::buffer::{lock, wait_slice, Buffer, BufferOrEvent, LocalBufferPool, PoolUsage, PriorityEvent};
use crate::network::cancel::{CancelToken, CANCEL_POLL_INTERVAL};
use crate::network::error::NetworkError;
use crate::network::partition::subpartition::{Subpartition, SubpartitionState, MAX_QUEUED_EVENTS};
use std::fmt;
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};
use weir_core::Event;

/// Where the writer of a blocking partition stores what it is given (Flink's
/// `BoundedData`): the whole output of the producer, kept for any number of readers.
pub(crate) trait BoundedData: Send + Sync {
    /// Stores a buffer's bytes for `subpartition`.
    fn append_buffer(&self, subpartition: usize, bytes: &[u8]) -> Result<(), NetworkError>;
    /// Stores an event for `subpartition`; EndOfPartition of the last subpartition
    /// finishes the data.
    fn append_event(&self, subpartition: usize, event: Event) -> Result<(), NetworkError>;
    /// The producer's writer went away (unless the data is finished, it failed).
    fn on_producer_dropped(&self);
}

/// Writes into the subpartitions of one result partition; owned by the producing
/// task's thread.
pub struct ResultPartitionWriter {
    partition: u64,
    pool: LocalBufferPool,
    subpartitions: Vec<Arc<Subpartition>>,
    cancel: CancelToken,
    backpressured: Duration,
    blocking: Option<Arc<dyn BoundedData>>,
}

impl fmt::Debug for ResultPartitionWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResultPartitionWriter")
            .field("partition", &self.partition)
            .field("subpartitions", &self.subpartitions.len())
            .field("pool", &self.pool)
            .finish()
    }
}

impl ResultPartitionWriter {
    /// A test's view of whether this writer is parked as backpressured: waiting for a
    /// buffer of its pool or for event space in one of its subpartitions (it holds them
    /// weakly, keeping nothing alive).
    #[cfg(test)]
    pub(crate) fn parked_probe(&self) -> impl Fn() -> bool + Send + 'static {
        let pool_waits = self.pool.waiters_probe();
        let subpartitions: Vec<_> = self.subpartitions.iter().map(Arc::downgrade).collect();
        move || {
            pool_waits()
                || subpartitions
                    .iter()
                    .filter_map(std::sync::Weak::upgrade)
                    .any(|s| lock(&s.state).producer_waiting)
        }
    }

    pub(crate) fn new(
        partition: u64,
        pool: LocalBufferPool,
        subpartitions: Vec<Arc<Subpartition>>,
        cancel: CancelToken,
    ) -> Self {
        Self {
            partition,
            pool,
            subpartitions,
            cancel,
            backpressured: Duration::ZERO,
            blocking: None,
        }
    }

    /// A writer storing everything in `blocking` (its subpartitions are placeholders
    /// that no consumer reads).
    pub(crate) fn new_blocking(
        partition: u64,
        pool: LocalBufferPool,
        subpartitions: Vec<Arc<Subpartition>>,
        cancel: CancelToken,
        blocking: Arc<dyn BoundedData>,
    ) -> Self {
        let mut writer = Self::new(partition, pool, subpartitions, cancel);
        writer.blocking = Some(blocking);
        writer
    }

    /// True when this writer fills a blocking partition.
    pub fn is_blocking(&self) -> bool {
        self.blocking.is_some()
    }

    /// The usage of the partition's buffer pool (Flink's `outPoolUsage`).
    pub fn pool_usage(&self) -> PoolUsage {
        self.pool.usage()
    }

    /// Number of subpartitions (consumers).
    pub fn num_subpartitions(&self) -> usize {
        self.subpartitions.len()
    }

    /// Process-local number of the partition (for logs).
    pub fn partition_number(&self) -> u64 {
        self.partition
    }

    /// An empty buffer, waiting while the local pool is exhausted (backpressure); the
    /// waiting time is added to [`backpressured_time`](Self::backpressured_time).
    pub fn request_buffer(&mut self) -> Result<Buffer, NetworkError> {
        let (buffer, waited) = self.pool.request_buffer(None, &self.cancel)?;
        self.backpressured += waited;
        Ok(buffer)
    }

    /// Like [`request_buffer`](Self::request_buffer) for a buffer destined to
    /// `subpartition`: also waits while that subpartition holds
    /// `max_buffers_per_channel` buffers, so one stalled consumer cannot take the whole
    /// pool.
    pub fn request_buffer_for(&mut self, subpartition: usize) -> Result<Buffer, NetworkError> {
        self.check_index(subpartition)?;
        let (buffer, waited) = self.pool.request_buffer(Some(subpartition), &self.cancel)?;
        self.backpressured += waited;
        Ok(buffer)
    }

    fn check_index(&self, subpartition: usize) -> Result<(), NetworkError> {
        if subpartition < self.subpartitions.len() {
            Ok(())
        } else {
            Err(NetworkError::InvalidArgument(format!(
                "subpartition {subpartition} out of range (partition has {})",
                self.subpartitions.len()
            )))
        }
    }

    /// Enqueues a finished buffer for `subpartition` (an empty one is just recycled).
    pub fn add_buffer(&mut self, subpartition: usize, buffer: Buffer) -> Result<(), NetworkError> {
        self.check_index(subpartition)?;
        if buffer.is_empty() {
            return Ok(());
        }
        if let Some(blocking) = &self.blocking {
            return blocking.append_buffer(subpartition, buffer.as_slice());
        }
        let sub = &self.subpartitions[subpartition];
        let notify = {
            let mut st = lock(&sub.state);
            if st.consumer_released {
                drop(st);
                drop(buffer);
                return Err(NetworkError::ConsumerReleased { subpartition });
            }
            if st.end_of_partition {
                drop(st);
                drop(buffer);
                return Err(NetworkError::Protocol(format!(
                    "buffer added to subpartition {subpartition} after EndOfPartition"
                )));
            }
            st.queue.push(BufferOrEvent::Buffer(buffer));
            st.on_buffer_enqueued();
            st.claim_notification()
        };
        if let Some(notify) = notify {
            notify.notify();
        }
        Ok(())
    }

    /// Enqueues `event` for `subpartition`, in order after everything added before.
    /// Blocks (as backpressure) while the subpartition already queues
    /// [`MAX_QUEUED_EVENTS`] events.
    pub fn add_event(&mut self, subpartition: usize, event: Event) -> Result<(), NetworkError> {
        self.check_index(subpartition)?;
        if let Some(blocking) = &self.blocking {
            return blocking.append_event(subpartition, event);
        }
        let sub = self.subpartitions[subpartition].clone();
        let (mut st, blocked_since) = self.lock_for_event(&sub, subpartition, event)?;
        st.queue.push(BufferOrEvent::Event(event));
        if event == Event::EndOfPartition {
            st.end_of_partition = true;
        }
        let notify = st.claim_notification();
        drop(st);
        if let Some(since) = blocked_since {
            self.backpressured += since.elapsed();
        }
        if let Some(notify) = notify {
            notify.notify();
        }
        Ok(())
    }

    /// Enqueues `event` for `subpartition` as a priority event: ahead of every buffer
    /// and event queued there (behind earlier priority events only), without credit,
    /// and its consumer serves the channel first. Returns the bytes of the data buffers
    /// it overtook, in order: they are still delivered after it, and an unaligned
    /// checkpoint persists them as the subpartition's output channel state. Flush the
    /// record writer first so that no record is left out. Blocks like
    /// [`add_event`](Self::add_event) while [`MAX_QUEUED_EVENTS`] events are queued;
    /// EndOfPartition cannot be a priority event.
    pub fn add_priority_event(&mut self, subpartition: usize, event: Event) -> Result<Vec<u8>, NetworkError> {
        self.check_index(subpartition)?;
        if event == Event::EndOfPartition {
            return Err(NetworkError::InvalidArgument(
                "EndOfPartition cannot overtake the data before it".into(),
            ));
        }
        if self.blocking.is_some() {
            return Err(NetworkError::InvalidArgument(
                "a blocking partition takes no priority events (no unaligned checkpoints in BATCH)".into(),
            ));
        }
        let sub = self.subpartitions[subpartition].clone();
        let (mut st, blocked_since) = self.lock_for_event(&sub, subpartition, event)?;
        let overtaken = st.queue.overtaken();
        st.queue.push(BufferOrEvent::Priority(PriorityEvent {
            event,
            overtaken: Vec::new(),
        }));
        let notify = st.claim_priority_notification();
        drop(st);
        if let Some(since) = blocked_since {
            self.backpressured += since.elapsed();
        }
        if let Some(notify) = notify {
            notify.notify();
        }
        Ok(overtaken)
    }

    /// Locks `sub` once it has room for another event (waiting, as backpressure, while
    /// it queues [`MAX_QUEUED_EVENTS`]); fails when its consumer went away, it ended,
    /// or the writer was cancelled. Also returns since when it waited.
    fn lock_for_event<'a>(
        &self,
        sub: &'a Subpartition,
        subpartition: usize,
        event: Event,
    ) -> Result<(MutexGuard<'a, SubpartitionState>, Option<Instant>), NetworkError> {
        let mut blocked_since: Option<Instant> = None;
        let mut st = lock(&sub.state);
        loop {
            if st.consumer_released {
                return Err(NetworkError::ConsumerReleased { subpartition });
            }
            if st.end_of_partition {
                return Err(NetworkError::Protocol(format!(
                    "event {event:?} added to subpartition {subpartition} after EndOfPartition"
                )));
            }
            if st.queue.events() < MAX_QUEUED_EVENTS {
                return Ok((st, blocked_since));
            }
            if self.cancel.is_cancelled() {
                return Err(NetworkError::Cancelled);
            }
            blocked_since.get_or_insert_with(Instant::now);
            st.producer_waiting = true;
            st = wait_slice(&sub.space, st, CANCEL_POLL_INTERVAL);
            st.producer_waiting = false;
        }
    }

    /// Enqueues `event` as a priority event for every subpartition; returns what it
    /// overtook in each (indexed by subpartition).
    pub fn broadcast_priority_event(&mut self, event: Event) -> Result<Vec<Vec<u8>>, NetworkError> {
        (0..self.subpartitions.len())
            .map(|s| self.add_priority_event(s, event))
            .collect()
    }

    /// Queues `data`, restored output channel state of `subpartition`, as data buffers
    /// (split at the segment size): a restored producer calls it before it writes
    /// anything else, so that its consumer reads the restored bytes first. Blocks while
    /// no buffer is available, like [`request_buffer_for`](Self::request_buffer_for).
    pub fn add_recovered_data(&mut self, subpartition: usize, data: &[u8]) -> Result<(), NetworkError> {
        let mut rest = data;
        while !rest.is_empty() {
            let mut buffer = self.request_buffer_for(subpartition)?;
            let n = buffer.append(rest);
            rest = &rest[n..];
            self.add_buffer(subpartition, buffer)?;
        }
        Ok(())
    }

    /// Enqueues `event` for every subpartition.
    pub fn broadcast_event(&mut self, event: Event) -> Result<(), NetworkError> {
        for s in 0..self.subpartitions.len() {
            self.add_event(s, event)?;
        }
        Ok(())
    }

    /// Total time spent blocked waiting for buffers or event space.
    pub fn backpressured_time(&self) -> Duration {
        self.backpressured
    }

    /// Buffers of this partition currently in use (being written, queued or read).
    pub fn buffers_in_use(&self) -> usize {
        self.pool.buffers_in_use()
    }

    /// The most buffers of this partition ever in use at once.
    pub fn peak_buffers_in_use(&self) -> usize {
        self.pool.peak_buffers_in_use()
    }

    /// The current size of the partition's local pool.
    pub fn pool_size(&self) -> usize {
        self.pool.size()
    }

    /// Data buffers queued in `subpartition` and not yet taken by its consumer.
    pub fn backlog(&self, subpartition: usize) -> usize {
        self.subpartitions
            .get(subpartition)
            .map_or(0, |s| lock(&s.state).sender.backlog())
    }

    /// Bytes per buffer.
    pub fn segment_size(&self) -> usize {
        self.pool.segment_size()
    }
}

impl Drop for ResultPartitionWriter {
    fn drop(&mut self) {
        if let Some(blocking) = &self.blocking {
            blocking.on_producer_dropped();
        }
        for sub in &self.subpartitions {
            let notify = {
                let mut st = lock(&sub.state);
                st.producer_released = true;
                st.claim_notification()
            };
            if let Some(notify) = notify {
                notify.notify();
            }
        }
    }
}
