//! One slice's table of group keys → typed accumulators (the slicing window
//! aggregate's state of one slice end), and the merge of several slices into the
//! table of one window.
//!
//! Invariants: `keys[i]` owns the accumulators `accs[i·width .. (i+1)·width]`, where
//! `width` is the number of aggregate calls; `index` maps every key to its `i`, and a
//! key is in it once. A table is probed with a row's key columns (`&[Value]`), so a
//! key is cloned only when it is first seen.

use super::typed_acc::TypedAcc;
use crate::plan::AggCall;
use crate::value::{GroupKey, Value};
use rustc_hash::FxHashMap;

/// The keys and accumulators of one slice (or one merged window).
#[derive(Debug, Clone, Default)]
pub struct SliceTable {
    index: FxHashMap<GroupKey, u32>,
    keys: Vec<GroupKey>,
    accs: Vec<TypedAcc>,
}

impl SliceTable {
    /// Keys held.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The accumulators of the key whose values are `key`, created for `aggs` if the
    /// key is new.
    #[inline]
    pub fn accs_mut(&mut self, key: &[Value], aggs: &[AggCall]) -> &mut [TypedAcc] {
        let width = aggs.len();
        let i = match self.index.get(key) {
            Some(&i) => i as usize,
            None => {
                let i = self.keys.len();
                let owned = GroupKey::of(key);
                self.index.insert(owned.clone(), i as u32);
                self.keys.push(owned);
                self.accs.extend(aggs.iter().map(TypedAcc::create));
                i
            }
        };
        &mut self.accs[i * width..(i + 1) * width]
    }

    /// Adds a key that is not held yet with its accumulators (a restored entry);
    /// false if the key is already held (the table is unchanged) or `accs` is not one
    /// per aggregate call.
    pub fn insert(&mut self, key: GroupKey, accs: Vec<TypedAcc>, width: usize) -> bool {
        if accs.len() != width || self.index.contains_key(&key) {
            return false;
        }
        self.index.insert(key.clone(), self.keys.len() as u32);
        self.keys.push(key);
        self.accs.extend(accs);
        true
    }

    /// The keys and their accumulators, in the order the keys were first seen.
    pub fn entries(&self, width: usize) -> impl Iterator<Item = (&GroupKey, &[TypedAcc])> {
        self.keys
            .iter()
            .enumerate()
            .map(move |(i, k)| (k, &self.accs[i * width..(i + 1) * width]))
    }

    /// The keys and their accumulators, in ascending key order (the order the window
    /// operator's per-key timers fired in).
    pub fn sorted_entries(&self, width: usize) -> impl Iterator<Item = (&GroupKey, &[TypedAcc])> {
        self.sorted_order().into_iter().map(move |i| {
            let i = i as usize;
            (&self.keys[i], &self.accs[i * width..(i + 1) * width])
        })
    }

    /// The indexes of the keys in ascending key order. Keys of one integer column
    /// (the common case) are sorted as plain `i64`s, which order as their values do.
    fn sorted_order(&self) -> Vec<u32> {
        let ints: Option<Vec<(i64, u32)>> = self
            .keys
            .iter()
            .zip(0u32..)
            .map(|(k, i)| match k {
                GroupKey::One(Value::Int(v)) => Some((*v, i)),
                _ => None,
            })
            .collect();
        match ints {
            Some(mut ints) => {
                ints.sort_unstable();
                ints.into_iter().map(|(_, i)| i).collect()
            }
            None => {
                let mut order: Vec<u32> = (0..self.keys.len() as u32).collect();
                order.sort_unstable_by(|a, b| self.keys[*a as usize].cmp(&self.keys[*b as usize]));
                order
            }
        }
    }

    /// Merges the accumulators of `other` (a later slice of the same window) into this
    /// table.
    pub fn merge_from(&mut self, other: &SliceTable, aggs: &[AggCall]) {
        let width = aggs.len();
        for (key, theirs) in other.entries(width) {
            let ours = self.accs_mut(key.values(), aggs);
            for ((call, acc), other_acc) in aggs.iter().zip(ours).zip(theirs) {
                acc.merge(call, other_acc);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::AggFunc;
    use crate::types::DataType;

    fn count() -> AggCall {
        AggCall {
            func: AggFunc::Count,
            distinct: false,
            arg: None,
            arg_type: DataType::BigInt,
            result_type: DataType::BigInt,
        }
    }

    fn counts(t: &SliceTable) -> Vec<(Vec<Value>, Value)> {
        let c = count();
        t.sorted_entries(1)
            .map(|(k, a)| (k.values().to_vec(), a[0].result(&c)))
            .collect()
    }

    #[test]
    fn rows_of_one_key_update_one_entry_and_entries_sort_by_key() {
        let aggs = [count()];
        let mut t = SliceTable::default();
        for k in [3, 1, 3, 2, 3] {
            for a in t.accs_mut(&[Value::Int(k)], &aggs) {
                a.update(&aggs[0], &[], false);
            }
        }
        assert_eq!(t.len(), 3);
        let first_seen: Vec<_> = t.entries(1).map(|(k, _)| k.values()[0].clone()).collect();
        assert_eq!(first_seen, vec![Value::Int(3), Value::Int(1), Value::Int(2)]);
        assert_eq!(
            counts(&t),
            vec![
                (vec![Value::Int(1)], Value::Int(1)),
                (vec![Value::Int(2)], Value::Int(1)),
                (vec![Value::Int(3)], Value::Int(3)),
            ]
        );
    }

    #[test]
    fn keys_of_several_columns_or_of_strings_sort_as_their_values() {
        let aggs = [count()];
        let mut t = SliceTable::default();
        let keys = [
            vec![Value::Str("b".into()), Value::Int(1)],
            vec![Value::Str("a".into()), Value::Int(2)],
            vec![Value::Str("a".into()), Value::Int(-1)],
        ];
        for k in &keys {
            t.accs_mut(k, &aggs);
        }
        let sorted: Vec<Vec<Value>> = counts(&t).into_iter().map(|(k, _)| k).collect();
        assert_eq!(sorted, vec![keys[2].clone(), keys[1].clone(), keys[0].clone()]);
        let mut negative = SliceTable::default();
        for k in [5, -7, 0] {
            negative.accs_mut(&[Value::Int(k)], &aggs);
        }
        let sorted: Vec<Vec<Value>> = counts(&negative).into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            sorted,
            vec![vec![Value::Int(-7)], vec![Value::Int(0)], vec![Value::Int(5)]]
        );
    }

    #[test]
    fn merging_a_later_slice_adds_its_keys_and_accumulators() {
        let aggs = [count()];
        let mut a = SliceTable::default();
        let mut b = SliceTable::default();
        assert!(a.insert(GroupKey::of(&[Value::Int(1)]), vec![TypedAcc::Count(2)], 1));
        assert!(!a.insert(GroupKey::of(&[Value::Int(1)]), vec![TypedAcc::Count(9)], 1));
        assert!(!a.insert(GroupKey::of(&[Value::Int(5)]), vec![], 1));
        assert!(b.insert(GroupKey::of(&[Value::Int(1)]), vec![TypedAcc::Count(3)], 1));
        assert!(b.insert(GroupKey::of(&[Value::Int(0)]), vec![TypedAcc::Count(1)], 1));
        a.merge_from(&b, &aggs);
        assert_eq!(
            counts(&a),
            vec![
                (vec![Value::Int(0)], Value::Int(1)),
                (vec![Value::Int(1)], Value::Int(5)),
            ]
        );
    }
}
