//! Identifiers, written as Flink writes them: 32 lower-case hex characters.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A 128-bit random identifier.
fn random_u128() -> u128 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let seed = nanos ^ ((std::process::id() as u128) << 64) ^ ((n as u128) << 96);
    let hi = splitmix64(seed as u64 ^ n);
    let lo = splitmix64((seed >> 64) as u64 ^ hi);
    ((hi as u128) << 64) | lo as u128
}

/// SplitMix64: a tiny, well-known mixing function (also the generator sources' PRNG).
pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

macro_rules! hex_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub struct $name(pub u128);

        impl $name {
            /// A fresh random id.
            pub fn random() -> Self {
                Self(random_u128())
            }

            /// Parses 32 hex characters.
            pub fn parse(s: &str) -> Option<Self> {
                if s.len() != 32 {
                    return None;
                }
                u128::from_str_radix(s, 16).ok().map(Self)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{:032x}", self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:032x})", stringify!($name), self.0)
            }
        }
    };
}

hex_id!(
    /// Identifies a job.
    JobId
);
hex_id!(
    /// Identifies a JobVertex; derived deterministically from the StreamGraph.
    JobVertexId
);
hex_id!(
    /// Identifies an IntermediateDataSet (the output of a JobVertex to one consumer).
    IntermediateDataSetId
);
hex_id!(
    /// Identifies one execution attempt of one subtask.
    ExecutionAttemptId
);
hex_id!(
    /// Identifies an operator across job versions (Flink's `OperatorID`): derived from
    /// its `uid` when one is set, else from its place in the StreamGraph. Checkpointed
    /// state is stored and matched by it.
    OperatorId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_print_as_32_hex_chars_and_parse_back() {
        let id = JobId::random();
        let s = id.to_string();
        assert_eq!(s.len(), 32);
        assert_eq!(JobId::parse(&s), Some(id));
        assert_eq!(JobId::parse("xyz"), None);
        assert_ne!(JobId::random(), JobId::random());
    }
}
