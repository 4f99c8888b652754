//! A backend's keyed state frozen at a checkpoint, encoded later on another thread:
//! the synchronous part of a snapshot only shares each key group's map
//! ([`super::copy_on_write`]) and reads what is in the on-disk store; encoding the
//! maps, the bulk of the work, happens in [`FrozenKeyedState::materialize`].
//!
//! The bytes are the canonical snapshot format of both backends: per key group and
//! state, the number of entries, then each `((key, namespace), value)` in bincode.

use crate::error::StateError;
use weir_core::KeyGroupRange;

/// Snapshot of one key group: `(state name, bytes)` for every state with entries.
pub type KeyGroupSnapshot = Vec<(String, Vec<u8>)>;

/// One state's maps as of the freeze, type-erased.
pub(super) trait FrozenTable: Send {
    /// Appends the entries of group `index` to `out`; returns how many.
    fn encode_group(&self, index: usize, out: &mut Vec<u8>) -> Result<u64, StateError>;
}

/// One state as frozen: its maps on the heap or, with a store, its stored entries per
/// group (count and bytes, read at the freeze, after the cache was flushed).
pub(super) struct FrozenState {
    pub(super) name: String,
    pub(super) cache: Option<Box<dyn FrozenTable>>,
    pub(super) stored: Vec<(u64, Vec<u8>)>,
}

/// Restored bytes of one state by key group, `(key group, bytes)`.
pub(super) type PendingGroups = Vec<(u32, Vec<u8>)>;

/// More key groups frozen with the state (an operator's timers), encoded with it.
pub type FrozenPart = Box<dyn FnOnce() -> Result<Vec<(u32, KeyGroupSnapshot)>, StateError> + Send>;

/// The keyed state of a backend at one checkpoint, to encode on any thread.
pub struct FrozenKeyedState {
    pub(super) range: KeyGroupRange,
    pub(super) states: Vec<FrozenState>,
    /// Restored bytes of states not declared again yet, per key group.
    pub(super) pending: Vec<(String, PendingGroups)>,
    /// Frozen with the state, merged into its key groups.
    pub(super) parts: Vec<FrozenPart>,
}

impl std::fmt::Debug for FrozenKeyedState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrozenKeyedState")
            .field("range", &self.range)
            .field("states", &self.states.iter().map(|s| &s.name).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl FrozenKeyedState {
    /// The same snapshot with `part`'s key groups merged into it when it is
    /// materialised (entries of key groups outside the backend's range are dropped).
    pub fn with_part(mut self, part: FrozenPart) -> Self {
        self.parts.push(part);
        self
    }

    /// Encodes every key group of the backend: for each, `(state name, bytes)` of every
    /// declared state and every restored one not declared again.
    pub fn materialize(self) -> Result<Vec<(u32, KeyGroupSnapshot)>, StateError> {
        let mut out = Vec::with_capacity(self.range.len());
        for (i, kg) in (self.range.start..=self.range.end).enumerate() {
            let mut group = Vec::with_capacity(self.states.len());
            for state in &self.states {
                let mut body = Vec::new();
                let mut count = match &state.cache {
                    Some(cache) => cache.encode_group(i, &mut body)?,
                    None => 0,
                };
                if let Some((stored, bytes)) = state.stored.get(i) {
                    count += stored;
                    body.extend_from_slice(bytes);
                }
                let mut bytes = Vec::with_capacity(8 + body.len());
                bytes.extend_from_slice(&count.to_le_bytes());
                bytes.extend_from_slice(&body);
                group.push((state.name.clone(), bytes));
            }
            for (name, pending) in &self.pending {
                if let Some((_, b)) = pending.iter().find(|(g, _)| *g == kg) {
                    group.push((name.clone(), b.clone()));
                }
            }
            out.push((kg, group));
        }
        for part in self.parts {
            for (kg, entries) in part()? {
                if self.range.contains(kg) {
                    out[(kg - self.range.start) as usize].1.extend(entries);
                }
            }
        }
        Ok(out)
    }
}
