//! Group keys: the values of an aggregation's key columns, as the keyed state, the
//! window operator and the timers hold them (they clone a key several times per row).
//!
//! Invariants: a key of one value is [`GroupKey::One`] and of any other number
//! [`GroupKey::Many`]; either way it compares, hashes and serializes as the slice of its
//! values (serialized as a sequence, exactly as a `Vec<Value>`), so its key hash and key
//! group are those of the same values in a `Vec`, and the two forms never disagree.
//! It borrows as `[Value]` (equal hashes and equality), so a hash table of keys is
//! probed with a row's key columns without building a key.
//!
//! [`key_hash_of`] is the stable key hash (`weir_core::key_hash`) of a key read straight
//! from a row's key columns: the codec bytes of the values are written on the stack by
//! hand, so routing a row builds no key and runs no serializer. It equals the key hash
//! of the [`GroupKey`] of the same values for every value (tests pin it), since keyed
//! state and savepoints depend on the key group it gives.

use crate::stack_bytes::StackBytes;
use crate::value::Value;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use weir_core::murmur::murmur3_32;

/// The values of a group key.
#[derive(Debug, Clone)]
pub enum GroupKey {
    /// A key of one column: cloning it copies one value, without allocating.
    One(Value),
    /// A key of no or several columns.
    Many(Vec<Value>),
}

impl GroupKey {
    /// The key of these values.
    #[inline]
    pub fn of(values: &[Value]) -> Self {
        match values {
            [v] => GroupKey::One(v.clone()),
            vs => GroupKey::Many(vs.to_vec()),
        }
    }

    /// The key's values.
    #[inline]
    pub fn values(&self) -> &[Value] {
        match self {
            GroupKey::One(v) => std::slice::from_ref(v),
            GroupKey::Many(vs) => vs,
        }
    }
}

impl From<Vec<Value>> for GroupKey {
    fn from(mut values: Vec<Value>) -> Self {
        match values.len() {
            1 => GroupKey::One(values.pop().unwrap_or_default()),
            _ => GroupKey::Many(values),
        }
    }
}

impl Borrow<[Value]> for GroupKey {
    fn borrow(&self) -> &[Value] {
        self.values()
    }
}

impl PartialEq for GroupKey {
    fn eq(&self, other: &Self) -> bool {
        self.values() == other.values()
    }
}

impl Eq for GroupKey {}

impl PartialOrd for GroupKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for GroupKey {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (GroupKey::One(a), GroupKey::One(b)) => a.cmp(b),
            (a, b) => a.values().cmp(b.values()),
        }
    }
}

impl Hash for GroupKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.values().hash(state);
    }
}

impl Serialize for GroupKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.values())
    }
}

impl<'de> Deserialize<'de> for GroupKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Value>::deserialize(deserializer).map(GroupKey::from)
    }
}

/// Keys whose codec bytes fit in this many bytes are hashed from the stack.
const STACK_KEY_BYTES: usize = 64;

/// Appends the codec bytes of `value` (those of serde's derived `Serialize`: the
/// variant index, then the payload) to `key`.
#[inline]
fn put_value(key: &mut StackBytes<STACK_KEY_BYTES>, value: &Value) {
    let mut variant = |index: u32, payload: &[u8]| {
        key.extend_from_slice(&index.to_le_bytes());
        key.extend_from_slice(payload);
    };
    match value {
        Value::Null => variant(0, &[]),
        Value::Bool(b) => variant(1, &[u8::from(*b)]),
        Value::Int(i) => variant(2, &i.to_le_bytes()),
        Value::Double(d) => variant(3, &d.to_bits().to_le_bytes()),
        Value::Decimal(u, s) => {
            variant(4, &u.to_le_bytes());
            key.push(*s);
        }
        Value::Str(s) => {
            variant(5, &(s.len() as u64).to_le_bytes());
            key.extend_from_slice(s.as_bytes());
        }
        Value::Date(d) => variant(6, &d.to_le_bytes()),
        Value::Time(t) => variant(7, &t.to_le_bytes()),
        Value::Timestamp(ms) => variant(8, &ms.to_le_bytes()),
        Value::Interval(ms) => variant(9, &ms.to_le_bytes()),
    }
}

/// The stable key hash of the key of `values` (see the module docs): what
/// `weir_core::key_hash::key_hash(&GroupKey::of(values))` is, without building the key.
#[inline]
pub fn key_hash_of(values: &[Value]) -> i32 {
    match values {
        [Value::Int(v)] => return key_hash_of_one_word(2, *v as u64),
        [Value::Timestamp(v)] => return key_hash_of_one_word(8, *v as u64),
        _ => {}
    }
    let mut key = StackBytes::<STACK_KEY_BYTES>::new();
    key.extend_from_slice(&(values.len() as u64).to_le_bytes());
    for v in values {
        put_value(&mut key, v);
    }
    match key.bytes() {
        Some(bytes) => murmur3_32(bytes, 0) as i32,
        None => weir_core::key_hash::key_hash(values),
    }
}

/// The key hash of a key of one value of 8 bytes (`bits`) and variant `variant`: its
/// codec bytes are the count 1 (8 bytes), the variant index (4) and the 8 bytes.
#[inline]
fn key_hash_of_one_word(variant: u32, bits: u64) -> i32 {
    let mut bytes = [0u8; 20];
    bytes[0] = 1;
    bytes[8..12].copy_from_slice(&variant.to_le_bytes());
    bytes[12..].copy_from_slice(&bits.to_le_bytes());
    murmur3_32(&bytes, 0) as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn hash(k: &impl Hash) -> u64 {
        let mut h = DefaultHasher::new();
        k.hash(&mut h);
        h.finish()
    }

    #[test]
    fn a_key_hashes_and_encodes_as_the_vector_of_its_values() {
        for values in [
            vec![Value::Int(7)],
            vec![Value::Str("a".into()), Value::Int(-1)],
            vec![],
        ] {
            let key = GroupKey::of(&values);
            assert_eq!(key.values(), &values[..]);
            assert_eq!(hash(&key), hash(&values));
            assert_eq!(
                weir_core::key_hash::key_hash(&key),
                weir_core::key_hash::key_hash(&values)
            );
            let bytes = weir_core::codec::encode(&key).unwrap();
            assert_eq!(bytes, weir_core::codec::encode(&values).unwrap());
            let back: GroupKey = weir_core::codec::decode(&bytes).unwrap();
            assert_eq!(back, key);
            assert_eq!(matches!(back, GroupKey::One(_)), values.len() == 1);
        }
    }

    #[test]
    fn the_key_hash_of_row_columns_is_the_key_hash_of_their_group_key() {
        let mut values = crate::row_codec::every_kind_of_value();
        values.push(Value::Str("k".repeat(STACK_KEY_BYTES - 20)));
        values.push(Value::Str("k".repeat(STACK_KEY_BYTES)));
        let mut keys: Vec<Vec<Value>> = vec![vec![]];
        keys.extend(values.iter().map(|v| vec![v.clone()]));
        keys.extend(values.windows(2).map(<[Value]>::to_vec));
        keys.extend(values.windows(3).map(<[Value]>::to_vec));
        keys.push(values.clone());
        for key in keys {
            let expected = weir_core::key_hash::key_hash(&GroupKey::of(&key));
            assert_eq!(key_hash_of(&key), expected, "{key:?}");
        }
    }

    #[test]
    fn row_key_hashes_and_key_groups_never_change() {
        let keys = [
            vec![Value::Int(7919)],
            vec![Value::Int(0)],
            vec![Value::Str("user-1".into())],
            vec![Value::Timestamp(1_699_999_980_000), Value::Int(42)],
            vec![Value::Double(0.07), Value::Null, Value::Bool(true)],
        ];
        let got: Vec<(i32, u32)> = keys
            .iter()
            .map(|k| {
                let h = key_hash_of(k);
                (h, weir_core::key_group::assign_to_key_group(h, 128))
            })
            .collect();
        assert_eq!(got, PINNED_ROW_KEYS);
    }

    /// Key hashes and key groups (of 128) of the keys above: a change here moves every
    /// SQL job's keyed state to other key groups.
    const PINNED_ROW_KEYS: [(i32, u32); 5] = [
        (-1_882_685_514, 59),
        (236_508_538, 51),
        (1_776_390_021, 31),
        (1_861_664_910, 31),
        (-648_024_008, 56),
    ];

    #[test]
    fn keys_order_as_their_values_do() {
        let one = |i| GroupKey::of(&[Value::Int(i)]);
        assert!(one(1) < one(2));
        assert!(one(2) < GroupKey::of(&[Value::Int(2), Value::Null]));
        assert_eq!(GroupKey::of(&[Value::Int(5)]), GroupKey::of(&[Value::Decimal(500, 2)]));
    }
}
