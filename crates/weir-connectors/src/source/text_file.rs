//! Lines of a text file. Subtask `s` of `p` reads lines `s, s+p, …` (every subtask
//! reads the file; with parallelism 1 the lines come in file order).

use super::{SplitPosition, SOURCE_BATCH};
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::PathBuf;
use weir_core::StreamRecord;
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

/// Emits the lines of a file that belong to this subtask.
pub struct TextFileSource {
    path: PathBuf,
    reader: Option<BufReader<File>>,
    line_no: u64,
    byte_offset: u64,
    subtask: u64,
    step: u64,
}

impl TextFileSource {
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
}

impl SourceFunction<String> for TextFileSource {
    fn poll_next(&mut self, output: &mut dyn Output<String>) -> Result<SourceStatus, TaskError> {
        if self.reader.is_none() {
            let mut f = File::open(&self.path)
                .map_err(|e| TaskError::io(format!("cannot read input file {}", self.path.display()), e))?;
            f.seek(SeekFrom::Start(self.byte_offset))
                .map_err(|e| TaskError::io(format!("cannot read input file {}", self.path.display()), e))?;
            self.reader = Some(BufReader::new(f));
        }
        let Some(reader) = self.reader.as_mut() else {
            return Ok(SourceStatus::Finished);
        };
        let mut line = String::new();
        for _ in 0..SOURCE_BATCH {
            line.clear();
            let n = reader
                .read_line(&mut line)
                .map_err(|e| TaskError::io(format!("cannot read input file {}", self.path.display()), e))?;
            if n == 0 {
                return Ok(SourceStatus::Finished);
            }
            self.byte_offset += n as u64;
            let mine = self.line_no % self.step == self.subtask;
            self.line_no += 1;
            if mine {
                let trimmed = line.trim_end_matches(['\n', '\r']);
                output.collect(StreamRecord::new(trimmed.to_string()))?;
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
        if let Some(p) = SplitPosition::find(&positions, self.subtask as u32, self.step as u32, "text file source")? {
            self.line_no = p.offset;
            self.byte_offset = p.byte_offset;
            self.reader = None;
        }
        Ok(())
    }
}
