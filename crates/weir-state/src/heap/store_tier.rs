//! The on-disk tier of a [`KeyedStateBackend`]: the tables as a bounded cache in front
//! of a [`KeyedStateStore`] (see [`crate::store`]).
//!
//! - A cache miss reads the entry from the store into the cache; the table remembers
//!   that the store holds it too (`in_store`), so the cache's entry is the current
//!   one and removing it from the cache deletes it from the store at the next flush.
//! - A flush writes every cached entry and those deletions in one write batch; a spill
//!   is a flush that also empties the cache. The cache is spilled after as many misses
//!   as it may hold entries, so it never holds more than that.
//! - A snapshot flushes without emptying the cache, then reads the store alone: after
//!   a flush the store holds the whole state.

use super::{FlushTarget, KeyedStateBackend, StateValue, Table};
use crate::error::StateError;
use crate::prefetch::StateMap as HashMap;
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

impl<K: Key> KeyedStateBackend<K> {
    /// Writes the cache of every table to the store (it stays cached unless `evict`).
    pub(super) fn flush(&mut self, evict: bool) -> Result<(), StateError> {
        let Some(tier) = self.tier.as_mut() else {
            return Ok(());
        };
        let mut batch = StoreBatch::default();
        for ((_, table), column) in self.tables.iter_mut().zip(&tier.columns) {
            let to = FlushTarget {
                column: *column,
                first_key_group: self.range.start,
            };
            table.flush(to, &mut batch, evict)?;
        }
        tier.store.write(batch)?;
        if evict {
            tier.misses = 0;
        }
        Ok(())
    }

    /// Moves every cached entry of every table to the store.
    pub(super) fn spill(&mut self) -> Result<(), StateError> {
        self.flush(true)
    }

    /// The map of the current key's group in the table at `index`, holding `key`'s
    /// entry if it is anywhere: with a store, a cache miss loads it (and every
    /// `cache_entries` misses spill the cache first).
    pub(super) fn cached_group<N: Key, V: StateValue>(
        &mut self,
        index: usize,
        key: &(K, N),
    ) -> Result<&mut HashMap<(K, N), V>, StateError> {
        if self.tier.is_some() && !self.group_at::<N, V>(index)?.contains_key(key) {
            self.load::<N, V>(index, key)?;
        }
        self.group_at(index)
    }

    fn load<N: Key, V: StateValue>(&mut self, index: usize, key: &(K, N)) -> Result<(), StateError> {
        let spill = self.tier.as_mut().is_some_and(|tier| {
            tier.misses += 1;
            tier.misses > tier.cache_entries
        });
        if spill {
            self.spill()?;
        }
        let kg = self.current.as_ref().map_or(self.range.start, |(_, kg)| *kg);
        let Some(tier) = self.tier.as_mut() else {
            return Ok(());
        };
        let mut store_key = Vec::with_capacity(32);
        store_key.extend_from_slice(&key_group_prefix(kg));
        codec::encode_into(&mut store_key, key)?;
        let column = tier.columns[index];
        let Some(bytes) = tier.store.get(column, &store_key)? else {
            return Ok(());
        };
        let value: V = codec::decode(&bytes)?;
        let group = (kg - self.range.start) as usize;
        let (name, table) = &mut self.tables[index];
        let table = table
            .as_any_mut()
            .downcast_mut::<Table<K, N, V>>()
            .ok_or_else(|| StateError::TypeMismatch(name.clone()))?;
        table.groups[group].get_mut().insert(key.clone(), value);
        table.in_store[group].insert(key.clone());
        Ok(())
    }

    /// Every entry of the table at `index` in the store (none without one); after a
    /// flush, every entry of the table.
    pub(super) fn stored_entries<N: Key, V: StateValue>(&self, index: usize) -> Result<Vec<(K, N, V)>, StateError> {
        let Some(tier) = self.tier.as_ref() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        tier.store.scan(tier.columns[index], &[], &mut |key, value| {
            let (k, n): (K, N) = codec::decode(key.get(2..).unwrap_or_default())?;
            out.push((k, n, codec::decode(value)?));
            Ok(())
        })?;
        Ok(out)
    }
}
