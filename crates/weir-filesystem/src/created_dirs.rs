//! The directories a local write created for its file, removed again when the write
//! fails: a checkpoint that cannot be written (a full disk) leaves no empty `chk-<id>`
//! directory behind.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::FsError;

/// Directories created for one write, deepest first.
#[derive(Debug, Default)]
pub(crate) struct CreatedDirs(Vec<PathBuf>);

impl CreatedDirs {
    /// Creates the parent directory of `path` and the missing ones above it,
    /// remembering which it created.
    pub(crate) fn for_parent_of(path: &Path) -> Result<CreatedDirs, FsError> {
        let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) else {
            return Ok(CreatedDirs::default());
        };
        let missing: Vec<PathBuf> = parent
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .map(Path::to_path_buf)
            .collect();
        fs::create_dir_all(parent).map_err(|e| FsError::local(&parent.display().to_string(), &e))?;
        Ok(CreatedDirs(missing))
    }

    /// Removes the created directories that are still empty, deepest first (one a
    /// concurrent writer filled is left alone).
    pub(crate) fn remove_empty(&self) {
        for dir in &self.0 {
            if let Err(e) = fs::remove_dir(dir) {
                tracing::debug!("{} not removed after a failed write: {e}", dir.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_directories_a_write_created_are_removed_and_only_when_empty() {
        let root = tempfile::tempdir().unwrap();
        let job = root.path().join("job");
        fs::create_dir(&job).unwrap();
        let file = job.join("chk-3").join("sub").join("state");
        let created = CreatedDirs::for_parent_of(&file).unwrap();
        assert!(file.parent().unwrap().is_dir());
        created.remove_empty();
        assert!(!job.join("chk-3").exists() && job.is_dir());

        let created = CreatedDirs::for_parent_of(&job.join("chk-4").join("state")).unwrap();
        fs::write(job.join("chk-4").join("other"), b"x").unwrap();
        created.remove_empty();
        assert!(job.join("chk-4").join("other").exists(), "a filled directory stays");
    }
}
