//! The handles through which functions read and write operator state: they borrow
//! the store's typed value for the duration of one call and own nothing.

use rustc_hash::FxHashMap as HashMap;
use std::hash::Hash;
use std::marker::PhantomData;
use std::ops::Deref;

/// A list state of the operator (split or union), as Flink's `ListState`.
pub struct OperatorListState<'a, T> {
    pub(super) items: &'a mut Vec<T>,
}

impl<T> OperatorListState<'_, T> {
    /// The elements, in insertion order.
    pub fn get(&self) -> &[T] {
        self.items
    }

    /// Iterates over the elements.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// Appends one element.
    pub fn add(&mut self, value: T) {
        self.items.push(value);
    }

    /// Appends every element of `values`.
    pub fn add_all(&mut self, values: impl IntoIterator<Item = T>) {
        self.items.extend(values);
    }

    /// Replaces the elements with `values`.
    pub fn update(&mut self, values: Vec<T>) {
        *self.items = values;
    }

    /// Removes every element.
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// Removes and returns every element.
    pub fn take(&mut self) -> Vec<T> {
        std::mem::take(self.items)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when the list is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// A broadcast state through `M`, a borrow of its map: read through any borrow, written
/// through a mutable one. Functions see it as [`BroadcastState`] (writable) or
/// [`ReadOnlyBroadcastState`].
pub struct BroadcastStateHandle<K, V, M> {
    map: M,
    _entries: PhantomData<fn() -> (K, V)>,
}

impl<K, V, M: Deref<Target = HashMap<K, V>>> BroadcastStateHandle<K, V, M> {
    /// The state behind `map`.
    pub(super) fn new(map: M) -> Self {
        Self {
            map,
            _entries: PhantomData,
        }
    }
}

/// A broadcast state, writable (Flink's `BroadcastState`): only the broadcast side
/// writes it, so every subtask keeps an equal copy.
pub type BroadcastState<'a, K, V> = BroadcastStateHandle<K, V, &'a mut HashMap<K, V>>;

/// A broadcast state, read-only (Flink's `ReadOnlyBroadcastState`): what the
/// non-broadcast side sees.
pub type ReadOnlyBroadcastState<'a, K, V> = BroadcastStateHandle<K, V, &'a HashMap<K, V>>;

impl<K: Hash + Eq, V, M: Deref<Target = HashMap<K, V>>> BroadcastStateHandle<K, V, M> {
    /// The value of `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.map.get(key)
    }

    /// True when `key` has a value.
    pub fn contains(&self, key: &K) -> bool {
        self.map.contains_key(key)
    }

    /// Iterates over the entries (in no particular order).
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.map.iter()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when there is no entry.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

impl<K: Hash + Eq, V> BroadcastState<'_, K, V> {
    /// Sets the value of `key`.
    pub fn put(&mut self, key: K, value: V) {
        self.map.insert(key, value);
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        self.map.remove(key)
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.map.clear();
    }
}
