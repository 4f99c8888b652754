//! The rows of a filesystem table's files: each file's lines, read for this subtask's
//! byte-range split of it ([`RangeLineReader`]), one file after the other, and each
//! line converted to a row in place (the line is borrowed from the reader's buffer; no
//! string per line). Positions for checkpoints exist for a single file only.

use std::path::PathBuf;
use weir_connectors::source::{MalformedLines, RangeLineReader};
use weir_core::StreamRecord;
use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
use weir_runtime::TaskError;

use crate::value::Row;

/// Converts one line into a row record, or `None` to skip it (a malformed line the
/// table ignores).
pub type LineToRow = Box<dyn FnMut(&str) -> Result<Option<StreamRecord<Row>>, TaskError> + Send>;

/// Rows of the lines of several files, one file after the other.
pub struct FileRowsSource {
    files: Vec<RangeLineReader>,
    current: usize,
    convert: LineToRow,
}

impl FileRowsSource {
    /// Subtask `subtask` of `parallelism` over `files` (each cut into one byte range per
    /// subtask), skipping or failing on malformed lines, lines bounded by `max_line`.
    pub fn new(
        files: Vec<PathBuf>,
        subtask: u32,
        parallelism: u32,
        skip_malformed: bool,
        max_line: usize,
        convert: LineToRow,
    ) -> Self {
        let files = files
            .into_iter()
            .map(|f| {
                let malformed = MalformedLines {
                    max_line_length: max_line,
                    skip: skip_malformed,
                };
                RangeLineReader::new(f, "text file source", subtask, parallelism, malformed)
            })
            .collect();
        Self {
            files,
            current: 0,
            convert,
        }
    }
}

impl SourceFunction<Row> for FileRowsSource {
    fn poll_next(&mut self, output: &mut dyn Output<Row>) -> Result<SourceStatus, TaskError> {
        let convert = &mut self.convert;
        while let Some(f) = self.files.get_mut(self.current) {
            let status = f.read_batch(|line| match convert(line)? {
                Some(record) => output.collect(record),
                None => Ok(()),
            })?;
            match status {
                SourceStatus::Finished => self.current += 1,
                other => return Ok(other),
            }
        }
        Ok(SourceStatus::Finished)
    }
    fn snapshot_position(&mut self) -> Result<Vec<Vec<u8>>, TaskError> {
        match self.files.as_mut_slice() {
            [single] => single.snapshot(),
            _ => Ok(Vec::new()),
        }
    }
    fn restore_position(&mut self, positions: Vec<Vec<u8>>) -> Result<(), TaskError> {
        match self.files.as_mut_slice() {
            [single] => single.restore(&positions),
            _ => Ok(()),
        }
    }
}
