//! The storage operations on local paths, with `std::fs`.
//!
//! Invariants (unchanged from before object stores existed): a file that exists is
//! complete (written to a hidden temporary name in the same directory, then renamed
//! into place); [`put_new`] never replaces an existing file (the finished temporary
//! file is hard-linked to the target, which fails if the target exists); no temporary
//! file is left behind by an operation that returned.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::created_dirs::CreatedDirs;
use crate::entry::Entry;
use crate::error::FsError;

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// `.<name>.inprogress.<16 random hex>` beside `target`.
fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let nonce = weir_core::ids::JobId::random().0 as u64;
    target.with_file_name(format!(".{name}.inprogress.{nonce:016x}"))
}

fn create_parent(path: &Path) -> Result<(), FsError> {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => {
            fs::create_dir_all(parent).map_err(|e| FsError::local(&display(parent), &e))
        }
        _ => Ok(()),
    }
}

fn write_new_file(path: &Path, bytes: &[u8], sync: bool) -> Result<(), FsError> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| FsError::local(&display(path), &e))?;
    file.write_all(bytes).map_err(|e| FsError::local(&display(path), &e))?;
    if sync {
        file.sync_all().map_err(|e| FsError::local(&display(path), &e))?;
    }
    Ok(())
}

/// Removes a temporary file after a failed or finished publication; a failure to do so
/// only leaves a hidden file behind, which is logged.
fn remove_temp(temp: &Path) {
    if let Err(e) = fs::remove_file(temp) {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!("cannot remove temporary file {}: {e}", temp.display());
        }
    }
}

/// Writes `bytes` to `path` (creating its directory): temporary file, then rename, so
/// the file is complete whenever it exists. Replaces an existing file.
pub(crate) fn put(path: &Path, bytes: &[u8]) -> Result<(), FsError> {
    let created = CreatedDirs::for_parent_of(path)?;
    let temp = temp_path(path);
    let result = write_new_file(&temp, bytes, false)
        .and_then(|()| fs::rename(&temp, path).map_err(|e| FsError::local(&display(path), &e)));
    if result.is_err() {
        remove_temp(&temp);
        created.remove_empty();
    }
    result
}

/// Writes `bytes` to `path` (creating its directory) unless it exists
/// ([`FsError::AlreadyExists`]); atomic and durable (synced before it appears).
pub(crate) fn put_new(path: &Path, bytes: &[u8]) -> Result<(), FsError> {
    let created = CreatedDirs::for_parent_of(path)?;
    if path.exists() {
        return Err(FsError::AlreadyExists {
            location: display(path),
        });
    }
    let temp = temp_path(path);
    let result = write_new_file(&temp, bytes, true).and_then(|()| publish(&temp, path));
    remove_temp(&temp);
    if result.is_err() {
        created.remove_empty();
    }
    result
}

/// Moves the finished temp file to `target` without ever replacing an existing file.
fn publish(temp: &Path, target: &Path) -> Result<(), FsError> {
    match fs::hard_link(temp, target) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(FsError::AlreadyExists {
            location: display(target),
        }),
        // A file system without hard links: rename, after checking the target is free.
        Err(_) if !target.exists() => fs::rename(temp, target).map_err(|e| FsError::local(&display(target), &e)),
        Err(_) => Err(FsError::AlreadyExists {
            location: display(target),
        }),
    }
}

/// The bytes of the file at `path`.
pub(crate) fn get(path: &Path) -> Result<Vec<u8>, FsError> {
    fs::read(path).map_err(|e| FsError::local(&display(path), &e))
}

/// What is at `path`.
pub(crate) fn stat(path: &Path) -> Entry {
    if path.is_dir() {
        Entry::Directory
    } else if path.is_file() {
        Entry::File
    } else {
        Entry::Missing
    }
}

/// Deletes the file or the directory tree at `path`; a missing one is fine. A tree
/// whose entries someone else deletes meanwhile is still removed (the walk is
/// retried when it stopped at an entry that vanished).
pub(crate) fn delete_all(path: &Path) -> Result<(), FsError> {
    let mut attempts = 0;
    loop {
        let result = if path.is_dir() {
            fs::remove_dir_all(path)
        } else {
            fs::remove_file(path)
        };
        attempts += 1;
        match result {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(FsError::local(&display(path), &e)),
            _ if attempts < 3 && path.symlink_metadata().is_ok() => continue,
            _ => return Ok(()),
        }
    }
}

/// Every file below `path` (recursively), or `path` itself when it is a file; sorted.
pub(crate) fn list(path: &Path) -> Result<Vec<PathBuf>, FsError> {
    let mut files = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        if dir.is_file() {
            files.push(dir);
            continue;
        }
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(FsError::local(&display(&dir), &e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| FsError::local(&display(&dir), &e))?;
            let file_type = entry
                .file_type()
                .map_err(|e| FsError::local(&display(&entry.path()), &e))?;
            if file_type.is_dir() {
                pending.push(entry.path());
            } else {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Moves the file `from` to `to` (creating `to`'s directory): a rename, or a copy and
/// a delete across file systems.
pub(crate) fn move_file(from: &Path, to: &Path) -> Result<(), FsError> {
    create_parent(to)?;
    if fs::rename(from, to).is_ok() {
        return Ok(());
    }
    fs::copy(from, to).map_err(|e| FsError::local(&display(from), &e))?;
    fs::remove_file(from).map_err(|e| FsError::local(&display(from), &e))
}

/// Creates the directory `path` and its parents.
pub(crate) fn create_dir_all(path: &Path) -> Result<(), FsError> {
    fs::create_dir_all(path).map_err(|e| FsError::local(&display(path), &e))
}

/// Removes the directory `path` if it is empty; a directory still holding files (not
/// ours) is left alone, and so is a missing one.
pub(crate) fn remove_empty_dir(path: &Path) {
    if fs::remove_dir(path).is_err() {
        tracing::debug!("{} not removed: not empty or already gone", path.display());
    }
}
