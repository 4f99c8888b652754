//! The lines of a text file with their 1-based line numbers, so that a parser
//! downstream can name the line it rejects. Subtask `s` of `p` reads lines
//! `s+1, s+1+p, …` (every subtask reads the file; with parallelism 1 the lines come
//! in file order).

use super::{SplitPosition, SOURCE_BATCH};
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::PathBuf;
use weir_core::StreamRecord;
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

/// Emits `(line number, line)` for the lines of a file that belong to this subtask.
pub struct NumberedLinesSource {
    path: PathBuf,
    reader: Option<BufReader<File>>,
    line_no: u64,
    byte_offset: u64,
    subtask: u64,
    step: u64,
}

impl NumberedLinesSource {
    /// Subtask `subtask` of `parallelism` reading `path`.
    pub fn new(path: impl Into<PathBuf>, subtask: u32, parallelism: u32) -> Self {
        Self {
            path: path.into(),
            reader: None,
            line_no: 0,
            byte_offset: 0,
            subtask: subtask as u64,
            step: parallelism.max(1) as u64,
        }
    }

    fn error(&self, e: std::io::Error) -> TaskError {
        TaskError::io(format!("cannot read input file {}", self.path.display()), e)
    }
}

impl SourceFunction<(u64, String)> for NumberedLinesSource {
    fn poll_next(&mut self, output: &mut dyn Output<(u64, String)>) -> Result<SourceStatus, TaskError> {
        if self.reader.is_none() {
            let mut f = File::open(&self.path).map_err(|e| self.error(e))?;
            f.seek(SeekFrom::Start(self.byte_offset)).map_err(|e| self.error(e))?;
            self.reader = Some(BufReader::new(f));
        }
        let mut line = String::new();
        for _ in 0..SOURCE_BATCH {
            line.clear();
            let n = match self.reader.as_mut() {
                Some(r) => r.read_line(&mut line),
                None => return Ok(SourceStatus::Finished),
            };
            let n = n.map_err(|e| self.error(e))?;
            if n == 0 {
                return Ok(SourceStatus::Finished);
            }
            self.byte_offset += n as u64;
            let mine = self.line_no % self.step == self.subtask;
            self.line_no += 1;
            if mine {
                let trimmed = line.trim_end_matches(['\n', '\r']);
                output.collect(StreamRecord::new((self.line_no, trimmed.to_string())))?;
            }
        }
        Ok(SourceStatus::More)
    }

    fn snapshot_position(&mut self) -> Result<Vec<Vec<u8>>, TaskError> {
        Ok(vec![SplitPosition {
            split: self.subtask as u32,
            num_splits: self.step as u32,
            offset: self.line_no,
            byte_offset: self.byte_offset,
        }
        .encode()?])
    }

    fn restore_position(&mut self, positions: Vec<Vec<u8>>) -> Result<(), TaskError> {
        if let Some(p) = SplitPosition::find(
            &positions,
            self.subtask as u32,
            self.step as u32,
            "numbered lines source",
        )? {
            self.line_no = p.offset;
            self.byte_offset = p.byte_offset;
            self.reader = None;
        }
        Ok(())
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
