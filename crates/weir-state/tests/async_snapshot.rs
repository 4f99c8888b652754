//! Asynchronous snapshots: a frozen backend materialises, after any writes that came
//! later, exactly what a synchronous snapshot at the freeze would have held.

use proptest::prelude::*;
use weir_core::KeyGroupRange;
use weir_state::{KeyedStateBackend, ListStateDescriptor, ValueStateDescriptor, VoidNamespace};

fn writes() -> impl Strategy<Value = Vec<(u16, Option<u32>)>> {
    proptest::collection::vec((0u16..500, proptest::option::of(any::<u32>())), 0..300)
}

fn apply(b: &mut KeyedStateBackend<u16>, writes: &[(u16, Option<u32>)]) {
    let value = ValueStateDescriptor::<u32>::new("v");
    let list = ListStateDescriptor::<u32>::new("l");
    for (key, write) in writes {
        b.set_current_key(*key).unwrap();
        match write {
            Some(v) => {
                b.value(&value, &VoidNamespace).unwrap().update(*v);
                b.list(&list, &VoidNamespace).unwrap().add(*v);
            }
            None => {
                b.value(&value, &VoidNamespace).unwrap().clear();
                b.list(&list, &VoidNamespace).unwrap().clear();
            }
        }
    }
}

proptest! {
    #[test]
    fn a_frozen_snapshot_holds_the_state_of_its_freeze_whatever_is_written_after(
        before in writes(),
        after in writes(),
    ) {
        let range = KeyGroupRange::new(0, 127);
        let mut b: KeyedStateBackend<u16> = KeyedStateBackend::new(range, 128);
        apply(&mut b, &before);
        let at_freeze = b.snapshot().unwrap();
        let frozen = b.freeze().unwrap();
        apply(&mut b, &after);
        // Encoded on another thread, as the checkpoint's upload thread does.
        let materialized = std::thread::spawn(move || frozen.materialize().unwrap()).join().unwrap();
        prop_assert_eq!(&materialized, &at_freeze);
        // And the backend itself moved on: it holds the writes made after the freeze.
        let mut replay: KeyedStateBackend<u16> = KeyedStateBackend::new(range, 128);
        apply(&mut replay, &before);
        apply(&mut replay, &after);
        let mut now = b.snapshot().unwrap();
        let mut expected = replay.snapshot().unwrap();
        for groups in [&mut now, &mut expected] {
            for (_, group) in groups.iter_mut() {
                for (_, bytes) in group.iter_mut() {
                    // Entry order within a group is the map's; compare lengths and counts.
                    bytes.truncate(8);
                }
            }
        }
        prop_assert_eq!(now, expected);
    }
}
