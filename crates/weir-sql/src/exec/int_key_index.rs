//! The index of a slice's integer group keys (or of the dense ids a BATCH operator's
//! key dictionary gives them): key → entry number. Keys in a compact range (user ids,
//! item ids, small codes) are held in a dense array of entry numbers over the range
//! `[base, base + slots.len())` with a bit per slot saying whether its key is held, so a
//! probe is a subtraction and a bit test (no hashing), a new key is told from a held one
//! without loading its slot (the bits of a few thousand keys stay in cache while their
//! slots do not), and walking the bits visits the keys in ascending order (no sort);
//! keys spread wider than the array allows turn the index into a hash map.
//!
//! Invariants: every key held maps to one entry number and no two keys to the same
//! one; a dense slot's entry number is meaningful only while its bit is set, and the
//! bits cover exactly the slots; a dense array is never longer than
//! `IntKeyIndex::allowance` allows for the keys it holds (or the keys its table was
//! made for), so its memory stays proportional to the keys.

use rustc_hash::FxHashMap;

/// Slots a dense array of a slice's index may always hold, whatever few keys it holds
/// (16 KiB).
pub const SLICE_SLACK: usize = 4096;

/// Slots a dense array may hold per key.
const SLOTS_PER_KEY: i128 = 4;

#[derive(Debug, Clone)]
enum Repr {
    /// Entry numbers of the keys `base..base + slots.len()`, held where `present` has
    /// their bit set.
    Dense {
        base: i64,
        slots: Vec<u32>,
        present: Vec<u64>,
    },
    /// Keys spread too wide for an array.
    Hashed(FxHashMap<i64, u32>),
}

/// Integer keys → entry numbers.
#[derive(Debug, Clone)]
pub struct IntKeyIndex {
    repr: Repr,
    /// The keys expected (those of the slice before), which the allowance counts.
    room: usize,
    /// Slots a dense array may always hold.
    slack: usize,
}

impl Default for IntKeyIndex {
    /// An empty index with a slice's slack ([`SLICE_SLACK`]).
    fn default() -> Self {
        Self::with_slack(SLICE_SLACK)
    }
}

/// The word of `present` and the bit in it of slot `offset`.
#[inline(always)]
fn bit(offset: usize) -> (usize, u64) {
    (offset / 64, 1 << (offset % 64))
}

impl IntKeyIndex {
    /// An empty index whose dense array may always hold `slack` slots, whatever few keys
    /// it holds (an operator-wide dictionary affords more than each slice's index).
    pub fn with_slack(slack: usize) -> Self {
        IntKeyIndex {
            repr: Repr::Dense {
                base: 0,
                slots: Vec::new(),
                present: Vec::new(),
            },
            room: 0,
            slack,
        }
    }

    /// An empty index for keys like `like` (the keys of the slice before, whose range
    /// and number the next slice's keys are likely to share).
    pub fn for_keys_like(like: &[i64]) -> Self {
        let mut index = Self::default();
        index.reset_for(like);
        index
    }

    /// Empties the index and makes it [`IntKeyIndex::for_keys_like`] `like`, reusing
    /// its memory.
    pub fn reset_for(&mut self, like: &[i64]) {
        let (lo, hi) = match (like.iter().min(), like.iter().max()) {
            (Some(&lo), Some(&hi)) => (lo, hi),
            _ => (0, -1),
        };
        self.reset_for_range(lo, hi, like.len());
    }

    /// Empties the index, reusing its memory, for about `room` keys in `lo..=hi`: a dense
    /// array over the range if the allowance of `room` keys permits, else a hash map.
    pub fn reset_for_range(&mut self, lo: i64, hi: i64, room: usize) {
        self.room = room;
        let span = (hi as i128 - lo as i128 + 1).max(0);
        if span > self.allowance(self.room) {
            match &mut self.repr {
                Repr::Hashed(map) => {
                    map.clear();
                    map.reserve(self.room);
                }
                Repr::Dense { .. } => {
                    self.repr = Repr::Hashed(FxHashMap::with_capacity_and_hasher(self.room, Default::default()))
                }
            }
            return;
        }
        let (mut slots, mut present) = match std::mem::replace(&mut self.repr, Repr::Hashed(FxHashMap::default())) {
            Repr::Dense { slots, present, .. } => (slots, present),
            Repr::Hashed(_) => (Vec::new(), Vec::new()),
        };
        // Slots are meaningless while their bit is clear: only the bits are cleared.
        slots.resize(span as usize, 0);
        present.clear();
        present.resize((span as usize).div_ceil(64), 0);
        self.repr = Repr::Dense {
            base: lo,
            slots,
            present,
        };
    }

    /// The most slots a dense array holding `keys` keys may have.
    fn allowance(&self, keys: usize) -> i128 {
        SLOTS_PER_KEY * keys as i128 + self.slack as i128
    }

    /// The entry number of `key`, if held.
    #[inline]
    pub fn get(&self, key: i64) -> Option<u32> {
        match &self.repr {
            Repr::Dense { base, slots, present } => {
                let offset = usize::try_from(key.wrapping_sub(*base) as u64).ok()?;
                let (word, mask) = bit(offset);
                let held = offset < slots.len() && present[word] & mask != 0;
                held.then(|| slots[offset])
            }
            Repr::Hashed(map) => map.get(&key).copied(),
        }
    }

    /// The entry number of `key`, which becomes `next` (the number of keys held) if the
    /// key is not held yet.
    #[inline(always)]
    pub fn get_or_insert(&mut self, key: i64, next: u32) -> u32 {
        if let Repr::Dense { base, slots, present } = &mut self.repr {
            let offset = key.wrapping_sub(*base) as u64;
            if offset < slots.len() as u64 {
                let offset = offset as usize;
                let (word, mask) = bit(offset);
                if present[word] & mask == 0 {
                    present[word] |= mask;
                    slots[offset] = next;
                    return next;
                }
                return slots[offset];
            }
        }
        self.get_or_insert_outside(key, next)
    }

    /// [`IntKeyIndex::get_or_insert`] of a key outside the dense array, or of a hashed
    /// index.
    #[inline(never)]
    fn get_or_insert_outside(&mut self, key: i64, next: u32) -> u32 {
        if let Repr::Dense { .. } = self.repr {
            self.widen(key, next as usize);
        }
        match &mut self.repr {
            Repr::Hashed(map) => *map.entry(key).or_insert(next),
            Repr::Dense { .. } => self.get_or_insert(key, next),
        }
    }

    /// Makes room for `key`, outside the dense array's range, when `held` keys are
    /// held: the range grows (at least doubling, so keys coming in ascending or
    /// descending order are not copied again and again) while the allowance permits,
    /// else the index turns into a hash map.
    #[cold]
    fn widen(&mut self, key: i64, held: usize) {
        let allowed = self.allowance(held.max(self.room) + 1);
        let Repr::Dense { base, slots, present } = &mut self.repr else {
            return;
        };
        if slots.is_empty() {
            *base = key;
            slots.push(0);
            present.clear();
            present.push(0);
            return;
        }
        let (lo, hi) = (*base as i128, *base as i128 + slots.len() as i128 - 1);
        let len = slots.len() as i128;
        let (lo, hi) = if (key as i128) < lo {
            (
                (key as i128).min(lo - len).max(hi + 1 - allowed).max(i64::MIN as i128),
                hi,
            )
        } else {
            (
                lo,
                (key as i128).max(hi + len).min(lo + allowed - 1).min(i64::MAX as i128),
            )
        };
        let held_slots = held_offsets(present);
        if hi - lo < allowed && lo <= key as i128 && key as i128 <= hi {
            let span = (hi - lo + 1) as usize;
            let shift = (*base as i128 - lo) as usize;
            let mut grown_slots = vec![0; span];
            let mut grown_present = vec![0u64; span.div_ceil(64)];
            for offset in held_slots {
                let (word, mask) = bit(offset + shift);
                grown_present[word] |= mask;
                grown_slots[offset + shift] = slots[offset];
            }
            *base = lo as i64;
            *slots = grown_slots;
            *present = grown_present;
            return;
        }
        let mut map = FxHashMap::with_capacity_and_hasher(held.max(self.room) + 1, Default::default());
        for offset in held_slots {
            map.insert(base.wrapping_add(offset as i64), slots[offset]);
        }
        self.repr = Repr::Hashed(map);
    }

    /// The entry numbers in ascending order of their keys, `keys` being the keys by
    /// entry number.
    pub fn ascending(&self, keys: &[i64]) -> Vec<u32> {
        match &self.repr {
            Repr::Dense { slots, present, .. } => {
                let mut order = Vec::with_capacity(keys.len());
                order.extend(held_offsets(present).map(|offset| slots[offset]));
                order
            }
            Repr::Hashed(_) => super::radix_sort::ascending_order(keys),
        }
    }

    /// Appends to `out` the entry numbers of those of `keys` held, in the order of
    /// `keys` (the dense ids of a dictionary, in its key order).
    pub fn entries_of(&self, keys: &[u32], out: &mut Vec<u32>) {
        match &self.repr {
            Repr::Dense { base, slots, present } => {
                for &k in keys {
                    let offset = (k as i64).wrapping_sub(*base) as u64;
                    if offset < slots.len() as u64 {
                        let (word, mask) = bit(offset as usize);
                        if present[word] & mask != 0 {
                            out.push(slots[offset as usize]);
                        }
                    }
                }
            }
            Repr::Hashed(map) => out.extend(keys.iter().filter_map(|k| map.get(&(*k as i64)).copied())),
        }
    }

    /// Brings a dense array into the cache ([`super::cache_warm`]).
    pub fn warm(&self) {
        if let Repr::Dense { slots, present, .. } = &self.repr {
            super::cache_warm::warm(present);
            super::cache_warm::warm(slots);
        }
    }

    /// True when the keys are held in a dense array (walking them in key order costs
    /// their range, not a sort).
    pub fn is_dense(&self) -> bool {
        matches!(self.repr, Repr::Dense { .. })
    }
}

/// The offsets of the held slots of a dense array whose bits are `present`, ascending.
fn held_offsets(present: &[u64]) -> impl Iterator<Item = usize> + '_ {
    present.iter().enumerate().flat_map(|(w, &bits)| {
        std::iter::successors((bits != 0).then_some(bits), |b| Some(b & (b - 1)).filter(|b| *b != 0))
            .map(move |b| w * 64 + b.trailing_zeros() as usize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inserts `keys` in order, checking each gets the next entry number once.
    fn insert_all(index: &mut IntKeyIndex, keys: &[i64]) {
        let mut held: Vec<i64> = Vec::new();
        for &k in keys {
            let next = held.len() as u32;
            let i = index.get_or_insert(k, next);
            match held.iter().position(|h| *h == k) {
                Some(p) => assert_eq!(i, p as u32, "key {k} held at {p}"),
                None => {
                    assert_eq!(i, next, "new key {k}");
                    held.push(k);
                }
            }
        }
        for (p, k) in held.iter().enumerate() {
            assert_eq!(index.get(*k), Some(p as u32));
        }
        let mut sorted: Vec<u32> = (0..held.len() as u32).collect();
        sorted.sort_by_key(|i| held[*i as usize]);
        assert_eq!(index.ascending(&held), sorted);
    }

    #[test]
    fn keys_of_a_compact_range_stay_in_a_dense_array_in_any_order() {
        let mut index = IntKeyIndex::default();
        let keys: Vec<i64> = (0..20_000).map(|s| (s * 7919) % 4_000).collect();
        insert_all(&mut index, &keys);
        assert!(matches!(index.repr, Repr::Dense { .. }));
        assert_eq!(index.get(4_000), None);
        assert_eq!(index.get(-1), None);

        let mut ascending = IntKeyIndex::default();
        insert_all(&mut ascending, &(0..50_000).collect::<Vec<_>>());
        let mut descending = IntKeyIndex::default();
        insert_all(&mut descending, &(-50_000..0).rev().collect::<Vec<_>>());
        assert!(matches!(ascending.repr, Repr::Dense { .. }));
        assert!(matches!(descending.repr, Repr::Dense { .. }));
    }

    #[test]
    fn keys_spread_wide_turn_the_index_into_a_map_that_keeps_every_entry() {
        let mut index = IntKeyIndex::default();
        insert_all(&mut index, &[5, 3, 5, i64::MAX, 4, i64::MIN, 3, 1 << 40, -9]);
        assert!(matches!(index.repr, Repr::Hashed(_)));
        let mut extremes = IntKeyIndex::default();
        insert_all(&mut extremes, &[i64::MAX, i64::MAX - 1, i64::MIN, i64::MIN + 1]);
    }

    #[test]
    fn an_index_made_for_the_keys_before_takes_them_without_growing() {
        let before: Vec<i64> = (1_000..7_000).rev().collect();
        let mut index = IntKeyIndex::for_keys_like(&before);
        let Repr::Dense { base, slots, .. } = &index.repr else {
            panic!("compact keys give a dense index");
        };
        assert_eq!((*base, slots.len()), (1_000, 6_000));
        insert_all(&mut index, &before);
        let mut wide = IntKeyIndex::for_keys_like(&[0, 1 << 30]);
        assert!(matches!(wide.repr, Repr::Hashed(_)));
        insert_all(&mut wide, &[1 << 30, 8, 0]);
        wide.reset_for(&[1 << 30]);
        assert!(matches!(wide.repr, Repr::Dense { .. }));
        assert_eq!(wide.get(8), None);
        insert_all(&mut wide, &[3, 1 << 30]);
        index.reset_for(&[-5, 5]);
        assert_eq!(index.get(1_000), None);
        insert_all(&mut index, &[5, -5, 0]);
        assert!(matches!(IntKeyIndex::for_keys_like(&[]).repr, Repr::Dense { .. }));
    }

    #[test]
    fn an_index_of_a_larger_slack_keeps_keys_of_a_wider_range_dense() {
        let keys: Vec<i64> = (0..909).map(|s| (s * 11 * 7919) % 10_000).collect();
        let mut slice = IntKeyIndex::default();
        insert_all(&mut slice, &keys);
        assert!(!slice.is_dense(), "909 keys over 10,000 exceed a slice's allowance");
        let mut dictionary = IntKeyIndex::with_slack(1 << 16);
        insert_all(&mut dictionary, &keys);
        assert!(dictionary.is_dense());
        assert_eq!(dictionary.get(1), None);
    }
}
