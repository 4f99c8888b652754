//! Malformed lines (not valid UTF-8, longer than the bound): how the text-file readers
//! treat them, and their errors and warnings, worded the same whichever reader found
//! them.

use super::DEFAULT_MAX_LINE_LENGTH;
use std::path::Path;
use weir_runtime::TaskError;

/// Line `line_number` (from 1) of `path` is not valid UTF-8; its first invalid byte is
/// at `column` (from 1).
pub(crate) fn invalid_utf8(source: &str, path: &Path, line_number: u64, column: usize) -> TaskError {
    TaskError::user(
        source,
        format!(
            "line {line_number} of {}: not valid UTF-8 (first invalid byte at column {column})",
            path.display()
        ),
    )
}

/// Line `line_number` (from 1) of `path` has more than `max` bytes; `read_so_far` of
/// them were read when that was found.
pub(crate) fn too_long(source: &str, path: &Path, line_number: u64, max: usize, read_so_far: usize) -> TaskError {
    TaskError::user(
        source,
        format!(
            "line {line_number} of {} is longer than the limit of {max} bytes ({read_so_far} bytes read so far); \
             raise the source's max line length or skip malformed lines",
            path.display()
        ),
    )
}

/// How a line reader treats malformed lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MalformedLines {
    /// The most bytes a line may have before its `\n` (at least 1 is used).
    pub max_line_length: usize,
    /// Count and skip lines that are not valid UTF-8 or longer than the bound, instead
    /// of failing on them.
    pub skip: bool,
}

impl Default for MalformedLines {
    /// Lines of up to [`DEFAULT_MAX_LINE_LENGTH`] bytes; a malformed line fails.
    fn default() -> Self {
        Self {
            max_line_length: DEFAULT_MAX_LINE_LENGTH,
            skip: false,
        }
    }
}

/// Malformed lines a reader skipped (when told to skip rather than fail).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SkippedLines {
    /// Lines that were not valid UTF-8.
    pub invalid_utf8: u64,
    /// Lines longer than the bound.
    pub too_long: u64,
}

impl SkippedLines {
    /// Logs what was skipped of `path`, if anything.
    pub fn warn(&self, source: &str, path: &Path, max_line_length: usize) {
        if self.invalid_utf8 > 0 {
            tracing::warn!(
                skipped = self.invalid_utf8,
                "{source} skipped lines of {} that are not valid UTF-8",
                path.display()
            );
        }
        if self.too_long > 0 {
            tracing::warn!(
                skipped = self.too_long,
                max_line_length,
                "{source} skipped lines of {} longer than the limit",
                path.display()
            );
        }
    }
}
