//! Which binary a process runs: its name and version, and the programs it was built
//! with. Every process of a cluster must run the same binary, because a job's code
//! travels as a program name (DESIGN.md, "User code"): a TaskManager of another binary
//! could build a different pipeline under the same name, or none.

use weir_core::murmur::murmur3_32;

/// The version of Weir itself.
pub const WEIR_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A binary's name and version: `weir 0.1.0`, or a user's `user-job 0.3.1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryInfo {
    /// The binary's (crate's) name.
    pub name: String,
    /// Its version.
    pub version: String,
}

impl BinaryInfo {
    /// The binary `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
        }
    }

    /// The stock `weir` binary.
    pub fn weir() -> Self {
        Self::new("weir", WEIR_VERSION)
    }
}

impl Default for BinaryInfo {
    fn default() -> Self {
        Self::weir()
    }
}

impl std::fmt::Display for BinaryInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.name, self.version)
    }
}

/// What two processes compare to know they run the same binary: its name and version,
/// Weir's version, and a fingerprint of its program names, e.g.
/// `user-job 0.1.0 (weir 0.1.0, 9 programs, fingerprint 3fa9c2d1)`.
pub fn binary_identity<'a>(binary: &BinaryInfo, program_names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names: Vec<&str> = program_names.into_iter().collect();
    names.sort_unstable();
    let fingerprint = murmur3_32(names.join("\n").as_bytes(), 0);
    format!(
        "{binary} (weir {WEIR_VERSION}, {} programs, fingerprint {fingerprint:08x})",
        names.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_names_the_binary_and_changes_with_its_programs() {
        let user = BinaryInfo::new("user-job", "0.3.1");
        let a = binary_identity(&user, ["b", "a"]);
        assert!(
            a.starts_with(&format!(
                "user-job 0.3.1 (weir {WEIR_VERSION}, 2 programs, fingerprint "
            )),
            "{a}"
        );
        assert_eq!(a, binary_identity(&user, ["a", "b"]), "order does not matter");
        assert_ne!(a, binary_identity(&user, ["a", "c"]));
        assert_ne!(a, binary_identity(&BinaryInfo::new("user-job", "0.3.2"), ["a", "b"]));
        assert_eq!(BinaryInfo::weir().to_string(), format!("weir {WEIR_VERSION}"));
    }
}
