//! Errors of the state backends.

use thiserror::Error;

/// Errors of state access, snapshots and restores.
#[derive(Debug, Error)]
pub enum StateError {
    /// State was accessed outside of a keyed context.
    #[error("no current key set: keyed state is only available while processing a keyed record or timer")]
    NoCurrentKey,
    /// The same state name was declared with two different types.
    #[error("state '{0}' was declared with a different type before")]
    TypeMismatch(String),
    /// A state handle that this backend did not give out.
    #[error("no keyed state at handle {0}: the handle belongs to another backend")]
    UnknownHandle(usize),
    /// A key belongs to a key group outside this backend's range.
    #[error("key group {key_group} is not in this backend's range {start}..={end}")]
    KeyGroupOutOfRange {
        /// The key's group.
        key_group: u32,
        /// Range start.
        start: u32,
        /// Range end (inclusive).
        end: u32,
    },
    /// Snapshot bytes that are not a snapshot this build can read.
    #[error("corrupt state snapshot: {0}")]
    CorruptSnapshot(String),
    /// Operator state was declared again under the same name with another
    /// redistribution mode (e.g. once as split list state, once as union list state).
    #[error("operator state '{name}' was declared as {declared} before, not as {requested}")]
    ModeMismatch {
        /// The state's name.
        name: String,
        /// How it was declared first.
        declared: &'static str,
        /// How it was asked for now.
        requested: &'static str,
    },
    /// A state name that the runtime reserves for itself.
    #[error("operator state name '{0}' is reserved (names starting with '_broadcast/' hold broadcast state)")]
    ReservedName(String),
    /// Broadcast state that the broadcast stream did not declare.
    #[error(
        "broadcast state '{0}' does not exist: declare its descriptor in broadcast_state(...) of the broadcast stream"
    )]
    UnknownBroadcastState(String),
    /// Restored operator state whose bytes do not decode as the declared type.
    #[error("operator state '{name}' cannot be restored: {reason}")]
    CorruptState {
        /// The state's name.
        name: String,
        /// What did not decode.
        reason: String,
    },
    /// An unaligned checkpoint's channel state restored at another parallelism.
    #[error(
        "vertex '{vertex}' cannot be restored at parallelism {parallelism} from checkpoint {checkpoint_id}: the \
         checkpoint was unaligned and holds in-flight data of its input or output channels, which is not \
         redistributed on rescaling; restore at the old parallelism, or rescale from a savepoint or an aligned \
         checkpoint"
    )]
    ChannelStateNotRescalable {
        /// The vertex (chain) name.
        vertex: String,
        /// The checkpoint restored from.
        checkpoint_id: u64,
        /// The parallelism asked for.
        parallelism: u32,
    },
    /// The on-disk store of keyed state failed (an I/O error, a full disk, a store
    /// that could not be opened).
    #[error("keyed state store: {0}")]
    Store(String),
    /// A snapshot could not be written or read.
    #[error("state snapshot: {0}")]
    Snapshot(#[from] weir_core::CoreError),
}
