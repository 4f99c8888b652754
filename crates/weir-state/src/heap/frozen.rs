//! A backend's keyed state frozen at a checkpoint, encoded later on another thread:
//! the synchronous part of a snapshot only shares each key group's map
//! ([`super::copy_on_write`]) or, with an on-disk store, flushes the cache into the
//! store and takes a checkpoint of the store (hard links); encoding the maps or
//! reading the store's checkpoint, the bulk of the work, happens in
//! [`FrozenKeyedState::materialize`], and uploading the store's new files for an
//! incremental checkpoint in [`FrozenKeyedState::complete`].
//!
//! The bytes are the canonical snapshot format of both backends: per key group and
//! state, the number of entries, then each `((key, namespace), value)` in bincode.

use crate::error::StateError;
use crate::incremental::handle::{IncrementalKeyedStateHandle, SharedFileRef};
use crate::incremental::tracker::UploadedFiles;
use crate::incremental::transfer::SharedStateTransfer;
use crate::incremental::upload::upload_checkpoint;
use crate::store::{key_group_prefix, StoreCheckpoint};
use weir_core::KeyGroupRange;

/// Snapshot of one key group: `(state name, bytes)` for every state with entries.
pub type KeyGroupSnapshot = Vec<(String, Vec<u8>)>;

/// One state's maps as of the freeze, type-erased.
pub(super) trait FrozenTable: Send {
    /// Appends the entries of group `index` to `out`; returns how many.
    fn encode_group(&self, index: usize, out: &mut Vec<u8>) -> Result<u64, StateError>;
}

/// One state as frozen: its maps on the heap, or (with a store) nothing, its entries
/// being in the store's checkpoint.
pub(super) struct FrozenState {
    pub(super) name: String,
    pub(super) cache: Option<Box<dyn FrozenTable>>,
}

/// The on-disk store frozen with the state, after its cache was flushed into it.
pub(super) struct FrozenStore {
    pub(super) checkpoint: Box<dyn StoreCheckpoint>,
    /// For an incremental snapshot: the checkpoint, the files it may refer to, and
    /// where its uploads are recorded.
    pub(super) incremental: Option<IncrementalUpload>,
}

/// What an incremental snapshot needs to upload a store checkpoint.
pub(super) struct IncrementalUpload {
    pub(super) checkpoint_id: u64,
    pub(super) base: Vec<SharedFileRef>,
    pub(super) tracker: UploadedFiles,
}

/// Restored bytes of one state by key group, `(key group, bytes)`.
pub(super) type PendingGroups = Vec<(u32, Vec<u8>)>;

/// More key groups frozen with the state (an operator's timers), encoded with it.
pub type FrozenPart = Box<dyn FnOnce() -> Result<Vec<(u32, KeyGroupSnapshot)>, StateError> + Send>;

/// A completed snapshot of a backend's keyed state.
#[derive(Debug)]
pub struct CompletedKeyedState {
    /// Per key group, `(state name, bytes)` of what is not in `incremental`.
    pub groups: Vec<(u32, KeyGroupSnapshot)>,
    /// The store's files, for an incremental snapshot.
    pub incremental: Option<IncrementalKeyedStateHandle>,
}

/// The keyed state of a backend at one checkpoint, to encode on any thread.
pub struct FrozenKeyedState {
    pub(super) range: KeyGroupRange,
    pub(super) states: Vec<FrozenState>,
    /// Restored bytes of states not declared again yet, per key group.
    pub(super) pending: Vec<(String, PendingGroups)>,
    /// Frozen with the state, merged into its key groups.
    pub(super) parts: Vec<FrozenPart>,
    /// The on-disk store, if the backend has one.
    pub(super) store: Option<FrozenStore>,
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

    /// Completes the snapshot: for an incremental one, with `transfer` given, the
    /// store's files uploaded (those not in the base) and the rest in key groups;
    /// otherwise everything in key groups ([`materialize`](Self::materialize)).
    pub fn complete(mut self, transfer: Option<&dyn SharedStateTransfer>) -> Result<CompletedKeyedState, StateError> {
        let incremental = match (self.store.take(), transfer) {
            (
                Some(FrozenStore {
                    checkpoint,
                    incremental: Some(upload),
                }),
                Some(transfer),
            ) => Some((checkpoint, upload, transfer)),
            (store, _) => {
                self.store = store;
                None
            }
        };
        let Some((checkpoint, upload, transfer)) = incremental else {
            return Ok(CompletedKeyedState {
                groups: self.materialize()?,
                incremental: None,
            });
        };
        let handle = upload_checkpoint(
            checkpoint.as_ref(),
            upload.checkpoint_id,
            self.range,
            &upload.base,
            transfer,
        )?;
        upload
            .tracker
            .uploaded(upload.checkpoint_id, handle.shared.clone(), Some(checkpoint));
        Ok(CompletedKeyedState {
            groups: self.materialize()?,
            incremental: Some(handle),
        })
    }

    /// Encodes every key group of the backend: for each, `(state name, bytes)` of every
    /// declared state and every restored one not declared again.
    pub fn materialize(self) -> Result<Vec<(u32, KeyGroupSnapshot)>, StateError> {
        let mut out = Vec::with_capacity(self.range.len());
        for (i, kg) in (self.range.start..=self.range.end).enumerate() {
            let mut group = Vec::with_capacity(self.states.len());
            for state in &self.states {
                if state.cache.is_none() && self.store.is_none() {
                    // Its entries are in the store's files (an incremental snapshot).
                    continue;
                }
                let mut body = Vec::new();
                let mut count = match &state.cache {
                    Some(cache) => cache.encode_group(i, &mut body)?,
                    None => 0,
                };
                if let Some(store) = &self.store {
                    store
                        .checkpoint
                        .scan(&state.name, &key_group_prefix(kg), &mut |key, value| {
                            body.extend_from_slice(key.get(2..).unwrap_or_default());
                            body.extend_from_slice(value);
                            count += 1;
                            Ok(())
                        })?;
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
