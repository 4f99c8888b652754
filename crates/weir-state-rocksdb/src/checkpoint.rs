//! A checkpoint of a [`RocksDbKeyedStateStore`](crate::RocksDbKeyedStateStore):
//! RocksDB's checkpoint of the database (memtables flushed, SST files hard-linked)
//! in a sibling directory, opened read-only when it is read (on the upload thread,
//! or to copy a restored store's key groups), removed when dropped.

use crate::directories::remove_quietly;
use rocksdb::{Direction, IteratorMode, Options, ReadOptions, DB};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use weir_state::store::{ScanVisitor, StoreCheckpoint, StoreFile};
use weir_state::StateError;

/// RocksDB's column family that every database has; no state lives in it.
pub(crate) const DEFAULT_COLUMN: &str = "default";

/// A store's files at one checkpoint.
pub struct RocksDbStoreCheckpoint {
    dir: PathBuf,
    store_name: String,
    columns: Vec<String>,
    /// The checkpoint opened read-only, once it is read.
    db: Mutex<Option<DB>>,
}

fn checkpoint_error(what: &str, dir: &Path, e: impl std::fmt::Display) -> StateError {
    StateError::Store(format!("{what} in {}: {e}", dir.display()))
}

impl RocksDbStoreCheckpoint {
    /// The checkpoint in `dir` of the store `store_name` holding `columns`.
    pub fn new(dir: PathBuf, store_name: String, columns: Vec<String>) -> Self {
        Self {
            dir,
            store_name,
            columns,
            db: Mutex::new(None),
        }
    }

    /// A restored store's files in `dir` (downloaded from a checkpoint), to copy key
    /// groups out of; its columns are those it holds.
    pub fn open_restored(dir: PathBuf) -> Result<Self, StateError> {
        let columns = DB::list_cf(&Options::default(), &dir)
            .map_err(|e| checkpoint_error("listing the column families", &dir, e))?
            .into_iter()
            .filter(|c| c != DEFAULT_COLUMN)
            .collect();
        Ok(Self::new(dir, String::new(), columns))
    }

    /// The columns (declared states) it holds.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Visits every entry of column `name` with a key in `[from, to)`, in key order.
    pub fn scan_range(
        &self,
        name: &str,
        from: &[u8],
        to: &[u8],
        visit: &mut ScanVisitor<'_>,
    ) -> Result<(), StateError> {
        if !self.columns.iter().any(|c| c == name) {
            return Ok(());
        }
        let mut guard = self.db.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            let mut names = vec![DEFAULT_COLUMN.to_string()];
            names.extend(self.columns.iter().cloned());
            let db = DB::open_cf_for_read_only(&Options::default(), &self.dir, names, false)
                .map_err(|e| checkpoint_error("opening the checkpoint", &self.dir, e))?;
            *guard = Some(db);
        }
        let Some(db) = guard.as_ref() else {
            return Ok(());
        };
        let cf = db
            .cf_handle(name)
            .ok_or_else(|| StateError::Store(format!("column family '{name}' missing in {}", self.dir.display())))?;
        let mut read = ReadOptions::default();
        read.fill_cache(false);
        for item in db.iterator_cf_opt(cf, read, IteratorMode::From(from, Direction::Forward)) {
            let (key, value) = item.map_err(|e| checkpoint_error("reading the checkpoint", &self.dir, e))?;
            if key.as_ref() >= to {
                break;
            }
            visit(&key, &value)?;
        }
        Ok(())
    }
}

impl StoreCheckpoint for RocksDbStoreCheckpoint {
    fn dir(&self) -> &Path {
        &self.dir
    }

    fn store_name(&self) -> &str {
        &self.store_name
    }

    fn files(&self) -> Result<Vec<StoreFile>, StateError> {
        let mut files = Vec::new();
        let entries = std::fs::read_dir(&self.dir).map_err(|e| checkpoint_error("listing", &self.dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| checkpoint_error("listing", &self.dir, e))?;
            let meta = entry
                .metadata()
                .map_err(|e| checkpoint_error("listing", &self.dir, e))?;
            if !meta.is_file() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            files.push(StoreFile {
                shareable: name.ends_with(".sst"),
                path: entry.path(),
                size: meta.len(),
                name,
            });
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(files)
    }

    fn scan(&self, name: &str, prefix: &[u8], visit: &mut ScanVisitor<'_>) -> Result<(), StateError> {
        // Every key starting with `prefix` lies in [prefix, prefix + 1).
        let mut to = prefix.to_vec();
        while let Some(last) = to.pop() {
            if last < u8::MAX {
                to.push(last + 1);
                break;
            }
        }
        if to.is_empty() {
            to = vec![u8::MAX; 8];
        }
        self.scan_range(name, prefix, &to, visit)
    }
}

impl Drop for RocksDbStoreCheckpoint {
    fn drop(&mut self) {
        drop(self.db.get_mut().map(Option::take));
        remove_quietly(&self.dir);
    }
}
