//! The handles through which functions read and write operator state: they borrow
//! the store's typed value for the duration of one call and own nothing.

use rustc_hash::FxHashMap as HashMap;
use std::hash::Hash;

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

/// A broadcast state, writable (Flink's `BroadcastState`): only the broadcast side
/// writes it, so every subtask keeps an equal copy.
pub struct BroadcastState<'a, K, V> {
    pub(super) map: &'a mut HashMap<K, V>,
}

impl<K: Hash + Eq, V> BroadcastState<'_, K, V> {
    /// The value of `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.map.get(key)
    }

    /// True when `key` has a value.
    pub fn contains(&self, key: &K) -> bool {
        self.map.contains_key(key)
    }

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

/// A broadcast state, read-only (Flink's `ReadOnlyBroadcastState`): what the
/// non-broadcast side sees.
pub struct ReadOnlyBroadcastState<'a, K, V> {
    pub(super) map: &'a HashMap<K, V>,
}

impl<K: Hash + Eq, V> ReadOnlyBroadcastState<'_, K, V> {
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
