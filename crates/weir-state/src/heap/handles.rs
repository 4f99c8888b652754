//! Typed handles on keyed state: a state declared once by its descriptor and then
//! accessed by position, for operators that touch their state on every record (the
//! window operator's contents).
//!
//! Accessing state through a descriptor finds its table by name on every access; a
//! handle holds the table's position in the backend instead. The type is still checked
//! on every access (a handle used with another namespace type is a
//! [`StateError::TypeMismatch`], one that another backend gave out is a
//! [`StateError::UnknownHandle`]), so a handle can never read a table of another type.
//!
//! Invariant: a backend's tables are only ever appended, so a handle stays valid for
//! the backend's lifetime, across snapshots and restores of its key groups.

use super::{KeyedStateBackend, ListState, StateValue, Table, ValueState};
use crate::descriptor::{ListStateDescriptor, ValueStateDescriptor};
use crate::error::StateError;
use crate::Key;
use std::marker::PhantomData;

/// The value state of one descriptor in one backend.
#[derive(Debug)]
pub struct ValueStateHandle<V> {
    index: usize,
    _v: PhantomData<fn() -> V>,
}

/// The list state of one descriptor in one backend.
#[derive(Debug)]
pub struct ListStateHandle<V> {
    index: usize,
    _v: PhantomData<fn() -> V>,
}

macro_rules! copy_handle {
    ($name:ident) => {
        impl<V> Clone for $name<V> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<V> Copy for $name<V> {}
    };
}
copy_handle!(ValueStateHandle);
copy_handle!(ListStateHandle);

impl<K: Key> KeyedStateBackend<K> {
    /// Declares the value state `desc` with namespaces of type `N` (restoring its
    /// pending snapshot, as the first access would) and returns its handle.
    pub fn value_handle<N: Key, V: StateValue>(
        &mut self,
        desc: &ValueStateDescriptor<V>,
    ) -> Result<ValueStateHandle<V>, StateError> {
        let index = self.declare::<N, V>(desc.name())?;
        Ok(ValueStateHandle { index, _v: PhantomData })
    }

    /// Declares the list state `desc` with namespaces of type `N` and returns its handle.
    pub fn list_handle<N: Key, V: StateValue>(
        &mut self,
        desc: &ListStateDescriptor<V>,
    ) -> Result<ListStateHandle<V>, StateError> {
        let index = self.declare::<N, Vec<V>>(desc.name())?;
        Ok(ListStateHandle { index, _v: PhantomData })
    }

    fn declare<N: Key, V: StateValue>(&mut self, name: &str) -> Result<usize, StateError> {
        let index = self.table_index::<N, V>(name)?;
        if self.tables[index].1.as_any().is::<Table<K, N, V>>() {
            Ok(index)
        } else {
            Err(StateError::TypeMismatch(name.to_string()))
        }
    }

    /// The value state of `handle` for the current key in `namespace`.
    #[inline]
    pub fn value_of<N: Key, V: StateValue>(
        &mut self,
        handle: ValueStateHandle<V>,
        namespace: &N,
    ) -> Result<ValueState<'_, K, N, V>, StateError> {
        let key = self.current_entry_key(namespace)?;
        Ok(ValueState {
            map: self.cached_group(handle.index, &key)?,
            key,
        })
    }

    /// The list state of `handle` for the current key in `namespace`.
    #[inline]
    pub fn list_of<N: Key, V: StateValue>(
        &mut self,
        handle: ListStateHandle<V>,
        namespace: &N,
    ) -> Result<ListState<'_, K, N, V>, StateError> {
        let key = self.current_entry_key(namespace)?;
        Ok(ListState {
            map: self.cached_group(handle.index, &key)?,
            key,
        })
    }

    /// Removes every entry of the value state of `handle`, in all key groups, and
    /// returns them as (key, namespace, value): for an operator that keeps the state in
    /// a structure of its own between snapshots.
    pub fn take_value_entries<N: Key, V: StateValue>(
        &mut self,
        handle: ValueStateHandle<V>,
    ) -> Result<Vec<(K, N, V)>, StateError> {
        if self.tier.is_some() {
            // Everything to the store, then out of it.
            self.spill()?;
            let entries = self.stored_entries::<N, V>(handle.index)?;
            if let Some(tier) = self.tier.as_mut() {
                tier.store.delete_prefix(tier.columns[handle.index], &[])?;
            }
            return Ok(entries);
        }
        let Some((name, table)) = self.tables.get_mut(handle.index) else {
            return Err(StateError::UnknownHandle(handle.index));
        };
        let table = table
            .as_any_mut()
            .downcast_mut::<Table<K, N, V>>()
            .ok_or_else(|| StateError::TypeMismatch(name.clone()))?;
        Ok(table
            .groups
            .iter_mut()
            .flat_map(|g| g.get_mut().drain().map(|((k, n), v)| (k, n, v)))
            .collect())
    }

    /// Loads the entry of (`key`, `namespace`) of `handle` into the cache (see
    /// [`prefetch_value`](Self::prefetch_value)); `kg` must be the key's group
    /// ([`key_group_of`](Self::key_group_of)), computed once for all the key's entries.
    #[inline]
    pub fn prefetch_value_of<N: Key, V: StateValue>(
        &self,
        handle: ValueStateHandle<V>,
        key: &K,
        kg: u32,
        namespace: &N,
    ) {
        self.prefetch_at::<N, V>(handle.index, key, kg, namespace);
    }

    /// [`prefetch_value_of`](Self::prefetch_value_of) for list state.
    #[inline]
    pub fn prefetch_list_of<N: Key, V: StateValue>(&self, handle: ListStateHandle<V>, key: &K, kg: u32, namespace: &N) {
        self.prefetch_at::<N, Vec<V>>(handle.index, key, kg, namespace);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::VoidNamespace;
    use weir_core::KeyGroupRange;

    fn backend() -> KeyedStateBackend<u64> {
        KeyedStateBackend::new(KeyGroupRange::new(0, 127), 128)
    }

    #[test]
    fn a_handle_reads_and_writes_the_same_entries_as_its_descriptor() {
        let desc = ValueStateDescriptor::<u64>::new("sum");
        let list = ListStateDescriptor::<u8>::new("items");
        let mut b = backend();
        let h = b.value_handle::<u32, u64>(&desc).unwrap();
        let l = b.list_handle::<u32, u8>(&list).unwrap();
        for key in 0..20u64 {
            let kg = b.key_group_of(&key);
            assert_eq!(b.set_current_key_in_group(key, kg).unwrap(), kg);
            b.value_of(h, &7u32).unwrap().update(key * 3);
            b.list_of(l, &7u32).unwrap().add(key as u8);
            b.prefetch_value_of(h, &key, kg, &7u32);
            b.prefetch_list_of(l, &key, kg, &7u32);
        }
        for key in 0..20u64 {
            b.set_current_key(key).unwrap();
            assert_eq!(b.value(&desc, &7u32).unwrap().value(), Some(key * 3));
            assert_eq!(b.list(&list, &7u32).unwrap().get(), &[key as u8]);
            assert_eq!(b.value_of(h, &8u32).unwrap().value(), None);
        }
    }

    #[test]
    fn a_handle_declared_after_a_restore_sees_the_restored_entries() {
        let desc = ValueStateDescriptor::<u64>::new("sum");
        let mut old = backend();
        old.set_current_key(5).unwrap();
        old.value(&desc, &VoidNamespace).unwrap().update(50);
        let mut new = backend();
        new.restore(&old.snapshot().unwrap());
        let h = new.value_handle::<VoidNamespace, u64>(&desc).unwrap();
        new.set_current_key(5).unwrap();
        assert_eq!(new.value_of(h, &VoidNamespace).unwrap().value(), Some(50));
    }

    #[test]
    fn a_handle_of_another_type_or_backend_is_an_error_not_a_read() {
        let mut b = backend();
        b.set_current_key(1).unwrap();
        let h = b.value_handle::<u32, u64>(&ValueStateDescriptor::new("v")).unwrap();
        assert!(matches!(
            b.value_handle::<u32, String>(&ValueStateDescriptor::new("v")),
            Err(StateError::TypeMismatch(name)) if name == "v"
        ));
        assert!(matches!(
            b.value_of(h, &VoidNamespace),
            Err(StateError::TypeMismatch(_))
        ));
        let mut other = backend();
        other.set_current_key(1).unwrap();
        assert!(matches!(other.value_of(h, &1u32), Err(StateError::UnknownHandle(0))));
        other.prefetch_value_of(h, &1, other.key_group_of(&1), &1u32);
    }
}
