//! Keyed state and timers, scoped to key groups.
//!
//! - [`heap::KeyedStateBackend`]: state in hash maps, one per key group, each
//!   entry scoped to (key, namespace); on the heap alone, or as a bounded cache in
//!   front of an on-disk [`store::KeyedStateStore`] (RocksDB, in `weir-state-rocksdb`).
//! - [`descriptor`]: named, typed state declarations (`ValueStateDescriptor`, …,
//!   `ReducingStateDescriptor` and `AggregatingStateDescriptor` with their functions).
//! - [`operator_state::OperatorStateStore`]: operator (non-keyed) list, union list and
//!   broadcast state of one operator subtask.
//! - [`incremental`]: incremental checkpoints of the on-disk store (its files
//!   uploaded once, referred to by later checkpoints).
//! - [`timers::TimerService`]: event-time and processing-time timers per (key,
//!   namespace, time).
//!
//! Invariant: a backend only holds keys of the key groups of its subtask's
//! [`weir_core::KeyGroupRange`]; snapshots are written per key group so that state
//! can be redistributed when the parallelism changes.

#![warn(missing_docs)]

pub mod descriptor;
pub mod error;
pub mod heap;
pub mod incremental;
pub mod operator_state;
pub mod pending_snapshot;
mod prefetch;
pub mod snapshot;
pub mod store;
mod timer_queue;
pub mod timers;

pub use descriptor::{
    AggregatingStateDescriptor, ListStateDescriptor, MapStateDescriptor, ReducingStateDescriptor, StateAggregator,
    ValueStateDescriptor,
};
pub use error::StateError;
pub use heap::{
    AggregatingState, FrozenKeyedState, KeyGroupSnapshot, KeyedStateBackend, ListState, ListStateHandle, MapState,
    ReducingState, ValueState, ValueStateHandle,
};
pub use operator_state::{
    BroadcastState, BroadcastStateHandle, OperatorListState, OperatorStateStore, ReadOnlyBroadcastState,
};
pub use pending_snapshot::{PendingOperatorSnapshot, PendingTaskSnapshot};
pub use snapshot::{
    InputChannelState, OperatorSnapshot, RestoredChannelState, RestoredState, ResultSubpartitionState, TaskSnapshot,
};
pub use store::{KeyedStateStore, KeyedStateStoreFactory, SnapshotFormat, StoreCheckpoint};
pub use timers::{TimeDomain, Timer, TimerService};

/// The namespace of state that belongs to no window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize, serde::Deserialize)]
pub struct VoidNamespace;

/// What a key must be: hashable for maps, serialisable for the stable key hash and
/// snapshots, shareable with the thread that writes an asynchronous snapshot.
pub trait Key:
    std::hash::Hash + Eq + Clone + serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static
{
}
impl<T: std::hash::Hash + Eq + Clone + serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static> Key
    for T
{
}
