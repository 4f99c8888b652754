//! The on-disk tier of a [`KeyedStateBackend`](super::KeyedStateBackend): its tables as
//! a bounded cache in front of a [`KeyedStateStore`] (see [`crate::store`]).
//!
//! - A cache miss reads the entry from the store into the cache; the table remembers
//!   that the store holds it too (`in_store`), so the cache's entry is the current
//!   one and removing it from the cache deletes it from the store at the next flush.
//! - A flush writes every cached entry and those deletions in one write batch; a spill
//!   is a flush that also empties the cache. The backend spills after as many misses
//!   as the cache may hold entries, so it never holds more than that.
//! - A snapshot flushes without emptying the cache, then reads the store alone: after
//!   a flush the store holds the whole state.

use super::table::{AnyTable, FlushTarget, StateValue, Table};
use crate::error::StateError;
use crate::store::{key_group_prefix, KeyedStateStore, StoreBatch, StoreColumn};
use crate::Key;
use weir_core::codec;

/// The store, each table's column in it, and the cache misses since the last spill.
pub(super) struct StoreTier {
    pub(super) store: Box<dyn KeyedStateStore>,
    pub(super) columns: Vec<StoreColumn>,
    pub(super) cache_entries: usize,
    pub(super) misses: usize,
}

impl StoreTier {
    /// Counts a cache miss; true when the cache must be spilled first.
    pub(super) fn count_miss(&mut self) -> bool {
        self.misses += 1;
        self.misses > self.cache_entries
    }

    /// Writes the cache of every table (`(name, table)`, table `t` in column `t`, the
    /// tables' group `i` being key group `first_key_group + i`) to the store; empties
    /// the caches when `evict`.
    pub(super) fn flush(
        &mut self,
        tables: &mut [(String, Box<dyn AnyTable>)],
        first_key_group: u32,
        evict: bool,
    ) -> Result<(), StateError> {
        let mut batch = StoreBatch::default();
        for ((_, table), column) in tables.iter_mut().zip(&self.columns) {
            let to = FlushTarget {
                column: *column,
                first_key_group,
            };
            table.flush(to, &mut batch, evict)?;
        }
        self.store.write(batch)?;
        if evict {
            self.misses = 0;
        }
        Ok(())
    }

    /// Reads `key`'s entry of table `index` (in key group `kg`, the table's group
    /// `group`) from the store into the table's cache, if the store holds it.
    pub(super) fn load<K: Key, N: Key, V: StateValue>(
        &self,
        index: usize,
        table: &mut Table<K, N, V>,
        group: u32,
        kg: u32,
        key: &(K, N),
    ) -> Result<(), StateError> {
        let mut store_key = Vec::with_capacity(32);
        store_key.extend_from_slice(&key_group_prefix(kg));
        codec::encode_into(&mut store_key, key)?;
        let Some(bytes) = self.store.get(self.columns[index], &store_key)? else {
            return Ok(());
        };
        let value: V = codec::decode(&bytes)?;
        table.groups[group as usize].get_mut().insert(key.clone(), value);
        table.in_store[group as usize].insert(key.clone());
        Ok(())
    }

    /// Every entry of table `index` in the store.
    pub(super) fn stored_entries<K: Key, N: Key, V: StateValue>(
        &self,
        index: usize,
    ) -> Result<Vec<(K, N, V)>, StateError> {
        let mut out = Vec::new();
        self.store.scan(self.columns[index], &[], &mut |key, value| {
            let (k, n): (K, N) = codec::decode(key.get(2..).unwrap_or_default())?;
            out.push((k, n, codec::decode(value)?));
            Ok(())
        })?;
        Ok(out)
    }
}
