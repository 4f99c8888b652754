//! Snapshots and restores of operator state at the same and at other parallelisms,
//! through [`RestoredState`] as a restored task sees them.

use super::*;
use crate::snapshot::{RestoredState, TaskSnapshot};
use weir_core::ids::OperatorId;
use weir_core::KeyGroupRange;

const OP: OperatorId = OperatorId(11);

fn offsets() -> ListStateDescriptor<u64> {
    ListStateDescriptor::new("offsets")
}

fn config() -> ListStateDescriptor<String> {
    ListStateDescriptor::new("config")
}

fn rules() -> MapStateDescriptor<u32, String> {
    MapStateDescriptor::new("rules")
}

/// A subtask's store holding `list` as split list state, `union` as union list state
/// and `rule` as its broadcast copy.
fn store(list: &[u64], union: &[&str], rule: &str) -> OperatorStateStore {
    let mut s = OperatorStateStore::new();
    s.list_state(&offsets()).unwrap().add_all(list.iter().copied());
    s.union_list_state(&config())
        .unwrap()
        .add_all(union.iter().map(|u| u.to_string()));
    s.broadcast_state(&rules()).unwrap().put(0, rule.to_string());
    s
}

/// Snapshots `old` (one store per old subtask) and restores subtask `index` of
/// `parallelism` from them as a rescaled or non-rescaled task would.
fn restore(old: &[OperatorStateStore], index: u32, parallelism: u32) -> OperatorStateStore {
    let snapshots = old.iter().map(|s| {
        let mut t = TaskSnapshot::default();
        t.operators.insert(OP, s.snapshot().unwrap());
        TaskSnapshot::decode(&t.encode().unwrap()).unwrap()
    });
    let restored = RestoredState::of_subtask(3, snapshots, index, parallelism);
    let part = restored.operator(OP, KeyGroupRange::new(0, 127));
    OperatorStateStore::restore(part.as_ref(), index).unwrap()
}

fn contents(s: &mut OperatorStateStore) -> (Vec<u64>, Vec<String>, String) {
    let list = s.list_state(&offsets()).unwrap().get().to_vec();
    let union = s.union_list_state(&config()).unwrap().get().to_vec();
    let rule = s
        .broadcast_state(&rules())
        .unwrap()
        .get(&0)
        .cloned()
        .unwrap_or_default();
    (list, union, rule)
}

#[test]
fn at_the_same_parallelism_each_subtask_gets_back_exactly_its_own_state() {
    let old = [store(&[1, 2], &["a"], "r"), store(&[3], &["b"], "r")];
    for (i, (list, union)) in [(vec![1, 2], vec!["a"]), (vec![3], vec!["b"])].into_iter().enumerate() {
        let mut s = restore(&old, i as u32, 2);
        assert!(s.is_restored());
        assert_eq!(
            contents(&mut s),
            (list, union.iter().map(|u| u.to_string()).collect(), "r".into())
        );
    }
}

#[test]
fn rescaling_two_to_three_deals_list_state_round_robin_unions_union_state_and_reads_broadcast_copies_round_robin() {
    let old = [store(&[1, 2, 3], &["a"], "copy0"), store(&[4, 5], &["b"], "copy1")];
    let got: Vec<_> = (0..3).map(|i| contents(&mut restore(&old, i, 3))).collect();
    let union = vec!["a".to_string(), "b".to_string()];
    assert_eq!(
        got,
        vec![
            (vec![1, 4], union.clone(), "copy0".to_string()),
            (vec![2, 5], union.clone(), "copy1".to_string()),
            (vec![3], union, "copy0".to_string()),
        ]
    );
}

#[test]
fn rescaling_three_to_one_gives_the_single_subtask_every_element_and_the_first_copy() {
    let old = [
        store(&[1], &["a"], "copy0"),
        store(&[2, 3], &["b"], "copy1"),
        store(&[], &[], "copy2"),
    ];
    let (list, union, rule) = contents(&mut restore(&old, 0, 1));
    assert_eq!(list, vec![1, 2, 3]);
    assert_eq!(union, vec!["a".to_string(), "b".to_string()]);
    assert_eq!(rule, "copy0");
}

#[test]
fn state_restored_but_not_declared_again_survives_the_next_snapshot_unchanged() {
    let old = [store(&[7, 8], &["a"], "r")];
    let untouched = restore(&old, 0, 1);
    let mut again = restore(&[untouched], 0, 1);
    assert_eq!(
        contents(&mut again),
        (vec![7, 8], vec!["a".to_string()], "r".to_string())
    );
}

#[test]
fn corrupt_restored_bytes_fail_when_declared_naming_the_state_and_the_element() {
    let mut snapshot = OperatorSnapshot::default();
    snapshot
        .list
        .insert("offsets".into(), vec![codec::encode(&1u64).unwrap(), vec![1, 2]]);
    snapshot
        .union
        .insert(format!("{BROADCAST_PREFIX}rules"), vec![vec![0xff; 3]]);
    let mut s = OperatorStateStore::restore(Some(&snapshot), 0).unwrap();
    let err = s.list_state(&offsets()).err().unwrap().to_string();
    assert!(
        err.contains("operator state 'offsets' cannot be restored: element 1 of 2"),
        "{err}"
    );
    let err = s.broadcast_state(&rules()).err().unwrap().to_string();
    assert!(err.contains("operator state 'rules' cannot be restored"), "{err}");

    let mut empty = OperatorSnapshot::default();
    empty.union.insert(format!("{BROADCAST_PREFIX}rules"), vec![]);
    let err = OperatorStateStore::restore(Some(&empty), 0).err().unwrap().to_string();
    assert!(err.contains("no copy of the broadcast state"), "{err}");
}

#[test]
fn a_name_declared_twice_with_another_mode_or_type_is_refused() {
    let mut s = store(&[1], &["a"], "r");
    let err = s.union_list_state(&offsets()).err().unwrap().to_string();
    assert!(
        err.contains("'offsets' was declared as list state before, not as union list state"),
        "{err}"
    );
    assert!(matches!(
        s.list_state(&ListStateDescriptor::<String>::new("offsets")),
        Err(StateError::TypeMismatch(_))
    ));
    assert!(matches!(
        s.broadcast_state(&MapStateDescriptor::<u32, u64>::new("rules")),
        Err(StateError::TypeMismatch(_))
    ));
    let restored = restore(&[store(&[1], &[], "r")], 0, 1);
    let mut restored = restored;
    assert!(matches!(
        restored.union_list_state(&offsets()),
        Err(StateError::ModeMismatch { .. })
    ));
    assert_eq!(restored.list_state(&offsets()).unwrap().get(), &[1]);
}

#[test]
fn reserved_names_and_undeclared_broadcast_state_are_clear_errors() {
    let mut s = OperatorStateStore::new();
    let reserved = ListStateDescriptor::<u8>::new(format!("{BROADCAST_PREFIX}x"));
    assert!(matches!(s.list_state(&reserved), Err(StateError::ReservedName(_))));
    let err = s.read_only_broadcast_state(&rules()).err().unwrap().to_string();
    assert!(err.contains("broadcast state 'rules' does not exist"), "{err}");
    s.broadcast_state(&rules()).unwrap().put(1, "x".into());
    let ro = s.read_only_broadcast_state(&rules()).unwrap();
    assert_eq!((ro.get(&1).map(String::as_str), ro.len()), (Some("x"), 1));
}

#[test]
fn a_fresh_store_is_not_restored_and_snapshots_empty_lists_by_name() {
    let mut s = OperatorStateStore::new();
    assert!(!s.is_restored());
    assert!(s.snapshot().unwrap().is_empty());
    s.list_state(&offsets()).unwrap();
    let snap = s.snapshot().unwrap();
    assert_eq!(snap.list.get("offsets"), Some(&vec![]));
    assert_eq!(s.registered_state_names(), vec!["offsets"]);
}
