//! Where a state handle a task acknowledges may point. The JobManager moves the files
//! of a savepoint and deletes the files of late acknowledgements and discarded
//! checkpoints, so a handle naming any other file would let a peer move or delete it.
//! Every file handle of checkpoint `N` of a job must lie below one of its *state
//! roots*: `<dir>/<job-id>/chk-N`, `<dir>/<job-id>/shared`, `<dir>/<job-id>/taskowned`
//! (file-system storage) or the checkpoint's own target (a savepoint's directory).
//!
//! [`check_handle_path`] decides that from the strings alone (pure): a local path with
//! a `..` segment is refused outright, object store URLs must be in the same bucket
//! under the root's key prefix. [`check_resolved_path`] adds what only the file system
//! can tell: that no symbolic link on the way leads out of the root (checked where the
//! paths exist).

use std::path::{Component, Path, PathBuf};
use thiserror::Error;
use weir_core::ids::JobId;
use weir_core::CheckpointId;
use weir_filesystem::Location;

use crate::metadata::{checkpoint_directory, shared_state_directory, task_owned_state_directory, CheckpointStorage};

/// Why a state handle's path is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HandlePathError {
    /// The path is not below any state root of the checkpoint.
    #[error("state handle '{path}' lies outside the checkpoint's storage locations ({roots})")]
    Outside {
        /// The path (shortened).
        path: String,
        /// The roots it may lie below.
        roots: String,
    },
    /// The path is below a root only before a symbolic link is followed.
    #[error("state handle '{path}' leads out of the checkpoint's storage location {root} through a symbolic link")]
    SymlinkEscape {
        /// The path (shortened).
        path: String,
        /// The root it claims to be under.
        root: String,
    },
}

/// The state roots of checkpoint `id` of `job`: its `chk-<id>`, `shared` and
/// `taskowned` directories with file-system storage, and `target` (where the
/// checkpoint or savepoint is written) when given.
pub fn state_roots(storage: &CheckpointStorage, job: &JobId, id: CheckpointId, target: Option<&str>) -> Vec<String> {
    let mut roots = Vec::new();
    if let CheckpointStorage::FileSystem { dir } = storage {
        roots.push(checkpoint_directory(dir, job, id));
        roots.push(shared_state_directory(dir, job));
        roots.push(task_owned_state_directory(dir, job));
    }
    if let Some(t) = target {
        if !roots.iter().any(|r| r == t) {
            roots.push(t.to_string());
        }
    }
    roots
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// A local path with `.` segments dropped; `None` when it has a `..` segment.
fn normalized(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => return None,
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    Some(out)
}

/// Whether `path` lies strictly below `root` (string forms, no I/O).
fn lies_below(path: &str, root: &str) -> bool {
    match (Location::parse(path), Location::parse(root)) {
        (Ok(Location::Local(p)), Ok(Location::Local(r))) => match (normalized(&p), normalized(&r)) {
            (Some(p), Some(r)) => p != r && p.starts_with(&r),
            _ => false,
        },
        (Ok(Location::Object(p)), Ok(Location::Object(r))) => {
            let pk: &str = p.key().as_ref();
            let rk: &str = r.key().as_ref();
            p.store_url() == r.store_url()
                && ((rk.is_empty() && !pk.is_empty()) || pk.strip_prefix(rk).is_some_and(|rest| rest.starts_with('/')))
        }
        _ => false,
    }
}

/// Refuses a file handle `path` that is not strictly below one of `roots` (pure).
pub fn check_handle_path(path: &str, roots: &[String]) -> Result<(), HandlePathError> {
    if roots.iter().any(|r| lies_below(path, r)) {
        return Ok(());
    }
    Err(HandlePathError::Outside {
        path: shorten(path),
        roots: if roots.is_empty() {
            "none: the job keeps checkpoints in the JobManager's memory".into()
        } else {
            roots.join(", ")
        },
    })
}

/// The canonical form of the deepest existing ancestor of `path` (itself included),
/// with the rest appended; `None` when nothing of it exists.
fn resolve_existing(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut cur = path.to_path_buf();
    loop {
        if let Ok(c) = std::fs::canonicalize(&cur) {
            return Some(rest.iter().rev().fold(c, |acc: PathBuf, n| acc.join(n)));
        }
        rest.push(cur.file_name()?.to_os_string());
        cur = cur.parent()?.to_path_buf();
    }
}

/// [`check_handle_path`], then, for a local path, the same check with symbolic links
/// resolved as far as the path and its root exist: the state file's directory must
/// really be inside the root it names (the root's own name is not followed, so a link
/// put in place of `chk-N` is caught). Reads the file system.
pub fn check_resolved_path(path: &str, roots: &[String]) -> Result<(), HandlePathError> {
    check_handle_path(path, roots)?;
    let Ok(Location::Local(p)) = Location::parse(path) else {
        return Ok(());
    };
    let Some(parent) = p.parent() else { return Ok(()) };
    for root in roots.iter().filter(|r| lies_below(path, r)) {
        let Ok(Location::Local(r)) = Location::parse(root) else {
            continue;
        };
        // The root itself is taken as named (a link in its place is what is checked).
        let resolved_root = match (r.parent(), r.file_name()) {
            (Some(up), Some(name)) => resolve_existing(up).map(|u| u.join(name)),
            _ => resolve_existing(&r),
        };
        match (resolve_existing(parent), resolved_root) {
            (Some(dir), Some(r)) if dir.starts_with(&r) => return Ok(()),
            (Some(_), Some(_)) => {}
            // Nothing to resolve: the lexical check stands.
            _ => return Ok(()),
        }
    }
    Err(HandlePathError::SymlinkEscape {
        path: shorten(path),
        root: roots.iter().find(|r| lies_below(path, r)).cloned().unwrap_or_default(),
    })
}

#[cfg(test)]
#[path = "handle_paths_tests.rs"]
mod tests;
