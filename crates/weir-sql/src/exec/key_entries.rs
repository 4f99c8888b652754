//! The keys of a slice table (or of a BATCH operator's key dictionary), numbered in the
//! order they were first seen: key → entry number, and entry number → key.
//!
//! Keys of one integer column (the common `GROUP BY user_id`) are held as plain `i64`s
//! indexed by an [`IntKeyIndex`]; any other key (several columns, strings, a NULL) as a
//! [`GroupKey`] in a hash map (integer keys turn into that form when such a key comes).
//! The index of integer keys may be released ([`KeyEntries::release_index`]) and is
//! rebuilt from the keys when a key comes after all.
//!
//! Invariants: entry `i` is key `i` of the key column; the index, when held, maps every
//! key to its entry, and a key is in it once. Keys are probed with a row's key columns
//! (`&[Value]`), so a key is copied only when it is first seen.

use super::int_key_index::IntKeyIndex;
use crate::key::GroupKey;
use crate::value::Value;
use rustc_hash::FxHashMap;

/// The keys of a table, in the order they were first seen.
#[derive(Debug, Clone)]
pub enum KeyEntries {
    /// Keys of one integer column; the index `None` when released.
    Ints {
        /// Key → entry number.
        index: Option<IntKeyIndex>,
        /// The keys by entry number.
        keys: Vec<i64>,
    },
    /// Any keys.
    General {
        /// Key → entry number.
        index: FxHashMap<GroupKey, u32>,
        /// The keys by entry number.
        keys: Vec<GroupKey>,
    },
}

impl Default for KeyEntries {
    /// No keys; integer keys of a compact range will be indexed densely.
    fn default() -> Self {
        KeyEntries::with_index(IntKeyIndex::default())
    }
}

impl KeyEntries {
    /// No keys, integer keys indexed by `index` (empty).
    pub fn with_index(index: IntKeyIndex) -> Self {
        KeyEntries::Ints {
            index: Some(index),
            keys: Vec::new(),
        }
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        match self {
            KeyEntries::Ints { keys, .. } => keys.len(),
            KeyEntries::General { keys, .. } => keys.len(),
        }
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry of `key` and whether it was added now.
    #[inline(always)]
    pub fn entry(&mut self, key: &[Value]) -> (usize, bool) {
        if let [Value::Int(k)] = key {
            if let KeyEntries::Ints { .. } = self {
                return self.entry_int(*k);
            }
        }
        let (index, keys) = self.general();
        match index.get(key) {
            Some(&i) => (i as usize, false),
            None => {
                let i = keys.len();
                let owned = GroupKey::of(key);
                index.insert(owned.clone(), i as u32);
                keys.push(owned);
                (i, true)
            }
        }
    }

    /// The entry of the one-integer key `k` and whether it was added now.
    #[inline(always)]
    pub fn entry_int(&mut self, k: i64) -> (usize, bool) {
        match self {
            KeyEntries::Ints { index, keys } => {
                let next = keys.len() as u32;
                let i = index.get_or_insert_with(|| rebuilt_index(keys)).get_or_insert(k, next);
                if i == next {
                    keys.push(k);
                }
                (i as usize, i == next)
            }
            KeyEntries::General { .. } => self.entry(&[Value::Int(k)]),
        }
    }

    /// The general form, integer keys turned into [`GroupKey`]s.
    fn general(&mut self) -> (&mut FxHashMap<GroupKey, u32>, &mut Vec<GroupKey>) {
        if let KeyEntries::Ints { keys: ints, .. } = self {
            let keys: Vec<GroupKey> = ints.iter().map(|k| GroupKey::One(Value::Int(*k))).collect();
            let index = keys.iter().cloned().zip(0u32..).collect();
            *self = KeyEntries::General { index, keys };
        }
        match self {
            KeyEntries::General { index, keys } => (index, keys),
            KeyEntries::Ints { .. } => unreachable!("integer keys were just made general"),
        }
    }

    /// The key of entry `i`.
    pub fn key(&self, i: usize) -> GroupKey {
        match self {
            KeyEntries::Ints { keys, .. } => GroupKey::One(Value::Int(keys[i])),
            KeyEntries::General { keys, .. } => keys[i].clone(),
        }
    }

    /// True when `key` is held.
    pub fn contains(&mut self, key: &GroupKey) -> bool {
        match (self, key) {
            (KeyEntries::Ints { index, keys }, GroupKey::One(Value::Int(k))) => {
                index.get_or_insert_with(|| rebuilt_index(keys)).get(*k).is_some()
            }
            (KeyEntries::Ints { .. }, _) => false,
            (KeyEntries::General { index, .. }, key) => index.contains_key(key),
        }
    }

    /// Takes the index of integer keys out (rebuilt if a key comes after all), for
    /// another table to reuse; `None` if none is held.
    pub fn release_index(&mut self) -> Option<IntKeyIndex> {
        match self {
            KeyEntries::Ints { index, .. } => index.take(),
            KeyEntries::General { .. } => None,
        }
    }

    /// Empties the keys for keys like those of `before` (or their own, when `None`),
    /// keeping their memory, with `recycled` as the index when they hold none of their
    /// own; the number of keys to make room for.
    pub fn reset_like(&mut self, before: Option<&KeyEntries>, recycled: Option<IntKeyIndex>) -> usize {
        let (mut index, mut keys) = match std::mem::take(self) {
            KeyEntries::Ints { index, keys } => (index.or(recycled).unwrap_or_default(), keys),
            KeyEntries::General { keys, .. } => (recycled.unwrap_or_default(), Vec::with_capacity(keys.len())),
        };
        let room = match before {
            Some(KeyEntries::Ints { keys: like, .. }) => {
                index.reset_for(like);
                like.len()
            }
            Some(KeyEntries::General { keys: like, .. }) => {
                index.reset_for(&[]);
                like.len()
            }
            None => {
                index.reset_for(&keys);
                keys.len()
            }
        };
        // Room for a few more keys than the slice before held, so a slice of about
        // as many keys is not copied to grow.
        let room = room + room / 8;
        keys.clear();
        keys.reserve(room);
        *self = KeyEntries::Ints {
            index: Some(index),
            keys,
        };
        room
    }

    /// Empties the keys, keeping their memory, for `room` of the dense ids of a
    /// dictionary of `ids` keys.
    pub fn reset_for_ids(&mut self, room: usize, ids: usize) {
        let (mut index, mut keys) = match std::mem::take(self) {
            KeyEntries::Ints { index, keys } => (index.unwrap_or_default(), keys),
            KeyEntries::General { keys, .. } => (IntKeyIndex::default(), Vec::with_capacity(keys.len())),
        };
        index.reset_for_range(0, ids as i64 - 1, room);
        keys.clear();
        keys.reserve(room);
        *self = KeyEntries::Ints {
            index: Some(index),
            keys,
        };
    }

    /// Brings integer keys and their dense index into the cache
    /// ([`super::cache_warm`]).
    pub fn warm(&self) {
        if let KeyEntries::Ints { index, keys } = self {
            super::cache_warm::warm(keys);
            if let Some(index) = index {
                index.warm();
            }
        }
    }

    /// The entries in ascending key order.
    pub fn sorted_order(&self) -> Vec<u32> {
        match self {
            KeyEntries::Ints {
                index: Some(index),
                keys,
            } => index.ascending(keys),
            KeyEntries::Ints { index: None, keys } => super::radix_sort::ascending_order(keys),
            KeyEntries::General { keys, .. } => {
                let mut order: Vec<u32> = (0..keys.len() as u32).collect();
                order.sort_unstable_by(|a, b| keys[*a as usize].cmp(&keys[*b as usize]));
                order
            }
        }
    }

    /// Appends the values of entry `i`'s key to `out`.
    #[inline]
    pub fn push_key(&self, i: usize, out: &mut Vec<Value>) {
        match self {
            KeyEntries::Ints { keys, .. } => out.push(Value::Int(keys[i])),
            KeyEntries::General { keys, .. } => out.extend(keys[i].values().iter().cloned()),
        }
    }

    /// Value `k` of entry `i`'s key (NULL past the key's values).
    #[inline]
    pub fn key_value(&self, i: usize, k: usize) -> Value {
        match self {
            KeyEntries::Ints { keys, .. } if k == 0 => Value::Int(keys[i]),
            KeyEntries::Ints { .. } => Value::Null,
            KeyEntries::General { keys, .. } => keys[i].values().get(k).cloned().unwrap_or_default(),
        }
    }

    /// Appends value `k` of the keys of `entries` (NULL past a key's values) to `rows`,
    /// one each, in order.
    pub fn push_key_column(&self, k: usize, entries: impl Iterator<Item = usize>, rows: &mut [Vec<Value>]) {
        match self {
            KeyEntries::Ints { keys, .. } if k == 0 => {
                for (row, i) in rows.iter_mut().zip(entries) {
                    row.push(Value::Int(keys[i]));
                }
            }
            _ => {
                for (row, i) in rows.iter_mut().zip(entries) {
                    row.push(self.key_value(i, k));
                }
            }
        }
    }

    /// The number of values of entry `i`'s key.
    pub fn key_width(&self, i: usize) -> usize {
        match self {
            KeyEntries::Ints { .. } => 1,
            KeyEntries::General { keys, .. } => keys[i].values().len(),
        }
    }

    /// The one-integer key of entry `i` (`None` for keys of another form).
    #[inline]
    pub fn int_key(&self, i: usize) -> Option<i64> {
        match self {
            KeyEntries::Ints { keys, .. } => keys.get(i).copied(),
            KeyEntries::General { keys, .. } => match keys.get(i) {
                Some(GroupKey::One(Value::Int(k))) => Some(*k),
                _ => None,
            },
        }
    }

    /// True when integer keys are held with a dense index.
    pub fn is_dense(&self) -> bool {
        matches!(self, KeyEntries::Ints { index: Some(index), .. } if index.is_dense())
    }

    /// The index of integer keys, if held.
    pub fn int_index(&self) -> Option<&IntKeyIndex> {
        match self {
            KeyEntries::Ints { index, .. } => index.as_ref(),
            KeyEntries::General { .. } => None,
        }
    }
}

/// The index of `keys` (distinct keys, by entry number).
#[cold]
#[inline(never)]
fn rebuilt_index(keys: &[i64]) -> IntKeyIndex {
    let mut index = IntKeyIndex::for_keys_like(keys);
    for (i, k) in (0u32..).zip(keys) {
        index.get_or_insert(*k, i);
    }
    index
}
