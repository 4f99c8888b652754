//! Incremental checkpoints of the on-disk keyed state (Flink's incremental RocksDB
//! checkpoints): a checkpoint of a store is its files; the immutable ones (SST files)
//! are uploaded once to the job's `shared/` directory and referred to by every later
//! checkpoint that still contains them, the few others travel in the snapshot.
//!
//! - [`handle`]: what a snapshot records of one store
//!   ([`IncrementalKeyedStateHandle`], Flink's `IncrementalRemoteKeyedStateHandle`).
//! - [`tracker`]: which files a backend may refer to instead of uploading them again:
//!   those of the last checkpoint confirmed complete ([`UploadedFiles`]).
//! - [`transfer`]: the task's checkpoint storage as the store files' destination
//!   ([`SharedStateTransfer`]); [`upload`]: uploading a store checkpoint and
//!   downloading a handle's files through it.
//!
//! Invariant: a checkpoint only refers to shared files uploaded by a checkpoint the
//! JobManager confirmed complete, or uploaded by itself; files of checkpoints that
//! did not complete are never referred to, so the JobManager's registry may delete
//! them.

pub mod handle;
pub mod tracker;
pub mod transfer;
pub mod upload;

pub use handle::{IncrementalKeyedStateHandle, PrivateFile, SharedFileRef};
pub use tracker::UploadedFiles;
pub use transfer::SharedStateTransfer;
pub use upload::{download_handle, restores_in_place, reusable_files, upload_checkpoint};
