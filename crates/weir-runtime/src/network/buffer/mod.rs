//! Network buffers and their pools: [`NetworkBufferPool`] (one per process/TaskManager,
//! a fixed number of fixed-size segments), [`LocalBufferPool`] (a result partition's
//! share of it), [`Buffer`] (one segment in use, RAII) and [`BufferOrEvent`].
//!
//! Invariants:
//! - At most `total_buffers` segments are ever allocated; segments are allocated
//!   lazily on first use and reused afterwards, never freed while the pool lives.
//! - Every local pool has a guaranteed minimum; the sum of the minimums never exceeds
//!   the total (creating a pool fails with [`NetworkError::PoolExhausted`] otherwise).
//!   The rest of the segments is redistributed among the pools in proportion to how far
//!   each may grow (up to its maximum), exactly like Flink's
//!   `NetworkBufferPool.redistributeBuffers`; pools shrink and grow as pools come and go.
//! - A local pool hands out at most `size` buffers at a time, and at most
//!   `max_buffers_per_subpartition` for one subpartition; requests beyond block.
//! - A [`Buffer`] returns its segment to its local pool when dropped (and, if it was
//!   delivered through an input gate, its credit to the gate), wherever it is dropped.
//!
//! Lock order: global reservations → local pool → global segment store. The segment
//! store is a leaf; nothing is locked while a buffer is dropped by this module.

use crate::network::cancel::{CancelToken, CANCEL_POLL_INTERVAL};
use crate::network::error::NetworkError;
use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};
use weir_core::Event;

/// Locks a mutex, tolerating poisoning: the network state stays consistent because no
/// code path panics while holding one of its locks.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One slice of a condition-variable wait, tolerating poisoning.
pub(crate) fn wait_slice<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>, max: Duration) -> MutexGuard<'a, T> {
    let slice = max.min(CANCEL_POLL_INTERVAL);
    match cv.wait_timeout(guard, slice) {
        Ok((g, _)) => g,
        Err(p) => p.into_inner().0,
    }
}

/// The process-wide pool of network segments (one per TaskManager).
pub struct NetworkBufferPool {
    segment_size: usize,
    total: usize,
    reservations: Mutex<Reservations>,
    store: Mutex<SegmentStore>,
    /// Segments held by local pools (in use or cached there).
    held: AtomicUsize,
    /// Segments out as [`Buffer`]s.
    in_use: AtomicUsize,
    next_pool_id: AtomicU64,
}

struct Reservations {
    pools: Vec<PoolEntry>,
    required: usize,
}

struct PoolEntry {
    id: u64,
    min: usize,
    max: usize,
    pool: Weak<LocalInner>,
}

struct SegmentStore {
    free: Vec<Vec<u8>>,
    allocated: usize,
}

impl fmt::Debug for NetworkBufferPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetworkBufferPool")
            .field("segment_size", &self.segment_size)
            .field("total", &self.total)
            .field("available", &self.available_buffers())
            .field("in_use", &self.buffers_in_use())
            .finish()
    }
}

impl NetworkBufferPool {
    /// A pool of `total_buffers` segments of `segment_size` bytes (both at least 1).
    pub fn new(total_buffers: usize, segment_size: usize) -> Arc<Self> {
        Arc::new(Self {
            segment_size: segment_size.max(1),
            total: total_buffers,
            reservations: Mutex::new(Reservations {
                pools: Vec::new(),
                required: 0,
            }),
            store: Mutex::new(SegmentStore {
                free: Vec::new(),
                allocated: 0,
            }),
            held: AtomicUsize::new(0),
            in_use: AtomicUsize::new(0),
            next_pool_id: AtomicU64::new(0),
        })
    }

    /// Bytes per segment.
    pub fn segment_size(&self) -> usize {
        self.segment_size
    }

    /// Segments in the pool.
    pub fn total_buffers(&self) -> usize {
        self.total
    }

    /// Segments not held by any local pool (Flink's `AvailableMemorySegments`).
    pub fn available_buffers(&self) -> usize {
        self.total.saturating_sub(self.held.load(Ordering::Relaxed))
    }

    /// Segments currently out as [`Buffer`]s (written, queued or being read).
    pub fn buffers_in_use(&self) -> usize {
        self.in_use.load(Ordering::Relaxed)
    }

    /// Sum of the minimum sizes of all live local pools (guaranteed to them).
    pub fn required_buffers(&self) -> usize {
        lock(&self.reservations).required
    }

    /// A local pool guaranteed `min` segments that may grow to `max` when segments are
    /// spare; `num_subpartitions` and `max_buffers_per_subpartition` bound what one
    /// subpartition may hold (see [`LocalBufferPool::request_buffer`]).
    pub fn create_local_pool(
        self: &Arc<Self>,
        min: usize,
        max: usize,
        num_subpartitions: usize,
        max_buffers_per_subpartition: usize,
    ) -> Result<LocalBufferPool, NetworkError> {
        let min = min.max(1);
        let max = max.max(min);
        let id = self.next_pool_id.fetch_add(1, Ordering::Relaxed);
        let inner = Arc::new(LocalInner {
            global: self.clone(),
            id,
            min,
            max,
            state: Mutex::new(LocalState {
                free: Vec::new(),
                owned: 0,
                outstanding: 0,
                peak: 0,
                size: min,
                per_subpartition: vec![0; num_subpartitions],
                max_per_subpartition: max_buffers_per_subpartition.max(1),
                waiters: 0,
                wake_batch: 1,
            }),
            available: Condvar::new(),
        });
        let touched = {
            let mut r = lock(&self.reservations);
            let available = self.total.saturating_sub(r.required);
            if min > available {
                return Err(NetworkError::PoolExhausted {
                    required: min,
                    available,
                    total: self.total,
                    segment_size: self.segment_size,
                });
            }
            r.required += min;
            r.pools.push(PoolEntry {
                id,
                min,
                max,
                pool: Arc::downgrade(&inner),
            });
            self.redistribute(&r)
        };
        // Dropped outside the reservations lock: a last reference may unregister a pool.
        drop(touched);
        Ok(LocalBufferPool { inner })
    }

    /// Flink's `redistributeBuffers`: every pool gets its minimum plus a share of the
    /// excess proportional to `min(excess, max - min)`. Returns the pools it touched so
    /// the caller drops them after releasing the lock.
    fn redistribute(&self, r: &Reservations) -> Vec<Arc<LocalInner>> {
        let excess = self.total.saturating_sub(r.required);
        let capacity: u128 = r.pools.iter().map(|p| (p.max - p.min).min(excess) as u128).sum();
        let to_distribute = (excess as u128).min(capacity);
        let mut parts_used: u128 = 0;
        let mut distributed: u128 = 0;
        let mut touched = Vec::with_capacity(r.pools.len());
        for entry in &r.pools {
            let extra_max = (entry.max - entry.min).min(excess) as u128;
            let mine = if extra_max == 0 || capacity == 0 {
                0
            } else {
                parts_used += extra_max;
                let cumulative = to_distribute * parts_used / capacity;
                let mine = cumulative - distributed;
                distributed = cumulative;
                mine
            };
            if let Some(pool) = entry.pool.upgrade() {
                pool.set_size(entry.min + mine as usize);
                touched.push(pool);
            }
        }
        touched
    }

    fn unregister(&self, id: u64) {
        let touched = {
            let mut r = lock(&self.reservations);
            if let Some(pos) = r.pools.iter().position(|p| p.id == id) {
                let entry = r.pools.swap_remove(pos);
                r.required -= entry.min;
                // Keep creation order for a stable distribution.
                r.pools.sort_by_key(|p| p.id);
            }
            self.redistribute(&r)
        };
        drop(touched);
    }

    /// A segment from the store, allocating a new one while fewer than `total` exist.
    fn take_segment(&self) -> Option<Vec<u8>> {
        {
            let mut s = lock(&self.store);
            if let Some(seg) = s.free.pop() {
                self.held.fetch_add(1, Ordering::Relaxed);
                return Some(seg);
            }
            if s.allocated >= self.total {
                return None;
            }
            s.allocated += 1;
        }
        self.held.fetch_add(1, Ordering::Relaxed);
        Some(Vec::with_capacity(self.segment_size))
    }

    fn return_segment(&self, mut seg: Vec<u8>) {
        seg.clear();
        lock(&self.store).free.push(seg);
        self.held.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How many of a pool's buffers are in use: Flink's `inPoolUsage`/`outPoolUsage` are
/// `used / size` of the task's input and output pools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolUsage {
    /// Buffers handed out and not yet recycled.
    pub used: usize,
    /// Buffers the pool may hand out.
    pub size: usize,
}

impl PoolUsage {
    /// `used / size`, 0 for an empty pool, at most 1.
    pub fn fraction(self) -> f64 {
        if self.size == 0 {
            0.0
        } else {
            (self.used as f64 / self.size as f64).min(1.0)
        }
    }
}

impl std::ops::Add for PoolUsage {
    type Output = PoolUsage;
    fn add(self, other: PoolUsage) -> PoolUsage {
        PoolUsage {
            used: self.used + other.used,
            size: self.size + other.size,
        }
    }
}

#[cfg(test)]
mod pool_usage_tests {
    use super::PoolUsage;

    #[test]
    fn usage_is_the_used_share_of_all_pools_together() {
        let a = PoolUsage { used: 3, size: 4 };
        let b = PoolUsage { used: 1, size: 4 };
        assert_eq!([a, b].into_iter().sum::<PoolUsage>().fraction(), 0.5);
        assert_eq!(PoolUsage::default().fraction(), 0.0);
        assert_eq!(PoolUsage { used: 5, size: 4 }.fraction(), 1.0);
    }
}

impl std::iter::Sum for PoolUsage {
    fn sum<I: Iterator<Item = PoolUsage>>(iter: I) -> PoolUsage {
        iter.fold(PoolUsage::default(), |a, b| a + b)
    }
}

/// A share of the [`NetworkBufferPool`] owned by one result partition.
pub struct LocalBufferPool {
    inner: Arc<LocalInner>,
}

pub(crate) struct LocalInner {
    global: Arc<NetworkBufferPool>,
    id: u64,
    min: usize,
    max: usize,
    state: Mutex<LocalState>,
    available: Condvar,
}

struct LocalState {
    /// Recycled segments kept for reuse.
    free: Vec<Vec<u8>>,
    /// Segments held: `free.len() + outstanding`.
    owned: usize,
    /// Buffers handed out and not yet recycled.
    outstanding: usize,
    peak: usize,
    /// Current size set by the global pool's redistribution.
    size: usize,
    per_subpartition: Vec<usize>,
    max_per_subpartition: usize,
    waiters: usize,
    /// A waiting requester is woken once this many buffers are free (at most half
    /// the size, at least one), so it refills them in one go (see
    /// [`LocalBufferPool::set_wake_batch`]).
    wake_batch: usize,
}

impl LocalState {
    /// True when a recycled buffer should wake the waiting requesters.
    fn wakes_waiters(&self) -> bool {
        let batch = self.wake_batch.min(self.size / 2).max(1);
        self.waiters > 0 && (self.outstanding == 0 || self.size.saturating_sub(self.outstanding) >= batch)
    }
}

impl fmt::Debug for LocalBufferPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalBufferPool")
            .field("size", &self.size())
            .field("in_use", &self.buffers_in_use())
            .finish()
    }
}

impl LocalBufferPool {
    /// Buffers this pool may hand out at once right now.
    pub fn size(&self) -> usize {
        lock(&self.inner.state).size
    }

    /// The guaranteed minimum size.
    pub fn min_size(&self) -> usize {
        self.inner.min
    }

    /// The size the pool grows to when segments are spare.
    pub fn max_size(&self) -> usize {
        self.inner.max
    }

    /// Buffers handed out and not yet recycled.
    pub fn buffers_in_use(&self) -> usize {
        lock(&self.inner.state).outstanding
    }

    /// Buffers in use out of the current size, read together.
    pub fn usage(&self) -> PoolUsage {
        let st = lock(&self.inner.state);
        PoolUsage {
            used: st.outstanding,
            size: st.size,
        }
    }

    /// A test's view of whether a requester is parked waiting for a buffer of this pool
    /// (it holds the pool weakly: a dropped pool has no waiters).
    #[cfg(test)]
    pub(crate) fn waiters_probe(&self) -> impl Fn() -> bool + Send + 'static {
        let inner = Arc::downgrade(&self.inner);
        move || inner.upgrade().is_some_and(|inner| lock(&inner.state).waiters > 0)
    }

    /// The highest [`buffers_in_use`](Self::buffers_in_use) seen.
    pub fn peak_buffers_in_use(&self) -> usize {
        lock(&self.inner.state).peak
    }

    /// Bytes per buffer.
    pub fn segment_size(&self) -> usize {
        self.inner.global.segment_size
    }

    /// Wakes a requester waiting for a buffer only once `batch` buffers are free (at
    /// most half the pool's size, at least one): for a producer that can fill buffers
    /// as fast as they come back (a blocking partition's replay), which then refills
    /// several per wakeup instead of waking for every buffer. A waiter still wakes
    /// within one poll interval regardless.
    pub fn set_wake_batch(&self, batch: usize) {
        lock(&self.inner.state).wake_batch = batch.max(1);
    }

    /// A buffer without waiting, if one is available (for `subpartition`, if given).
    pub fn try_request_buffer(&self, subpartition: Option<usize>) -> Option<Buffer> {
        let mut st = lock(&self.inner.state);
        let seg = self.inner.try_take(&mut st, subpartition)?;
        drop(st);
        Some(self.inner.wrap(seg, subpartition))
    }

    /// A buffer, waiting while the pool is exhausted or `subpartition` holds its
    /// maximum; returns it with the time spent waiting (zero when one was free at once).
    /// Fails with [`NetworkError::Cancelled`] within one poll interval of `cancel`.
    pub fn request_buffer(
        &self,
        subpartition: Option<usize>,
        cancel: &CancelToken,
    ) -> Result<(Buffer, Duration), NetworkError> {
        let mut st = lock(&self.inner.state);
        if let Some(seg) = self.inner.try_take(&mut st, subpartition) {
            drop(st);
            return Ok((self.inner.wrap(seg, subpartition), Duration::ZERO));
        }
        let start = Instant::now();
        loop {
            if cancel.is_cancelled() {
                return Err(NetworkError::Cancelled);
            }
            st.waiters += 1;
            st = wait_slice(&self.inner.available, st, CANCEL_POLL_INTERVAL);
            st.waiters -= 1;
            if let Some(seg) = self.inner.try_take(&mut st, subpartition) {
                drop(st);
                return Ok((self.inner.wrap(seg, subpartition), start.elapsed()));
            }
        }
    }
}

impl LocalInner {
    fn try_take(&self, st: &mut LocalState, subpartition: Option<usize>) -> Option<Vec<u8>> {
        if let Some(s) = subpartition {
            if st
                .per_subpartition
                .get(s)
                .is_some_and(|&n| n >= st.max_per_subpartition)
            {
                return None;
            }
        }
        if st.outstanding >= st.size {
            return None;
        }
        let seg = match st.free.pop() {
            Some(seg) => seg,
            None => {
                let seg = self.global.take_segment()?;
                st.owned += 1;
                seg
            }
        };
        st.outstanding += 1;
        st.peak = st.peak.max(st.outstanding);
        if let Some(n) = subpartition.and_then(|s| st.per_subpartition.get_mut(s)) {
            *n += 1;
        }
        self.global.in_use.fetch_add(1, Ordering::Relaxed);
        Some(seg)
    }

    fn wrap(self: &Arc<Self>, data: Vec<u8>, subpartition: Option<usize>) -> Buffer {
        Buffer {
            data,
            segment_size: self.global.segment_size,
            pool: Some(self.clone()),
            subpartition,
            credit: None,
        }
    }

    fn recycle(&self, mut seg: Vec<u8>, subpartition: Option<usize>) {
        seg.clear();
        let mut st = lock(&self.state);
        st.outstanding = st.outstanding.saturating_sub(1);
        if let Some(n) = subpartition.and_then(|s| st.per_subpartition.get_mut(s)) {
            *n = n.saturating_sub(1);
        }
        self.global.in_use.fetch_sub(1, Ordering::Relaxed);
        if st.owned > st.size {
            st.owned -= 1;
            self.global.return_segment(seg);
        } else {
            st.free.push(seg);
        }
        if st.wakes_waiters() {
            self.available.notify_all();
        }
    }

    fn set_size(&self, size: usize) {
        let mut st = lock(&self.state);
        st.size = size;
        while st.owned > st.size {
            let Some(seg) = st.free.pop() else { break };
            st.owned -= 1;
            self.global.return_segment(seg);
        }
        if st.waiters > 0 {
            self.available.notify_all();
        }
    }
}

impl Drop for LocalInner {
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        for seg in st.free.drain(..) {
            self.global.return_segment(seg);
        }
        st.owned = 0;
        self.global.unregister(self.id);
    }
}

/// Takes back the credit of a delivered buffer when the buffer is dropped: the input
/// gate that delivered it implements this (Flink's `BufferRecycler`), so buffers do not
/// depend on gates.
pub(crate) trait BufferRecycler: Send + Sync {
    /// A buffer delivered on `channel` was dropped by its consumer.
    fn recycle(&self, channel: usize);
}

/// Returns a delivered buffer's credit to its gate when the buffer is dropped.
pub(crate) struct CreditReturn {
    /// The gate that delivered the buffer.
    pub(crate) recycler: Arc<dyn BufferRecycler>,
    /// The channel it came on.
    pub(crate) channel: usize,
}

/// One network segment in use: up to `capacity()` bytes of serialised records.
///
/// Dropping a buffer recycles it: the segment goes back to its local pool and, for a
/// buffer delivered by an [`InputGate`](super::InputGate), the credit goes back to the
/// gate. Holding on to delivered buffers therefore stalls their channel.
pub struct Buffer {
    data: Vec<u8>,
    segment_size: usize,
    pool: Option<Arc<LocalInner>>,
    subpartition: Option<usize>,
    credit: Option<CreditReturn>,
}

impl Buffer {
    /// An empty buffer of `segment_size` bytes that belongs to no pool: its memory is
    /// freed when it is dropped (for a reader whose pool has no buffer free at once).
    pub(crate) fn unpooled(segment_size: usize) -> Self {
        Buffer {
            data: Vec::with_capacity(segment_size),
            segment_size,
            pool: None,
            subpartition: None,
            credit: None,
        }
    }

    /// Bytes written.
    #[inline]
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when nothing was written.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The segment size: the most bytes the buffer holds.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.segment_size
    }

    /// Bytes that still fit.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.segment_size - self.data.len()
    }

    /// Appends as much of `bytes` as fits and returns how many bytes were taken.
    #[inline]
    pub fn append(&mut self, bytes: &[u8]) -> usize {
        let n = bytes.len().min(self.remaining());
        self.data.extend_from_slice(&bytes[..n]);
        n
    }

    /// Forgets the bytes written.
    pub fn clear(&mut self) {
        self.data.clear();
    }

    /// The bytes written.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        &self.data
    }

    /// Replaces the content with exactly `len` bytes read from `reader` (the receive
    /// path of a remote channel). `len` must fit the segment.
    pub(crate) fn read_exact_from<R: std::io::Read + ?Sized>(
        &mut self,
        reader: &mut R,
        len: usize,
    ) -> std::io::Result<()> {
        if len > self.segment_size {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{len} bytes do not fit a buffer of {} bytes", self.segment_size),
            ));
        }
        self.data.clear();
        self.data.resize(len, 0);
        reader.read_exact(&mut self.data)
    }

    pub(crate) fn attach_credit(&mut self, credit: CreditReturn) {
        self.credit = Some(credit);
    }
}

impl Deref for Buffer {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        &self.data
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("len", &self.data.len())
            .field("capacity", &self.segment_size)
            .finish()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.recycle(std::mem::take(&mut self.data), self.subpartition);
        }
        if let Some(credit) = self.credit.take() {
            credit.recycler.recycle(credit.channel);
        }
    }
}

/// What travels through a channel: a buffer of records, an in-band event, or a
/// priority event that overtook the buffers and events queued before it.
#[derive(Debug)]
pub enum BufferOrEvent {
    /// Serialised records.
    Buffer(Buffer),
    /// An event, in order with the buffers of the same channel.
    Event(Event),
    /// A priority event (the barrier of an unaligned checkpoint, Flink's priority
    /// event): queued ahead of everything but earlier priority events, see
    /// `network::channel_queue`.
    Priority(PriorityEvent),
}

impl BufferOrEvent {
    /// True for [`BufferOrEvent::Buffer`].
    pub fn is_buffer(&self) -> bool {
        matches!(self, BufferOrEvent::Buffer(_))
    }
}

/// A priority event and the data it overtook in the channel it was queued in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorityEvent {
    /// The event.
    pub event: Event,
    /// The bytes of the data buffers it overtook in the consumer's channel queue (a
    /// remote channel's buffers received before it and not yet taken), in order. Empty
    /// in a producer's subpartition (what a priority event overtakes there is handed to
    /// the producer, see
    /// [`ResultPartitionWriter::add_priority_event`](super::ResultPartitionWriter::add_priority_event))
    /// and for local channels, which have no queue of their own.
    pub overtaken: Vec<u8>,
}

impl crate::network::channel_queue::QueueElement for BufferOrEvent {
    fn data(&self) -> Option<&[u8]> {
        match self {
            BufferOrEvent::Buffer(b) => Some(b.as_slice()),
            BufferOrEvent::Event(_) | BufferOrEvent::Priority(_) => None,
        }
    }

    fn is_priority(&self) -> bool {
        matches!(self, BufferOrEvent::Priority(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_takes_what_fits_and_returns_to_its_pool_on_drop() {
        let global = NetworkBufferPool::new(4, 8);
        let pool = global.create_local_pool(2, 2, 1, 10).unwrap();
        let mut b = pool.try_request_buffer(Some(0)).unwrap();
        assert!(b.is_empty());
        assert_eq!(b.append(b"hello"), 5);
        assert_eq!(b.append(b"world"), 3);
        assert_eq!(&b[..], b"hellowor");
        assert_eq!(b.remaining(), 0);
        assert_eq!(pool.buffers_in_use(), 1);
        assert_eq!(global.buffers_in_use(), 1);
        drop(b);
        assert_eq!(pool.buffers_in_use(), 0);
        assert_eq!(global.buffers_in_use(), 0);
        let b = pool.try_request_buffer(None).unwrap();
        assert!(b.is_empty(), "a recycled segment comes back empty");
    }

    #[test]
    fn a_waiter_with_a_wake_batch_is_woken_once_half_the_pool_came_back() {
        let global = NetworkBufferPool::new(8, 16);
        let pool = global.create_local_pool(8, 8, 1, 10).unwrap();
        pool.set_wake_batch(5);
        let mut held: Vec<_> = (0..8).map(|_| pool.try_request_buffer(None).unwrap()).collect();
        let waiting = |pool: &LocalBufferPool| {
            let mut st = lock(&pool.inner.state);
            st.waiters += 1;
            let wakes = st.wakes_waiters();
            st.waiters -= 1;
            wakes
        };
        let mut woken = Vec::new();
        while let Some(b) = held.pop() {
            drop(b);
            woken.push(waiting(&pool));
        }
        // Half of 8 is the most a batch waits for; the last buffer back always wakes.
        assert_eq!(woken, [false, false, false, true, true, true, true, true]);
        pool.set_wake_batch(1);
        let _b = pool.try_request_buffer(None).unwrap();
        assert!(waiting(&pool), "without a batch every buffer back wakes");
    }

    #[test]
    fn a_local_pool_never_hands_out_more_than_its_size() {
        let global = NetworkBufferPool::new(3, 16);
        let pool = global.create_local_pool(3, 3, 1, 10).unwrap();
        let held: Vec<_> = (0..3).map(|_| pool.try_request_buffer(None).unwrap()).collect();
        assert!(pool.try_request_buffer(None).is_none());
        let cancel = CancelToken::new();
        cancel.cancel();
        assert_eq!(pool.request_buffer(None, &cancel).unwrap_err(), NetworkError::Cancelled);
        drop(held);
        assert!(pool.try_request_buffer(None).is_some());
    }

    #[test]
    fn one_subpartition_cannot_take_more_than_its_maximum() {
        let global = NetworkBufferPool::new(10, 16);
        let pool = global.create_local_pool(10, 10, 2, 2).unwrap();
        let _a = pool.try_request_buffer(Some(0)).unwrap();
        let _b = pool.try_request_buffer(Some(0)).unwrap();
        assert!(pool.try_request_buffer(Some(0)).is_none());
        assert!(pool.try_request_buffer(Some(1)).is_some());
    }

    #[test]
    fn pools_beyond_the_guaranteed_minimums_fail_with_the_numbers() {
        let global = NetworkBufferPool::new(10, 32);
        let _a = global.create_local_pool(6, 20, 5, 10).unwrap();
        let err = global.create_local_pool(5, 20, 4, 10).unwrap_err();
        assert_eq!(
            err,
            NetworkError::PoolExhausted {
                required: 5,
                available: 4,
                total: 10,
                segment_size: 32
            }
        );
        assert!(err
            .to_string()
            .starts_with("Insufficient number of network buffers: required 5, but only 4 available."));
    }

    #[test]
    fn excess_segments_are_shared_in_proportion_and_return_when_a_pool_goes() {
        let global = NetworkBufferPool::new(100, 8);
        let a = global.create_local_pool(10, 1000, 9, 10).unwrap();
        assert_eq!(a.size(), 100, "a lone pool gets everything");
        let b = global.create_local_pool(10, 1000, 9, 10).unwrap();
        assert_eq!((a.size(), b.size()), (50, 50));
        // Flink's proportions: excess 70 over capacities 70, 70 and 5.
        let c = global.create_local_pool(10, 15, 9, 10).unwrap();
        assert_eq!((a.size(), b.size(), c.size()), (43, 44, 13));
        assert_eq!(a.size() + b.size() + c.size(), 100);
        drop(b);
        assert_eq!(a.size() + c.size(), 100);
        assert_eq!(c.size(), 15);
        drop((a, c));
        assert_eq!(global.required_buffers(), 0);
        assert_eq!(global.available_buffers(), 100);
    }

    #[test]
    fn a_shrunk_pool_gives_back_segments_as_they_are_recycled() {
        let global = NetworkBufferPool::new(6, 8);
        let a = global.create_local_pool(2, 6, 1, 10).unwrap();
        let held: Vec<_> = (0..6).map(|_| a.try_request_buffer(None).unwrap()).collect();
        assert_eq!(global.available_buffers(), 0);
        let b = global.create_local_pool(2, 6, 1, 10).unwrap();
        assert_eq!(a.size() + b.size(), 6);
        assert!(b.try_request_buffer(None).is_none(), "every segment is still held by a");
        drop(held);
        assert_eq!(a.buffers_in_use(), 0);
        let got: Vec<_> = (0..b.size()).map(|_| b.try_request_buffer(None).unwrap()).collect();
        assert_eq!(got.len(), b.size());
        assert!(global.buffers_in_use() <= global.total_buffers());
    }
}
