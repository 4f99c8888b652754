//! Group keys: the values of an aggregation's key columns, as the keyed state, the
//! window operator and the timers hold them (they clone a key several times per row).
//!
//! Invariants: a key of one value is [`GroupKey::One`] and of any other number
//! [`GroupKey::Many`]; either way it compares, hashes and serializes as the slice of its
//! values (serialized as a sequence, exactly as a `Vec<Value>`), so its key hash and key
//! group are those of the same values in a `Vec`, and the two forms never disagree.
//! It borrows as `[Value]` (equal hashes and equality), so a hash table of keys is
//! probed with a row's key columns without building a key.

use crate::value::Value;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

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
    fn keys_order_as_their_values_do() {
        let one = |i| GroupKey::of(&[Value::Int(i)]);
        assert!(one(1) < one(2));
        assert!(one(2) < GroupKey::of(&[Value::Int(2), Value::Null]));
        assert_eq!(GroupKey::of(&[Value::Int(5)]), GroupKey::of(&[Value::Decimal(500, 2)]));
    }
}
