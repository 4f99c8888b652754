//! The typed tables of the keyed state backend: one map per key group for each
//! declared state, type-erased behind [`AnyTable`] so that the backend holds states of
//! any types; each knows how to freeze its groups for a snapshot, restore a group, and
//! flush its cache to an on-disk store.

use super::copy_on_write::CowGroup;
use super::frozen::FrozenTable;
use crate::error::StateError;
use crate::prefetch::StateMap as HashMap;
use crate::store::{key_group_prefix, StoreBatch, StoreColumn};
use crate::Key;
use rustc_hash::FxHashSet;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::any::Any;
use weir_core::codec;

/// What a state value must be: serialisable, and shareable with the thread that
/// writes an asynchronous snapshot.
pub trait StateValue: Serialize + DeserializeOwned + Clone + Send + Sync + 'static {}
impl<T: Serialize + DeserializeOwned + Clone + Send + Sync + 'static> StateValue for T {}

pub(super) trait AnyTable {
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn as_any(&self) -> &dyn Any;
    /// Every group as it is now, shared with a snapshot (copied only when written).
    fn freeze(&mut self) -> Box<dyn FrozenTable>;
    fn restore_group(&mut self, index: usize, bytes: &[u8]) -> Result<(), StateError>;
    /// Writes every cached entry into `batch` as an entry of `column` (the group at
    /// index `i` being key group `first_key_group + i`) and deletes the entries loaded
    /// from the store and removed since; empties the cache when `evict`.
    fn flush(&mut self, to: FlushTarget, batch: &mut StoreBatch, evict: bool) -> Result<(), StateError>;
}

pub(super) struct Table<K, N, V> {
    pub(super) groups: Vec<CowGroup<HashMap<(K, N), V>>>,
    /// Per group, the keys whose entries are in the store too (loaded from it, or
    /// flushed to it and kept): the cache's entry is the current one, and an absent
    /// entry was removed, so the store's must be deleted at the next flush. Empty
    /// without a store.
    pub(super) in_store: Vec<FxHashSet<(K, N)>>,
}

impl<K: Key, N: Key, V: StateValue> Table<K, N, V> {
    /// A table of `groups` empty key groups.
    pub(super) fn new(groups: usize) -> Self {
        Self {
            groups: (0..groups).map(|_| CowGroup::Owned(HashMap::default())).collect(),
            in_store: (0..groups).map(|_| FxHashSet::default()).collect(),
        }
    }
}

/// Appends each `((key, namespace), value)` of `group` to `out`, no length prefix;
/// returns how many.
fn encode_entries<K: Key, N: Key, V: StateValue>(
    group: &HashMap<(K, N), V>,
    out: &mut Vec<u8>,
) -> Result<u64, StateError> {
    for entry in group.iter() {
        codec::encode_into(out, &entry)?;
    }
    Ok(group.len() as u64)
}

/// A table's groups as a snapshot shares them.
struct FrozenMaps<K, N, V> {
    groups: Vec<std::sync::Arc<HashMap<(K, N), V>>>,
}

impl<K: Key, N: Key, V: StateValue> FrozenTable for FrozenMaps<K, N, V> {
    fn encode_group(&self, index: usize, out: &mut Vec<u8>) -> Result<u64, StateError> {
        match self.groups.get(index) {
            Some(group) => encode_entries(group, out),
            None => Ok(0),
        }
    }
}

impl<K: Key, N: Key, V: StateValue> AnyTable for Table<K, N, V> {
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn freeze(&mut self) -> Box<dyn FrozenTable> {
        Box::new(FrozenMaps {
            groups: self.groups.iter_mut().map(CowGroup::share).collect(),
        })
    }
    fn restore_group(&mut self, index: usize, bytes: &[u8]) -> Result<(), StateError> {
        let entries: Vec<((K, N), V)> = codec::decode(bytes)?;
        if let Some(g) = self.groups.get_mut(index) {
            g.get_mut().extend(entries);
        }
        Ok(())
    }
    fn flush(&mut self, to: FlushTarget, batch: &mut StoreBatch, evict: bool) -> Result<(), StateError> {
        for (i, (group, in_store)) in self.groups.iter_mut().zip(self.in_store.iter_mut()).enumerate() {
            let prefix = key_group_prefix(to.first_key_group + i as u32);
            let store_key = |entry_key: &(K, N)| -> Result<Vec<u8>, StateError> {
                let mut key = Vec::with_capacity(32);
                key.extend_from_slice(&prefix);
                codec::encode_into(&mut key, entry_key)?;
                Ok(key)
            };
            let group = group.get_mut();
            for removed in in_store.iter().filter(|k| !group.contains_key(*k)) {
                batch.deletes.push((to.column, store_key(removed)?));
            }
            for (key, value) in group.iter() {
                batch.puts.push((to.column, store_key(key)?, codec::encode(value)?));
            }
            if evict {
                group.clear();
                in_store.clear();
            } else {
                in_store.clear();
                in_store.extend(group.keys().cloned());
            }
        }
        Ok(())
    }
}

/// Where a table's entries go in the store: its column, and the key group of its first
/// group.
#[derive(Clone, Copy)]
pub(super) struct FlushTarget {
    pub(super) column: StoreColumn,
    pub(super) first_key_group: u32,
}
