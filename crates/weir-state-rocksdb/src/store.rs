//! One RocksDB instance holding the keyed state of one operator subtask that does not
//! fit its backend's cache: a column family per declared state, keys and values as
//! [`weir_state::store`] lays them out.
//!
//! Writes skip the write-ahead log: what is not in a completed checkpoint is
//! recomputed after a failure anyway (Flink's RocksDB backend does the same). The
//! directory is the store's alone and is removed when the store is dropped.

use crate::checkpoint::{RocksDbStoreCheckpoint, DEFAULT_COLUMN};
use crate::directories::remove_quietly;
use rocksdb::{ColumnFamilyDescriptor, Direction, IteratorMode, Options, WriteBatch, WriteOptions, DB};
use std::path::{Path, PathBuf};
use weir_core::KeyGroupRange;
use weir_state::store::{key_group_prefix, KeyedStateStore, ScanVisitor, StoreBatch, StoreCheckpoint, StoreColumn};
use weir_state::StateError;

/// A RocksDB store in a directory of its own.
pub struct RocksDbKeyedStateStore {
    db: Option<DB>,
    dir: PathBuf,
    columns: Vec<String>,
    column_options: Options,
    write: WriteOptions,
    /// Checkpoints taken, naming their directories.
    checkpoints: u64,
}

/// Bytes of entries copied per write batch when a store is restored by copying.
const COPY_BATCH_BYTES: usize = 4 << 20;

/// The first key after every entry of key group `kg`.
fn key_group_bound(kg: u32) -> [u8; 2] {
    key_group_prefix(kg + 1)
}

fn store_error(what: &str, dir: &Path, e: impl std::fmt::Display) -> StateError {
    StateError::Store(format!("{what} in {}: {e}", dir.display()))
}

/// The options of every store: the database's and each column family's.
fn store_options(block_cache: &rocksdb::Cache, write_buffer_bytes: usize) -> (Options, Options) {
    let mut table = rocksdb::BlockBasedOptions::default();
    table.set_block_cache(block_cache);
    table.set_bloom_filter(10.0, false);
    let mut column_options = Options::default();
    column_options.set_block_based_table_factory(&table);
    // Memtables of at most 16 MiB: a lookup in a larger skip list costs more than
    // the flushes it saves (measured with scripts/bench-state.sh).
    column_options.set_write_buffer_size((write_buffer_bytes / 2).clamp(1 << 20, 16 << 20));
    column_options.set_compression_type(rocksdb::DBCompressionType::Lz4);
    // A bloom filter over the memtable's keys: most reads are of keys the memtable
    // does not hold, and skip its skip list.
    column_options.set_memtable_prefix_bloom_ratio(0.1);
    column_options.set_memtable_whole_key_filtering(true);
    let mut options = column_options.clone();
    options.create_if_missing(true);
    options.set_db_write_buffer_size(write_buffer_bytes.max(2 << 20));
    options.set_max_open_files(256);
    options.set_keep_log_file_num(2);
    (options, column_options)
}

impl RocksDbKeyedStateStore {
    /// Opens a new, empty store in `dir` (removing whatever was there), its blocks
    /// cached in `block_cache`, with up to `write_buffer_bytes` of memtables.
    pub fn open(dir: &Path, block_cache: &rocksdb::Cache, write_buffer_bytes: usize) -> Result<Self, StateError> {
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| store_error("removing an old store", dir, e))?;
        }
        std::fs::create_dir_all(dir).map_err(|e| store_error("creating the store directory", dir, e))?;
        Self::open_existing(dir, block_cache, write_buffer_bytes)
    }

    /// Opens the store whose files are in `dir` (restored from a checkpoint), with its
    /// column families.
    pub fn open_existing(
        dir: &Path,
        block_cache: &rocksdb::Cache,
        write_buffer_bytes: usize,
    ) -> Result<Self, StateError> {
        let (options, column_options) = store_options(block_cache, write_buffer_bytes);
        let columns: Vec<String> = if dir.join("CURRENT").exists() {
            DB::list_cf(&options, dir)
                .map_err(|e| store_error("listing the column families", dir, e))?
                .into_iter()
                .filter(|c| c != DEFAULT_COLUMN)
                .collect()
        } else {
            Vec::new()
        };
        let descriptors = columns
            .iter()
            .map(|c| ColumnFamilyDescriptor::new(c, column_options.clone()));
        let db =
            DB::open_cf_descriptors(&options, dir, descriptors).map_err(|e| store_error("opening RocksDB", dir, e))?;
        let mut write = WriteOptions::default();
        write.disable_wal(true);
        Ok(Self {
            db: Some(db),
            dir: dir.to_path_buf(),
            columns,
            column_options,
            write,
            checkpoints: 0,
        })
    }

    /// Deletes every entry outside the key groups of `range` (a store restored in place
    /// from a checkpoint of more key groups).
    pub fn clip(&mut self, range: KeyGroupRange) -> Result<(), StateError> {
        let db = self.db()?;
        let first = key_group_prefix(range.start);
        let after = key_group_bound(range.end);
        for name in &self.columns {
            let cf = db.cf_handle(name).ok_or_else(|| {
                StateError::Store(format!("column family '{name}' missing in {}", self.dir.display()))
            })?;
            db.delete_range_cf(cf, &[0u8; 2][..], &first[..])
                .and_then(|()| db.delete_range_cf(cf, &after[..], &[0xffu8; 3][..]))
                .map_err(|e| store_error("clipping the key groups", &self.dir, e))?;
        }
        Ok(())
    }

    /// Copies the entries of the key groups of `range` of every column of `source`
    /// into this store.
    pub fn copy_from(&mut self, source: &RocksDbStoreCheckpoint, range: KeyGroupRange) -> Result<(), StateError> {
        let first = key_group_prefix(range.start);
        let after = key_group_bound(range.end);
        for name in source.columns().to_vec() {
            let column = self.column(&name)?;
            let mut batch = StoreBatch::default();
            let mut bytes = 0usize;
            source.scan_range(&name, &first, &after, &mut |key, value| {
                bytes += key.len() + value.len();
                batch.puts.push((column, key.to_vec(), value.to_vec()));
                if bytes >= COPY_BATCH_BYTES {
                    bytes = 0;
                    self.write(std::mem::take(&mut batch))?;
                }
                Ok(())
            })?;
            self.write(batch)?;
        }
        Ok(())
    }

    fn db(&self) -> Result<&DB, StateError> {
        self.db
            .as_ref()
            .ok_or_else(|| StateError::Store(format!("the store in {} is closed", self.dir.display())))
    }

    fn handle(&self, column: StoreColumn) -> Result<&rocksdb::ColumnFamily, StateError> {
        let name = self
            .columns
            .get(column.0)
            .ok_or_else(|| StateError::Store(format!("no column {} in {}", column.0, self.dir.display())))?;
        self.db()?
            .cf_handle(name)
            .ok_or_else(|| StateError::Store(format!("column family '{name}' missing in {}", self.dir.display())))
    }
}

impl KeyedStateStore for RocksDbKeyedStateStore {
    fn column(&mut self, name: &str) -> Result<StoreColumn, StateError> {
        if let Some(i) = self.columns.iter().position(|c| c == name) {
            return Ok(StoreColumn(i));
        }
        let db = self
            .db
            .as_mut()
            .ok_or_else(|| StateError::Store(format!("the store in {} is closed", self.dir.display())))?;
        db.create_cf(name, &self.column_options)
            .map_err(|e| store_error(&format!("creating column family '{name}'"), &self.dir, e))?;
        self.columns.push(name.to_string());
        Ok(StoreColumn(self.columns.len() - 1))
    }

    fn get(&self, column: StoreColumn, key: &[u8]) -> Result<Option<Vec<u8>>, StateError> {
        let cf = self.handle(column)?;
        self.db()?
            .get_cf(cf, key)
            .map_err(|e| store_error("reading", &self.dir, e))
    }

    fn write(&mut self, batch: StoreBatch) -> Result<(), StateError> {
        if batch.puts.is_empty() && batch.deletes.is_empty() {
            return Ok(());
        }
        let mut write = WriteBatch::default();
        for (column, key) in &batch.deletes {
            write.delete_cf(self.handle(*column)?, key);
        }
        for (column, key, value) in &batch.puts {
            write.put_cf(self.handle(*column)?, key, value);
        }
        self.db()?
            .write_opt(write, &self.write)
            .map_err(|e| store_error("writing", &self.dir, e))
    }

    fn scan(&self, column: StoreColumn, prefix: &[u8], visit: &mut ScanVisitor<'_>) -> Result<(), StateError> {
        let cf = self.handle(column)?;
        let iter = self
            .db()?
            .iterator_cf(cf, IteratorMode::From(prefix, Direction::Forward));
        for item in iter {
            let (key, value) = item.map_err(|e| store_error("scanning", &self.dir, e))?;
            if !key.starts_with(prefix) {
                break;
            }
            visit(&key, &value)?;
        }
        Ok(())
    }

    fn delete_prefix(&mut self, column: StoreColumn, prefix: &[u8]) -> Result<(), StateError> {
        let cf = self.handle(column)?;
        let db = self.db()?;
        let mut batch = WriteBatch::default();
        for item in db.iterator_cf(cf, IteratorMode::From(prefix, Direction::Forward)) {
            let (key, _) = item.map_err(|e| store_error("scanning", &self.dir, e))?;
            if !key.starts_with(prefix) {
                break;
            }
            batch.delete_cf(cf, &key);
        }
        db.write_opt(batch, &self.write)
            .map_err(|e| store_error("deleting", &self.dir, e))
    }

    fn checkpoint(&mut self) -> Result<Box<dyn StoreCheckpoint>, StateError> {
        self.checkpoints += 1;
        let name = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = self.dir.with_file_name(format!("{name}-chk-{}", self.checkpoints));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| store_error("removing an old checkpoint", &dir, e))?;
        }
        rocksdb::checkpoint::Checkpoint::new(self.db()?)
            .and_then(|c| c.create_checkpoint(&dir))
            .map_err(|e| store_error("checkpointing the store", &self.dir, e))?;
        Ok(Box::new(RocksDbStoreCheckpoint::new(dir, name, self.columns.clone())))
    }
}

impl Drop for RocksDbKeyedStateStore {
    fn drop(&mut self) {
        drop(self.db.take());
        remove_quietly(&self.dir);
    }
}
