//! Checkpointing for Weir, following Flink: the checkpoint options of a job
//! ([`CheckpointConfig`]), the versioned `_metadata` format and the checkpoint storage
//! layout ([`metadata`]), the checkpoint coordinator as a pure state machine
//! ([`CheckpointCoordinator`]), its statistics ([`CheckpointStatsTracker`]) and the
//! assignment of restored state to the subtasks of a new job ([`assign_restore`]).
//!
//! The coordinator does no I/O; the only I/O is in the metadata file functions
//! ([`write_metadata`], [`write_savepoint`], [`read_metadata`], [`discard`],
//! [`CheckpointStorage::initialize_location`]), which the JobManager's I/O shell calls
//! when it carries out the coordinator's [`CoordinatorAction`]s. They go through
//! `weir_filesystem`, so a checkpoint or savepoint directory may be a local path or an
//! object store URL (`s3://`, `gs://`, `az://`); they block the calling thread.

#![warn(missing_docs)]

pub mod assignment;
pub mod config;
pub mod coordinator;
pub mod error;
pub mod handle_paths;
pub mod metadata;
pub mod stats;

pub use assignment::{assign_restore, RestoreAssignment, RestoreHandle, RestoreVertex, TaskRestore};
pub use config::CheckpointConfig;
pub use coordinator::{
    AckOutcome, CheckpointCoordinator, CompletedCheckpoint, CoordinatorAction, DeclineReason, JobTermination,
    SnapshotReport, SubtaskAcknowledgement, TaskKey, UpstreamRange, VertexInfo,
};
pub use error::CheckpointError;
pub use metadata::{
    check_location, checkpoint_directory, decode, discard, encode, read_metadata, savepoint_directory, write_metadata,
    write_savepoint, CheckpointMetadata, CheckpointStorage, SubtaskState, TaskState,
};
pub use stats::{
    CheckpointCounts, CheckpointStats, CheckpointStatsTracker, CheckpointStatus, CompletedCheckpointSummary,
    RestoredCheckpointStats, StatsSummary, SubtaskCheckpointStats, VertexCheckpointStats,
};
