//! Moving store checkpoints to and from the job's checkpoint storage through a
//! [`SharedStateTransfer`].
//!
//! [`upload_checkpoint`] uploads the shared files a checkpoint does not find in its
//! base (in parallel) and reads the private ones into the handle;
//! [`download_handle`] puts a handle's files back into a local directory (in
//! parallel), checking every name and size first, since a handle comes from a file
//! anyone with access to the checkpoint directory could have altered.

use crate::error::StateError;
use crate::incremental::handle::{IncrementalKeyedStateHandle, PrivateFile, SharedFileRef};
use crate::incremental::transfer::SharedStateTransfer;
use crate::store::{StoreCheckpoint, StoreFile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use weir_core::KeyGroupRange;

/// Files moved at once by one upload or download.
const PARALLEL_TRANSFERS: usize = 4;

/// Runs `work` on every item, on up to [`PARALLEL_TRANSFERS`] threads; the first
/// error wins.
fn parallel<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> Result<R, StateError> + Sync,
) -> Result<Vec<R>, StateError> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let failure: Mutex<Option<StateError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..PARALLEL_TRANSFERS.min(items.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if failure.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
                    break;
                }
                match work(item) {
                    Ok(r) => results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r),
                    Err(e) => {
                        failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                        break;
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.ok_or_else(|| StateError::Store("a file transfer did not run".into())))
        .collect()
}

/// Uploads checkpoint `checkpoint_id` of a store holding the key groups `range`:
/// shared files found in `base` (same name and size) are referred to, the others
/// uploaded as `<store>-<checkpoint>-<name>`; private files are read into the handle.
pub fn upload_checkpoint(
    checkpoint: &dyn StoreCheckpoint,
    checkpoint_id: u64,
    range: KeyGroupRange,
    base: &[SharedFileRef],
    transfer: &dyn SharedStateTransfer,
) -> Result<IncrementalKeyedStateHandle, StateError> {
    let files = checkpoint.files()?;
    let mut shared = Vec::new();
    let mut to_upload: Vec<&StoreFile> = Vec::new();
    let mut private = Vec::new();
    for file in &files {
        if !file.shareable {
            let bytes = std::fs::read(&file.path)
                .map_err(|e| StateError::Store(format!("reading {}: {e}", file.path.display())))?;
            private.push(PrivateFile {
                name: file.name.clone(),
                bytes,
            });
        } else if let Some(known) = base
            .iter()
            .find(|b| b.local_name == file.name && b.file.size == file.size)
        {
            shared.push(known.clone());
        } else {
            to_upload.push(file);
        }
    }
    let uploaded = parallel(&to_upload, |file| {
        let name = format!("{}-{checkpoint_id}-{}", checkpoint.store_name(), file.name);
        Ok(SharedFileRef {
            local_name: file.name.clone(),
            file: transfer.upload(&file.path, &name)?,
            uploaded_in: checkpoint_id,
        })
    })?;
    shared.extend(uploaded);
    Ok(IncrementalKeyedStateHandle {
        key_group_range: range,
        checkpoint_id,
        shared,
        private,
    })
}

/// A file name of a handle, refused unless it is a plain name within one directory.
fn plain_name(name: &str) -> Result<&str, StateError> {
    let plain =
        !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0']) && name.len() <= 255;
    if plain {
        Ok(name)
    } else {
        Err(StateError::CorruptSnapshot(format!(
            "an incremental state handle names the file '{}', which is not a plain file name",
            name.escape_debug()
        )))
    }
}

/// Puts the files of `handle` into `dir` (created if missing): shared files taken
/// from `local` (remote path to a local file of the same size: a local copy, hard-linked)
/// or else downloaded, private ones written; a file of another size than recorded is an
/// error naming it. Returns how many shared files came from `local`.
pub fn download_handle(
    handle: &IncrementalKeyedStateHandle,
    dir: &Path,
    transfer: &dyn SharedStateTransfer,
    local: &BTreeMap<String, PathBuf>,
) -> Result<usize, StateError> {
    let io = |what: &str, path: &Path, e: std::io::Error| StateError::Store(format!("{what} {}: {e}", path.display()));
    std::fs::create_dir_all(dir).map_err(|e| io("creating", dir, e))?;
    for file in &handle.shared {
        plain_name(&file.local_name)?;
    }
    for file in &handle.private {
        let path = dir.join(plain_name(&file.name)?);
        std::fs::write(&path, &file.bytes).map_err(|e| io("writing", &path, e))?;
    }
    let from_local = parallel(&handle.shared, |file| {
        let path = dir.join(&file.local_name);
        let copy = local
            .get(&file.file.path)
            .filter(|l| std::fs::metadata(l).is_ok_and(|m| m.len() == file.file.size));
        let from_local = match copy {
            Some(l) => std::fs::hard_link(l, &path)
                .or_else(|_| std::fs::copy(l, &path).map(|_| ()))
                .is_ok(),
            None => false,
        };
        if !from_local {
            transfer.download(&file.file, &path)?;
        }
        let size = std::fs::metadata(&path).map_err(|e| io("reading", &path, e))?.len();
        if size != file.file.size {
            return Err(StateError::CorruptSnapshot(format!(
                "shared state file {} has {size} bytes, the checkpoint recorded {}",
                file.file.path, file.file.size
            )));
        }
        Ok(from_local)
    })?;
    Ok(from_local.into_iter().filter(|l| *l).count())
}

/// The handle whose files a store for the key groups `range` is restored from as
/// they are (Flink restores the same way when one old state handle covers the new
/// range): the only one, when it covers `range`. Otherwise the entries of `range` are
/// copied out of every handle into a new store.
pub fn restores_in_place(
    handles: &[IncrementalKeyedStateHandle],
    range: KeyGroupRange,
) -> Option<&IncrementalKeyedStateHandle> {
    match handles {
        [only] if only.key_group_range.covers(&range) => Some(only),
        _ => None,
    }
}

/// The shared files a store restored from `handles` for `range` may refer to in its
/// next incremental checkpoints instead of uploading them: those of the handle it is
/// restored from in place, when this job owns them all (a restore from another job's
/// checkpoint uploads everything again, as Flink's NO_CLAIM mode).
pub fn reusable_files(
    handles: &[IncrementalKeyedStateHandle],
    range: KeyGroupRange,
    transfer: &dyn SharedStateTransfer,
) -> Vec<SharedFileRef> {
    match restores_in_place(handles, range) {
        Some(h) if h.shared.iter().all(|f| transfer.owns(&f.file)) => h.shared.clone(),
        _ => Vec::new(),
    }
}
