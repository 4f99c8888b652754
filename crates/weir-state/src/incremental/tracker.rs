//! Which shared files a backend's next checkpoint may refer to instead of uploading
//! them (Flink's `uploadedSstFiles` of the RocksDB incremental snapshot strategy).
//!
//! The upload of checkpoint `n` records what it uploaded; when the JobManager
//! confirms `n` complete (`notifyCheckpointComplete`), those become the base of the
//! next checkpoints and the records of `n` and older are dropped. A checkpoint that
//! never completes is never confirmed, so its files are never referred to again
//! (the JobManager deletes them).

use crate::incremental::handle::SharedFileRef;
use crate::store::{KeyedStateStoreFactory, LocalCopy, StoreCheckpoint};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Uploaded checkpoints kept while they wait for their confirmation.
const MAX_UNCONFIRMED: usize = 8;

/// What one checkpoint's upload left: its shared files and, for local recovery, the
/// store's checkpoint on local disk.
struct Uploaded {
    files: Vec<SharedFileRef>,
    checkpoint: Option<Box<dyn StoreCheckpoint>>,
}

/// Where confirmed checkpoints are kept for local recovery, and under which name.
struct LocalRecovery {
    factory: Arc<dyn KeyedStateStoreFactory>,
    task: String,
}

#[derive(Default)]
struct Files {
    confirmed: Vec<SharedFileRef>,
    uploaded: BTreeMap<u64, Uploaded>,
    local: Option<LocalRecovery>,
}

/// The shared files of one backend's checkpoints, shared with its upload threads.
#[derive(Clone, Default)]
pub struct UploadedFiles(Arc<Mutex<Files>>);

impl std::fmt::Debug for UploadedFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files = self.files();
        f.debug_struct("UploadedFiles")
            .field("confirmed", &files.confirmed.len())
            .field("uploaded", &files.uploaded.keys().collect::<Vec<_>>())
            .field("local_recovery", &files.local.as_ref().map(|l| &l.task))
            .finish()
    }
}

impl UploadedFiles {
    fn files(&self) -> MutexGuard<'_, Files> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Confirmed checkpoints' store files are handed to `factory` as the local copy of
    /// the store named `task` (when the factory keeps local copies).
    pub fn keep_local_copies(&self, factory: Arc<dyn KeyedStateStoreFactory>, task: String) {
        if factory.local_recovery() {
            self.files().local = Some(LocalRecovery { factory, task });
        }
    }

    /// The files of the last checkpoint confirmed complete.
    pub fn base(&self) -> Vec<SharedFileRef> {
        self.files().confirmed.clone()
    }

    /// Checkpoint `checkpoint_id` consists of `files`, taken from the store's
    /// `checkpoint` (kept until it is confirmed when local copies are kept, else
    /// dropped now).
    pub fn uploaded(
        &self,
        checkpoint_id: u64,
        files: Vec<SharedFileRef>,
        checkpoint: Option<Box<dyn StoreCheckpoint>>,
    ) {
        let mut state = self.files();
        let checkpoint = checkpoint.filter(|_| state.local.is_some());
        state.uploaded.insert(checkpoint_id, Uploaded { files, checkpoint });
        // Checkpoints never confirmed (their notifications lost) are forgotten beyond
        // a few: their local store checkpoints would hold disk space forever.
        while state.uploaded.len() > MAX_UNCONFIRMED {
            state.uploaded.pop_first();
        }
    }

    /// Checkpoint `checkpoint_id` completed: its files are the base from now on (and
    /// its store checkpoint the local copy).
    pub fn confirm(&self, checkpoint_id: u64) {
        let mut state = self.files();
        if let Some(confirmed) = state.uploaded.remove(&checkpoint_id) {
            if let (Some(local), Some(checkpoint)) = (&state.local, confirmed.checkpoint) {
                local.factory.keep_local_copy(
                    &local.task,
                    LocalCopy {
                        checkpoint_id,
                        checkpoint,
                        shared: confirmed.files.clone(),
                    },
                );
            }
            state.confirmed = confirmed.files;
        }
        state.uploaded.retain(|id, _| *id > checkpoint_id);
    }

    /// The store was restored from the files of a completed checkpoint that this job
    /// owns: they are the base.
    pub fn restored(&self, files: Vec<SharedFileRef>) {
        self.files().confirmed = files;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_core::checkpoint::SharedStateFile;

    fn file(name: &str, checkpoint: u64) -> SharedFileRef {
        SharedFileRef {
            local_name: name.into(),
            file: SharedStateFile {
                path: format!("shared/{checkpoint}-{name}"),
                size: 1,
            },
            uploaded_in: checkpoint,
        }
    }

    #[test]
    fn only_confirmed_checkpoints_become_the_base_and_older_records_are_dropped() {
        let t = UploadedFiles::default();
        t.uploaded(1, vec![file("1.sst", 1)], None);
        t.uploaded(2, vec![file("1.sst", 1), file("2.sst", 2)], None);
        assert!(t.base().is_empty(), "nothing confirmed yet");
        t.confirm(2);
        assert_eq!(t.base(), vec![file("1.sst", 1), file("2.sst", 2)]);
        // A late confirmation of 1 (its record dropped with 2's) changes nothing.
        t.confirm(1);
        assert_eq!(t.base().len(), 2);
        // 3 never completes; 4 does.
        t.uploaded(3, vec![file("3.sst", 3)], None);
        t.uploaded(4, vec![file("4.sst", 4)], None);
        t.confirm(4);
        assert_eq!(t.base(), vec![file("4.sst", 4)]);
        t.confirm(3);
        assert_eq!(t.base(), vec![file("4.sst", 4)], "3 was dropped when 4 completed");
    }

    #[test]
    fn only_the_newest_unconfirmed_checkpoints_wait_for_a_confirmation() {
        let t = UploadedFiles::default();
        for id in 1..=20 {
            t.uploaded(id, vec![file(&format!("{id}.sst"), id)], None);
        }
        t.confirm(12);
        assert!(t.base().is_empty(), "12 was forgotten: only the newest 8 wait");
        t.confirm(13);
        assert_eq!(t.base(), vec![file("13.sst", 13)]);
    }
}
