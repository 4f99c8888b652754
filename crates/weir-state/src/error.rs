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
    /// A snapshot could not be written or read.
    #[error("state snapshot: {0}")]
    Snapshot(#[from] weir_core::CoreError),
}
