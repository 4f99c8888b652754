//! One slice's table of group keys → accumulators (the slicing window aggregate's
//! state of one slice end), and the merge of several slices into the table of one
//! window.
//!
//! The keys are [`KeyEntries`] (plain `i64`s while they are single integers, else
//! [`GroupKey`]s); in BATCH the operator-wide key dictionary's dense ids stand for the
//! keys. The accumulators are columns, one [`AccColumn`] per aggregate call, typed
//! where the call allows it.
//!
//! The index of integer keys may be released ([`SliceTable::release_index`]) once a
//! slice is unlikely to take new keys (the streaming window operator releases those of
//! all but its latest slices, and reuses their memory for the next slice's index); it
//! is rebuilt from the key column when a key comes after all.
//!
//! Invariants: entry `i` is key `i` of the key column and accumulator `i` of every
//! accumulator column (all as long as the key column).

use super::int_key_index::IntKeyIndex;
use super::key_entries::KeyEntries;
use super::typed_acc::AccColumn;
use crate::exec::acc::Acc;
use crate::key::GroupKey;
use crate::plan::AggCall;
use crate::value::Value;

/// The keys and accumulators of one slice (or one merged window).
#[derive(Debug, Clone, Default)]
pub struct SliceTable {
    keys: KeyEntries,
    /// One column per aggregate call, made with the first key.
    accs: Vec<AccColumn>,
}

impl SliceTable {
    /// Empties the table (a fired slice's, or a new one, for the next slice) for keys
    /// like those of `before` (the slice before, whose keys the next slice's are likely
    /// to resemble: it takes as many without growing, and integer keys of the same
    /// range without hashing; or its own, when `None`) and accumulators of `aggs`, keeping its
    /// memory; its index is `recycled` (one another table released) when it holds
    /// none of its own.
    pub fn reset_like(&mut self, before: Option<&SliceTable>, aggs: &[AggCall], recycled: Option<IntKeyIndex>) {
        let room = self.keys.reset_like(before.map(|b| &b.keys), recycled);
        self.reset_accs(room, aggs);
    }

    /// Empties the table, keeping its memory, for `aggs` and `room` of the dense ids
    /// of a dictionary of `ids` keys (a BATCH slice).
    pub fn reset_for_ids(&mut self, room: usize, ids: usize, aggs: &[AggCall]) {
        self.keys.reset_for_ids(room, ids);
        self.reset_accs(room, aggs);
    }

    /// Empties the accumulator columns for `aggs`, with room for `room` keys.
    fn reset_accs(&mut self, room: usize, aggs: &[AggCall]) {
        if self.accs.len() != aggs.len() {
            self.accs = aggs.iter().map(AccColumn::create).collect();
        }
        for (column, call) in self.accs.iter_mut().zip(aggs) {
            column.clear(call);
            column.reserve(room);
        }
    }

    /// Takes the index of integer keys out of the table (which rebuilds it if a key
    /// comes after all), for another table to reuse; `None` if the table holds none.
    pub fn release_index(&mut self) -> Option<IntKeyIndex> {
        self.keys.release_index()
    }

    /// The keys, by entry number.
    pub fn keys(&self) -> &KeyEntries {
        &self.keys
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry of `key`, made with empty accumulators of `aggs` if the key is new.
    #[inline(always)]
    fn entry(&mut self, key: &[Value], aggs: &[AggCall]) -> usize {
        let (i, new) = self.keys.entry(key);
        self.made(i, new, aggs)
    }

    /// Entry `i`, given empty accumulators of `aggs` if it is `new`.
    #[inline(always)]
    fn made(&mut self, i: usize, new: bool, aggs: &[AggCall]) -> usize {
        if self.accs.len() != aggs.len() {
            self.accs = aggs.iter().map(AccColumn::create).collect();
        }
        if new {
            for (column, call) in self.accs.iter_mut().zip(aggs) {
                column.push_empty(call);
            }
        }
        i
    }

    /// Adds (`retract` false) or takes back `row` to the accumulators of `aggs` of the
    /// key whose values are `key`.
    #[inline(always)]
    pub fn accumulate(&mut self, key: &[Value], aggs: &[AggCall], row: &[Value], retract: bool) {
        let i = self.entry(key, aggs);
        self.update(i, aggs, row, retract);
    }

    /// [`SliceTable::accumulate`] for the one-integer key `k` (a BATCH operator's
    /// dense key id); true when the key is new to the table.
    #[inline(always)]
    pub fn accumulate_int(&mut self, k: i64, aggs: &[AggCall], row: &[Value], retract: bool) -> bool {
        let (i, new) = self.keys.entry_int(k);
        let i = self.made(i, new, aggs);
        self.update(i, aggs, row, retract);
        new
    }

    #[inline(always)]
    fn update(&mut self, i: usize, aggs: &[AggCall], row: &[Value], retract: bool) {
        for (column, call) in self.accs.iter_mut().zip(aggs) {
            column.update(call, i, row, retract);
        }
    }

    /// Adds a key that is not held yet with its accumulators of `aggs` (a restored
    /// entry); false if the key is already held (the table is unchanged) or `accs` is
    /// not one per aggregate call.
    pub fn insert(&mut self, key: GroupKey, accs: Vec<Acc>, aggs: &[AggCall]) -> bool {
        if accs.len() != aggs.len() || self.keys.contains(&key) {
            return false;
        }
        if self.accs.len() != aggs.len() {
            self.accs = aggs.iter().map(AccColumn::create).collect();
        }
        self.keys.entry(key.values());
        for ((column, call), acc) in self.accs.iter_mut().zip(aggs).zip(accs) {
            column.push(call, acc);
        }
        true
    }

    /// The keys and their general accumulators, in the order the keys were first seen.
    pub fn entries(&self) -> impl Iterator<Item = (GroupKey, Vec<Acc>)> + '_ {
        (0..self.len()).map(move |i| (self.keys.key(i), self.accs.iter().map(|c| c.get(i)).collect()))
    }

    /// The entries in ascending key order (the order the window operator's per-key
    /// timers fired in).
    pub fn sorted_order(&self) -> Vec<u32> {
        self.keys.sorted_order()
    }

    /// Brings the table into the cache before a pass in key order
    /// ([`super::cache_warm`]).
    pub fn warm(&self) {
        self.keys.warm();
        for column in &self.accs {
            column.warm();
        }
    }

    /// Appends the values of entry `i`'s key to `out`.
    #[inline]
    pub fn push_key(&self, i: usize, out: &mut Vec<Value>) {
        self.keys.push_key(i, out)
    }

    /// Value `k` of entry `i`'s key (NULL past the key's values).
    #[inline]
    pub fn key_value(&self, i: usize, k: usize) -> Value {
        self.keys.key_value(i, k)
    }

    /// The result of aggregate `a` of `aggs` for entry `i` (NULL past the aggregates).
    #[inline]
    pub fn result(&self, i: usize, a: usize, aggs: &[AggCall]) -> Value {
        match (self.accs.get(a), aggs.get(a)) {
            (Some(column), Some(call)) => column.result(call, i),
            _ => Value::Null,
        }
    }

    /// Appends the results of aggregate `a` of `aggs` for `entries` (NULL past the
    /// aggregates) to `rows`, one each, in order.
    pub fn push_result_column(
        &self,
        a: usize,
        aggs: &[AggCall],
        entries: impl Iterator<Item = usize>,
        rows: &mut [Vec<Value>],
    ) {
        match (self.accs.get(a), aggs.get(a)) {
            (Some(column), Some(call)) => column.push_results(call, entries, rows),
            _ => rows.iter_mut().for_each(|row| row.push(Value::Null)),
        }
    }

    /// The number of values of entry `i`'s key.
    pub fn key_width(&self, i: usize) -> usize {
        self.keys.key_width(i)
    }

    /// Appends the results of `aggs` for entry `i` to `out`.
    #[inline]
    pub fn push_results(&self, i: usize, aggs: &[AggCall], out: &mut Vec<Value>) {
        for (column, call) in self.accs.iter().zip(aggs) {
            out.push(column.result(call, i));
        }
    }

    /// Merges the accumulators of `other` (a later slice of the same window) into this
    /// table.
    pub fn merge_from(&mut self, other: &SliceTable, aggs: &[AggCall]) {
        let mut key = Vec::new();
        for j in 0..other.len() {
            key.clear();
            other.push_key(j, &mut key);
            let i = self.entry(&key, aggs);
            for ((column, call), theirs) in self.accs.iter_mut().zip(aggs).zip(&other.accs) {
                column.merge(call, i, theirs, j);
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
        let aggs = [count()];
        t.sorted_order()
            .into_iter()
            .map(|i| {
                let mut key = Vec::new();
                t.push_key(i as usize, &mut key);
                let mut result = Vec::new();
                t.push_results(i as usize, &aggs, &mut result);
                (key, result.remove(0))
            })
            .collect()
    }

    /// What [`counts`] gives for integer keys with these counts.
    fn int_counts(pairs: &[(i64, i64)]) -> Vec<(Vec<Value>, Value)> {
        pairs
            .iter()
            .map(|(k, n)| (vec![Value::Int(*k)], Value::Int(*n)))
            .collect()
    }

    #[test]
    fn rows_of_one_key_update_one_entry_and_entries_sort_by_key() {
        let aggs = [count()];
        let mut t = SliceTable::default();
        for k in [3, 1, 3, 2, 3] {
            t.accumulate(&[Value::Int(k)], &aggs, &[], false);
        }
        assert_eq!(t.len(), 3);
        let first_seen: Vec<_> = t.entries().map(|(k, _)| k.values()[0].clone()).collect();
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
            t.accumulate(k, &aggs, &[], false);
        }
        let sorted: Vec<Vec<Value>> = counts(&t).into_iter().map(|(k, _)| k).collect();
        assert_eq!(sorted, vec![keys[2].clone(), keys[1].clone(), keys[0].clone()]);
        let mut negative = SliceTable::default();
        for k in [5, -7, 0] {
            negative.accumulate(&[Value::Int(k)], &aggs, &[], false);
        }
        let sorted: Vec<Vec<Value>> = counts(&negative).into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            sorted,
            vec![vec![Value::Int(-7)], vec![Value::Int(0)], vec![Value::Int(5)]]
        );
    }

    #[test]
    fn a_null_key_among_integer_keys_keeps_every_entry_and_sorts_first() {
        let aggs = [count()];
        let mut t = SliceTable::default();
        for k in [Value::Int(4), Value::Int(2), Value::Null, Value::Int(4), Value::Null] {
            t.accumulate(&[k], &aggs, &[], false);
        }
        t.accumulate(&[Value::Int(2)], &aggs, &[], false);
        assert_eq!(
            counts(&t),
            vec![
                (vec![Value::Null], Value::Int(2)),
                (vec![Value::Int(2)], Value::Int(2)),
                (vec![Value::Int(4)], Value::Int(2)),
            ]
        );
    }

    #[test]
    fn a_table_whose_index_was_released_rebuilds_it_for_a_key_that_comes_after_all() {
        let aggs = [count()];
        let mut t = SliceTable::default();
        for k in [40, -3, 40, 9] {
            t.accumulate(&[Value::Int(k)], &aggs, &[], false);
        }
        let released = t.release_index();
        assert!(released.is_some());
        assert!(t.release_index().is_none());
        assert_eq!(counts(&t), int_counts(&[(-3, 1), (9, 1), (40, 2)]));
        t.accumulate(&[Value::Int(9)], &aggs, &[], false);
        t.accumulate(&[Value::Int(0)], &aggs, &[], false);
        assert_eq!(t.len(), 4);
        assert!(t.release_index().is_some());
        assert!(!t.insert(GroupKey::of(&[Value::Int(40)]), vec![Acc::Count(1)], &aggs));
        assert!(t.insert(GroupKey::of(&[Value::Int(1)]), vec![Acc::Count(5)], &aggs));
        assert_eq!(counts(&t), int_counts(&[(-3, 1), (0, 1), (1, 5), (9, 2), (40, 2)]));
        // The released index, reused by a new table, holds none of the old keys.
        let mut next = SliceTable::default();
        next.reset_like(Some(&t), &aggs, released);
        next.accumulate(&[Value::Int(40)], &aggs, &[], false);
        assert_eq!(counts(&next), vec![(vec![Value::Int(40)], Value::Int(1))]);
    }

    #[test]
    fn merging_a_later_slice_adds_its_keys_and_accumulators() {
        let aggs = [count()];
        let mut a = SliceTable::default();
        let mut b = SliceTable::default();
        assert!(a.insert(GroupKey::of(&[Value::Int(1)]), vec![Acc::Count(2)], &aggs));
        assert!(!a.insert(GroupKey::of(&[Value::Int(1)]), vec![Acc::Count(9)], &aggs));
        assert!(!a.insert(GroupKey::of(&[Value::Int(5)]), vec![], &aggs));
        assert!(b.insert(GroupKey::of(&[Value::Int(1)]), vec![Acc::Count(3)], &aggs));
        assert!(b.insert(GroupKey::of(&[Value::Int(0)]), vec![Acc::Count(1)], &aggs));
        a.merge_from(&b, &aggs);
        assert_eq!(
            counts(&a),
            vec![
                (vec![Value::Int(0)], Value::Int(1)),
                (vec![Value::Int(1)], Value::Int(5)),
            ]
        );
        let mut strings = SliceTable::default();
        assert!(strings.insert(GroupKey::of(&[Value::Str("x".into())]), vec![Acc::Count(4)], &aggs));
        a.merge_from(&strings, &aggs);
        assert_eq!(counts(&a)[2], (vec![Value::Str("x".into())], Value::Int(4)));
    }
}
