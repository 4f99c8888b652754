//! Removing the directories the stores and their checkpoints live in.

use std::path::Path;

/// Removes the directory tree `dir`; one already gone is fine, another failure is
/// logged (a leftover directory is removed with its process's others later).
pub(crate) fn remove_quietly(dir: &Path) {
    if let Err(e) = std::fs::remove_dir_all(dir) {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!("could not remove {}: {e}", dir.display());
        }
    }
}
