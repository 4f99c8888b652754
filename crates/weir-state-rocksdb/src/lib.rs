//! Weir's on-disk keyed state: RocksDB under the [`KeyedStateBackend`](weir_state::KeyedStateBackend),
//! Flink's `EmbeddedRocksDBStateBackend` (`state.backend.type: rocksdb`).
//!
//! - [`RocksDbStateBackend`]: one per TaskManager; opens a store per keyed operator
//!   subtask in a directory of its own under the local directory
//!   (`state.backend.rocksdb.localdir`, else `io.tmp.dirs`), all stores sharing one block
//!   cache and one write-buffer budget sized from managed memory.
//! - [`store::RocksDbKeyedStateStore`]: one RocksDB instance, a column family per
//!   declared state, writes without a write-ahead log (checkpoints make state durable,
//!   as in Flink); removed from disk when dropped.
//!
//! Linked against Debian's RocksDB 7.8 (docs/decisions/0011-rocksdb-from-debian.md).

#![warn(missing_docs)]

pub mod checkpoint;
mod directories;
pub mod store;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use weir_core::KeyGroupRange;
use weir_state::incremental::{download_handle, restores_in_place, IncrementalKeyedStateHandle, SharedStateTransfer};
use weir_state::store::LocalCopy;
use weir_state::{KeyedStateStore, KeyedStateStoreFactory, StateError};

pub use checkpoint::RocksDbStoreCheckpoint;
use directories::remove_quietly;
pub use store::RocksDbKeyedStateStore;

/// How the stores of one TaskManager use memory and disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RocksDbOptions {
    /// The directory under which each store gets a directory of its own.
    pub local_dir: PathBuf,
    /// Bytes of the block cache shared by every store.
    pub block_cache_bytes: usize,
    /// Bytes of memtables (write buffers) each store may hold before it flushes.
    pub write_buffer_bytes: usize,
    /// Entries each backend keeps decoded on the heap in front of its store.
    pub cache_entries: usize,
    /// Keep each store's last confirmed checkpoint on local disk and restore from it
    /// (`execution.state-recovery.from-local`).
    pub local_recovery: bool,
}

/// Opens RocksDB stores for the keyed operators of one TaskManager.
pub struct RocksDbStateBackend {
    options: RocksDbOptions,
    block_cache: Arc<rocksdb::Cache>,
    /// Makes every store's directory name unique within the process.
    opened: AtomicU64,
    /// Local recovery: per store (job, vertex, subtask, operator), its last confirmed
    /// checkpoint.
    local_copies: Mutex<BTreeMap<String, LocalCopy>>,
}

impl std::fmt::Debug for RocksDbStateBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksDbStateBackend")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl RocksDbStateBackend {
    /// The backend with `options`; fails when the block cache cannot be created.
    /// Removes the store directories that processes no longer running left behind
    /// (a TaskManager killed with its stores open), as every [`open`](KeyedStateStoreFactory::open) does.
    pub fn new(options: RocksDbOptions) -> Result<Self, StateError> {
        remove_orphaned_stores(&options.local_dir);
        let block_cache = rocksdb::Cache::new_lru_cache(options.block_cache_bytes.max(1 << 20))
            .map_err(|e| StateError::Store(format!("creating the RocksDB block cache: {e}")))?;
        Ok(Self {
            options,
            block_cache: Arc::new(block_cache),
            opened: AtomicU64::new(0),
            local_copies: Mutex::new(BTreeMap::new()),
        })
    }
}

impl RocksDbStateBackend {
    /// A new directory for a store of the operator named `owner`, unique within the
    /// process, in the process's own directory under the local directory.
    fn store_dir(&self, owner: &str) -> PathBuf {
        remove_orphaned_stores(&self.options.local_dir);
        let n = self.opened.fetch_add(1, Ordering::Relaxed);
        let name: String = owner
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(80)
            .collect();
        self.options
            .local_dir
            .join(format!("weir-rocksdb-{}", std::process::id()))
            .join(format!("{name}_{n}"))
    }

    /// Every shared file of the local copies: its remote path, and the local file.
    fn local_files(&self) -> BTreeMap<String, PathBuf> {
        let copies = self.local_copies.lock().unwrap_or_else(|p| p.into_inner());
        let mut files = BTreeMap::new();
        for copy in copies.values() {
            for f in &copy.shared {
                files.insert(f.file.path.clone(), copy.checkpoint.dir().join(&f.local_name));
            }
        }
        files
    }
}

impl KeyedStateStoreFactory for RocksDbStateBackend {
    fn open(&self, owner: &str) -> Result<Box<dyn KeyedStateStore>, StateError> {
        let dir = self.store_dir(owner);
        let store = RocksDbKeyedStateStore::open(&dir, &self.block_cache, self.options.write_buffer_bytes)?;
        Ok(Box::new(store))
    }

    fn cache_entries(&self) -> usize {
        self.options.cache_entries
    }

    fn local_recovery(&self) -> bool {
        self.options.local_recovery
    }

    fn keep_local_copy(&self, task: &str, copy: LocalCopy) {
        if !self.options.local_recovery {
            return;
        }
        let replaced = self
            .local_copies
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(task.to_string(), copy);
        // Its directory goes when it is dropped, outside the lock.
        drop(replaced);
    }

    fn release_local_copies(&self, prefix: &str) {
        let released: Vec<LocalCopy> = {
            let mut copies = self.local_copies.lock().unwrap_or_else(|p| p.into_inner());
            let tasks: Vec<String> = copies.keys().filter(|t| t.starts_with(prefix)).cloned().collect();
            tasks.iter().filter_map(|t| copies.remove(t)).collect()
        };
        drop(released);
    }

    fn restore(
        &self,
        owner: &str,
        range: KeyGroupRange,
        handles: &[IncrementalKeyedStateHandle],
        transfer: &dyn SharedStateTransfer,
    ) -> Result<Box<dyn KeyedStateStore>, StateError> {
        let dir = self.store_dir(owner);
        let (cache, write_buffers) = (&self.block_cache, self.options.write_buffer_bytes);
        let local = self.local_files();
        let (mut from_local, mut total) = (0, 0);
        let mut fetch = |handle: &IncrementalKeyedStateHandle, into: &std::path::Path| {
            total += handle.shared.len();
            download_handle(handle, into, transfer, &local).map(|n| from_local += n)
        };
        if let Some(handle) = restores_in_place(handles, range) {
            let restored =
                fetch(handle, &dir).and_then(|()| RocksDbKeyedStateStore::open_existing(&dir, cache, write_buffers));
            let mut store = match restored {
                Ok(store) => store,
                Err(e) => {
                    remove_quietly(&dir);
                    return Err(e);
                }
            };
            if handle.key_group_range != range {
                store.clip(range)?;
            }
            log_restore(owner, from_local, total);
            return Ok(Box::new(store));
        }
        let mut store = RocksDbKeyedStateStore::open(&dir, cache, write_buffers)?;
        for (i, handle) in handles.iter().enumerate() {
            let Some(overlap) = intersection(handle.key_group_range, range) else {
                continue;
            };
            let source_dir = dir.with_file_name(format!(
                "{}-restore-{i}",
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ));
            let copied = fetch(handle, &source_dir)
                .and_then(|()| RocksDbStoreCheckpoint::open_restored(source_dir.clone()))
                .and_then(|source| store.copy_from(&source, overlap));
            // The source removes its directory when dropped; after a failed download
            // there is no source yet.
            remove_quietly(&source_dir);
            copied?;
        }
        log_restore(owner, from_local, total);
        Ok(Box::new(store))
    }
}

/// Says how many of a restored store's shared files came from a local copy.
fn log_restore(owner: &str, from_local: usize, total: usize) {
    if from_local > 0 {
        tracing::info!("restored the state of {owner}: {from_local} of {total} files from the local copy");
    } else {
        tracing::debug!("restored the state of {owner}: {total} files downloaded");
    }
}

/// The key groups two ranges share.
fn intersection(a: KeyGroupRange, b: KeyGroupRange) -> Option<KeyGroupRange> {
    a.intersects(&b)
        .then(|| KeyGroupRange::new(a.start.max(b.start), a.end.min(b.end)))
}

/// Removes `weir-rocksdb-<pid>` directories under `local_dir` whose process is gone.
fn remove_orphaned_stores(local_dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(local_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("weir-rocksdb-")) else {
            continue;
        };
        let alive = pid
            .parse::<u32>()
            .is_ok_and(|pid| PathBuf::from(format!("/proc/{pid}")).exists());
        if !alive {
            if let Err(e) = std::fs::remove_dir_all(entry.path()) {
                tracing::warn!(
                    "could not remove the orphaned state stores in {}: {e}",
                    entry.path().display()
                );
            }
        }
    }
}
