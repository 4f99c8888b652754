//! Operator state: state of one operator subtask that is not scoped to a key (Flink's
//! `OperatorStateStore` as `DefaultOperatorStateBackend` implements it).
//!
//! Three kinds, by how they are redistributed when a job restores at another
//! parallelism:
//! - **list state** ([`OperatorStateStore::list_state`], Flink's `SPLIT_DISTRIBUTE`):
//!   the elements of all old subtasks are dealt out round-robin to the new subtasks;
//! - **union list state** ([`OperatorStateStore::union_list_state`], Flink's `UNION`):
//!   every new subtask gets every element of every old subtask, at an unchanged
//!   parallelism too (the restore hands it the other subtasks' snapshots that hold
//!   union state, for that state only);
//! - **broadcast state** ([`OperatorStateStore::broadcast_state`]): one map per
//!   descriptor, equal in every subtask; every subtask snapshots its copy and a new
//!   subtask `i` restores old subtask `i mod old parallelism`'s copy.
//!
//! Snapshot layout ([`OperatorSnapshot`]): a list state is `list[name]`, one element of
//! bytes per list element; a union list state is `union[name]` alike; a broadcast state
//! is `union["_broadcast/" + name]` holding exactly one element, the whole map. As union
//! state, a restored subtask receives the copies of all old subtasks it was assigned, in
//! old-subtask order, and picks one by its own index. User state names starting with
//! `_broadcast/` are therefore refused.
//!
//! Values are encoded with the codec of keyed state ([`weir_core::codec`]). Restored
//! bytes stay undecoded until the state is declared (only then is its type known);
//! state that is restored but never declared is written back unchanged by the next
//! snapshot, so it survives a run that does not use it.
//!
//! Invariants: a name is declared with one kind and one type for the lifetime of the
//! store (list and union state share one namespace, broadcast state has its own);
//! [`OperatorStateStore::read_only_broadcast_state`] only sees declared state.

use crate::descriptor::{ListStateDescriptor, MapStateDescriptor};
use crate::error::StateError;
use crate::heap::StateValue;
use crate::snapshot::OperatorSnapshot;
use rustc_hash::FxHashMap as HashMap;
use std::any::Any;
use std::collections::BTreeMap;
use std::hash::Hash;
use weir_core::codec;

/// The union-state name prefix under which broadcast state is snapshotted.
pub const BROADCAST_PREFIX: &str = "_broadcast/";

/// How a list state is redistributed on a rescaling restore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListMode {
    /// Round-robin over the new subtasks (Flink's `SPLIT_DISTRIBUTE`).
    Split,
    /// Every new subtask gets all elements (Flink's `UNION`).
    Union,
}

impl ListMode {
    fn describe(self) -> &'static str {
        match self {
            ListMode::Split => "list state",
            ListMode::Union => "union list state",
        }
    }
}

/// A declared state with its type erased.
trait ErasedState {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// The snapshot elements: one per list element, or one for a whole map.
    fn encode(&self) -> Result<Vec<Vec<u8>>, StateError>;
}

struct ListCell<T>(Vec<T>);

impl<T: StateValue> ErasedState for ListCell<T> {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn encode(&self) -> Result<Vec<Vec<u8>>, StateError> {
        self.0
            .iter()
            .map(|e| codec::encode(e).map_err(StateError::from))
            .collect()
    }
}

struct MapCell<K, V>(HashMap<K, V>);

impl<K: StateValue + Hash + Eq, V: StateValue> ErasedState for MapCell<K, V> {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn encode(&self) -> Result<Vec<Vec<u8>>, StateError> {
        let entries: Vec<(&K, &V)> = self.0.iter().collect();
        Ok(vec![codec::encode(&entries)?])
    }
}

struct ListEntry {
    mode: ListMode,
    state: Box<dyn ErasedState>,
}

/// The operator state of one operator subtask.
#[derive(Default)]
pub struct OperatorStateStore {
    lists: BTreeMap<String, ListEntry>,
    broadcast: BTreeMap<String, Box<dyn ErasedState>>,
    pending_list: BTreeMap<String, (ListMode, Vec<Vec<u8>>)>,
    pending_broadcast: BTreeMap<String, Vec<u8>>,
    restored: bool,
}

impl OperatorStateStore {
    /// An empty store (a fresh start).
    pub fn new() -> Self {
        Self::default()
    }

    /// A store restored from `snapshot`, this operator's part of the checkpoint as
    /// [`crate::RestoredState::operator`] dealt it to subtask `subtask_index` (none: a
    /// fresh start). Broadcast state takes the copy of old subtask
    /// `subtask_index mod number of copies`.
    pub fn restore(snapshot: Option<&OperatorSnapshot>, subtask_index: u32) -> Result<Self, StateError> {
        let mut store = Self::new();
        let Some(snapshot) = snapshot else {
            return Ok(store);
        };
        store.restored = true;
        for (name, elements) in &snapshot.list {
            store
                .pending_list
                .insert(name.clone(), (ListMode::Split, elements.clone()));
        }
        for (name, elements) in &snapshot.union {
            match name.strip_prefix(BROADCAST_PREFIX) {
                Some(broadcast) => {
                    if elements.is_empty() {
                        return Err(StateError::CorruptState {
                            name: broadcast.to_string(),
                            reason: "the snapshot holds no copy of the broadcast state".into(),
                        });
                    }
                    let copy = &elements[subtask_index as usize % elements.len()];
                    store.pending_broadcast.insert(broadcast.to_string(), copy.clone());
                }
                None => {
                    if store.pending_list.contains_key(name) {
                        return Err(StateError::ModeMismatch {
                            name: name.clone(),
                            declared: ListMode::Split.describe(),
                            requested: ListMode::Union.describe(),
                        });
                    }
                    store
                        .pending_list
                        .insert(name.clone(), (ListMode::Union, elements.clone()));
                }
            }
        }
        Ok(store)
    }

    /// True when the store was restored from a checkpoint (Flink's
    /// `FunctionInitializationContext::isRestored`).
    pub fn is_restored(&self) -> bool {
        self.restored
    }

    /// The list state `desc`: its elements are dealt out round-robin when a job
    /// restores at another parallelism.
    pub fn list_state<T: StateValue>(
        &mut self,
        desc: &ListStateDescriptor<T>,
    ) -> Result<OperatorListState<'_, T>, StateError> {
        self.list(desc.name(), ListMode::Split)
    }

    /// The union list state `desc`: on restore every subtask gets the elements of all
    /// old subtasks.
    pub fn union_list_state<T: StateValue>(
        &mut self,
        desc: &ListStateDescriptor<T>,
    ) -> Result<OperatorListState<'_, T>, StateError> {
        self.list(desc.name(), ListMode::Union)
    }

    fn list<T: StateValue>(&mut self, name: &str, mode: ListMode) -> Result<OperatorListState<'_, T>, StateError> {
        if name.starts_with(BROADCAST_PREFIX) {
            return Err(StateError::ReservedName(name.to_string()));
        }
        if !self.lists.contains_key(name) {
            let restored = match self.pending_list.remove(name) {
                Some((was, elements)) if was != mode => {
                    self.pending_list.insert(name.to_string(), (was, elements));
                    return Err(StateError::ModeMismatch {
                        name: name.to_string(),
                        declared: was.describe(),
                        requested: mode.describe(),
                    });
                }
                Some((_, elements)) => decode_elements::<T>(name, &elements)?,
                None => Vec::new(),
            };
            let state: Box<dyn ErasedState> = Box::new(ListCell(restored));
            self.lists.insert(name.to_string(), ListEntry { mode, state });
        }
        let entry = self
            .lists
            .get_mut(name)
            .ok_or_else(|| StateError::TypeMismatch(name.to_string()))?;
        if entry.mode != mode {
            return Err(StateError::ModeMismatch {
                name: name.to_string(),
                declared: entry.mode.describe(),
                requested: mode.describe(),
            });
        }
        let cell = entry
            .state
            .as_any_mut()
            .downcast_mut::<ListCell<T>>()
            .ok_or_else(|| StateError::TypeMismatch(name.to_string()))?;
        Ok(OperatorListState { items: &mut cell.0 })
    }

    /// The broadcast state `desc`, writable (declares it on first use).
    pub fn broadcast_state<K: StateValue + Hash + Eq, V: StateValue>(
        &mut self,
        desc: &MapStateDescriptor<K, V>,
    ) -> Result<BroadcastState<'_, K, V>, StateError> {
        let name = desc.name();
        if !self.broadcast.contains_key(name) {
            let restored: HashMap<K, V> = match self.pending_broadcast.get(name) {
                Some(bytes) => {
                    let entries: Vec<(K, V)> = codec::decode(bytes).map_err(|e| StateError::CorruptState {
                        name: name.to_string(),
                        reason: e.to_string(),
                    })?;
                    entries.into_iter().collect()
                }
                None => HashMap::default(),
            };
            self.pending_broadcast.remove(name);
            self.broadcast.insert(name.to_string(), Box::new(MapCell(restored)));
        }
        let cell = self
            .broadcast
            .get_mut(name)
            .and_then(|s| s.as_any_mut().downcast_mut::<MapCell<K, V>>())
            .ok_or_else(|| StateError::TypeMismatch(name.to_string()))?;
        Ok(BroadcastState::new(&mut cell.0))
    }

    /// The broadcast state `desc`, read-only; it must have been declared with
    /// [`broadcast_state`](Self::broadcast_state) before.
    pub fn read_only_broadcast_state<K: StateValue + Hash + Eq, V: StateValue>(
        &self,
        desc: &MapStateDescriptor<K, V>,
    ) -> Result<ReadOnlyBroadcastState<'_, K, V>, StateError> {
        let state = self
            .broadcast
            .get(desc.name())
            .ok_or_else(|| StateError::UnknownBroadcastState(desc.name().to_string()))?;
        let cell = state
            .as_any()
            .downcast_ref::<MapCell<K, V>>()
            .ok_or_else(|| StateError::TypeMismatch(desc.name().to_string()))?;
        Ok(ReadOnlyBroadcastState::new(&cell.0))
    }

    /// The names of the declared list and union list states.
    pub fn registered_state_names(&self) -> Vec<&str> {
        self.lists.keys().map(String::as_str).collect()
    }

    /// The names of the declared broadcast states.
    pub fn registered_broadcast_state_names(&self) -> Vec<&str> {
        self.broadcast.keys().map(String::as_str).collect()
    }

    /// The store as of now, in the layout of the module documentation (restored state
    /// that was never declared included, unchanged).
    pub fn snapshot(&self) -> Result<OperatorSnapshot, StateError> {
        let mut out = OperatorSnapshot::default();
        for (name, (mode, elements)) in &self.pending_list {
            list_map(&mut out, *mode).insert(name.clone(), elements.clone());
        }
        for (name, entry) in &self.lists {
            let elements = entry.state.encode()?;
            list_map(&mut out, entry.mode).insert(name.clone(), elements);
        }
        for (name, bytes) in &self.pending_broadcast {
            out.union
                .insert(format!("{BROADCAST_PREFIX}{name}"), vec![bytes.clone()]);
        }
        for (name, state) in &self.broadcast {
            out.union.insert(format!("{BROADCAST_PREFIX}{name}"), state.encode()?);
        }
        Ok(out)
    }
}

fn list_map(out: &mut OperatorSnapshot, mode: ListMode) -> &mut BTreeMap<String, Vec<Vec<u8>>> {
    match mode {
        ListMode::Split => &mut out.list,
        ListMode::Union => &mut out.union,
    }
}

fn decode_elements<T: StateValue>(name: &str, elements: &[Vec<u8>]) -> Result<Vec<T>, StateError> {
    elements
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            codec::decode(bytes).map_err(|e| StateError::CorruptState {
                name: name.to_string(),
                reason: format!("element {i} of {}: {e}", elements.len()),
            })
        })
        .collect()
}

mod handles;
#[cfg(test)]
mod tests;

pub use handles::{BroadcastState, BroadcastStateHandle, OperatorListState, ReadOnlyBroadcastState};
