//! Lines of a text file. Subtask `s` of `p` reads lines `s, s+p, …` (every subtask
//! reads the file; with parallelism 1 the lines come in file order).

use super::lines::LineSplitReader;
use std::path::PathBuf;
use weir_core::StreamRecord;
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

/// Emits the lines of a file that belong to this subtask.
pub struct TextFileSource {
    lines: LineSplitReader,
}

impl TextFileSource {
    /// Subtask `subtask` of `parallelism` over the file at `path`.
    pub fn new(path: impl Into<PathBuf>, subtask: u32, parallelism: u32) -> Self {
        Self {
            lines: LineSplitReader::new(path.into(), "text file source", subtask, parallelism),
        }
    }

    /// Counts and skips lines that are not valid UTF-8 or longer than the bound
    /// instead of failing on them.
    pub fn skip_malformed_lines(self, skip: bool) -> Self {
        Self {
            lines: self.lines.skip_malformed_lines(skip),
        }
    }

    /// The most bytes a line may have ([`DEFAULT_MAX_LINE_LENGTH`](super::DEFAULT_MAX_LINE_LENGTH)
    /// unless set); a longer line fails the source naming it, or is skipped.
    pub fn max_line_length(self, bytes: usize) -> Self {
        Self {
            lines: self.lines.max_line_length(bytes),
        }
    }
}

impl SourceFunction<String> for TextFileSource {
    fn poll_next(&mut self, output: &mut dyn Output<String>) -> Result<SourceStatus, TaskError> {
        self.lines
            .read_batch(|_, line| output.collect(StreamRecord::new(line.to_string())))
    }

    fn snapshot_position(&mut self) -> Result<Vec<Vec<u8>>, TaskError> {
        self.lines.snapshot()
    }

    fn restore_position(&mut self, positions: Vec<Vec<u8>>) -> Result<(), TaskError> {
        self.lines.restore(&positions)
    }
}
