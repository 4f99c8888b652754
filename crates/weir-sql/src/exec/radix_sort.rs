//! The order of a slice's integer keys: an LSD radix sort of `(key, index)` pairs by
//! the key's bytes, which skips the bytes every key shares (the high bytes of small
//! keys), so a window of a few thousand keys sorts in a few passes without comparisons.
//!
//! Invariant: the indexes come out in ascending order of their keys as `i64`s (equal
//! keys in index order, though a table's keys are distinct).

/// Below this many keys a comparison sort is cheaper than the histograms.
const SMALL: usize = 64;

/// The indexes `0..keys.len()` in ascending order of `keys`.
pub fn ascending_order(keys: &[i64]) -> Vec<u32> {
    // The sign bit flipped: unsigned order of the bits is the signed order of the keys.
    let flip = |k: i64| (k as u64) ^ (1 << 63);
    let mut pairs: Vec<(u64, u32)> = keys.iter().zip(0u32..).map(|(k, i)| (flip(*k), i)).collect();
    if pairs.len() <= SMALL {
        pairs.sort_unstable();
        return pairs.into_iter().map(|(_, i)| i).collect();
    }
    let mut counts = [[0usize; 256]; 8];
    for (k, _) in &pairs {
        for (byte, c) in counts.iter_mut().enumerate() {
            c[((k >> (byte * 8)) & 0xff) as usize] += 1;
        }
    }
    let mut scratch = vec![(0u64, 0u32); pairs.len()];
    for (byte, c) in counts.iter().enumerate() {
        // Every key has the same byte here: this pass would not move anything.
        if c.contains(&pairs.len()) {
            continue;
        }
        let mut next = [0usize; 256];
        let mut at = 0;
        for (slot, n) in next.iter_mut().zip(c) {
            *slot = at;
            at += n;
        }
        for &(k, i) in &pairs {
            let b = ((k >> (byte * 8)) & 0xff) as usize;
            scratch[next[b]] = (k, i);
            next[b] += 1;
        }
        std::mem::swap(&mut pairs, &mut scratch);
    }
    pairs.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_comparison(keys: &[i64]) -> Vec<u32> {
        let mut order: Vec<u32> = (0..keys.len() as u32).collect();
        order.sort_by_key(|i| (keys[*i as usize], *i));
        order
    }

    #[test]
    fn keys_of_every_sign_and_width_come_out_in_ascending_order() {
        let mut keys: Vec<i64> = (0..5000).map(|i: i64| (i * 7919) % 10_000).collect();
        keys.extend([i64::MIN, i64::MAX, -1, 0, -300, 1 << 40, -(1 << 40), 255, 256]);
        assert_eq!(ascending_order(&keys), by_comparison(&keys));
        let few = [3, -1, 2];
        assert_eq!(ascending_order(&few), vec![1, 2, 0]);
        assert!(ascending_order(&[]).is_empty());
        let same_high_bytes: Vec<i64> = (0..100).rev().map(|i| 1_000_000 + i).collect();
        assert_eq!(ascending_order(&same_high_bytes), by_comparison(&same_high_bytes));
    }
}
