//! Helpers for the property tests that feed hostile bytes to Weir's decoders: how
//! many cases to run, mutations of a valid encoding, and the regression corpus of
//! inputs that once crashed a decoder.
//!
//! The case count is each test's CI default unless `WEIR_FUZZ_CASES` asks for more
//! (a long local run). A corpus is a directory of `*.bin` files, replayed in name
//! order by a normal test of the decoder's crate.
//!
//! Compiled for weir-core's own tests and, through the `fuzz` feature, for the other
//! crates' tests (their dev-dependency on weir-core enables it); never in a release
//! binary.

use std::path::{Path, PathBuf};

/// The number of cases a property test runs: `WEIR_FUZZ_CASES` when set to a
/// number, else `ci_default`.
pub fn cases(ci_default: u32) -> u32 {
    std::env::var("WEIR_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ci_default)
}

/// One change to a byte string; `op` picks the kind (modulo 4), `at` the position
/// (modulo the length) and `byte` the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mutation {
    /// 0 flips a bit, 1 overwrites a byte, 2 truncates, 3 inserts a byte (a flip or
    /// overwrite of empty bytes inserts instead).
    pub op: u8,
    /// Where, taken modulo the length of the bytes.
    pub at: usize,
    /// The byte written or inserted (for a flip, its low 3 bits pick the bit).
    pub byte: u8,
}

/// Between `count.start` and `count.end` (exclusive) arbitrary mutations.
pub fn mutations(count: std::ops::Range<usize>) -> impl proptest::strategy::Strategy<Value = Vec<Mutation>> {
    use proptest::prelude::*;
    let one = (any::<u8>(), any::<usize>(), any::<u8>()).prop_map(|(op, at, byte)| Mutation { op, at, byte });
    proptest::collection::vec(one, count)
}

/// `valid` with `mutations` applied in order.
pub fn mutate(valid: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut out = valid.to_vec();
    for m in mutations {
        let len = out.len();
        match m.op % 4 {
            0 if len > 0 => out[m.at % len] ^= 1 << (m.byte % 8),
            1 if len > 0 => out[m.at % len] = m.byte,
            2 => out.truncate(m.at % (len + 1)),
            _ => out.insert(m.at % (len + 1), m.byte),
        }
    }
    out
}

/// The `*.bin` files of `dir` with their bytes, in name order (none when the
/// directory does not exist).
pub fn corpus(dir: &Path) -> std::io::Result<Vec<(PathBuf, Vec<u8>)>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    paths.retain(|p| p.extension().is_some_and(|e| e == "bin"));
    paths.sort();
    paths
        .into_iter()
        .map(|p| std::fs::read(&p).map(|bytes| (p, bytes)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_flip_overwrite_truncate_and_insert() {
        let m = |op, at, byte| Mutation { op, at, byte };
        assert_eq!(mutate(b"abc", &[m(0, 1, 0)]), b"acc");
        assert_eq!(mutate(b"abc", &[m(1, 4, b'x')]), b"axc");
        assert_eq!(mutate(b"abc", &[m(2, 2, 0)]), b"ab");
        assert_eq!(mutate(b"abc", &[m(3, 3, b'd')]), b"abcd");
        assert_eq!(mutate(b"", &[m(0, 7, 1), m(1, 0, 2)]), [2]);
    }

    #[test]
    fn a_missing_corpus_directory_is_empty() {
        assert!(corpus(Path::new("/nonexistent/corpus")).unwrap().is_empty());
    }
}
