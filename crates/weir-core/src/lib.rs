//! Weir's core vocabulary, shared by every other crate: identifiers, key groups and
//! the stable key hash, the elements that travel through a stream (records and
//! in-band events), the binary codec that puts them into network buffers, and the
//! error type for these.
//!
//! Nothing here knows about threads, processes or the network.

#![warn(missing_docs)]

pub mod admission;
pub mod checkpoint;
pub mod codec;
pub mod collect_batch;
pub mod element;
pub mod error;
pub mod excerpt;
pub mod execution_state;
#[cfg(any(test, feature = "fuzz"))]
pub mod fuzz;
pub mod ids;
pub mod job_status;
pub mod key_group;
pub mod key_hash;
pub mod murmur;
pub mod runtime_mode;
pub mod sensitive;
pub mod stats;

#[cfg(test)]
mod codec_fuzz;

pub use checkpoint::{
    AlignmentType, CheckpointBarrier, CheckpointId, CheckpointOptions, CheckpointingMode, SnapshotType,
};
pub use element::{Event, StreamRecord, Watermark};
pub use error::CoreError;
pub use execution_state::ExecutionState;
pub use job_status::JobStatus;
pub use key_group::KeyGroupRange;
pub use runtime_mode::RuntimeExecutionMode;
