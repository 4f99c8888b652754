//! Which files a job's sources and sinks may open in this process
//! (`security.job.allowed-paths`, Weir only).
//!
//! Flink lets a job open any file its process can; so does Weir by default (an empty
//! list). A cluster that runs jobs from others lists the directories jobs may read and
//! write; every file source, file sink and program that opens a file goes through
//! [`open`], [`create`] and [`create_dir_all`], which refuse a path outside them — after
//! resolving symbolic links and `..`, so neither leads out — with an error naming the
//! path and the key. The TaskManager installs the list when it starts ([`install`]), so
//! the check holds where the job's code runs, whatever the planner accepted.

use std::fs::File;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::RwLock;

/// The configuration key of the list.
pub const ALLOWED_PATHS_KEY: &str = "security.job.allowed-paths";

/// The allowed directories, resolved; empty: unrestricted.
static ALLOWED: RwLock<Vec<PathBuf>> = RwLock::new(Vec::new());

/// `path` made absolute with symbolic links and `..` resolved as far as it exists; the
/// missing rest is appended as written (a `..` in it is refused: it is not resolved).
fn resolve(path: &Path) -> io::Result<PathBuf> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(mut resolved) => {
                for part in rest.iter().rev() {
                    resolved.push(part);
                }
                return Ok(resolved);
            }
            Err(_) => {
                let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                    return Ok(absolute);
                };
                rest.push(name.to_os_string());
                existing = parent;
            }
        }
    }
}

/// Allows jobs in this process only the directories `paths` (separated by `;` or `,`,
/// as Flink writes lists); an empty list allows everything.
pub fn install(paths: &str) -> io::Result<()> {
    let mut allowed = Vec::new();
    for p in paths.split([';', ',']).map(str::trim).filter(|p| !p.is_empty()) {
        allowed.push(resolve(Path::new(p))?);
    }
    *ALLOWED.write().unwrap_or_else(|e| e.into_inner()) = allowed;
    Ok(())
}

/// Refuses `path` unless it lies in an allowed directory.
pub fn check(path: &Path) -> io::Result<()> {
    let allowed = ALLOWED.read().unwrap_or_else(|e| e.into_inner());
    if allowed.is_empty() {
        return Ok(());
    }
    let has_parent_dir = path.components().any(|c| matches!(c, Component::ParentDir));
    let resolved = resolve(path)?;
    let lexically_clean = !resolved.components().any(|c| matches!(c, Component::ParentDir));
    if lexically_clean && allowed.iter().any(|dir| resolved.starts_with(dir)) {
        return Ok(());
    }
    let listed: Vec<String> = allowed.iter().map(|d| d.display().to_string()).collect();
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "jobs may not open {}{}: it is outside {ALLOWED_PATHS_KEY} ({})",
            path.display(),
            if has_parent_dir {
                format!(" (resolved {})", resolved.display())
            } else {
                String::new()
            },
            listed.join(";")
        ),
    ))
}

/// Opens `path` for reading, if allowed.
pub fn open(path: impl AsRef<Path>) -> io::Result<File> {
    check(path.as_ref())?;
    File::open(path)
}

/// Creates (truncates) `path` for writing, if allowed.
pub fn create(path: impl AsRef<Path>) -> io::Result<File> {
    check(path.as_ref())?;
    File::create(path)
}

/// Creates the directory `path` and its parents, if allowed.
pub fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    check(path.as_ref())?;
    std::fs::create_dir_all(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_through_links_and_missing_parts() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().canonicalize().unwrap();
        let dir = real.join("in");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink("/etc", dir.join("out")).unwrap();
        assert_eq!(resolve(&dir.join("a/b")).unwrap(), dir.join("a/b"));
        assert_eq!(resolve(&dir.join("out/passwd")).unwrap(), PathBuf::from("/etc/passwd"));
        assert_eq!(resolve(&dir.join("../in/x")).unwrap(), dir.join("x"));
    }
}
