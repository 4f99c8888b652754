//! The `_metadata` file of a checkpoint or savepoint, and where checkpoints are stored.
//!
//! # Format (version 4; versions 1, without `union_state`, 2, without `finished`, and
//! 3, without `shared_state`, are still read)
//!
//! ```text
//! offset  size  content
//! 0       8     magic "WEIRCKPT" (ASCII)
//! 8       4     format version, u32 big-endian (= 4)
//! 12      ...   body: bincode (fixed-width little-endian integers, u64 lengths) of
//!               CheckpointMetadata, with nothing after it
//! ```
//!
//! The body is `CheckpointMetadata { job_id, checkpoint_id, timestamp, snapshot_type,
//! tasks }`; each [`TaskState`] holds one [`SubtaskState`] per subtask, whose handle is
//! `None` for a stateless subtask, inline bytes, or a file. [`decode`] checks the magic,
//! the version, every length (a truncated file or a length running past the end is
//! [`CheckpointError::CorruptMetadata`], never a panic nor a huge allocation), that no
//! byte follows the body, and the consistency of the tasks (subtask indices below the
//! parallelism and unique, parallelism at most the max parallelism, key-group ranges
//! inside the max parallelism, no state for a finished subtask). A new format gets a new version number; old versions
//! stay readable.
//!
//! # Storage
//!
//! [`CheckpointStorage`] is Flink's choice between JobManager storage (no directory:
//! `_metadata` is not written, state lives inline in the JobManager) and file-system
//! storage with Flink's layout:
//!
//! ```text
//! <dir>/<job-id>/chk-<id>/_metadata     one directory per checkpoint
//! <dir>/<job-id>/shared/                 (created on first use)
//! <dir>/<job-id>/taskowned/              (created on first use)
//! <savepoint-dir>/savepoint-<first 6 hex of job id>-<12 random hex>/_metadata
//! ```
//!
//! Paths are strings: local paths, `file://` URLs and object store URLs (`s3://`,
//! `gs://`, `az://`, see `weir_filesystem`, which does every read, write and delete).
//! `_metadata` is written atomically and never overwritten: on a local file system a
//! temp file hard-linked into place (failing if the target exists), on an object store
//! one conditional PUT. State file handles hold full paths or URLs, except in a
//! savepoint, where they are relative to the savepoint's directory (prefix).

use bincode::Options;
use serde::{Deserialize, Serialize};
use weir_core::checkpoint::{SharedStateFile, StreamStateHandle};
use weir_core::ids::{splitmix64, JobId, JobVertexId, OperatorId};
use weir_core::{CheckpointId, KeyGroupRange, SnapshotType};

use weir_filesystem::{Entry, FsError, Location};

use crate::config::CheckpointConfig;
use crate::error::CheckpointError;

/// The first 8 bytes of every `_metadata` file.
pub const METADATA_MAGIC: &[u8; 8] = b"WEIRCKPT";
/// The format version written by [`encode`].
pub const METADATA_VERSION: u32 = 4;
/// The file name of the metadata inside a checkpoint or savepoint directory.
pub const METADATA_FILE_NAME: &str = "_metadata";
/// The directory (under `<dir>/<job-id>`) for state shared between checkpoints.
pub const SHARED_STATE_DIR: &str = "shared";
/// The directory (under `<dir>/<job-id>`) for state owned by the tasks.
pub const TASK_OWNED_STATE_DIR: &str = "taskowned";

/// Everything needed to restore a job: one entry per vertex that was checkpointed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMetadata {
    /// The job that took the checkpoint.
    pub job_id: JobId,
    /// The checkpoint's id.
    pub checkpoint_id: CheckpointId,
    /// When it was triggered, ms since the epoch.
    pub timestamp: i64,
    /// Checkpoint or savepoint.
    pub snapshot_type: SnapshotType,
    /// One entry per vertex.
    pub tasks: Vec<TaskState>,
}

/// The state of one vertex (a chain of operators) at a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskState {
    /// The vertex.
    pub vertex_id: JobVertexId,
    /// Its name (for messages and the web UI).
    pub vertex_name: String,
    /// The operators of its chain, head first; state is matched on restore by them.
    pub operator_ids: Vec<OperatorId>,
    /// Its parallelism when checkpointed.
    pub parallelism: u32,
    /// Its max parallelism (number of key groups).
    pub max_parallelism: u32,
    /// One entry per subtask.
    pub subtasks: Vec<SubtaskState>,
}

/// The state of one subtask at a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubtaskState {
    /// The subtask index.
    pub subtask: u32,
    /// The key groups it owned.
    pub key_group_range: KeyGroupRange,
    /// Its snapshot; `None` for a stateless subtask.
    pub handle: Option<StreamStateHandle>,
    /// Bytes of state it reported.
    pub state_size: u64,
    /// Its snapshot holds union list state, which every subtask restores (so a restore
    /// at the same parallelism hands this handle to the other subtasks too).
    pub union_state: bool,
    /// The subtask had finished when the checkpoint was taken (it has no handle): it is
    /// restored as finished.
    pub finished: bool,
    /// The shared files (of incremental checkpoints) its snapshot refers to.
    pub shared_state: Vec<SharedStateFile>,
}

/// Versions 1 and 2 of the format, read and converted: they differ from the current
/// one only in what a subtask records (version 1: no `union_state`; version 2: no
/// `finished`).
mod legacy {
    use super::*;

    #[derive(Deserialize)]
    pub(super) struct Metadata<S> {
        job_id: JobId,
        checkpoint_id: CheckpointId,
        timestamp: i64,
        snapshot_type: SnapshotType,
        tasks: Vec<Task<S>>,
    }

    #[derive(Deserialize)]
    struct Task<S> {
        vertex_id: JobVertexId,
        vertex_name: String,
        operator_ids: Vec<OperatorId>,
        parallelism: u32,
        max_parallelism: u32,
        subtasks: Vec<S>,
    }

    /// A version 1 subtask.
    #[derive(Deserialize)]
    pub(super) struct SubtaskV1 {
        subtask: u32,
        key_group_range: KeyGroupRange,
        handle: Option<StreamStateHandle>,
        state_size: u64,
    }

    /// A version 2 subtask.
    #[derive(Deserialize)]
    pub(super) struct SubtaskV2 {
        v1: SubtaskV1,
        union_state: bool,
    }

    /// A version 3 subtask.
    #[derive(Deserialize)]
    pub(super) struct SubtaskV3 {
        v2: SubtaskV2,
        finished: bool,
    }

    impl From<SubtaskV3> for SubtaskState {
        fn from(s: SubtaskV3) -> Self {
            SubtaskState {
                finished: s.finished,
                ..s.v2.into()
            }
        }
    }

    impl From<SubtaskV1> for SubtaskState {
        fn from(s: SubtaskV1) -> Self {
            SubtaskState {
                subtask: s.subtask,
                key_group_range: s.key_group_range,
                handle: s.handle,
                state_size: s.state_size,
                union_state: false,
                finished: false,
                shared_state: Vec::new(),
            }
        }
    }

    impl From<SubtaskV2> for SubtaskState {
        fn from(s: SubtaskV2) -> Self {
            SubtaskState {
                union_state: s.union_state,
                ..s.v1.into()
            }
        }
    }

    impl<S: Into<SubtaskState>> From<Metadata<S>> for CheckpointMetadata {
        fn from(m: Metadata<S>) -> Self {
            CheckpointMetadata {
                job_id: m.job_id,
                checkpoint_id: m.checkpoint_id,
                timestamp: m.timestamp,
                snapshot_type: m.snapshot_type,
                tasks: m
                    .tasks
                    .into_iter()
                    .map(|t| TaskState {
                        vertex_id: t.vertex_id,
                        vertex_name: t.vertex_name,
                        operator_ids: t.operator_ids,
                        parallelism: t.parallelism,
                        max_parallelism: t.max_parallelism,
                        subtasks: t.subtasks.into_iter().map(Into::into).collect(),
                    })
                    .collect(),
            }
        }
    }
}

impl CheckpointMetadata {
    /// Total bytes of state of all subtasks.
    pub fn state_size(&self) -> u64 {
        self.tasks
            .iter()
            .flat_map(|t| &t.subtasks)
            .map(|s| s.state_size)
            .fold(0u64, u64::saturating_add)
    }

    /// Checks the invariants [`decode`] promises; the error is the reason.
    pub fn validate(&self) -> Result<(), String> {
        for task in &self.tasks {
            let name = &task.vertex_name;
            if task.parallelism == 0 || task.parallelism > task.max_parallelism {
                return Err(format!(
                    "vertex {name}: parallelism {} with max parallelism {}",
                    task.parallelism, task.max_parallelism
                ));
            }
            let mut seen = vec![false; task.parallelism as usize];
            for s in &task.subtasks {
                let slot = seen.get_mut(s.subtask as usize).ok_or_else(|| {
                    format!(
                        "vertex {name}: subtask {} >= parallelism {}",
                        s.subtask, task.parallelism
                    )
                })?;
                if std::mem::replace(slot, true) {
                    return Err(format!("vertex {name}: subtask {} is listed twice", s.subtask));
                }
                if s.finished && s.handle.is_some() {
                    return Err(format!(
                        "vertex {name}: subtask {} is finished but has state",
                        s.subtask
                    ));
                }
                let r = s.key_group_range;
                if !r.is_empty() && r.end >= task.max_parallelism {
                    return Err(format!(
                        "vertex {name}: subtask {} key groups {}..={} outside max parallelism {}",
                        s.subtask, r.start, r.end, task.max_parallelism
                    ));
                }
            }
        }
        Ok(())
    }
}

fn body_options() -> impl Options {
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_little_endian()
        .reject_trailing_bytes()
}

/// Encodes `metadata` in the current format (magic, version, body).
pub fn encode(metadata: &CheckpointMetadata) -> Result<Vec<u8>, CheckpointError> {
    let body = body_options()
        .serialize(metadata)
        .map_err(|e| CheckpointError::corrupt("<memory>", format!("cannot encode: {e}")))?;
    let mut out = Vec::with_capacity(12 + body.len());
    out.extend_from_slice(METADATA_MAGIC);
    out.extend_from_slice(&METADATA_VERSION.to_be_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decodes a `_metadata` file's bytes; `path` names the file in errors.
pub fn decode(bytes: &[u8], path: &str) -> Result<CheckpointMetadata, CheckpointError> {
    if bytes.len() < METADATA_MAGIC.len() + 4 {
        return Err(CheckpointError::corrupt(
            path,
            format!("file is truncated: {} bytes, the header alone has 12", bytes.len()),
        ));
    }
    if &bytes[..8] != METADATA_MAGIC {
        return Err(CheckpointError::corrupt(
            path,
            "not a Weir checkpoint metadata file (bad magic)",
        ));
    }
    let version = u32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    let body = &bytes[12..];
    let corrupt_body = |e: bincode::Error| CheckpointError::corrupt(path, format!("truncated or corrupt body: {e}"));
    let options = body_options().with_limit(body.len() as u64);
    let metadata: CheckpointMetadata = match version {
        1 => options
            .deserialize::<legacy::Metadata<legacy::SubtaskV1>>(body)
            .map_err(corrupt_body)?
            .into(),
        2 => options
            .deserialize::<legacy::Metadata<legacy::SubtaskV2>>(body)
            .map_err(corrupt_body)?
            .into(),
        3 => options
            .deserialize::<legacy::Metadata<legacy::SubtaskV3>>(body)
            .map_err(corrupt_body)?
            .into(),
        METADATA_VERSION => options.deserialize(body).map_err(corrupt_body)?,
        _ => {
            return Err(CheckpointError::corrupt(
                path,
                format!("unsupported metadata version {version} (this Weir reads versions 1 to {METADATA_VERSION})"),
            ))
        }
    };
    metadata
        .validate()
        .map_err(|reason| CheckpointError::corrupt(path, reason))?;
    Ok(metadata)
}

/// Where a job's checkpoints go (Flink's `CheckpointStorage`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointStorage {
    /// No checkpoint directory: metadata and state stay in the JobManager.
    JobManager,
    /// `execution.checkpointing.dir` is set: `<dir>/<job-id>/chk-<id>/_metadata`.
    FileSystem {
        /// The configured directory (a local path, a `file://` URL or an object store
        /// URL such as `s3://bucket/prefix`).
        dir: String,
    },
}

impl CheckpointStorage {
    /// File-system storage when a checkpoint directory is configured, else JobManager
    /// storage.
    pub fn from_config(config: &CheckpointConfig) -> Self {
        match &config.checkpoint_dir {
            Some(dir) => CheckpointStorage::FileSystem { dir: dir.clone() },
            None => CheckpointStorage::JobManager,
        }
    }

    /// The directory of checkpoint `id` of `job`; `None` for JobManager storage. Pure.
    pub fn checkpoint_location(&self, job: &JobId, id: CheckpointId) -> Option<String> {
        match self {
            CheckpointStorage::JobManager => None,
            CheckpointStorage::FileSystem { dir } => Some(checkpoint_directory(dir, job, id)),
        }
    }

    /// Creates the directory of checkpoint `id` (and the job's `shared` and
    /// `taskowned` directories) and returns it; `None` for JobManager storage. On an
    /// object store there are no directories to create: it only returns the location.
    pub fn initialize_location(&self, job: &JobId, id: CheckpointId) -> Result<Option<String>, CheckpointError> {
        let CheckpointStorage::FileSystem { dir } = self else {
            return Ok(None);
        };
        for sub in [shared_state_directory(dir, job), task_owned_state_directory(dir, job)] {
            weir_filesystem::create_dir_all(&sub)?;
        }
        let location = checkpoint_directory(dir, job, id);
        weir_filesystem::create_dir_all(&location)?;
        Ok(Some(location))
    }
}

fn join(dir: &str, name: &str) -> String {
    format!("{}/{name}", dir.trim_end_matches('/'))
}

/// `<dir>/<job-id>`: every checkpoint of a job lives below it.
pub fn job_directory(dir: &str, job: &JobId) -> String {
    join(dir, &job.to_string())
}

/// `<dir>/<job-id>/chk-<id>`.
pub fn checkpoint_directory(dir: &str, job: &JobId, id: CheckpointId) -> String {
    join(&job_directory(dir, job), &format!("chk-{id}"))
}

/// `<dir>/<job-id>/shared`.
pub fn shared_state_directory(dir: &str, job: &JobId) -> String {
    join(&job_directory(dir, job), SHARED_STATE_DIR)
}

/// `<dir>/<job-id>/taskowned`.
pub fn task_owned_state_directory(dir: &str, job: &JobId) -> String {
    join(&job_directory(dir, job), TASK_OWNED_STATE_DIR)
}

/// `<dir>/savepoint-<first 6 hex of the job id>-<12 random hex>`.
pub fn savepoint_directory(dir: &str, job: &JobId) -> String {
    savepoint_directory_with(dir, job, JobId::random().0 as u64)
}

/// [`savepoint_directory`] with the random part derived from `random` (deterministic).
pub fn savepoint_directory_with(dir: &str, job: &JobId, random: u64) -> String {
    let job_hex = job.to_string();
    let rand_hex = format!("{:012x}", splitmix64(random) & 0xffff_ffff_ffff);
    join(dir, &format!("savepoint-{}-{rand_hex}", &job_hex[..6]))
}

/// Checks that `path` is a location Weir can store checkpoints in (a local path, a
/// `file:` URL or an object store URL), without touching it; any other URL scheme is
/// [`CheckpointError::UnsupportedScheme`].
pub fn check_location(path: &str) -> Result<(), CheckpointError> {
    Location::parse(path)?;
    Ok(())
}

/// Writes `metadata` as `<location>/_metadata` (creating `location` on a local file
/// system) atomically and returns the external path of the checkpoint: `location`
/// itself. An existing `_metadata` is never overwritten
/// ([`CheckpointError::MetadataExists`]).
pub fn write_metadata(location: &str, metadata: &CheckpointMetadata) -> Result<String, CheckpointError> {
    // `put_new` creates `location` on a local file system, and removes it again when
    // the write fails (a full disk leaves no empty `chk-<id>` behind).
    let target = join(location, METADATA_FILE_NAME);
    let bytes = encode(metadata)?;
    match weir_filesystem::put_new(&target, bytes) {
        Ok(()) => Ok(location.to_string()),
        Err(FsError::AlreadyExists { .. }) => Err(CheckpointError::MetadataExists { path: target }),
        Err(e) => Err(e.into()),
    }
}

/// Writes a savepoint into `location`: state files the tasks wrote elsewhere are moved
/// into it (a rename on a local file system, a copy and a delete on object stores) and
/// their handles become relative to it, then `_metadata` is written. A savepoint
/// directory is thus self-contained: it can be moved or copied as a whole, and
/// discarding checkpoints never touches it. Returns `location`.
pub fn write_savepoint(location: &str, metadata: &CheckpointMetadata) -> Result<String, CheckpointError> {
    let dir = Location::parse(location)?;
    weir_filesystem::create_dir_all(location)?;
    let mut relocated = metadata.clone();
    let mut emptied = std::collections::BTreeSet::new();
    for handle in relocated
        .tasks
        .iter_mut()
        .flat_map(|t| t.subtasks.iter_mut())
        .filter_map(|s| s.handle.as_mut())
    {
        let StreamStateHandle::File { path, .. } = handle else {
            continue;
        };
        let source = Location::parse(path)?;
        let Some(name) = source.file_name() else {
            continue;
        };
        let parent = source.parent();
        if parent.as_ref() == Some(&dir) {
            *path = name;
            continue;
        }
        weir_filesystem::move_file(path, &join(location, &name))?;
        if let Some(parent) = parent {
            emptied.insert(parent.to_string());
        }
        *path = name;
    }
    let written = write_metadata(location, &relocated)?;
    for parent in emptied {
        // The tasks' directory for this savepoint id is empty now (on a local file
        // system; an object store has no directories). One still holding files (not
        // ours) is left alone.
        weir_filesystem::remove_empty_dir(&parent)?;
    }
    Ok(written)
}

/// Makes relative state file paths of a savepoint absolute, against its directory.
fn resolve_relative_handles(metadata: &mut CheckpointMetadata, dir: &Location) {
    for handle in metadata
        .tasks
        .iter_mut()
        .flat_map(|t| t.subtasks.iter_mut())
        .filter_map(|s| s.handle.as_mut())
    {
        if let StreamStateHandle::File { path, .. } = handle {
            if weir_filesystem::is_relative(path) {
                *path = dir.child(path).to_string();
            }
        }
    }
}

/// Reads the metadata of a checkpoint or savepoint given as its directory or its
/// `_metadata` file, on a local file system or an object store. File handles relative
/// to the savepoint are resolved against the directory the `_metadata` is in, so a
/// savepoint moved (or copied to another prefix or bucket) as a whole still reads.
pub fn read_metadata(path: &str) -> Result<CheckpointMetadata, CheckpointError> {
    let given = Location::parse(path)?;
    let file = match weir_filesystem::stat(path)? {
        Entry::Directory => {
            let file = given.child(METADATA_FILE_NAME);
            if weir_filesystem::stat(&file.to_string())? != Entry::File {
                return Err(CheckpointError::NoMetadataInDirectory { path: path.to_string() });
            }
            file
        }
        Entry::File => given,
        Entry::Missing => {
            return Err(CheckpointError::MetadataNotFound {
                path: path.to_string(),
                scheme: given.scheme().to_string(),
            })
        }
    };
    let name = file.to_string();
    let bytes = weir_filesystem::get(&name)?;
    let mut metadata = decode(&bytes, &name)?;
    if let Some(dir) = file.parent() {
        resolve_relative_handles(&mut metadata, &dir);
    }
    Ok(metadata)
}

/// Deletes a checkpoint directory (or a single state file) with everything in it: on
/// an object store every object below the prefix. A location that no longer exists is
/// fine: discarding is idempotent.
pub fn discard(location: &str) -> Result<(), CheckpointError> {
    Ok(weir_filesystem::delete_all(location)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_savepoint_takes_its_state_files_along_and_resolves_them_after_a_move() {
        let root = tempfile::tempdir().unwrap();
        let chk = root.path().join("chk").join("chk-7");
        fs::create_dir_all(&chk).unwrap();
        let state = chk.join("state-0");
        fs::write(&state, b"state bytes").unwrap();
        let mut metadata = sample();
        metadata.tasks[1].subtasks[0].handle = Some(StreamStateHandle::File {
            path: state.display().to_string(),
            size: 11,
        });
        let sp = root.path().join("sp").join("savepoint-1");
        write_savepoint(&sp.display().to_string(), &metadata).unwrap();
        assert!(
            !state.exists() && !chk.exists(),
            "the task directory is emptied and removed"
        );
        // Moved as a whole, the savepoint still reads: handles are relative to it.
        let moved = root.path().join("elsewhere");
        fs::rename(&sp, &moved).unwrap();
        let read = read_metadata(&moved.display().to_string()).unwrap();
        let Some(StreamStateHandle::File { path, size }) = &read.tasks[1].subtasks[0].handle else {
            panic!("file handle expected: {read:?}");
        };
        assert_eq!((path.as_str(), *size), (moved.join("state-0").to_str().unwrap(), 11));
        assert_eq!(fs::read(path).unwrap(), b"state bytes");
        assert_eq!(read.tasks[0], metadata.tasks[0]);
    }

    fn sample() -> CheckpointMetadata {
        CheckpointMetadata {
            job_id: JobId(0xabcdef0123456789_abcdef0123456789),
            checkpoint_id: 7,
            timestamp: 1_700_000_000_000,
            snapshot_type: SnapshotType::Checkpoint,
            tasks: vec![
                TaskState {
                    vertex_id: JobVertexId(1),
                    vertex_name: "Source: gen".to_string(),
                    operator_ids: vec![OperatorId(11)],
                    parallelism: 2,
                    max_parallelism: 128,
                    subtasks: vec![
                        SubtaskState {
                            subtask: 0,
                            key_group_range: KeyGroupRange::for_subtask(128, 2, 0),
                            handle: Some(StreamStateHandle::Inline(vec![1, 2, 3])),
                            state_size: 3,
                            union_state: false,
                            finished: false,
                            shared_state: Vec::new(),
                        },
                        SubtaskState {
                            subtask: 1,
                            key_group_range: KeyGroupRange::for_subtask(128, 2, 1),
                            handle: None,
                            state_size: 0,
                            union_state: false,
                            finished: false,
                            shared_state: Vec::new(),
                        },
                    ],
                },
                TaskState {
                    vertex_id: JobVertexId(2),
                    vertex_name: "Count".to_string(),
                    operator_ids: vec![OperatorId(21), OperatorId(22)],
                    parallelism: 1,
                    max_parallelism: 128,
                    subtasks: vec![SubtaskState {
                        subtask: 0,
                        key_group_range: KeyGroupRange::new(0, 127),
                        handle: Some(StreamStateHandle::File {
                            path: "/x/chk-7/state-0".to_string(),
                            size: 4096,
                        }),
                        state_size: 4096,
                        union_state: true,
                        finished: false,
                        shared_state: vec![SharedStateFile {
                            path: "/x/shared/v-0-a-store_0-7-000009.sst".to_string(),
                            size: 1 << 20,
                        }],
                    }],
                },
            ],
        }
    }

    #[test]
    fn metadata_round_trips_through_encode_and_decode() {
        let m = sample();
        let bytes = encode(&m).unwrap();
        assert_eq!(&bytes[..8], b"WEIRCKPT");
        assert_eq!(&bytes[8..12], &[0, 0, 0, 4]);
        assert_eq!(decode(&bytes, "f").unwrap(), m);
        assert_eq!(m.state_size(), 4099);
    }

    /// `m` encoded in an older format version whose subtasks are `subtask(s)`.
    fn legacy_bytes<S: Serialize>(
        m: &CheckpointMetadata,
        version: u32,
        subtask: impl Fn(&SubtaskState) -> S,
    ) -> Vec<u8> {
        #[derive(Serialize)]
        struct Task<S> {
            vertex_id: JobVertexId,
            vertex_name: String,
            operator_ids: Vec<OperatorId>,
            parallelism: u32,
            max_parallelism: u32,
            subtasks: Vec<S>,
        }
        #[derive(Serialize)]
        struct Metadata<S> {
            job_id: JobId,
            checkpoint_id: CheckpointId,
            timestamp: i64,
            snapshot_type: SnapshotType,
            tasks: Vec<Task<S>>,
        }
        let old = Metadata {
            job_id: m.job_id,
            checkpoint_id: m.checkpoint_id,
            timestamp: m.timestamp,
            snapshot_type: m.snapshot_type,
            tasks: m
                .tasks
                .iter()
                .map(|t| Task {
                    vertex_id: t.vertex_id,
                    vertex_name: t.vertex_name.clone(),
                    operator_ids: t.operator_ids.clone(),
                    parallelism: t.parallelism,
                    max_parallelism: t.max_parallelism,
                    subtasks: t.subtasks.iter().map(&subtask).collect(),
                })
                .collect(),
        };
        let mut bytes = b"WEIRCKPT".to_vec();
        bytes.extend_from_slice(&version.to_be_bytes());
        bytes.extend_from_slice(&body_options().serialize(&old).unwrap());
        bytes
    }

    #[derive(Serialize)]
    struct SubtaskV1 {
        subtask: u32,
        key_group_range: KeyGroupRange,
        handle: Option<StreamStateHandle>,
        state_size: u64,
    }

    fn v1(s: &SubtaskState) -> SubtaskV1 {
        SubtaskV1 {
            subtask: s.subtask,
            key_group_range: s.key_group_range,
            handle: s.handle.clone(),
            state_size: s.state_size,
        }
    }

    #[test]
    fn a_version_1_file_reads_with_no_union_state() {
        let m = sample();
        let read = decode(&legacy_bytes(&m, 1, v1), "v1").unwrap();
        assert!(read.tasks.iter().flat_map(|t| &t.subtasks).all(|s| !s.union_state));
        assert_eq!(read.tasks[0], m.tasks[0]);
    }

    #[test]
    fn a_version_2_file_reads_with_no_finished_subtask() {
        #[derive(Serialize)]
        struct SubtaskV2 {
            v1: SubtaskV1,
            union_state: bool,
        }
        let m = sample();
        let bytes = legacy_bytes(&m, 2, |s| SubtaskV2 {
            v1: v1(s),
            union_state: s.union_state,
        });
        let mut read = decode(&bytes, "v2").unwrap();
        for (r, s) in read
            .tasks
            .iter_mut()
            .flat_map(|t| &mut t.subtasks)
            .zip(m.tasks.iter().flat_map(|t| &t.subtasks))
        {
            r.shared_state.clone_from(&s.shared_state);
        }
        assert_eq!(read, m, "the sample has no finished subtask");
    }

    #[test]
    fn a_version_3_file_reads_with_no_shared_state() {
        #[derive(Serialize)]
        struct SubtaskV3 {
            v1: SubtaskV1,
            union_state: bool,
            finished: bool,
        }
        let m = sample();
        let bytes = legacy_bytes(&m, 3, |s| SubtaskV3 {
            v1: v1(s),
            union_state: s.union_state,
            finished: s.finished,
        });
        let mut expected = m.clone();
        for s in expected.tasks.iter_mut().flat_map(|t| &mut t.subtasks) {
            s.shared_state.clear();
        }
        assert_eq!(decode(&bytes, "v3").unwrap(), expected);
    }

    #[test]
    fn every_truncation_of_a_metadata_file_is_a_corrupt_metadata_error() {
        let bytes = encode(&sample()).unwrap();
        for len in 0..bytes.len() {
            match decode(&bytes[..len], "/d/_metadata") {
                Err(CheckpointError::CorruptMetadata { path, .. }) => assert_eq!(path, "/d/_metadata"),
                other => panic!("len {len}: {other:?}"),
            }
        }
    }

    #[test]
    fn bad_magic_unknown_version_and_trailing_bytes_are_rejected() {
        let mut bytes = encode(&sample()).unwrap();
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert!(decode(&bad, "p").unwrap_err().to_string().contains("bad magic"));
        let mut bad = bytes.clone();
        bad[11] = 5;
        assert!(decode(&bad, "p")
            .unwrap_err()
            .to_string()
            .contains("unsupported metadata version 5"));
        bytes.push(0);
        assert!(matches!(
            decode(&bytes, "p"),
            Err(CheckpointError::CorruptMetadata { .. })
        ));
    }

    #[test]
    fn a_huge_length_prefix_is_an_error_not_an_allocation() {
        let mut bytes = encode(&sample()).unwrap();
        // job_id (16) + checkpoint_id (8) + timestamp (8) + snapshot_type (4) → tasks length
        let at = 12 + 16 + 8 + 8 + 4;
        bytes[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            decode(&bytes, "p"),
            Err(CheckpointError::CorruptMetadata { .. })
        ));
    }

    #[test]
    fn inconsistent_subtasks_are_corrupt_metadata() {
        let mut m = sample();
        m.tasks[0].subtasks[1].subtask = 0;
        let err = decode(&encode(&m).unwrap(), "p").unwrap_err().to_string();
        assert!(err.contains("listed twice"), "{err}");
        let mut m = sample();
        m.tasks[0].subtasks[1].subtask = 5;
        assert!(decode(&encode(&m).unwrap(), "p").is_err());
        let mut m = sample();
        m.tasks[1].subtasks[0].key_group_range = KeyGroupRange::new(0, 128);
        assert!(decode(&encode(&m).unwrap(), "p").is_err());
        let mut m = sample();
        m.tasks[1].parallelism = 129;
        assert!(decode(&encode(&m).unwrap(), "p").is_err());
    }

    #[test]
    fn checkpoint_directories_follow_flinks_layout() {
        let job = JobId(0xabcdef0123456789_abcdef0123456789);
        assert_eq!(
            checkpoint_directory("/data/chk/", &job, 3),
            "/data/chk/abcdef0123456789abcdef0123456789/chk-3"
        );
        assert_eq!(
            shared_state_directory("/d", &job),
            "/d/abcdef0123456789abcdef0123456789/shared"
        );
        let sp = savepoint_directory_with("/sp", &job, 42);
        assert!(sp.starts_with("/sp/savepoint-abcdef-"), "{sp}");
        assert_eq!(sp.len(), "/sp/savepoint-abcdef-".len() + 12);
        assert_eq!(sp, savepoint_directory_with("/sp", &job, 42));
        assert_ne!(sp, savepoint_directory_with("/sp", &job, 43));
        assert_ne!(savepoint_directory("/sp", &job), savepoint_directory("/sp", &job));
    }

    #[test]
    fn storage_is_chosen_by_the_checkpoint_directory() {
        let mut config = CheckpointConfig::default();
        let job = JobId(1);
        assert_eq!(CheckpointStorage::from_config(&config), CheckpointStorage::JobManager);
        assert_eq!(CheckpointStorage::JobManager.checkpoint_location(&job, 1), None);
        assert_eq!(CheckpointStorage::JobManager.initialize_location(&job, 1), Ok(None));
        config.checkpoint_dir = Some("/c".to_string());
        let storage = CheckpointStorage::from_config(&config);
        assert_eq!(storage.checkpoint_location(&job, 2), Some(format!("/c/{job}/chk-2")));
    }

    #[test]
    fn initialize_creates_shared_taskowned_and_the_checkpoint_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = format!("file://{}", tmp.path().display());
        let job = JobId(5);
        let storage = CheckpointStorage::FileSystem { dir: dir.clone() };
        let location = storage.initialize_location(&job, 1).unwrap().unwrap();
        let job_dir = tmp.path().join(job.to_string());
        assert!(job_dir.join("shared").is_dir());
        assert!(job_dir.join("taskowned").is_dir());
        assert!(job_dir.join("chk-1").is_dir());
        assert_eq!(location, format!("{dir}/{job}/chk-1"));
    }

    #[test]
    fn write_then_read_by_directory_or_file_and_never_overwrite() {
        let tmp = tempfile::tempdir().unwrap();
        let location = tmp.path().join("chk-7").display().to_string();
        let m = sample();
        assert_eq!(write_metadata(&location, &m).unwrap(), location);
        assert_eq!(read_metadata(&location).unwrap(), m);
        assert_eq!(read_metadata(&format!("{location}/_metadata")).unwrap(), m);
        assert_eq!(read_metadata(&format!("file://{location}")).unwrap(), m);
        let err = write_metadata(&location, &m).unwrap_err();
        assert!(matches!(err, CheckpointError::MetadataExists { .. }), "{err:?}");
        let leftovers: Vec<_> = fs::read_dir(&location)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("_metadata")]);
    }

    #[test]
    fn reading_a_missing_path_or_a_directory_without_metadata_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("nope").display().to_string();
        assert_eq!(
            read_metadata(&missing).unwrap_err().to_string(),
            format!("Cannot find checkpoint or savepoint file/directory '{missing}' on file system 'file'.")
        );
        let empty = tmp.path().display().to_string();
        assert!(matches!(
            read_metadata(&empty),
            Err(CheckpointError::NoMetadataInDirectory { .. })
        ));
        let garbage = tmp.path().join("_metadata");
        fs::write(&garbage, b"WEIRCKPT\0\0\0\x01\x05").unwrap();
        assert!(matches!(
            read_metadata(&empty),
            Err(CheckpointError::CorruptMetadata { .. })
        ));
    }

    #[test]
    fn unsupported_url_schemes_are_refused_naming_the_supported_ones() {
        let err = read_metadata("hdfs://nn/chk-1").unwrap_err();
        assert_eq!(
            err,
            CheckpointError::UnsupportedScheme {
                scheme: "hdfs".to_string(),
                path: "hdfs://nn/chk-1".to_string()
            }
        );
        assert_eq!(
            err.to_string(),
            "Unsupported file system scheme 'hdfs' in 'hdfs://nn/chk-1': supported are local paths, file://, \
             s3:// (or s3a://), gs:// and az:// (or abfs://, abfss://)"
        );
        assert!(matches!(
            write_metadata("hdfs://nn/x", &sample()),
            Err(CheckpointError::UnsupportedScheme { .. })
        ));
        assert!(matches!(
            discard("ftp://b/x"),
            Err(CheckpointError::UnsupportedScheme { .. })
        ));
        assert!(check_location("s3://b/sp").is_ok() && check_location("/sp").is_ok());
        assert!(check_location("hdfs://nn/sp").is_err());
    }

    /// A fresh in-memory object store serving `s3://<bucket>`.
    fn memory_bucket(bucket: &str) -> String {
        let url = format!("s3://{bucket}");
        weir_filesystem::register_store(&url, std::sync::Arc::new(object_store::memory::InMemory::new()));
        url
    }

    #[test]
    fn on_an_object_store_metadata_is_written_once_and_read_by_prefix_or_object() {
        let bucket = memory_bucket("metadata-once");
        let location = format!("{bucket}/chk/{}/chk-7", JobId(5));
        let m = sample();
        assert_eq!(write_metadata(&location, &m).unwrap(), location);
        assert_eq!(read_metadata(&location).unwrap(), m);
        assert_eq!(read_metadata(&format!("{location}/")).unwrap(), m);
        assert_eq!(read_metadata(&format!("{location}/_metadata")).unwrap(), m);
        assert_eq!(
            write_metadata(&location, &m).unwrap_err(),
            CheckpointError::MetadataExists {
                path: format!("{location}/_metadata")
            }
        );
        discard(&location).unwrap();
        discard(&location).unwrap();
        assert_eq!(
            read_metadata(&location).unwrap_err().to_string(),
            format!("Cannot find checkpoint or savepoint file/directory '{location}' on file system 's3'.")
        );
    }

    #[test]
    fn on_an_object_store_a_prefix_without_metadata_and_a_corrupt_metadata_are_clear_errors() {
        let bucket = memory_bucket("metadata-errors");
        weir_filesystem::put(&format!("{bucket}/sp/savepoint-1/state"), vec![1]).unwrap();
        assert_eq!(
            read_metadata(&format!("{bucket}/sp/savepoint-1")),
            Err(CheckpointError::NoMetadataInDirectory {
                path: format!("{bucket}/sp/savepoint-1")
            })
        );
        weir_filesystem::put(
            &format!("{bucket}/sp/savepoint-1/_metadata"),
            b"WEIRCKPT garbage".to_vec(),
        )
        .unwrap();
        match read_metadata(&format!("{bucket}/sp/savepoint-1")) {
            Err(CheckpointError::CorruptMetadata { path, .. }) => {
                assert_eq!(path, format!("{bucket}/sp/savepoint-1/_metadata"))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_savepoint_on_an_object_store_takes_its_state_along_and_reads_from_another_prefix() {
        let bucket = memory_bucket("savepoint-move");
        let state = format!("{bucket}/chk/{}/chk-7/v-0-0", JobId(5));
        weir_filesystem::put(&state, b"state bytes".to_vec()).unwrap();
        let mut metadata = sample();
        metadata.tasks[1].subtasks[0].handle = Some(StreamStateHandle::File {
            path: state.clone(),
            size: 11,
        });
        let sp = format!("{bucket}/sp/savepoint-1");
        write_savepoint(&sp, &metadata).unwrap();
        assert_eq!(
            weir_filesystem::stat(&state).unwrap(),
            weir_filesystem::Entry::Missing,
            "the state file moved into the savepoint"
        );
        // Copied whole to another prefix (and the original deleted), it still reads.
        let moved = format!("{bucket}/archive/sp-1");
        for file in weir_filesystem::list(&sp).unwrap() {
            let name = file.rsplit('/').next().unwrap();
            weir_filesystem::move_file(&file, &format!("{moved}/{name}")).unwrap();
        }
        let read = read_metadata(&moved).unwrap();
        let Some(StreamStateHandle::File { path, size }) = &read.tasks[1].subtasks[0].handle else {
            panic!("file handle expected: {read:?}");
        };
        assert_eq!((path.as_str(), *size), (format!("{moved}/v-0-0").as_str(), 11));
        assert_eq!(weir_filesystem::get(path).unwrap(), b"state bytes");
    }

    #[test]
    fn a_savepoint_taken_to_an_object_store_takes_local_state_files_along() {
        let bucket = memory_bucket("savepoint-from-local");
        let root = tempfile::tempdir().unwrap();
        let chk = root.path().join("chk-3");
        fs::create_dir_all(&chk).unwrap();
        fs::write(chk.join("v-0-0"), b"local state").unwrap();
        let mut metadata = sample();
        metadata.tasks[1].subtasks[0].handle = Some(StreamStateHandle::File {
            path: chk.join("v-0-0").display().to_string(),
            size: 11,
        });
        let sp = format!("{bucket}/sp/savepoint-2");
        write_savepoint(&sp, &metadata).unwrap();
        assert!(!chk.exists(), "the emptied local task directory is removed");
        assert_eq!(weir_filesystem::get(&format!("{sp}/v-0-0")).unwrap(), b"local state");
        let read = read_metadata(&sp).unwrap();
        assert_eq!(
            read.tasks[1].subtasks[0].handle,
            Some(StreamStateHandle::File {
                path: format!("{sp}/v-0-0"),
                size: 11
            })
        );
    }

    #[test]
    fn discard_removes_the_directory_and_is_idempotent() {
        let tmp = tempfile::tempdir().unwrap();
        let location = tmp.path().join("chk-1").display().to_string();
        write_metadata(&location, &sample()).unwrap();
        discard(&location).unwrap();
        assert!(!std::path::Path::new(&location).exists());
        discard(&location).unwrap();
    }
}
