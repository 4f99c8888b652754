//! The keyed state backend: keyed state in hash maps, one map per (state, key group),
//! on the heap alone (Flink's `HashMapStateBackend`) or as a bounded cache in front of
//! an embedded on-disk store (Flink's `EmbeddedRocksDBStateBackend`, see [`crate::store`]).
//!
//! The operator sets the current key before it calls user code (and the key group is
//! computed once, with the stable key hash); state handles then read and write the
//! entry for (current key, namespace). With a store, an access first loads the entry
//! into the cache if it is in the store, and after as many cache misses as the cache
//! holds entries the whole cache is spilled to the store, so the heap holds at most
//! that many entries whatever the state's size.
//!
//! Snapshots serialise each key group separately, in one canonical format for both
//! tiers (an entry's bytes are the same in the cache and in the store), so a snapshot
//! taken with a store restores without one and the other way round; a restore keeps
//! the bytes until the operator declares the state again, because only then are its
//! types known.

use crate::descriptor::{ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor};
use crate::error::StateError;
use crate::prefetch::{entry_hash, prefetch_slot, StateMap as HashMap};
use crate::store::KeyedStateStore;
use crate::Key;
use std::hash::Hash;
use weir_core::key_group::assign_to_key_group;
use weir_core::key_hash::key_hash;
use weir_core::KeyGroupRange;

mod copy_on_write;
mod folding;
mod frozen;
mod handles;
mod store_tier;
use crate::incremental::handle::SharedFileRef;
use crate::incremental::tracker::UploadedFiles;
use crate::store::SnapshotFormat;
pub use folding::{AggregatingState, ReducingState};
pub use frozen::{CompletedKeyedState, FrozenKeyedState, FrozenPart, KeyGroupSnapshot};
use frozen::{FrozenState, FrozenStore, IncrementalUpload};
pub use handles::{ListStateHandle, ValueStateHandle};
use store_tier::StoreTier;
mod table;
pub use table::StateValue;
use table::{AnyTable, Table};

/// Keyed state of one operator subtask: on the heap, or cached on the heap in front of
/// an on-disk store.
pub struct KeyedStateBackend<K> {
    range: KeyGroupRange,
    max_parallelism: u32,
    current: Option<(K, u32)>,
    tables: Vec<(String, Box<dyn AnyTable>)>,
    pending_restore: HashMap<String, Vec<(u32, Vec<u8>)>>,
    tier: Option<StoreTier>,
    uploaded: UploadedFiles,
}

impl<K: Key> KeyedStateBackend<K> {
    /// A backend for the key groups in `range` out of `max_parallelism`.
    pub fn new(range: KeyGroupRange, max_parallelism: u32) -> Self {
        Self {
            range,
            max_parallelism,
            current: None,
            tables: Vec::new(),
            pending_restore: HashMap::default(),
            tier: None,
            uploaded: UploadedFiles::default(),
        }
    }

    /// A backend for the key groups in `range` whose state lives in `store`, with at
    /// most about `cache_entries` entries cached on the heap (at least one).
    pub fn with_store(
        range: KeyGroupRange,
        max_parallelism: u32,
        store: Box<dyn KeyedStateStore>,
        cache_entries: usize,
    ) -> Self {
        let mut backend = Self::new(range, max_parallelism);
        backend.tier = Some(StoreTier {
            store,
            columns: Vec::new(),
            cache_entries: cache_entries.max(1),
            misses: 0,
        });
        backend
    }

    /// The key groups this backend owns.
    pub fn key_group_range(&self) -> KeyGroupRange {
        self.range
    }

    /// The number of key groups of the job vertex.
    pub fn max_parallelism(&self) -> u32 {
        self.max_parallelism
    }

    /// Makes `key` the current key; returns its key group.
    pub fn set_current_key(&mut self, key: K) -> Result<u32, StateError> {
        let kg = self.key_group_of(&key);
        self.set_current_key_in_group(key, kg)
    }

    /// The key group of `key` (its stable key hash spread over the key groups).
    #[inline]
    pub fn key_group_of(&self, key: &K) -> u32 {
        assign_to_key_group(key_hash(key), self.max_parallelism)
    }

    /// [`set_current_key`](Self::set_current_key) with the key group computed before
    /// (by [`key_group_of`](Self::key_group_of), e.g. when the key's state was
    /// prefetched): `kg` must be the key's group.
    pub fn set_current_key_in_group(&mut self, key: K, kg: u32) -> Result<u32, StateError> {
        debug_assert_eq!(
            kg,
            self.key_group_of(&key),
            "a key set with another key group than its own"
        );
        if !self.range.contains(kg) {
            return Err(StateError::KeyGroupOutOfRange {
                key_group: kg,
                start: self.range.start,
                end: self.range.end,
            });
        }
        self.current = Some((key, kg));
        Ok(kg)
    }

    /// The current key, if one is set.
    pub fn current_key(&self) -> Option<&K> {
        self.current.as_ref().map(|(k, _)| k)
    }

    /// The index of the table of state `name`, created (and filled from a pending
    /// restore) when the state is declared for the first time.
    fn table_index<N: Key, V: StateValue>(&mut self, name: &str) -> Result<usize, StateError> {
        if let Some(i) = self.tables.iter().position(|(n, _)| n == name) {
            return Ok(i);
        }
        let mut table: Table<K, N, V> = Table::new(self.range.len());
        let restored = match self.pending_restore.remove(name) {
            Some(pending) => {
                for (kg, bytes) in pending {
                    table.restore_group((kg - self.range.start) as usize, &bytes)?;
                }
                true
            }
            None => false,
        };
        if let Some(tier) = self.tier.as_mut() {
            let column = tier.store.column(name)?;
            tier.columns.push(column);
        }
        self.tables.push((name.to_string(), Box::new(table)));
        if restored && self.tier.is_some() {
            self.spill()?;
        }
        Ok(self.tables.len() - 1)
    }

    /// Writes the cache of every table to the store (it stays cached unless `evict`).
    fn flush(&mut self, evict: bool) -> Result<(), StateError> {
        match self.tier.as_mut() {
            Some(tier) => tier.flush(&mut self.tables, self.range.start, evict),
            None => Ok(()),
        }
    }

    /// Moves every cached entry of every table to the store.
    fn spill(&mut self) -> Result<(), StateError> {
        self.flush(true)
    }

    /// The map of the current key's group in the table at `index`, holding `key`'s
    /// entry if it is anywhere: with a store, a cache miss loads it (and every
    /// `cache_entries` misses spill the cache first).
    fn cached_group<N: Key, V: StateValue>(
        &mut self,
        index: usize,
        key: &(K, N),
    ) -> Result<&mut HashMap<(K, N), V>, StateError> {
        if self.tier.is_some() && !self.group_at::<N, V>(index)?.contains_key(key) {
            if self.tier.as_mut().is_some_and(StoreTier::count_miss) {
                self.spill()?;
            }
            let kg = self.current.as_ref().map_or(self.range.start, |(_, kg)| *kg);
            if let Some(tier) = self.tier.as_ref() {
                let (name, table) = &mut self.tables[index];
                let table = table
                    .as_any_mut()
                    .downcast_mut::<Table<K, N, V>>()
                    .ok_or_else(|| StateError::TypeMismatch(name.clone()))?;
                tier.load(index, table, kg - self.range.start, kg, key)?;
            }
        }
        self.group_at(index)
    }

    /// Every entry of the table at `index` in the store (none without one); after a
    /// flush, every entry of the table.
    fn stored_entries<N: Key, V: StateValue>(&self, index: usize) -> Result<Vec<(K, N, V)>, StateError> {
        match self.tier.as_ref() {
            Some(tier) => tier.stored_entries(index),
            None => Ok(Vec::new()),
        }
    }

    /// The map of the current key's group in the table at `index`.
    fn group_at<N: Key, V: StateValue>(&mut self, index: usize) -> Result<&mut HashMap<(K, N), V>, StateError> {
        let Some((_, kg)) = self.current.as_ref() else {
            return Err(StateError::NoCurrentKey);
        };
        let group = (*kg - self.range.start) as usize;
        let Some((name, table)) = self.tables.get_mut(index) else {
            return Err(StateError::UnknownHandle(index));
        };
        let table = table
            .as_any_mut()
            .downcast_mut::<Table<K, N, V>>()
            .ok_or_else(|| StateError::TypeMismatch(name.clone()))?;
        Ok(table.groups[group].get_mut())
    }

    fn table<N: Key, V: StateValue>(
        &mut self,
        name: &str,
        key: &(K, N),
    ) -> Result<&mut HashMap<(K, N), V>, StateError> {
        let index = self.table_index::<N, V>(name)?;
        self.cached_group(index, key)
    }

    fn current_entry_key<N: Clone>(&self, namespace: &N) -> Result<(K, N), StateError> {
        let Some((k, _)) = self.current.as_ref() else {
            return Err(StateError::NoCurrentKey);
        };
        Ok((k.clone(), namespace.clone()))
    }

    /// The value state `desc` of the current key in `namespace`.
    pub fn value<N: Key, V: StateValue>(
        &mut self,
        desc: &ValueStateDescriptor<V>,
        namespace: &N,
    ) -> Result<ValueState<'_, K, N, V>, StateError> {
        let key = self.current_entry_key(namespace)?;
        Ok(ValueState {
            map: self.table(desc.name(), &key)?,
            key,
        })
    }

    /// The list state `desc` of the current key in `namespace`.
    pub fn list<N: Key, V: StateValue>(
        &mut self,
        desc: &ListStateDescriptor<V>,
        namespace: &N,
    ) -> Result<ListState<'_, K, N, V>, StateError> {
        let key = self.current_entry_key(namespace)?;
        Ok(ListState {
            map: self.table(desc.name(), &key)?,
            key,
        })
    }

    /// The map state `desc` of the current key in `namespace`.
    pub fn map<N: Key, UK: StateValue + Hash + Eq, UV: StateValue>(
        &mut self,
        desc: &MapStateDescriptor<UK, UV>,
        namespace: &N,
    ) -> Result<MapState<'_, K, N, UK, UV>, StateError> {
        let key = self.current_entry_key(namespace)?;
        Ok(MapState {
            map: self.table(desc.name(), &key)?,
            key,
        })
    }

    /// Loads the entry of (`key`, `namespace`) in the value state `desc` into the cache,
    /// so that an access soon after does not wait for memory. Only a hint: it changes
    /// nothing, and does nothing for a state not declared yet or a key of another
    /// backend's key groups.
    #[inline]
    pub fn prefetch_value<N: Key, V: StateValue>(&self, desc: &ValueStateDescriptor<V>, key: &K, namespace: &N) {
        self.prefetch_entry::<N, V>(desc.name(), key, namespace);
    }

    /// [`prefetch_value`](Self::prefetch_value) for the list state `desc`.
    #[inline]
    pub fn prefetch_list<N: Key, V: StateValue>(&self, desc: &ListStateDescriptor<V>, key: &K, namespace: &N) {
        self.prefetch_entry::<N, Vec<V>>(desc.name(), key, namespace);
    }

    fn prefetch_entry<N: Key, V: StateValue>(&self, name: &str, key: &K, namespace: &N) {
        if let Some(index) = self.tables.iter().position(|(n, _)| n == name) {
            self.prefetch_at::<N, V>(index, key, self.key_group_of(key), namespace);
        }
    }

    /// Prefetches the entry of (`key` in group `kg`, `namespace`) in the table at
    /// `index`; nothing for another type, index or key group.
    #[inline]
    fn prefetch_at<N: Key, V: StateValue>(&self, index: usize, key: &K, kg: u32, namespace: &N) {
        let Some(table) = self
            .tables
            .get(index)
            .and_then(|(_, t)| t.as_any().downcast_ref::<Table<K, N, V>>())
        else {
            return;
        };
        if !self.range.contains(kg) {
            return;
        }
        let group = table.groups[(kg - self.range.start) as usize].get();
        prefetch_slot(group.raw_table(), entry_hash(group, key, namespace));
    }

    /// Every (key, namespace) with an entry in the value state `desc`, in all key
    /// groups (with a store, after writing the cache to it).
    pub fn entries<N: Key, V: StateValue>(
        &mut self,
        desc: &ValueStateDescriptor<V>,
    ) -> Result<Vec<(K, N, V)>, StateError> {
        let Some(index) = self.tables.iter().position(|(n, _)| n == desc.name()) else {
            return Ok(Vec::new());
        };
        if self.tier.is_some() {
            self.flush(false)?;
            return self.stored_entries::<N, V>(index);
        }
        let (name, table) = &self.tables[index];
        let table = table
            .as_any()
            .downcast_ref::<Table<K, N, V>>()
            .ok_or_else(|| StateError::TypeMismatch(name.clone()))?;
        Ok(table
            .groups
            .iter()
            .flat_map(|g| g.get().iter().map(|((k, n), v)| (k.clone(), n.clone(), v.clone())))
            .collect())
    }

    /// Serialises every key group of this backend, now.
    pub fn snapshot(&mut self) -> Result<Vec<(u32, KeyGroupSnapshot)>, StateError> {
        self.freeze()?.materialize()
    }

    /// The synchronous part of a snapshot: every key group as it is now, to encode
    /// later on any thread ([`FrozenKeyedState::materialize`]) while this backend goes
    /// on, in the canonical format.
    pub fn freeze(&mut self) -> Result<FrozenKeyedState, StateError> {
        self.freeze_as(0, SnapshotFormat::Canonical)
    }

    /// The synchronous part of the snapshot of checkpoint `checkpoint_id` in `format`:
    /// shares the cached maps (a later write copies the one group it touches) or, with
    /// a store, flushes the cache into it and checkpoints the store (an incremental
    /// snapshot then refers to the store's files, a canonical one reads them).
    pub fn freeze_as(&mut self, checkpoint_id: u64, format: SnapshotFormat) -> Result<FrozenKeyedState, StateError> {
        // With a store, the store holds the whole state once the cache is flushed.
        self.flush(false)?;
        let store = match self.tier.as_mut() {
            Some(tier) => Some(FrozenStore {
                checkpoint: tier.store.checkpoint()?,
                incremental: (format == SnapshotFormat::Incremental).then(|| IncrementalUpload {
                    checkpoint_id,
                    base: self.uploaded.base(),
                    tracker: self.uploaded.clone(),
                }),
            }),
            None => None,
        };
        let with_store = self.tier.is_some();
        let states = self
            .tables
            .iter_mut()
            .map(|(name, table)| FrozenState {
                name: name.clone(),
                cache: (!with_store).then(|| table.freeze()),
            })
            .collect();
        Ok(FrozenKeyedState {
            range: self.range,
            states,
            pending: self
                .pending_restore
                .iter()
                .map(|(name, groups)| (name.clone(), groups.clone()))
                .collect(),
            parts: Vec::new(),
            store,
        })
    }

    /// Checkpoint `checkpoint_id` completed: the store files it uploaded may be
    /// referred to by the next incremental snapshots.
    pub fn notify_checkpoint_complete(&self, checkpoint_id: u64) {
        self.uploaded.confirm(checkpoint_id);
    }

    /// Hands the store's checkpoints, once confirmed, to `factory` as the local copy of
    /// the store named `task` (local recovery; nothing when the factory keeps none).
    pub fn keep_local_copies(&self, factory: std::sync::Arc<dyn crate::store::KeyedStateStoreFactory>, task: String) {
        self.uploaded.keep_local_copies(factory, task);
    }

    /// The store was restored from the files of a checkpoint of this job: the next
    /// incremental snapshots refer to `files` instead of uploading them again.
    pub fn restored_from_files(&self, files: Vec<SharedFileRef>) {
        self.uploaded.restored(files);
    }

    /// Restores the key groups of `snapshots` that belong to this backend (others are
    /// skipped, so the same snapshot set can be handed to every new subtask).
    pub fn restore(&mut self, snapshots: &[(u32, KeyGroupSnapshot)]) {
        for (kg, group) in snapshots {
            if !self.range.contains(*kg) {
                continue;
            }
            for (name, bytes) in group {
                self.pending_restore
                    .entry(name.clone())
                    .or_default()
                    .push((*kg, bytes.clone()));
            }
        }
    }
}

/// A value for the current key and namespace.
pub struct ValueState<'a, K, N, V> {
    map: &'a mut HashMap<(K, N), V>,
    key: (K, N),
}

impl<K: Key, N: Key, V: StateValue> ValueState<'_, K, N, V> {
    /// The value, if set.
    pub fn value(&self) -> Option<V> {
        self.map.get(&self.key).cloned()
    }
    /// A reference to the value, if set.
    pub fn value_ref(&self) -> Option<&V> {
        self.map.get(&self.key)
    }
    /// Sets the value.
    pub fn update(&mut self, value: V) {
        self.map.insert(self.key.clone(), value);
    }
    /// The value, set to `init()` first if it is not set; for updates in place.
    pub fn get_or_insert_with(&mut self, init: impl FnOnce() -> V) -> &mut V {
        self.map.entry(self.key.clone()).or_insert_with(init)
    }
    /// Removes and returns the value.
    pub fn take(&mut self) -> Option<V> {
        self.map.remove(&self.key)
    }
    /// Removes the value.
    pub fn clear(&mut self) {
        self.map.remove(&self.key);
    }
}

/// A list for the current key and namespace.
pub struct ListState<'a, K, N, V> {
    map: &'a mut HashMap<(K, N), Vec<V>>,
    key: (K, N),
}

impl<K: Key, N: Key, V: StateValue> ListState<'_, K, N, V> {
    /// The elements (empty if none).
    pub fn get(&self) -> &[V] {
        self.map.get(&self.key).map(|v| v.as_slice()).unwrap_or(&[])
    }
    /// Appends one element.
    pub fn add(&mut self, value: V) {
        self.map.entry(self.key.clone()).or_default().push(value);
    }
    /// Replaces the elements.
    pub fn update(&mut self, values: Vec<V>) {
        if values.is_empty() {
            self.map.remove(&self.key);
        } else {
            self.map.insert(self.key.clone(), values);
        }
    }
    /// Removes the list.
    pub fn clear(&mut self) {
        self.map.remove(&self.key);
    }
    /// Removes and returns the elements.
    pub fn take(&mut self) -> Vec<V> {
        self.map.remove(&self.key).unwrap_or_default()
    }
    /// Appends several elements.
    pub fn add_all(&mut self, values: Vec<V>) {
        if !values.is_empty() {
            self.map.entry(self.key.clone()).or_default().extend(values);
        }
    }
}

/// A map for the current key and namespace.
pub struct MapState<'a, K, N, UK, UV> {
    map: &'a mut HashMap<(K, N), HashMap<UK, UV>>,
    key: (K, N),
}

impl<K: Key, N: Key, UK: StateValue + Hash + Eq, UV: StateValue> MapState<'_, K, N, UK, UV> {
    /// The value under `user_key`.
    pub fn get(&self, user_key: &UK) -> Option<&UV> {
        self.map.get(&self.key).and_then(|m| m.get(user_key))
    }
    /// Sets `user_key` to `value`.
    pub fn put(&mut self, user_key: UK, value: UV) {
        self.map.entry(self.key.clone()).or_default().insert(user_key, value);
    }
    /// Removes `user_key`.
    pub fn remove(&mut self, user_key: &UK) {
        if let Some(m) = self.map.get_mut(&self.key) {
            m.remove(user_key);
            if m.is_empty() {
                self.map.remove(&self.key);
            }
        }
    }
    /// True if `user_key` is present.
    pub fn contains(&self, user_key: &UK) -> bool {
        self.get(user_key).is_some()
    }
    /// Every entry by reference, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&UK, &UV)> {
        self.map.get(&self.key).into_iter().flat_map(|m| m.iter())
    }
    /// Every entry, in no particular order.
    pub fn entries(&self) -> Vec<(UK, UV)> {
        self.map
            .get(&self.key)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    }
    /// Removes the whole map.
    pub fn clear(&mut self) {
        self.map.remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::VoidNamespace;

    fn full_range() -> KeyedStateBackend<String> {
        KeyedStateBackend::new(KeyGroupRange::new(0, 127), 128)
    }

    #[test]
    fn value_state_is_scoped_to_the_current_key() {
        let desc = ValueStateDescriptor::<u64>::new("count");
        let mut b = full_range();
        b.set_current_key("a".into()).unwrap();
        b.value(&desc, &VoidNamespace).unwrap().update(1);
        b.set_current_key("b".into()).unwrap();
        assert_eq!(b.value(&desc, &VoidNamespace).unwrap().value(), None);
        b.value(&desc, &VoidNamespace).unwrap().update(7);
        b.set_current_key("a".into()).unwrap();
        assert_eq!(b.value(&desc, &VoidNamespace).unwrap().value(), Some(1));
    }

    #[test]
    fn list_and_map_state_keep_their_elements_per_key_and_namespace() {
        let list = ListStateDescriptor::<u32>::new("l");
        let map = MapStateDescriptor::<String, u32>::new("m");
        let mut b = full_range();
        b.set_current_key("k".into()).unwrap();
        b.list(&list, &1u64).unwrap().add(1);
        b.list(&list, &1u64).unwrap().add(2);
        b.list(&list, &2u64).unwrap().add(3);
        assert_eq!(b.list(&list, &1u64).unwrap().get(), &[1, 2]);
        assert_eq!(b.list(&list, &2u64).unwrap().get(), &[3]);
        b.map(&map, &VoidNamespace).unwrap().put("x".into(), 5);
        b.map(&map, &VoidNamespace).unwrap().put("y".into(), 6);
        assert_eq!(b.map(&map, &VoidNamespace).unwrap().get(&"x".to_string()), Some(&5));
        let state = b.map(&map, &VoidNamespace).unwrap();
        let mut entries: Vec<(&String, &u32)> = state.iter().collect();
        entries.sort();
        assert_eq!(entries, [(&"x".to_string(), &5), (&"y".to_string(), &6)]);
        b.map(&map, &VoidNamespace).unwrap().remove(&"x".to_string());
        assert!(!b.map(&map, &VoidNamespace).unwrap().contains(&"x".to_string()));
    }

    #[test]
    fn state_without_a_current_key_is_an_error() {
        let mut b = full_range();
        let err = b
            .value(&ValueStateDescriptor::<u8>::new("v"), &VoidNamespace)
            .err()
            .unwrap();
        assert!(matches!(err, StateError::NoCurrentKey));
    }

    #[test]
    fn same_name_with_another_type_is_a_type_mismatch() {
        let mut b = full_range();
        b.set_current_key("a".into()).unwrap();
        b.value(&ValueStateDescriptor::<u8>::new("v"), &VoidNamespace)
            .unwrap()
            .update(1);
        let err = b
            .value(&ValueStateDescriptor::<String>::new("v"), &VoidNamespace)
            .err()
            .unwrap();
        assert!(matches!(err, StateError::TypeMismatch(_)));
    }

    #[test]
    fn key_outside_the_key_group_range_is_rejected() {
        let mut b: KeyedStateBackend<u64> = KeyedStateBackend::new(KeyGroupRange::new(0, 0), 128);
        let foreign = (0u64..1000)
            .find(|k| assign_to_key_group(key_hash(k), 128) != 0)
            .unwrap();
        assert!(matches!(
            b.set_current_key(foreign),
            Err(StateError::KeyGroupOutOfRange { .. })
        ));
    }

    #[test]
    fn snapshot_restores_at_another_parallelism_by_key_group() {
        let desc = ValueStateDescriptor::<u64>::new("sum");
        let mut whole: KeyedStateBackend<u64> = KeyedStateBackend::new(KeyGroupRange::new(0, 127), 128);
        for k in 0..100u64 {
            whole.set_current_key(k).unwrap();
            whole.value(&desc, &VoidNamespace).unwrap().update(k * 10);
        }
        let snap = whole.snapshot().unwrap();
        let mut restored = Vec::new();
        for i in 0..3 {
            let mut part: KeyedStateBackend<u64> = KeyedStateBackend::new(KeyGroupRange::for_subtask(128, 3, i), 128);
            part.restore(&snap);
            // Declaring the state materialises it.
            let any_key = (0..100u64).find(|k| part.key_group_range().contains(assign_to_key_group(key_hash(k), 128)));
            if let Some(k) = any_key {
                part.set_current_key(k).unwrap();
                part.value(&desc, &VoidNamespace).unwrap();
            }
            restored.extend(
                part.entries::<VoidNamespace, u64>(&desc)
                    .unwrap()
                    .into_iter()
                    .map(|(k, _, v)| (k, v)),
            );
        }
        restored.sort();
        assert_eq!(restored, (0..100u64).map(|k| (k, k * 10)).collect::<Vec<_>>());
    }
}
