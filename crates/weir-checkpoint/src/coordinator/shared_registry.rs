//! The registry of shared state (Flink's `SharedStateRegistry`): which completed
//! checkpoints refer to each shared file of incremental checkpoints, so that a file is
//! deleted exactly when the last retained checkpoint referring to it is discarded.
//!
//! A plain state machine: it takes checkpoint events and returns the files to delete.
//! - [`register`](SharedStateRegistry::register): a checkpoint completed, referring to
//!   its subtasks' shared files.
//! - [`unregister`](SharedStateRegistry::unregister): a completed checkpoint was
//!   discarded; files no other registered checkpoint refers to are deleted.
//! - [`unreferenced`](SharedStateRegistry::unreferenced): the files of a checkpoint
//!   that did not complete (aborted, or a late acknowledgement) that no completed
//!   checkpoint refers to: uploaded for it alone, deleted.
//!
//! Invariants: only files under the job's own shared directory are ever returned for
//! deletion (files of another job's checkpoint a job was restored from are never
//! touched); a file is returned at most once while it is registered.

use std::collections::{BTreeMap, BTreeSet};
use weir_core::checkpoint::SharedStateFile;
use weir_core::CheckpointId;

/// Shared files and the completed checkpoints referring to them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SharedStateRegistry {
    /// `<dir>/<job-id>/shared/`: files below it may be deleted; none: nothing may.
    owned_prefix: Option<String>,
    /// Per file, the checkpoints referring to it.
    references: BTreeMap<String, BTreeSet<CheckpointId>>,
    /// Per checkpoint, its files.
    files: BTreeMap<CheckpointId, BTreeSet<String>>,
}

impl SharedStateRegistry {
    /// A registry deleting only files under `owned_dir` (the job's shared directory).
    pub fn new(owned_dir: Option<&str>) -> Self {
        Self {
            owned_prefix: owned_dir.map(|d| format!("{}/", d.trim_end_matches('/'))),
            ..Self::default()
        }
    }

    fn owned(&self, path: &str) -> bool {
        self.owned_prefix.as_deref().is_some_and(|p| path.starts_with(p))
    }

    /// Completed checkpoint `id` refers to `files`.
    pub fn register<'a>(&mut self, id: CheckpointId, files: impl IntoIterator<Item = &'a SharedStateFile>) {
        for file in files {
            self.references.entry(file.path.clone()).or_default().insert(id);
            self.files.entry(id).or_default().insert(file.path.clone());
        }
    }

    /// Checkpoint `id` was discarded: the owned files no registered checkpoint refers
    /// to any more, to delete.
    pub fn unregister(&mut self, id: CheckpointId) -> Vec<String> {
        let mut released = Vec::new();
        for path in self.files.remove(&id).unwrap_or_default() {
            let Some(checkpoints) = self.references.get_mut(&path) else {
                continue;
            };
            checkpoints.remove(&id);
            if checkpoints.is_empty() {
                self.references.remove(&path);
                if self.owned(&path) {
                    released.push(path);
                }
            }
        }
        released
    }

    /// Of `files` (of a checkpoint that did not complete), the owned ones no registered
    /// checkpoint refers to, to delete.
    pub fn unreferenced<'a>(&self, files: impl IntoIterator<Item = &'a SharedStateFile>) -> Vec<String> {
        let mut out: Vec<String> = files
            .into_iter()
            .filter(|f| self.owned(&f.path) && !self.references.contains_key(&f.path))
            .map(|f| f.path.clone())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// True when no checkpoint refers to any file.
    pub fn is_empty(&self) -> bool {
        self.references.is_empty()
    }

    /// True when a registered checkpoint refers to a file this registry may delete.
    pub fn holds_owned(&self) -> bool {
        self.references.keys().any(|p| self.owned(p))
    }

    /// The files some registered checkpoint refers to.
    pub fn registered_files(&self) -> impl Iterator<Item = &str> {
        self.references.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIR: &str = "/cp/job/shared";

    fn file(name: &str) -> SharedStateFile {
        SharedStateFile {
            path: format!("{DIR}/{name}"),
            size: 1,
        }
    }

    #[test]
    fn a_file_is_released_when_the_last_checkpoint_referring_to_it_is_discarded() {
        let mut r = SharedStateRegistry::new(Some(DIR));
        r.register(1, &[file("a"), file("b")]);
        r.register(2, &[file("b"), file("c")]);
        assert_eq!(r.unregister(1), vec![format!("{DIR}/a")]);
        r.register(3, &[file("c"), file("d")]);
        assert_eq!(r.unregister(2), vec![format!("{DIR}/b")]);
        assert_eq!(
            r.unregister(2),
            Vec::<String>::new(),
            "a second discard releases nothing"
        );
        assert_eq!(r.unregister(3), vec![format!("{DIR}/c"), format!("{DIR}/d")]);
        assert!(r.is_empty());
    }

    #[test]
    fn files_of_an_aborted_checkpoint_are_released_unless_a_completed_one_refers_to_them() {
        let mut r = SharedStateRegistry::new(Some(DIR));
        r.register(1, &[file("a")]);
        assert_eq!(
            r.unreferenced(&[file("a"), file("new"), file("new")]),
            vec![format!("{DIR}/new")]
        );
    }

    #[test]
    fn files_outside_the_jobs_shared_directory_are_never_released() {
        let foreign = SharedStateFile {
            path: "/cp/other-job/shared/x".into(),
            size: 1,
        };
        let sibling = SharedStateFile {
            path: format!("{DIR}-evil/x"),
            size: 1,
        };
        let mut r = SharedStateRegistry::new(Some(DIR));
        r.register(1, [&foreign, &sibling]);
        assert!(r.unregister(1).is_empty());
        assert!(r.unreferenced([&foreign, &sibling]).is_empty());
        let mut none = SharedStateRegistry::new(None);
        none.register(1, &[file("a")]);
        assert!(none.unregister(1).is_empty());
    }

    /// Over random sequences of completions, retention and aborts, the files released
    /// are exactly those uploaded and no longer referred to by a retained checkpoint:
    /// none is released twice, none while referred to, none left over at the end.
    #[test]
    fn random_histories_release_every_file_exactly_once_and_never_while_referenced() {
        let mut seed = 0x5eed_u64;
        let mut next = move |n: u64| {
            seed = weir_core::ids::splitmix64(seed);
            seed % n
        };
        for _ in 0..200 {
            let mut r = SharedStateRegistry::new(Some(DIR));
            let retained_max = 1 + next(3) as usize;
            let mut retained: Vec<(CheckpointId, Vec<SharedStateFile>)> = Vec::new();
            let mut live: Vec<SharedStateFile> = Vec::new();
            let mut uploaded = BTreeSet::new();
            let mut released = BTreeSet::new();
            for id in 1..=40u64 {
                // The store compacts some files away and writes new ones.
                live.retain(|_| next(4) != 0);
                for n in 0..next(3) {
                    let f = file(&format!("{id}-{n}"));
                    uploaded.insert(f.path.clone());
                    live.push(f);
                }
                if next(5) == 0 {
                    for path in r.unreferenced(&live) {
                        assert!(released.insert(path.clone()), "{path} released twice");
                    }
                    // The aborted checkpoint's new files are gone; later ones re-upload.
                    live.retain(|f| !released.contains(&f.path));
                    continue;
                }
                r.register(id, &live);
                retained.push((id, live.clone()));
                while retained.len() > retained_max {
                    let (old, _) = retained.remove(0);
                    for path in r.unregister(old) {
                        assert!(
                            !retained.iter().any(|(_, files)| files.iter().any(|f| f.path == path)),
                            "{path} released while a retained checkpoint refers to it"
                        );
                        assert!(released.insert(path.clone()), "{path} released twice");
                    }
                }
            }
            for (id, _) in std::mem::take(&mut retained) {
                for path in r.unregister(id) {
                    assert!(released.insert(path.clone()), "{path} released twice");
                }
            }
            assert_eq!(released, uploaded, "every uploaded file is released once");
            assert!(r.is_empty());
        }
    }
}
