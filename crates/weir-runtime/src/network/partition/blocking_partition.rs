//! Blocking result partitions (Flink's `BoundedBlockingResultPartition`): the whole
//! output of a producer, kept until the JobManager releases it, read by any number of
//! consumers one after the other.
//!
//! The producer writes through an ordinary [`ResultPartitionWriter`] whose buffers and
//! events land here instead of in a consumer's queue: a buffer's bytes are copied and
//! the buffer goes straight back to its pool, so a blocking partition never
//! backpressures its producer. Bytes are kept in memory while the process-wide
//! [`MemoryBudget`] allows and appended to one spill file per partition (under
//! `io.tmp.dirs`) beyond it; the file is deleted when the partition is released or
//! dropped. Spilled buffers go through a large write buffer (a few sequential writes
//! per megabyte, never a syscall per buffer or an fsync: the file only has to outlive
//! the job's stage, and the page cache serves the replay), flushed when the partition
//! finishes.
//!
//! Once finished, the stored entries never change: readers
//! (`StoredSubpartitionReader`, in `stored_subpartition`) take a shared reference
//! to them and read them without the partition's lock; a release, which drops the
//! partition's reference, stops them through its cancel token. A consumer in this
//! process reads a finished subpartition in its own thread, through its input gate
//! (`BlockingPartition::open_local_reader`, as Flink's `LocalInputChannel` polls a
//! bounded blocking subpartition). A remote consumer, or a local one that connected
//! before the partition finished, gets a fresh pipelined `Subpartition` and a replay
//! thread that waits until the partition is finished and then writes the stored
//! subpartition into it, under the usual credit and backpressure
//! (`BlockingPartition::open_reader`); its buffer pool wakes it only once several
//! buffers came back, so it refills them in one go. Reading again (a restarted
//! consumer) reads from the start.
//!
//! Invariants: per subpartition the stored entries keep the order they were written
//! in (memory entries of a subpartition all precede its spilled ones, since spilling
//! never stops once it started); a partition is `Finished` once every subpartition got
//! EndOfPartition, `Failed` when its producer went away before; nothing is added after
//! either; released partitions hand out no readers and stop their replays.

use crate::network::buffer::{lock, NetworkBufferPool};
use crate::network::cancel::{CancelToken, CANCEL_POLL_INTERVAL};
use crate::network::error::NetworkError;
use crate::network::partition::result_partition::{BoundedData, ResultPartitionWriter};
use crate::network::partition::stored_subpartition::{
    Entry, LocalSubpartition, OpenSpill, StoredElement, StoredSubpartitionReader,
};
use crate::network::partition::subpartition::Subpartition;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use weir_core::Event;

/// Bytes of blocking partitions one process may hold in memory; shared by all of them.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: usize,
    used: AtomicUsize,
}

impl MemoryBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    /// Reserves `bytes` if they fit.
    fn try_reserve(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                u.checked_add(bytes).filter(|n| *n <= self.limit)
            })
            .is_ok()
    }

    fn give_back(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// Bytes reserved now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }
}

/// Where a blocking partition keeps its data and how its readers get buffers.
#[derive(Debug, Clone)]
pub struct BlockingPartitionSettings {
    /// The process-wide memory budget.
    pub budget: Arc<MemoryBudget>,
    /// Directories for spill files; the partition uses the first (the system temp
    /// directory when empty).
    pub spill_dirs: Vec<PathBuf>,
    /// The pool replay threads take buffers from.
    pub pool: Arc<NetworkBufferPool>,
    /// Most buffers a replayed subpartition holds before its replay waits.
    pub max_buffers_per_channel: usize,
}

/// The life cycle of a partition's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Writing,
    Finished,
    Failed,
}

/// Bytes a spill file's writer buffers: sequential writes in large requests.
const SPILL_WRITE_BUFFER: usize = 1 << 20;

/// The spill file of a partition.
struct SpillFile {
    file: tempfile::NamedTempFile,
    /// Appends to `file`; flushed before the partition counts as finished.
    writer: BufWriter<File>,
    len: u64,
}

struct State {
    /// The entries per subpartition: only the producer adds to them, before the
    /// partition is finished (while no replay holds a reference).
    subpartitions: Arc<Vec<Vec<Entry>>>,
    /// Data bytes written per subpartition (kept after a release).
    written: Vec<u64>,
    ended: Vec<bool>,
    status: Status,
    memory_bytes: usize,
    spilled_bytes: u64,
    spill: Option<SpillFile>,
    released: bool,
}

/// The stored output of one producer subtask for a BLOCKING edge.
pub struct BlockingPartition {
    label: String,
    settings: BlockingPartitionSettings,
    state: Mutex<State>,
    changed: Condvar,
    /// Cancels the replays when the partition is released.
    release: CancelToken,
}

impl std::fmt::Debug for BlockingPartition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = lock(&self.state);
        f.debug_struct("BlockingPartition")
            .field("label", &self.label)
            .field("status", &st.status)
            .field("memory_bytes", &st.memory_bytes)
            .field("spilled_bytes", &st.spilled_bytes)
            .finish()
    }
}

impl BlockingPartition {
    /// An empty partition of `num_subpartitions` subpartitions, named `label` in logs
    /// and spill file names.
    pub fn new(label: String, num_subpartitions: usize, settings: BlockingPartitionSettings) -> Arc<Self> {
        Arc::new(Self {
            label,
            settings,
            state: Mutex::new(State {
                subpartitions: Arc::new((0..num_subpartitions).map(|_| Vec::new()).collect()),
                written: vec![0; num_subpartitions],
                ended: vec![false; num_subpartitions],
                status: Status::Writing,
                memory_bytes: 0,
                spilled_bytes: 0,
                spill: None,
                released: false,
            }),
            changed: Condvar::new(),
            release: CancelToken::new(),
        })
    }

    /// Number of subpartitions.
    pub fn num_subpartitions(&self) -> usize {
        lock(&self.state).subpartitions.len()
    }

    /// The data bytes written to each subpartition (what the adaptive batch scheduler
    /// decides the consumers' parallelism by).
    pub fn subpartition_bytes(&self) -> Vec<u64> {
        lock(&self.state).written.clone()
    }

    fn check_writable(&self, st: &State, subpartition: usize) -> Result<(), NetworkError> {
        if subpartition >= st.subpartitions.len() {
            return Err(NetworkError::InvalidArgument(format!(
                "subpartition {subpartition} out of range (partition {} has {})",
                self.label,
                st.subpartitions.len()
            )));
        }
        if st.released {
            return Err(NetworkError::ConsumerReleased { subpartition });
        }
        if st.ended[subpartition] {
            return Err(NetworkError::Protocol(format!(
                "data added to subpartition {subpartition} of blocking partition {} after EndOfPartition",
                self.label
            )));
        }
        Ok(())
    }

    fn check_readable(&self, st: &State, subpartition: usize) -> Result<(), NetworkError> {
        if st.released {
            return Err(NetworkError::InvalidArgument(format!(
                "blocking partition {} is released",
                self.label
            )));
        }
        if subpartition >= st.subpartitions.len() {
            return Err(NetworkError::InvalidArgument(format!(
                "partition {} has {} subpartitions, not {}",
                self.label,
                st.subpartitions.len(),
                subpartition + 1
            )));
        }
        Ok(())
    }

    /// The entries, to add to: only while the partition is written, when no replay
    /// shares them.
    fn entries_mut<'a>(&self, st: &'a mut State) -> Result<&'a mut Vec<Vec<Entry>>, NetworkError> {
        Arc::get_mut(&mut st.subpartitions).ok_or_else(|| {
            NetworkError::Protocol(format!(
                "data added to blocking partition {} while it is replayed",
                self.label
            ))
        })
    }

    fn create_spill_file(&self) -> Result<SpillFile, NetworkError> {
        let dir = self
            .settings
            .spill_dirs
            .first()
            .cloned()
            .unwrap_or_else(std::env::temp_dir);
        let file = tempfile::Builder::new()
            .prefix("weir-blocking-")
            .suffix(".spill")
            .tempfile_in(&dir)
            .map_err(|e| NetworkError::Spill {
                partition: self.label.clone(),
                path: dir.display().to_string(),
                reason: e.to_string(),
            })?;
        tracing::info!(
            partition = %self.label,
            path = %file.path().display(),
            budget_bytes = self.settings.budget.limit,
            "spilling blocking partition to a file: the memory budget is used up"
        );
        let handle = file.as_file().try_clone().map_err(|e| NetworkError::Spill {
            partition: self.label.clone(),
            path: file.path().display().to_string(),
            reason: format!("cannot open for writing: {e}"),
        })?;
        Ok(SpillFile {
            file,
            writer: BufWriter::with_capacity(SPILL_WRITE_BUFFER, handle),
            len: 0,
        })
    }

    fn spill_error(&self, path: Option<&std::path::Path>, reason: String) -> NetworkError {
        NetworkError::Spill {
            partition: self.label.clone(),
            path: path.map_or_else(String::new, |p| p.display().to_string()),
            reason,
        }
    }

    /// The spill file's path, once the partition spilled (until it is released).
    pub fn spill_path(&self) -> Option<PathBuf> {
        lock(&self.state).spill.as_ref().map(|s| s.file.path().to_path_buf())
    }

    /// Bytes kept in memory and bytes spilled.
    pub fn stored_bytes(&self) -> (usize, u64) {
        let st = lock(&self.state);
        (st.memory_bytes, st.spilled_bytes)
    }

    /// True once every subpartition got EndOfPartition.
    pub fn is_finished(&self) -> bool {
        lock(&self.state).status == Status::Finished
    }

    /// Drops the data (memory goes back to the budget, the spill file is deleted) and
    /// stops the replays; later readers are refused.
    pub fn release(&self) {
        self.release.cancel();
        let mut st = lock(&self.state);
        if st.released {
            return;
        }
        st.released = true;
        self.settings.budget.give_back(st.memory_bytes);
        st.memory_bytes = 0;
        // Replays still running hold the entries until they see the cancellation.
        let n = st.subpartitions.len();
        st.subpartitions = Arc::new((0..n).map(|_| Vec::new()).collect());
        let spill = st.spill.take();
        self.changed.notify_all();
        drop(st);
        if let Some(SpillFile { file, writer, .. }) = spill {
            // The data is released: bytes still in the write buffer are dropped
            // unwritten rather than flushed into a file about to be deleted.
            drop(writer.into_parts());
            let path = file.path().display().to_string();
            if let Err(e) = file.close() {
                tracing::warn!(partition = %self.label, path, error = %e, "cannot delete the spill file");
            }
        }
    }

    /// A new reader of `subpartition`: a pipelined subpartition that a replay thread
    /// fills from the stored data once the partition is finished.
    pub(crate) fn open_reader(self: &Arc<Self>, subpartition: u32) -> Result<Arc<Subpartition>, NetworkError> {
        let index = subpartition as usize;
        self.check_readable(&lock(&self.state), index)?;
        let pool = self.settings.pool.create_local_pool(
            2,
            self.settings.max_buffers_per_channel.max(2),
            1,
            self.settings.max_buffers_per_channel,
        )?;
        pool.set_wake_batch(self.settings.max_buffers_per_channel / 2);
        let sub = Subpartition::new(u64::MAX, index);
        let writer = ResultPartitionWriter::new(u64::MAX, pool, vec![sub.clone()], self.release.clone());
        let partition = self.clone();
        let reader = sub.clone();
        std::thread::Builder::new()
            .name(format!("blocking-replay {}#{index}", self.label))
            .spawn(move || {
                let mut writer = writer;
                if let Err(e) = partition.replay(index, &mut writer) {
                    if !e.is_cancelled() && !e.is_peer_gone() {
                        tracing::warn!(partition = %partition.label, subpartition = index, error = %e, "replaying a blocking subpartition failed");
                        // The consumer fails with this cause once the writer is gone.
                        reader.set_producer_failure(e);
                    }
                }
                drop(writer);
            })
            .map_err(|e| NetworkError::InvalidArgument(format!("cannot start a replay thread: {e}")))?;
        Ok(sub)
    }

    /// A local consumer's way into `subpartition`: read in the consumer's thread
    /// once the partition is finished, else through a replay thread
    /// ([`open_reader`](Self::open_reader)) that waits for the end.
    pub(crate) fn open_local_reader(self: &Arc<Self>, subpartition: u32) -> Result<LocalSubpartition, NetworkError> {
        let reader = {
            let st = lock(&self.state);
            self.check_readable(&st, subpartition as usize)?;
            match st.status {
                Status::Finished => Some(self.stored_reader(&st, subpartition as usize)?),
                Status::Writing | Status::Failed => None,
            }
        };
        match reader {
            Some(reader) => Ok(LocalSubpartition::Stored(reader)),
            None => self.open_reader(subpartition).map(LocalSubpartition::Queue),
        }
    }

    /// A reader of `subpartition` of the finished partition whose state is `st`,
    /// with the spill file open when the subpartition spilled.
    fn stored_reader(&self, st: &State, subpartition: usize) -> Result<StoredSubpartitionReader, NetworkError> {
        let entries = st.subpartitions.clone();
        let spilled = entries
            .get(subpartition)
            .is_some_and(|e| e.iter().any(|e| matches!(e, Entry::Spilled { .. })));
        let spill = match (spilled, st.spill.as_ref()) {
            (false, _) => None,
            (true, None) => return Err(self.spill_error(None, "the spill file is gone".into())),
            (true, Some(stored)) => Some(OpenSpill {
                file: stored
                    .file
                    .reopen()
                    .map_err(|e| self.spill_error(Some(stored.file.path()), format!("cannot open: {e}")))?,
                path: stored.file.path().to_path_buf(),
            }),
        };
        Ok(StoredSubpartitionReader::new(
            self.label.clone(),
            entries,
            subpartition,
            spill,
            self.release.clone(),
        ))
    }

    /// Waits until the partition is finished, then writes `subpartition`'s entries
    /// into `writer`. An error (the spill file cannot be opened or read) is the cause
    /// the consumer fails with.
    fn replay(&self, subpartition: usize, writer: &mut ResultPartitionWriter) -> Result<(), NetworkError> {
        let mut reader = {
            let mut st = lock(&self.state);
            while st.status == Status::Writing && !st.released {
                st = crate::network::buffer::wait_slice(&self.changed, st, CANCEL_POLL_INTERVAL);
            }
            if st.status == Status::Failed || st.released {
                return Ok(());
            }
            self.stored_reader(&st, subpartition)?
        };
        while let Some(element) = reader.next_element(|| writer.request_buffer_for(0))? {
            match element {
                StoredElement::Buffer(buffer) => writer.add_buffer(0, buffer)?,
                StoredElement::Event(event) => writer.add_event(0, event)?,
            }
        }
        Ok(())
    }
}

impl BoundedData for BlockingPartition {
    /// Stores a buffer's bytes for `subpartition`: in memory within the budget, else in
    /// the spill file (created on first use).
    fn append_buffer(&self, subpartition: usize, bytes: &[u8]) -> Result<(), NetworkError> {
        let mut st = lock(&self.state);
        self.check_writable(&st, subpartition)?;
        st.written[subpartition] += bytes.len() as u64;
        if st.spill.is_none() && self.settings.budget.try_reserve(bytes.len()) {
            st.memory_bytes += bytes.len();
            self.entries_mut(&mut st)?[subpartition].push(Entry::Memory(bytes.to_vec()));
            return Ok(());
        }
        if st.spill.is_none() {
            st.spill = Some(self.create_spill_file()?);
        }
        let Some(spill) = st.spill.as_mut() else {
            return Err(self.spill_error(None, "no spill file".into()));
        };
        let offset = spill.len;
        if let Err(e) = spill.writer.write_all(bytes) {
            return Err(self.spill_error(Some(spill.file.path()), format!("cannot write: {e}")));
        }
        spill.len += bytes.len() as u64;
        st.spilled_bytes += bytes.len() as u64;
        self.entries_mut(&mut st)?[subpartition].push(Entry::Spilled {
            offset,
            len: bytes.len(),
        });
        Ok(())
    }

    /// Stores an event for `subpartition`; EndOfPartition of the last subpartition
    /// finishes the partition.
    fn append_event(&self, subpartition: usize, event: Event) -> Result<(), NetworkError> {
        let mut st = lock(&self.state);
        self.check_writable(&st, subpartition)?;
        self.entries_mut(&mut st)?[subpartition].push(Entry::Event(event));
        if event == Event::EndOfPartition {
            st.ended[subpartition] = true;
            if st.ended.iter().all(|e| *e) {
                if let Some(spill) = st.spill.as_mut() {
                    if let Err(e) = spill.writer.flush() {
                        let path = spill.file.path().to_path_buf();
                        st.status = Status::Failed;
                        self.changed.notify_all();
                        return Err(self.spill_error(Some(&path), format!("cannot write: {e}")));
                    }
                }
                st.status = Status::Finished;
                if st.spilled_bytes > 0 {
                    tracing::info!(
                        partition = %self.label,
                        memory_bytes = st.memory_bytes,
                        spilled_bytes = st.spilled_bytes,
                        "blocking partition finished"
                    );
                }
                self.changed.notify_all();
            }
        }
        Ok(())
    }

    /// The producer's writer went away: unless it finished, the partition failed.
    fn on_producer_dropped(&self) {
        let mut st = lock(&self.state);
        if st.status == Status::Writing {
            st.status = Status::Failed;
            self.changed.notify_all();
        }
    }
}

impl Drop for BlockingPartition {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
#[path = "blocking_partition_tests.rs"]
mod tests;
