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

pub mod store;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use weir_state::{KeyedStateStore, KeyedStateStoreFactory, StateError};

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
}

/// Opens RocksDB stores for the keyed operators of one TaskManager.
pub struct RocksDbStateBackend {
    options: RocksDbOptions,
    block_cache: Arc<rocksdb::Cache>,
    /// Makes every store's directory name unique within the process.
    opened: AtomicU64,
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
        })
    }
}

impl KeyedStateStoreFactory for RocksDbStateBackend {
    fn open(&self, owner: &str) -> Result<Box<dyn KeyedStateStore>, StateError> {
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
        let dir = self
            .options
            .local_dir
            .join(format!("weir-rocksdb-{}", std::process::id()))
            .join(format!("{name}_{n}"));
        let store = RocksDbKeyedStateStore::open(&dir, &self.block_cache, self.options.write_buffer_bytes)?;
        Ok(Box::new(store))
    }

    fn cache_entries(&self) -> usize {
        self.options.cache_entries
    }
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
