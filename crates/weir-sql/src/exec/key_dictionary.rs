//! The key dictionary of a BATCH slicing window aggregate: every group key of the
//! operator (of its subtask) gets a dense id, its entry number, the first time it is
//! seen, and the slice tables hold ids in place of keys. In BATCH every window fires at
//! the end of the input, so all slices live at once and each is revisited once per
//! input subpartition; a key is then looked up once in the dictionary (integer keys of
//! a compact range by a dense array, with the larger slack of [`DICTIONARY_SLACK`]
//! since the operator holds one) and once in its slice, whose ids span only the
//! operator's keys, so each slice's index is a small dense array however the keys
//! spread.
//!
//! Invariants: ids are `0..len` and never change; the ascending order, when held, is
//! that of every key held (it is dropped when a key is added). A table of ids holds
//! one-integer keys only, each an id of this dictionary.

use super::int_key_index::IntKeyIndex;
use super::key_entries::KeyEntries;
use super::slice_table::SliceTable;
use crate::key::GroupKey;
use crate::plan::AggCall;
use crate::value::Value;

/// Slots the dictionary's dense array of integer keys may always hold, whatever few
/// keys it holds (256 KiB of entry numbers).
pub const DICTIONARY_SLACK: usize = 1 << 16;

/// Group keys → dense ids.
#[derive(Debug, Clone)]
pub struct KeyDictionary {
    keys: KeyEntries,
    order: Option<KeyOrder>,
}

/// The ids in ascending key order, and the rank of each id in it.
#[derive(Debug, Clone)]
struct KeyOrder {
    ascending: Vec<u32>,
    ranks: Vec<u32>,
}

impl Default for KeyDictionary {
    /// No keys.
    fn default() -> Self {
        KeyDictionary {
            keys: KeyEntries::with_index(IntKeyIndex::with_slack(DICTIONARY_SLACK)),
            order: None,
        }
    }
}

impl KeyDictionary {
    /// The id of the key whose values are `key`, given it now if it has none.
    #[inline(always)]
    pub fn id(&mut self, key: &[Value]) -> i64 {
        let (i, new) = self.keys.entry(key);
        if new {
            self.order = None;
        }
        i as i64
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The keys, by id.
    pub fn keys(&self) -> &KeyEntries {
        &self.keys
    }

    /// The id entry `i` of `table` (a table of ids) stands for.
    #[inline]
    pub fn id_of(table: &SliceTable, i: usize) -> usize {
        table.keys().int_key(i).map_or(usize::MAX, |id| id as usize)
    }

    /// The key of `id` (a NULL for an id not given).
    pub fn key(&self, id: usize) -> GroupKey {
        match id < self.keys.len() {
            true => self.keys.key(id),
            false => GroupKey::One(Value::Null),
        }
    }

    /// `table`, a table of keys (a restored one), as a table of ids of `aggs`.
    pub fn to_ids(&mut self, table: &SliceTable, aggs: &[AggCall]) -> SliceTable {
        let mut ids = SliceTable::default();
        for (key, accs) in table.entries() {
            let id = self.id(key.values());
            ids.insert(GroupKey::One(Value::Int(id)), accs, aggs);
        }
        ids
    }

    /// The entries of `table`, a table of ids, in ascending order of their keys: by
    /// walking the ids in key order when the table's index is dense and holds a good
    /// share of them, else by a radix sort of their ranks.
    pub fn ascending(&mut self, table: &SliceTable) -> Vec<u32> {
        let keys = &self.keys;
        let order = self.order.get_or_insert_with(|| {
            let ascending = keys.sorted_order();
            let mut ranks = vec![0; ascending.len()];
            for (rank, id) in (0u32..).zip(&ascending) {
                ranks[*id as usize] = rank;
            }
            KeyOrder { ascending, ranks }
        });
        let entries = table.keys();
        if let Some(index) = entries
            .int_index()
            .filter(|i| i.is_dense() && entries.len() * 4 >= order.ascending.len())
        {
            let mut walked = Vec::with_capacity(entries.len());
            index.entries_of(&order.ascending, &mut walked);
            return walked;
        }
        let ranks: Vec<i64> = (0..entries.len())
            .map(|i| {
                let id = Self::id_of(table, i);
                order.ranks.get(id).map_or(i64::MAX, |r| *r as i64)
            })
            .collect();
        super::radix_sort::ascending_order(&ranks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::acc::Acc;
    use crate::exec::tests::call;
    use crate::plan::AggFunc;
    use crate::types::DataType;

    /// The keys of `table` (a table of ids) in the order `dictionary` walks them.
    fn walked(dictionary: &mut KeyDictionary, table: &SliceTable) -> Vec<GroupKey> {
        let order = dictionary.ascending(table);
        order
            .into_iter()
            .map(|i| dictionary.key(KeyDictionary::id_of(table, i as usize)))
            .collect()
    }

    #[test]
    fn ids_are_given_in_first_seen_order_and_tables_of_ids_come_out_in_key_order() {
        let aggs = [call(AggFunc::Count, false, None, DataType::BigInt, DataType::BigInt)];
        let mut dictionary = KeyDictionary::default();
        let keys: Vec<i64> = (0..3000).map(|s| (s * 7919) % 10_000).collect();
        for (n, k) in (0i64..).zip(&keys) {
            assert_eq!(dictionary.id(&[Value::Int(*k)]), n);
        }
        assert_eq!(dictionary.id(&[Value::Int(keys[7])]), 7);
        assert!(
            dictionary.keys().is_dense(),
            "3,000 keys over 10,000 are within its slack"
        );
        // A table holding most ids (walked) and one holding a few (sorted by rank).
        let mut most = SliceTable::default();
        let mut few = SliceTable::default();
        for id in (0..3000).rev() {
            most.accumulate_int(id, &aggs, &[], false);
        }
        for id in [2999, 5, 1234] {
            few.accumulate_int(id, &aggs, &[], false);
        }
        let mut sorted: Vec<i64> = keys.clone();
        sorted.sort_unstable();
        let expected: Vec<GroupKey> = sorted.iter().map(|k| GroupKey::One(Value::Int(*k))).collect();
        assert_eq!(walked(&mut dictionary, &most), expected);
        let mut few_keys: Vec<i64> = [2999, 5, 1234].iter().map(|id| keys[*id]).collect();
        few_keys.sort_unstable();
        let expected: Vec<GroupKey> = few_keys.iter().map(|k| GroupKey::One(Value::Int(*k))).collect();
        assert_eq!(walked(&mut dictionary, &few), expected);
    }

    #[test]
    fn a_key_added_after_an_ordering_is_ordered_with_the_rest_and_other_keys_turn_it_general() {
        let aggs = [call(AggFunc::Count, false, None, DataType::BigInt, DataType::BigInt)];
        let mut dictionary = KeyDictionary::default();
        let mut table = SliceTable::default();
        for k in [30, 10] {
            let id = dictionary.id(&[Value::Int(k)]);
            table.accumulate_int(id, &aggs, &[], false);
        }
        let ints = |ks: &[i64]| -> Vec<GroupKey> { ks.iter().map(|k| GroupKey::One(Value::Int(*k))).collect() };
        assert_eq!(walked(&mut dictionary, &table), ints(&[10, 30]));
        let id = dictionary.id(&[Value::Int(20)]);
        table.accumulate_int(id, &aggs, &[], false);
        assert_eq!(walked(&mut dictionary, &table), ints(&[10, 20, 30]));
        let id = dictionary.id(&[Value::Null]);
        table.accumulate_int(id, &aggs, &[], false);
        let mut expected = vec![GroupKey::One(Value::Null)];
        expected.extend(ints(&[10, 20, 30]));
        assert_eq!(walked(&mut dictionary, &table), expected);
        assert_eq!(dictionary.id(&[Value::Int(30)]), 0);
        assert_eq!(dictionary.len(), 4);
    }

    #[test]
    fn a_restored_table_of_keys_becomes_a_table_of_ids_with_the_same_accumulators() {
        let aggs = [call(AggFunc::Count, false, None, DataType::BigInt, DataType::BigInt)];
        let mut dictionary = KeyDictionary::default();
        assert_eq!(dictionary.id(&[Value::Str("b".into())]), 0);
        let mut restored = SliceTable::default();
        assert!(restored.insert(GroupKey::One(Value::Str("a".into())), vec![Acc::Count(3)], &aggs));
        assert!(restored.insert(GroupKey::One(Value::Str("b".into())), vec![Acc::Count(4)], &aggs));
        let ids = dictionary.to_ids(&restored, &aggs);
        let entries: Vec<(GroupKey, Vec<Acc>)> = ids
            .entries()
            .map(|(id, accs)| match id {
                GroupKey::One(Value::Int(id)) => (dictionary.key(id as usize), accs),
                other => panic!("a table of ids holds {other:?}"),
            })
            .collect();
        assert_eq!(
            entries,
            vec![
                (GroupKey::One(Value::Str("a".into())), vec![Acc::Count(3)]),
                (GroupKey::One(Value::Str("b".into())), vec![Acc::Count(4)]),
            ]
        );
        assert_eq!(dictionary.key(99), GroupKey::One(Value::Null));
    }
}
