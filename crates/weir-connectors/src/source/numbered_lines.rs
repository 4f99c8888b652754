//! The lines of a text file with their 1-based line numbers, so that a parser
//! downstream can name the line it rejects. Subtask `s` of `p` reads lines
//! `s+1, s+1+p, …` (every subtask reads the file; with parallelism 1 the lines come
//! in file order).

use super::lines::LineSplitReader;
use std::path::PathBuf;
use weir_core::StreamRecord;
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

/// Emits `(line number, line)` for the lines of a file that belong to this subtask.
pub struct NumberedLinesSource {
    lines: LineSplitReader,
}

impl NumberedLinesSource {
    /// Subtask `subtask` of `parallelism` over the file at `path`.
    pub fn new(path: impl Into<PathBuf>, subtask: u32, parallelism: u32) -> Self {
        Self {
            lines: LineSplitReader::new(path.into(), "numbered lines source", subtask, parallelism),
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

impl SourceFunction<(u64, String)> for NumberedLinesSource {
    fn poll_next(&mut self, output: &mut dyn Output<(u64, String)>) -> Result<SourceStatus, TaskError> {
        self.lines
            .read_batch(|index, line| output.collect(StreamRecord::new((index + 1, line.to_string()))))
    }

    fn snapshot_position(&mut self) -> Result<Vec<Vec<u8>>, TaskError> {
        self.lines.snapshot()
    }

    fn restore_position(&mut self, positions: Vec<Vec<u8>>) -> Result<(), TaskError> {
        self.lines.restore(&positions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use weir_core::Watermark;

    #[derive(Default)]
    struct Lines(Vec<(u64, String)>);

    impl Output<(u64, String)> for Lines {
        fn collect(&mut self, r: StreamRecord<(u64, String)>) -> Result<(), TaskError> {
            self.0.push(r.value);
            Ok(())
        }
        fn emit_watermark(&mut self, _w: Watermark) -> Result<(), TaskError> {
            Ok(())
        }
        fn end_input(&mut self) -> Result<(), TaskError> {
            Ok(())
        }
    }

    #[test]
    fn subtasks_split_the_lines_and_keep_their_file_line_numbers() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        write!(f, "a\r\nb\nc\n").unwrap();
        let mut second = Lines::default();
        let mut src = NumberedLinesSource::new(f.path(), 1, 2);
        while src.poll_next(&mut second).unwrap() == SourceStatus::More {}
        assert_eq!(second.0, vec![(2, "b".to_string())]);
        let mut all = Lines::default();
        let mut src = NumberedLinesSource::new(f.path(), 0, 1);
        while src.poll_next(&mut all).unwrap() == SourceStatus::More {}
        assert_eq!(
            all.0,
            vec![(1, "a".to_string()), (2, "b".to_string()), (3, "c".to_string())]
        );
    }

    #[test]
    fn a_missing_file_names_the_path() {
        let mut src = NumberedLinesSource::new("/nonexistent/orders.csv", 0, 1);
        let err = src.poll_next(&mut Lines::default()).unwrap_err().to_string();
        assert!(err.contains("cannot read input file /nonexistent/orders.csv"), "{err}");
    }
}
