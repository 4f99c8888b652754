//! [`Entry`]: what a location holds, as every kind of store reports it.

/// What a location holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// A file or an object.
    File,
    /// A directory, or a prefix that has objects below it.
    Directory,
    /// Nothing.
    Missing,
}
