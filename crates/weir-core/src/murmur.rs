//! MurmurHash3 (x86, 32-bit), the hash Flink uses for key groups.
//!
//! [`murmur3_32`] hashes a byte string with a seed; [`flink_murmur_hash`] is Flink's
//! `MathUtils.murmurHash(int)`: the 32-bit hash of the four little-endian bytes of an
//! int with seed 0, made non-negative (negative values negated, `i32::MIN` → 0).

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

#[inline]
fn mix_k1(mut k1: u32) -> u32 {
    k1 = k1.wrapping_mul(C1);
    k1 = k1.rotate_left(15);
    k1.wrapping_mul(C2)
}

#[inline]
fn mix_h1(mut h1: u32, k1: u32) -> u32 {
    h1 ^= k1;
    h1 = h1.rotate_left(13);
    h1.wrapping_mul(5).wrapping_add(0xe654_6b64)
}

#[inline]
fn fmix(mut h1: u32, len: u32) -> u32 {
    h1 ^= len;
    h1 ^= h1 >> 16;
    h1 = h1.wrapping_mul(0x85eb_ca6b);
    h1 ^= h1 >> 13;
    h1 = h1.wrapping_mul(0xc2b2_ae35);
    h1 ^ (h1 >> 16)
}

/// MurmurHash3_x86_32 of `data` with `seed`, as in the reference implementation.
#[inline]
pub fn murmur3_32(data: &[u8], seed: u32) -> u32 {
    let mut h1 = seed;
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        let k1 = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        h1 = mix_h1(h1, mix_k1(k1));
    }
    let tail = chunks.remainder();
    let mut k1: u32 = 0;
    if tail.len() >= 3 {
        k1 ^= (tail[2] as u32) << 16;
    }
    if tail.len() >= 2 {
        k1 ^= (tail[1] as u32) << 8;
    }
    if !tail.is_empty() {
        k1 ^= tail[0] as u32;
        h1 ^= mix_k1(k1);
    }
    fmix(h1, data.len() as u32)
}

/// Flink's `MathUtils.murmurHash(int code)`: always in `0..=i32::MAX`.
#[inline]
pub fn flink_murmur_hash(code: i32) -> i32 {
    let h = murmur3_32(&code.to_le_bytes(), 0) as i32;
    if h >= 0 {
        h
    } else if h != i32::MIN {
        -h
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flink_murmur_matches_reference_values() {
        assert_eq!(flink_murmur_hash(0), 593_689_054);
        assert_eq!(flink_murmur_hash(1), 68_075_478);
        assert_eq!(flink_murmur_hash(2), 1_085_422_463);
    }

    #[test]
    fn murmur3_32_matches_reference_vectors() {
        assert_eq!(murmur3_32(b"", 0), 0);
        assert_eq!(murmur3_32(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3_32(b"hello", 0), 0x248b_fa47);
        assert_eq!(
            murmur3_32(b"The quick brown fox jumps over the lazy dog", 0),
            0x2e4f_f723
        );
    }
}
