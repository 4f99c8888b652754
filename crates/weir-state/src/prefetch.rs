//! Prefetching a state map's entry: the hash maps of the heap backend are hashbrown
//! tables, and the slot where a lookup (or an insert) of a hash starts probing follows
//! from the hash and the table's size alone, so its control bytes and first buckets
//! can be requested from memory before the access, without waiting for them.
//!
//! Keyed operators touch one entry per record in no particular order, and most of the
//! time goes into waiting for those cache misses; a prefetch issued one record (or one
//! timer) ahead overlaps the wait with the work on the record before.
//!
//! A prefetch is only a hint to the CPU: it reads nothing into the program, cannot
//! fault, and a wrong guess (a collision moved the entry further) costs only the
//! miss the access would have had anyway.

use hashbrown::raw::RawTable;
use std::hash::{BuildHasher, Hash, Hasher};

/// The state maps of the heap backend: hashbrown maps with the Fx hash.
pub(crate) type StateMap<K, V> = hashbrown::HashMap<K, V, rustc_hash::FxBuildHasher>;

/// The hash `map` gives the key `(key, namespace)` (a tuple hashes its fields in
/// order), without building the tuple.
pub(crate) fn entry_hash<K: Hash, N: Hash, V>(map: &StateMap<(K, N), V>, key: &K, namespace: &N) -> u64 {
    let mut hasher = map.hasher().build_hasher();
    key.hash(&mut hasher);
    namespace.hash(&mut hasher);
    hasher.finish()
}

/// Requests the control bytes and the first two buckets of the probe sequence of
/// `hash` in `table` into the cache.
pub(crate) fn prefetch_slot<T>(table: &RawTable<T>, hash: u64) {
    // Buckets are laid out backwards from `data_end`, the control bytes forwards from
    // it; the probe starts at `hash & (buckets - 1)` (hashbrown's `h1`). Wrapping
    // arithmetic: the addresses are only handed to the prefetch instruction.
    let pos = (hash as usize) & (table.buckets() - 1);
    let end = table.data_end().as_ptr();
    let ctrl = end.cast::<u8>().wrapping_add(pos);
    let bucket = end.wrapping_sub(pos + 1).cast::<u8>();
    prefetch_line(ctrl);
    prefetch_line(bucket);
    prefetch_line(bucket.wrapping_sub(std::mem::size_of::<T>()));
}

#[inline(always)]
fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch does not access memory architecturally; any address is fine.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_hash_is_the_maps_hash_of_the_key_namespace_tuple() {
        let mut map: StateMap<(String, u64), u8> = StateMap::default();
        map.insert(("k".to_string(), 7), 1);
        let expected = map.hasher().hash_one(&("k".to_string(), 7u64));
        assert_eq!(entry_hash(&map, &"k".to_string(), &7u64), expected);
    }

    #[test]
    fn prefetching_any_hash_of_an_empty_or_a_full_table_leaves_it_unchanged() {
        let mut map: StateMap<(u64, u64), u64> = StateMap::default();
        for h in [0, 1, u64::MAX] {
            prefetch_slot(map.raw_table(), h);
        }
        for i in 0..1000 {
            map.insert((i, i), i);
            prefetch_slot(map.raw_table(), entry_hash(&map, &i, &i));
        }
        assert_eq!(map.len(), 1000);
        assert!((0..1000).all(|i| map.get(&(i, i)) == Some(&i)));
    }
}
