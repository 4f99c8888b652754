//! Incremental checkpoints of the RocksDB-backed keyed state: a checkpoint uploads
//! only the store files its base does not hold, and restoring its files (in place, or
//! copied and clipped at another parallelism) gives the state the heap backend holds
//! after the same operations.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use weir_core::checkpoint::SharedStateFile;
use weir_core::KeyGroupRange;
use weir_state::incremental::{reusable_files, IncrementalKeyedStateHandle, SharedStateTransfer};
use weir_state::{
    KeyGroupSnapshot, KeyedStateBackend, KeyedStateStoreFactory, ListStateDescriptor, SnapshotFormat, StateError,
    ValueStateDescriptor,
};
use weir_state_rocksdb::{RocksDbOptions, RocksDbStateBackend};

fn factory(dir: &Path, cache_entries: usize) -> RocksDbStateBackend {
    factory_with(dir, cache_entries, false)
}

fn factory_with(dir: &Path, cache_entries: usize, local_recovery: bool) -> RocksDbStateBackend {
    RocksDbStateBackend::new(RocksDbOptions {
        local_dir: dir.to_path_buf(),
        block_cache_bytes: 8 << 20,
        write_buffer_bytes: 4 << 20,
        cache_entries,
        local_recovery,
    })
    .unwrap()
}

/// Shared state in a local directory, as a checkpoint directory on a local file system.
#[derive(Debug)]
struct DirTransfer {
    dir: PathBuf,
}

impl SharedStateTransfer for DirTransfer {
    fn upload(&self, local: &Path, name: &str) -> Result<SharedStateFile, StateError> {
        let path = self.dir.join(name);
        assert!(!path.exists(), "{} uploaded twice", path.display());
        let size = std::fs::copy(local, &path).map_err(|e| StateError::Store(e.to_string()))?;
        Ok(SharedStateFile {
            path: path.display().to_string(),
            size,
        })
    }

    fn download(&self, file: &SharedStateFile, local: &Path) -> Result<(), StateError> {
        std::fs::copy(&file.path, local)
            .map(|_| ())
            .map_err(|e| StateError::Store(format!("downloading {}: {e}", file.path)))
    }

    fn owns(&self, file: &SharedStateFile) -> bool {
        file.path.starts_with(&self.dir.display().to_string())
    }

    fn local_recovery_key(&self) -> String {
        "job/vertex-0".to_string()
    }
}

struct Checkpoint {
    groups: Vec<(u32, KeyGroupSnapshot)>,
    handle: IncrementalKeyedStateHandle,
}

fn checkpoint(b: &mut KeyedStateBackend<u32>, id: u64, transfer: &DirTransfer) -> Checkpoint {
    let frozen = b.freeze_as(id, SnapshotFormat::Incremental).unwrap();
    let completed = frozen.complete(Some(transfer)).unwrap();
    Checkpoint {
        groups: completed.groups,
        handle: completed
            .incremental
            .expect("a backend with a store writes an incremental handle"),
    }
}

fn restore(
    rocks: &RocksDbStateBackend,
    range: KeyGroupRange,
    parts: &[&Checkpoint],
    transfer: &DirTransfer,
) -> KeyedStateBackend<u32> {
    let handles: Vec<IncrementalKeyedStateHandle> = parts.iter().map(|c| c.handle.clone()).collect();
    let store = rocks.restore("op", range, &handles, transfer).unwrap();
    let mut b = KeyedStateBackend::with_store(range, 128, store, 16);
    for part in parts {
        b.restore(&part.groups);
    }
    b.restored_from_files(reusable_files(&handles, range, transfer));
    b
}

fn value() -> ValueStateDescriptor<u64> {
    ValueStateDescriptor::new("value")
}

fn list() -> ListStateDescriptor<u32> {
    ListStateDescriptor::new("list")
}

fn read(b: &mut KeyedStateBackend<u32>, key: u32) -> (Option<u64>, Vec<u32>) {
    b.set_current_key(key).unwrap();
    let v = b.value(&value(), &0u8).unwrap().value();
    let l = b.list(&list(), &0u8).unwrap().get().to_vec();
    (v, l)
}

fn full() -> KeyGroupRange {
    KeyGroupRange::new(0, 127)
}

#[derive(Debug, Clone)]
enum Op {
    Set(u32, u64),
    Clear(u32),
    Add(u32, u32),
    /// An incremental checkpoint, confirmed complete or not.
    Checkpoint {
        confirmed: bool,
    },
    /// A restart from the last confirmed checkpoint.
    Restore,
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0u32..400;
    prop_oneof![
        4 => (key.clone(), any::<u64>()).prop_map(|(k, v)| Op::Set(k, v)),
        1 => key.clone().prop_map(Op::Clear),
        2 => (key, any::<u32>()).prop_map(|(k, v)| Op::Add(k, v)),
        1 => any::<bool>().prop_map(|confirmed| Op::Checkpoint { confirmed }),
        1 => Just(Op::Restore),
    ]
}

fn apply(b: &mut KeyedStateBackend<u32>, op: &Op) {
    match *op {
        Op::Set(k, v) => {
            b.set_current_key(k).unwrap();
            b.value(&value(), &0u8).unwrap().update(v);
        }
        Op::Clear(k) => {
            b.set_current_key(k).unwrap();
            b.value(&value(), &0u8).unwrap().clear();
        }
        Op::Add(k, v) => {
            b.set_current_key(k).unwrap();
            b.list(&list(), &0u8).unwrap().add(v);
        }
        Op::Checkpoint { .. } | Op::Restore => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random writes, incremental checkpoints (some never confirmed, whose files the
    /// next checkpoints must not refer to) and restarts from the last confirmed one:
    /// the restored state always equals the heap backend's at that checkpoint, and at
    /// the end the last checkpoint restores at parallelism 3 and, from those three, at 1.
    #[test]
    fn incremental_checkpoints_restore_what_the_heap_backend_held(
        ops in proptest::collection::vec(op(), 1..300),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let transfer = DirTransfer { dir: dir.path().join("shared") };
        std::fs::create_dir_all(&transfer.dir).unwrap();
        let rocks = factory(&dir.path().join("local"), 16);
        let mut heap: KeyedStateBackend<u32> = KeyedStateBackend::new(full(), 128);
        let mut disk = KeyedStateBackend::with_store(full(), 128, rocks.open("op").unwrap(), 16);
        let mut confirmed: Option<(Checkpoint, Vec<(u32, KeyGroupSnapshot)>)> = None;
        let mut id = 0;
        for op in &ops {
            match op {
                Op::Checkpoint { confirmed: complete } => {
                    id += 1;
                    let cp = checkpoint(&mut disk, id, &transfer);
                    if *complete {
                        disk.notify_checkpoint_complete(id);
                        confirmed = Some((cp, heap.snapshot().unwrap()));
                    } else {
                        // The JobManager deletes what this checkpoint alone uploaded.
                        for f in cp.handle.shared.iter().filter(|f| f.uploaded_in == id) {
                            std::fs::remove_file(&f.file.path).unwrap();
                        }
                    }
                }
                Op::Restore => {
                    let Some((cp, at)) = &confirmed else { continue };
                    disk = restore(&rocks, full(), &[cp], &transfer);
                    heap = KeyedStateBackend::new(full(), 128);
                    heap.restore(at);
                }
                _ => {
                    apply(&mut heap, op);
                    apply(&mut disk, op);
                }
            }
        }
        for key in 0..400 {
            prop_assert_eq!(read(&mut heap, key), read(&mut disk, key), "key {}", key);
        }
        id += 1;
        let last = checkpoint(&mut disk, id, &transfer);
        let ranges: Vec<KeyGroupRange> = (0..3).map(|i| KeyGroupRange::for_subtask(128, 3, i)).collect();
        let mut thirds = Vec::new();
        for (i, range) in ranges.iter().enumerate() {
            let mut part = restore(&rocks, *range, &[&last], &transfer);
            let keys: Vec<u32> = (0..400).filter(|k| range.contains(part.key_group_of(k))).collect();
            for key in keys {
                prop_assert_eq!(read(&mut heap, key), read(&mut part, key), "key {} in part {}", key, i);
            }
            thirds.push(checkpoint(&mut part, id + 1 + i as u64, &transfer));
        }
        let parts: Vec<&Checkpoint> = thirds.iter().collect();
        let mut whole = restore(&rocks, full(), &parts, &transfer);
        for key in 0..400 {
            prop_assert_eq!(read(&mut heap, key), read(&mut whole, key), "key {} merged back", key);
        }
    }
}

#[test]
fn a_later_checkpoint_uploads_only_the_files_written_since_the_confirmed_one() {
    let dir = tempfile::tempdir().unwrap();
    let transfer = DirTransfer {
        dir: dir.path().join("shared"),
    };
    std::fs::create_dir_all(&transfer.dir).unwrap();
    let rocks = factory(&dir.path().join("local"), 1000);
    let mut disk: KeyedStateBackend<u32> = KeyedStateBackend::with_store(full(), 128, rocks.open("op").unwrap(), 1000);
    for key in 0..50_000 {
        disk.set_current_key(key).unwrap();
        disk.value(&value(), &0u8).unwrap().update(u64::from(key));
    }
    let first = checkpoint(&mut disk, 1, &transfer);
    assert_eq!(
        first.handle.uploaded_size(),
        first.handle.shared.iter().map(|f| f.file.size).sum::<u64>()
    );
    disk.notify_checkpoint_complete(1);
    for key in 0..500 {
        disk.set_current_key(key).unwrap();
        disk.value(&value(), &0u8).unwrap().update(7);
    }
    let second = checkpoint(&mut disk, 2, &transfer);
    let total: u64 = second.handle.shared.iter().map(|f| f.file.size).sum();
    assert!(
        second.handle.uploaded_size() * 10 < total,
        "1% of the keys changed, yet checkpoint 2 uploaded {} of {} bytes",
        second.handle.uploaded_size(),
        total
    );
    assert!(second.handle.shared.iter().any(|f| f.uploaded_in == 1));
    // Unconfirmed, checkpoint 3 refers to 2's files no more than 2 did to its own.
    let third = checkpoint(&mut disk, 3, &transfer);
    assert!(third.handle.shared.iter().all(|f| f.uploaded_in != 2));
}

#[test]
fn a_handle_naming_a_path_or_a_shared_file_of_another_size_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let transfer = DirTransfer {
        dir: dir.path().join("shared"),
    };
    std::fs::create_dir_all(&transfer.dir).unwrap();
    let rocks = factory(&dir.path().join("local"), 10);
    let mut disk: KeyedStateBackend<u32> = KeyedStateBackend::with_store(full(), 128, rocks.open("op").unwrap(), 10);
    for key in 0..100 {
        disk.set_current_key(key).unwrap();
        disk.value(&value(), &0u8).unwrap().update(1);
    }
    let cp = checkpoint(&mut disk, 1, &transfer);
    let mut escaping = cp.handle.clone();
    escaping.shared[0].local_name = "../../escape.sst".into();
    let err = rocks
        .restore("op", full(), &[escaping], &transfer)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("'../../escape.sst'") && err.contains("not a plain file name"),
        "{err}"
    );
    let victim = &cp.handle.shared[0].file.path;
    let bytes = std::fs::read(victim).unwrap();
    std::fs::write(victim, &bytes[..bytes.len() / 2]).unwrap();
    let err = rocks
        .restore("op", full(), std::slice::from_ref(&cp.handle), &transfer)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains(victim.as_str()) && err.contains("the checkpoint recorded"),
        "{err}"
    );
    std::fs::remove_file(victim).unwrap();
    let err = rocks
        .restore("op", full(), std::slice::from_ref(&cp.handle), &transfer)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains(victim.as_str()), "{err}");
    // Nothing is left of the failed restores.
    let under = dir
        .path()
        .join("local")
        .join(format!("weir-rocksdb-{}", std::process::id()));
    let left: Vec<_> = std::fs::read_dir(&under)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 1, "only the live store is left: {left:?}");
}

/// The checkpoint directories of stores (`<store>-chk-<n>`) under `local`.
fn store_checkpoints(local: &Path) -> usize {
    let under = local.join(format!("weir-rocksdb-{}", std::process::id()));
    std::fs::read_dir(under)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().contains("-chk-"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn with_local_recovery_a_restore_takes_the_confirmed_checkpoints_files_from_local_disk() {
    let dir = tempfile::tempdir().unwrap();
    let transfer = DirTransfer {
        dir: dir.path().join("shared"),
    };
    std::fs::create_dir_all(&transfer.dir).unwrap();
    let local = dir.path().join("local");
    let rocks = Arc::new(factory_with(&local, 100, true));
    let mut disk: KeyedStateBackend<u32> = KeyedStateBackend::with_store(full(), 128, rocks.open("op").unwrap(), 100);
    disk.keep_local_copies(rocks.clone(), "job/vertex-0/op".into());
    let mut confirmed = None;
    for id in 1..=3u64 {
        for key in 0..3_000 {
            disk.set_current_key(key).unwrap();
            disk.value(&value(), &0u8).unwrap().update(u64::from(key) * id);
        }
        let cp = checkpoint(&mut disk, id, &transfer);
        if id < 3 {
            disk.notify_checkpoint_complete(id);
            // One local copy: the last confirmed checkpoint's.
            assert_eq!(store_checkpoints(&local), 1, "after checkpoint {id}");
            confirmed = Some(cp);
        }
    }
    // Checkpoint 3 is never confirmed and 2 is restored. With every remote file
    // damaged, only the local copy can give checkpoint 2's files.
    for f in std::fs::read_dir(&transfer.dir).unwrap().flatten() {
        std::fs::write(f.path(), b"damaged").unwrap();
    }
    let confirmed = confirmed.unwrap();
    let mut restored = restore(&rocks, full(), &[&confirmed], &transfer);
    for key in (0..3_000).step_by(7) {
        assert_eq!(read(&mut restored, key).0, Some(u64::from(key) * 2), "key {key}");
    }
    // Once the job's copies are released, the restore has to download, and the damage
    // shows, naming the file.
    rocks.release_local_copies("job/");
    let err = rocks
        .restore("op", full(), std::slice::from_ref(&confirmed.handle), &transfer)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("the checkpoint recorded") && err.contains(&transfer.dir.display().to_string()),
        "{err}"
    );
}
