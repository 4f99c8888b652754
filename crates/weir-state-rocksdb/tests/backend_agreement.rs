//! The keyed state backend with a RocksDB store agrees with the heap backend: the same
//! operations read the same values, however often the small cache spills, and their
//! snapshots restore to the same state on either backend.

use proptest::prelude::*;
use weir_core::KeyGroupRange;
use weir_state::{
    KeyedStateBackend, KeyedStateStoreFactory, ListStateDescriptor, MapStateDescriptor, ReducingStateDescriptor,
    ValueStateDescriptor,
};
use weir_state_rocksdb::{RocksDbOptions, RocksDbStateBackend};

fn factory(dir: &std::path::Path, cache_entries: usize) -> RocksDbStateBackend {
    RocksDbStateBackend::new(RocksDbOptions {
        local_dir: dir.to_path_buf(),
        block_cache_bytes: 8 << 20,
        write_buffer_bytes: 4 << 20,
        cache_entries,
        local_recovery: false,
    })
    .unwrap()
}

#[derive(Debug, Clone)]
enum Op {
    SetValue(u16, u8, u64),
    ClearValue(u16, u8),
    AddToList(u16, u32),
    ClearList(u16),
    PutInMap(u16, u8, i32),
    RemoveFromMap(u16, u8),
    Reduce(u16, u64),
    Read(u16, u8),
    /// A checkpoint's snapshot: writes the cache to the store and keeps it.
    Snapshot,
    SnapshotAndRestore,
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0u16..300;
    prop_oneof![
        (key.clone(), 0u8..3, any::<u64>()).prop_map(|(k, n, v)| Op::SetValue(k, n, v)),
        (key.clone(), 0u8..3).prop_map(|(k, n)| Op::ClearValue(k, n)),
        (key.clone(), any::<u32>()).prop_map(|(k, v)| Op::AddToList(k, v)),
        key.clone().prop_map(Op::ClearList),
        (key.clone(), 0u8..5, any::<i32>()).prop_map(|(k, u, v)| Op::PutInMap(k, u, v)),
        (key.clone(), 0u8..5).prop_map(|(k, u)| Op::RemoveFromMap(k, u)),
        (key.clone(), 0u64..1000).prop_map(|(k, v)| Op::Reduce(k, v)),
        (key, 0u8..3).prop_map(|(k, n)| Op::Read(k, n)),
        Just(Op::Snapshot),
        Just(Op::SnapshotAndRestore),
    ]
}

struct States {
    value: ValueStateDescriptor<u64>,
    list: ListStateDescriptor<u32>,
    map: MapStateDescriptor<u8, i32>,
    sum: ReducingStateDescriptor<u64>,
}

fn states() -> States {
    States {
        value: ValueStateDescriptor::new("value"),
        list: ListStateDescriptor::new("list"),
        map: MapStateDescriptor::new("map"),
        sum: ReducingStateDescriptor::new("sum", |a: &u64, b: &u64| a.wrapping_add(*b)),
    }
}

/// Everything the backend holds for `key`, read through the state API.
type Observed = (Vec<Option<u64>>, Vec<u32>, Vec<(u8, i32)>, Option<u64>);

fn observe(b: &mut KeyedStateBackend<u16>, s: &States, key: u16) -> Observed {
    b.set_current_key(key).unwrap();
    let values = (0u8..3).map(|n| b.value(&s.value, &n).unwrap().value()).collect();
    let list = b.list(&s.list, &0u8).unwrap().get().to_vec();
    let mut map = b.map(&s.map, &0u8).unwrap().entries();
    map.sort();
    let sum = b.reducing(&s.sum, &0u8).unwrap().get();
    (values, list, map, sum)
}

fn apply(b: &mut KeyedStateBackend<u16>, s: &States, op: &Op) -> Option<Option<u64>> {
    match *op {
        Op::SetValue(k, n, v) => {
            b.set_current_key(k).unwrap();
            b.value(&s.value, &n).unwrap().update(v);
        }
        Op::ClearValue(k, n) => {
            b.set_current_key(k).unwrap();
            b.value(&s.value, &n).unwrap().clear();
        }
        Op::AddToList(k, v) => {
            b.set_current_key(k).unwrap();
            b.list(&s.list, &0u8).unwrap().add(v);
        }
        Op::ClearList(k) => {
            b.set_current_key(k).unwrap();
            b.list(&s.list, &0u8).unwrap().clear();
        }
        Op::PutInMap(k, u, v) => {
            b.set_current_key(k).unwrap();
            b.map(&s.map, &0u8).unwrap().put(u, v);
        }
        Op::RemoveFromMap(k, u) => {
            b.set_current_key(k).unwrap();
            b.map(&s.map, &0u8).unwrap().remove(&u);
        }
        Op::Reduce(k, v) => {
            b.set_current_key(k).unwrap();
            b.reducing(&s.sum, &0u8).unwrap().add(v);
        }
        Op::Read(k, n) => {
            b.set_current_key(k).unwrap();
            return Some(b.value(&s.value, &n).unwrap().value());
        }
        Op::Snapshot => {
            b.snapshot().unwrap();
        }
        Op::SnapshotAndRestore => {}
    }
    None
}

fn range() -> KeyGroupRange {
    KeyGroupRange::new(0, 127)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_rocksdb_backed_backend_reads_what_the_heap_backend_reads(
        ops in proptest::collection::vec(op(), 1..400),
        cache_entries in 1usize..40,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let rocks = factory(dir.path(), cache_entries);
        let s = states();
        let mut heap: KeyedStateBackend<u16> = KeyedStateBackend::new(range(), 128);
        let mut disk = KeyedStateBackend::with_store(range(), 128, rocks.open("op").unwrap(), cache_entries);
        for op in &ops {
            if let Op::SnapshotAndRestore = op {
                // Each side restores from the other's snapshot: the format is one.
                let from_heap = heap.snapshot().unwrap();
                let from_disk = disk.snapshot().unwrap();
                heap = KeyedStateBackend::new(range(), 128);
                heap.restore(&from_disk);
                disk = KeyedStateBackend::with_store(range(), 128, rocks.open("op").unwrap(), cache_entries);
                disk.restore(&from_heap);
                continue;
            }
            prop_assert_eq!(apply(&mut heap, &s, op), apply(&mut disk, &s, op), "{:?}", op);
        }
        for key in 0..300u16 {
            prop_assert_eq!(observe(&mut heap, &s, key), observe(&mut disk, &s, key), "key {}", key);
        }
        // What the store holds after the last snapshot is the state: restored on the
        // heap, it reads as the heap backend does.
        let mut restored: KeyedStateBackend<u16> = KeyedStateBackend::new(range(), 128);
        restored.restore(&disk.snapshot().unwrap());
        for key in 0..300u16 {
            prop_assert_eq!(observe(&mut heap, &s, key), observe(&mut restored, &s, key), "key {}", key);
        }
    }
}

#[test]
fn state_much_larger_than_the_cache_lives_in_the_store_and_is_snapshotted_whole() {
    let dir = tempfile::tempdir().unwrap();
    let rocks = factory(dir.path(), 100);
    let s = states();
    let mut disk: KeyedStateBackend<u16> = KeyedStateBackend::with_store(range(), 128, rocks.open("big").unwrap(), 100);
    for key in 0..20_000u16 {
        disk.set_current_key(key).unwrap();
        disk.value(&s.value, &0u8).unwrap().update(u64::from(key) * 3);
    }
    for key in (0..20_000u16).step_by(7) {
        disk.set_current_key(key).unwrap();
        assert_eq!(disk.value(&s.value, &0u8).unwrap().value(), Some(u64::from(key) * 3));
    }
    // Restored at parallelism 3 on the heap: every entry is in exactly one part.
    let snapshot = disk.snapshot().unwrap();
    let mut restored = Vec::new();
    for i in 0..3 {
        let mut part: KeyedStateBackend<u16> = KeyedStateBackend::new(KeyGroupRange::for_subtask(128, 3, i), 128);
        part.restore(&snapshot);
        let mut rocks_part = KeyedStateBackend::with_store(
            KeyGroupRange::for_subtask(128, 3, i),
            128,
            rocks.open("part").unwrap(),
            10,
        );
        rocks_part.restore(&snapshot);
        let key = (0..20_000u16)
            .find(|k| part.key_group_range().contains(part.key_group_of(k)))
            .unwrap();
        part.set_current_key(key).unwrap();
        part.value(&s.value, &0u8).unwrap();
        rocks_part.set_current_key(key).unwrap();
        rocks_part.value(&s.value, &0u8).unwrap();
        let mut heap_entries = part.entries::<u8, u64>(&s.value).unwrap();
        let mut disk_entries = rocks_part.entries::<u8, u64>(&s.value).unwrap();
        heap_entries.sort();
        disk_entries.sort();
        assert_eq!(heap_entries, disk_entries);
        restored.extend(heap_entries.into_iter().map(|(k, _, v)| (k, v)));
    }
    restored.sort();
    assert_eq!(
        restored,
        (0..20_000u16).map(|k| (k, u64::from(k) * 3)).collect::<Vec<_>>()
    );
}

#[test]
fn a_dropped_store_leaves_no_directory_behind() {
    let dir = tempfile::tempdir().unwrap();
    let rocks = factory(dir.path(), 10);
    let store = rocks.open("job/op (1/2)").unwrap();
    let under = dir.path().join(format!("weir-rocksdb-{}", std::process::id()));
    assert_eq!(std::fs::read_dir(&under).unwrap().count(), 1);
    drop(store);
    assert_eq!(std::fs::read_dir(&under).unwrap().count(), 0);
}

#[test]
fn directories_of_processes_that_are_gone_are_removed_when_a_backend_starts() {
    let dir = tempfile::tempdir().unwrap();
    // Pid 0 is never a process's.
    let orphan = dir.path().join("weir-rocksdb-0").join("op_0");
    std::fs::create_dir_all(&orphan).unwrap();
    let mine = dir.path().join(format!("weir-rocksdb-{}", std::process::id()));
    std::fs::create_dir_all(&mine).unwrap();
    let _backend = factory(dir.path(), 10);
    assert!(!dir.path().join("weir-rocksdb-0").exists());
    assert!(mine.exists());
}
