//! Unguessable identifiers: a TaskManager registration's instance id (Flink's
//! `InstanceID`) and a JobMaster's fencing token (Flink's `JobMasterId`). A peer must
//! have been told one to use it, so they come from the operating system's random
//! source rather than from the clock like the other ids.

use std::hash::{BuildHasher, Hasher};
use std::io::Read;

/// 128 random bits as 32 lower-case hex characters.
pub fn fresh_secret_id() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if let Err(e) = read {
        // Without /dev/urandom: the standard library's per-process random hash keys.
        tracing::debug!("no /dev/urandom ({e}); using the hasher's random keys");
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(nanos);
            h.write_usize(i);
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_ids_are_32_hex_characters_and_differ_each_time() {
        let (a, b) = (fresh_secret_id(), fresh_secret_id());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
