//! The record of one store's incremental checkpoint in a task snapshot.

use serde::{Deserialize, Serialize};
use weir_core::checkpoint::SharedStateFile;
use weir_core::KeyGroupRange;

/// A shared file of a store checkpoint: its name in the store and where it was
/// uploaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedFileRef {
    /// Its name in the store's directory (e.g. `000012.sst`).
    pub local_name: String,
    /// The uploaded copy.
    pub file: SharedStateFile,
    /// The checkpoint that uploaded it.
    pub uploaded_in: u64,
}

/// A file of a store checkpoint that is not shared (RocksDB's `MANIFEST`, `CURRENT`,
/// `OPTIONS`), carried in the snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrivateFile {
    /// Its name in the store's directory.
    pub name: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// One store's files at one checkpoint (Flink's `IncrementalRemoteKeyedStateHandle`):
/// restoring them gives the store as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncrementalKeyedStateHandle {
    /// The key groups the store held.
    pub key_group_range: KeyGroupRange,
    /// The checkpoint.
    pub checkpoint_id: u64,
    /// Its shared files.
    pub shared: Vec<SharedFileRef>,
    /// Its other files.
    pub private: Vec<PrivateFile>,
}

impl IncrementalKeyedStateHandle {
    /// Bytes of state it refers to: shared and private files.
    pub fn state_size(&self) -> u64 {
        let shared: u64 = self.shared.iter().map(|f| f.file.size).sum();
        let private: u64 = self.private.iter().map(|f| f.bytes.len() as u64).sum();
        shared + private
    }

    /// Bytes of shared files uploaded by its own checkpoint.
    pub fn uploaded_size(&self) -> u64 {
        self.shared
            .iter()
            .filter(|f| f.uploaded_in == self.checkpoint_id)
            .map(|f| f.file.size)
            .sum()
    }
}
