//! The errors and warnings of the text-file readers about malformed lines (not valid
//! UTF-8, longer than the bound), worded the same whichever reader found them.

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
