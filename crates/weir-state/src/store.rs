//! The on-disk tier of keyed state: what the [`KeyedStateBackend`](crate::KeyedStateBackend)
//! needs of an embedded key-value store (RocksDB in `weir-state-rocksdb`), in bytes.
//!
//! The backend keeps a bounded cache of typed entries on the heap and moves entries
//! between it and the store; the store only sees bytes. Layout, as Flink's RocksDB
//! backend: one column (column family) per declared state; an entry's key is its key
//! group as 2 bytes big-endian, then the encoding of the key, then of the namespace, so
//! that the entries of one key group are contiguous and a key-group range can be read
//! and cleared by prefix. The value is the encoding of the state value (a whole list,
//! a whole user map).
//!
//! The backend keeps the cache authoritative: an entry loaded from the store stays in
//! it until the cache is flushed, which writes the cache's entries and deletes those
//! removed since they were loaded (`heap/store_tier.rs`).

use crate::error::StateError;
use crate::incremental::handle::{IncrementalKeyedStateHandle, SharedFileRef};
use crate::incremental::transfer::SharedStateTransfer;
use std::path::{Path, PathBuf};
use weir_core::KeyGroupRange;

/// A declared state's column in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreColumn(pub usize);

/// Entries to put into and delete from the store in one atomic write.
#[derive(Debug, Default)]
pub struct StoreBatch {
    /// `(column, key, value)` of every entry to put.
    pub puts: Vec<(StoreColumn, Vec<u8>, Vec<u8>)>,
    /// `(column, key)` of every entry to delete (applied before the puts).
    pub deletes: Vec<(StoreColumn, Vec<u8>)>,
}

/// Visits one `(key, value)` of a scan; an error stops the scan.
pub type ScanVisitor<'a> = dyn FnMut(&[u8], &[u8]) -> Result<(), StateError> + 'a;

/// An embedded key-value store holding one subtask's keyed state that does not fit
/// the cache.
pub trait KeyedStateStore: Send {
    /// The column of state `name`, created when it is declared for the first time.
    fn column(&mut self, name: &str) -> Result<StoreColumn, StateError>;
    /// The value under `key`, if there is one.
    fn get(&self, column: StoreColumn, key: &[u8]) -> Result<Option<Vec<u8>>, StateError>;
    /// Deletes and puts the entries of `batch`, atomically.
    fn write(&mut self, batch: StoreBatch) -> Result<(), StateError>;
    /// Visits every entry of `column` whose key starts with `prefix`, in key order.
    fn scan(&self, column: StoreColumn, prefix: &[u8], visit: &mut ScanVisitor<'_>) -> Result<(), StateError>;
    /// Removes every entry of `column` whose key starts with `prefix`.
    fn delete_prefix(&mut self, column: StoreColumn, prefix: &[u8]) -> Result<(), StateError>;
    /// Freezes what the store holds now into a checkpoint on local disk (RocksDB's
    /// checkpoint: memtables flushed, the immutable files hard-linked), readable on any
    /// thread while the store goes on.
    fn checkpoint(&mut self) -> Result<Box<dyn StoreCheckpoint>, StateError>;
}

/// How keyed state held in an on-disk store is written into a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotFormat {
    /// Every entry, per key group, in the format both backends read (savepoints, and
    /// checkpoints without `execution.checkpointing.incremental`).
    Canonical,
    /// The store's files, uploaded only once (incremental checkpoints).
    Incremental,
}

/// The local copy of a task's store at its last confirmed checkpoint, kept by the
/// TaskManager for local recovery (`execution.state-recovery.from-local`): a restore
/// takes the files it holds from it instead of downloading them.
pub struct LocalCopy {
    /// The checkpoint.
    pub checkpoint_id: u64,
    /// The store's files at that checkpoint.
    pub checkpoint: Box<dyn StoreCheckpoint>,
    /// Its shared files, as uploaded.
    pub shared: Vec<SharedFileRef>,
}

/// A file of a [`StoreCheckpoint`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreFile {
    /// Its name in the checkpoint's directory.
    pub name: String,
    /// Where it is.
    pub path: PathBuf,
    /// Its length in bytes.
    pub size: u64,
    /// Immutable and named uniquely within the store (an SST file): shared between
    /// the checkpoints that contain it.
    pub shareable: bool,
}

/// A store's contents frozen at one checkpoint, in a directory of their own (removed
/// when dropped).
pub trait StoreCheckpoint: Send + Sync {
    /// The directory.
    fn dir(&self) -> &Path;
    /// The name of the store it was taken of (unique within the TaskManager process).
    fn store_name(&self) -> &str;
    /// Every file of it.
    fn files(&self) -> Result<Vec<StoreFile>, StateError>;
    /// Visits every entry of column `name` whose key starts with `prefix`, in key
    /// order (nothing for a column it does not hold).
    fn scan(&self, name: &str, prefix: &[u8], visit: &mut ScanVisitor<'_>) -> Result<(), StateError>;
}

/// Opens a store for each keyed operator of a subtask.
pub trait KeyedStateStoreFactory: Send + Sync + std::fmt::Debug {
    /// A new, empty store for the operator named `owner` (unique within the
    /// TaskManager while the store lives); removed from disk when dropped.
    fn open(&self, owner: &str) -> Result<Box<dyn KeyedStateStore>, StateError>;
    /// How many entries a backend keeps in its cache on the heap before it spills
    /// them to the store.
    fn cache_entries(&self) -> usize;
    /// A store for the operator named `owner` holding the key groups of `range` of the
    /// stores that `handles` describe (their files fetched through `transfer`): the
    /// files themselves when one handle covers `range` (its entries of other key
    /// groups deleted), else the entries of `range` copied out of each.
    fn restore(
        &self,
        owner: &str,
        range: KeyGroupRange,
        handles: &[IncrementalKeyedStateHandle],
        transfer: &dyn SharedStateTransfer,
    ) -> Result<Box<dyn KeyedStateStore>, StateError>;
    /// True when the TaskManager keeps local copies of confirmed checkpoints
    /// (`execution.state-recovery.from-local`).
    fn local_recovery(&self) -> bool {
        false
    }
    /// Keeps `copy` as the local copy of the store `task` (a job, vertex, subtask and
    /// operator), replacing the one it had.
    fn keep_local_copy(&self, task: &str, copy: LocalCopy) {
        let _unused = (task, copy);
    }
    /// Drops the local copies of the stores whose task starts with `prefix` (a job
    /// that ended).
    fn release_local_copies(&self, prefix: &str) {
        let _unused = prefix;
    }
}

/// The prefix of every entry of key group `kg`.
pub fn key_group_prefix(kg: u32) -> [u8; 2] {
    // Key groups are below the max parallelism, at most 32768.
    (kg as u16).to_be_bytes()
}
