//! Hostile task-state snapshots: arbitrary and mutated bytes decode to a snapshot or a
//! `StateError::CorruptSnapshot`; a snapshot that decodes is dealt out to subtasks
//! (same and other parallelism) and its keyed state read back through the heap
//! backend, which refuses undecodable values with an error; never a panic.

use proptest::prelude::*;
use weir_core::fuzz::{cases, corpus, mutate, mutations};
use weir_core::ids::OperatorId;
use weir_core::KeyGroupRange;
use weir_state::{
    InputChannelState, KeyedStateBackend, ListStateDescriptor, OperatorSnapshot, RestoredState, StateError,
    TaskSnapshot, ValueStateDescriptor,
};

const MAX_PARALLELISM: u32 = 128;

fn sample(keys: &[u64], list: &[u8], channel: &[u8]) -> TaskSnapshot {
    let mut backend: KeyedStateBackend<u64> =
        KeyedStateBackend::new(KeyGroupRange::new(0, MAX_PARALLELISM - 1), MAX_PARALLELISM);
    let count = ValueStateDescriptor::<u64>::new("count");
    for k in keys {
        backend.set_current_key(*k).expect("a key");
        backend.value(&count, &()).expect("value state").update(*k);
    }
    let mut op = OperatorSnapshot {
        keyed: backend.snapshot().expect("snapshots"),
        ..OperatorSnapshot::default()
    };
    op.list
        .insert("offsets".into(), list.iter().map(|b| vec![*b]).collect());
    let mut snapshot = TaskSnapshot::default();
    snapshot.operators.insert(OperatorId(7), op);
    snapshot.input_channel_state.push(InputChannelState {
        gate: 0,
        channel: 1,
        channels: 2,
        data: channel.to_vec(),
    });
    snapshot
}

/// Reads every key's `count` of operator 7 from a restored subtask's keyed state.
fn read_back(op: &OperatorSnapshot, range: KeyGroupRange) -> Result<(), StateError> {
    let mut backend: KeyedStateBackend<u64> = KeyedStateBackend::new(range, MAX_PARALLELISM);
    backend.restore(&op.keyed);
    let count = ValueStateDescriptor::<u64>::new("count");
    let offsets = ListStateDescriptor::<u64>::new("count");
    for key in 0..16u64 {
        if backend.set_current_key(key).is_ok() {
            backend.value(&count, &())?.value();
            if let Ok(list) = backend.list(&offsets, &()) {
                list.get();
            }
        }
    }
    Ok(())
}

fn restore_everywhere(bytes: &[u8]) {
    let snapshot = match TaskSnapshot::decode(bytes) {
        Ok(s) => s,
        Err(e) => {
            assert!(matches!(e, StateError::CorruptSnapshot(_)), "{e}");
            return;
        }
    };
    for parallelism in [1u32, 2] {
        for subtask in 0..parallelism {
            let range = KeyGroupRange::for_subtask(MAX_PARALLELISM, parallelism, subtask);
            let mut restored = RestoredState::of_subtask(1, [snapshot.clone()], subtask, parallelism);
            if let Some(op) = restored.operator(OperatorId(7), range) {
                if let Err(e) = read_back(&op, range) {
                    assert!(!e.to_string().is_empty());
                }
            }
            if let Err(e) = restored.take_channel_state("Count") {
                assert!(e.to_string().contains("Count"), "{e}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn arbitrary_bytes_after_the_header_are_a_snapshot_or_corrupt(
        version in 1u32..5,
        body in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let mut bytes = b"WEIRSTAT".to_vec();
        bytes.extend_from_slice(&version.to_be_bytes());
        bytes.extend_from_slice(&body);
        restore_everywhere(&bytes);
    }

    #[test]
    fn mutated_valid_snapshots_are_a_snapshot_or_corrupt(
        keys in proptest::collection::vec(0u64..16, 0..6),
        list in proptest::collection::vec(any::<u8>(), 0..4),
        channel in proptest::collection::vec(any::<u8>(), 0..8),
        mutations in mutations(1..6),
    ) {
        let valid = sample(&keys, &list, &channel).encode().expect("encodes");
        restore_everywhere(&valid);
        restore_everywhere(&mutate(&valid, &mutations));
    }
}

#[test]
fn the_snapshot_corpus_replays_without_panicking() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/snapshot");
    for (_, bytes) in corpus(&dir).expect("corpus readable") {
        restore_everywhere(&bytes);
    }
}
