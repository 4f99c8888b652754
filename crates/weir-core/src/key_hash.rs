//! The stable key hash: what `key.hashCode()` is in Flink.
//!
//! Rust's `Hash` is neither stable across releases nor across platforms, so Weir
//! defines its own: the key hash of a key is **MurmurHash3_x86_32 with seed 0 of the
//! key's codec bytes** (the bincode encoding of [`crate::codec`]: fixed-width
//! little-endian integers, strings as a u64 length then UTF-8 bytes), read as an
//! `i32`. It is then spread into a key group exactly as Flink does
//! ([`crate::key_group::assign_to_key_group`]). Test vectors below pin it: a change to
//! them is a change of every job's state layout.

use crate::codec;
use crate::murmur::murmur3_32;
use serde::Serialize;
use std::cell::RefCell;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(64));
}

/// Keys whose encoding fits in this many bytes are encoded on the stack.
const STACK_KEY_BYTES: usize = 64;

/// The stable key hash of `key` (see the module docs).
#[inline]
pub fn key_hash<K: Serialize + ?Sized>(key: &K) -> i32 {
    let mut stack = [0u8; STACK_KEY_BYTES];
    match codec::encode_into_slice(&mut stack, key) {
        Some(len) => murmur3_32(&stack[..len], 0) as i32,
        None => key_hash_of_long_key(key),
    }
}

/// [`key_hash`] of a key whose encoding does not fit on the stack.
#[cold]
fn key_hash_of_long_key<K: Serialize + ?Sized>(key: &K) -> i32 {
    SCRATCH.with(|s| {
        let mut buf = s.borrow_mut();
        buf.clear();
        // Serialising a plain value into a Vec cannot fail; a key type whose
        // Serialize impl fails hashes to the empty encoding rather than panicking.
        if codec::encode_into(&mut buf, key).is_err() {
            buf.clear();
        }
        murmur3_32(&buf, 0) as i32
    })
}

/// Java's `String.hashCode()`; used to compare against Flink's reference values.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(c as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_hash_is_murmur3_of_the_codec_bytes() {
        assert_eq!(key_hash(&1u32), murmur3_32(&1u32.to_le_bytes(), 0) as i32);
        assert_eq!(key_hash(&-1i64), murmur3_32(&(-1i64).to_le_bytes(), 0) as i32);
        let mut a = 1u64.to_le_bytes().to_vec();
        a.push(b'a');
        assert_eq!(key_hash("a"), murmur3_32(&a, 0) as i32);
        let mut t = 7u64.to_le_bytes().to_vec();
        t.extend_from_slice(&1u64.to_le_bytes());
        t.push(b'k');
        assert_eq!(key_hash(&(7u64, "k".to_string())), murmur3_32(&t, 0) as i32);
    }

    #[test]
    fn keys_longer_than_the_stack_buffer_hash_their_whole_encoding() {
        for len in [STACK_KEY_BYTES - 9, STACK_KEY_BYTES - 8, STACK_KEY_BYTES - 7, 1000] {
            let key = "k".repeat(len);
            let mut bytes = (len as u64).to_le_bytes().to_vec();
            bytes.extend_from_slice(key.as_bytes());
            assert_eq!(key_hash(key.as_str()), murmur3_32(&bytes, 0) as i32, "{len}");
        }
    }

    #[test]
    fn key_hash_test_vectors_never_change() {
        let got = [
            key_hash(&0u64),
            key_hash(&42u64),
            key_hash("hello"),
            key_hash(&String::from("a")),
            key_hash(&7i32),
        ];
        assert_eq!(got, PINNED);
    }

    const PINNED: [i32; 5] = [
        1_669_671_676,
        1_871_679_806,
        -474_495_571,
        -2_067_492_596,
        1_343_918_321,
    ];

    #[test]
    fn java_string_hash_matches_java() {
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99_162_322);
    }
}
