//! Reading a text file's lines for the splits of one subtask: the part the plain and
//! the numbered text-file sources share. Every subtask scans the whole file from the
//! least advanced of its splits and keeps the lines its splits own ([`SplitSet`]).
//!
//! Lines are read as bytes, at most `max_line_length` bytes of a line are kept
//! ([`bounded_line`]), and they are decoded one by one: a line that
//! is not valid UTF-8 or is longer than the bound fails the source naming its line
//! number and file, or is counted and skipped when the source skips malformed lines.
//!
//! Invariant: `line_no` lines (ending at byte `byte_offset`) have been consumed, and
//! the split set has been told so before every snapshot.

use super::bounded_line::{self, LineRead, DEFAULT_MAX_LINE_LENGTH};
use super::line_errors::{self, SkippedLines};
use super::{SplitSet, SOURCE_BATCH};
use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};
use std::path::PathBuf;
use weir_runtime::operator::SourceStatus;
use weir_runtime::TaskError;

/// A line scanner over one file for one subtask's splits.
pub struct LineSplitReader {
    path: PathBuf,
    name: &'static str,
    reader: Option<BufReader<File>>,
    line_no: u64,
    byte_offset: u64,
    splits: SplitSet,
    max_line_length: usize,
    skip_malformed: bool,
    skipped: SkippedLines,
}

impl LineSplitReader {
    /// Subtask `subtask` of `parallelism` of the source `name` over `path`.
    pub fn new(path: PathBuf, name: &'static str, subtask: u32, parallelism: u32) -> Self {
        Self {
            path,
            name,
            reader: None,
            line_no: 0,
            byte_offset: 0,
            splits: SplitSet::fresh(subtask, parallelism),
            max_line_length: DEFAULT_MAX_LINE_LENGTH,
            skip_malformed: false,
            skipped: SkippedLines::default(),
        }
    }

    /// Counts and skips lines that are not valid UTF-8 or are longer than the bound
    /// instead of failing on them.
    pub fn skip_malformed_lines(mut self, skip: bool) -> Self {
        self.skip_malformed = skip;
        self
    }

    /// The most bytes a line may have before its line terminator (at least 1).
    pub fn max_line_length(mut self, bytes: usize) -> Self {
        self.max_line_length = bytes.max(1);
        self
    }

    /// How many owned lines were skipped as not valid UTF-8 so far.
    pub fn skipped_invalid_utf8(&self) -> u64 {
        self.skipped.invalid_utf8
    }

    fn error(&self, e: std::io::Error) -> TaskError {
        TaskError::io(format!("cannot read input file {}", self.path.display()), e)
    }

    /// Reads up to a batch of lines, calling `emit(line_index, line)` for the owned
    /// ones (the index counts from 0; the line has no line terminator). An owned line
    /// that is not valid UTF-8 or longer than the bound is an error, or skipped (see
    /// [`Self::skip_malformed_lines`]); a line of another subtask is never kept whole.
    pub fn read_batch(
        &mut self,
        mut emit: impl FnMut(u64, &str) -> Result<(), TaskError>,
    ) -> Result<SourceStatus, TaskError> {
        if self.splits.is_empty() {
            return Ok(SourceStatus::Finished);
        }
        if self.reader.is_none() {
            let (line_no, byte_offset) = self.splits.scan_start();
            let mut f = crate::file_policy::open(&self.path).map_err(|e| self.error(e))?;
            f.seek(SeekFrom::Start(byte_offset)).map_err(|e| self.error(e))?;
            self.line_no = line_no;
            self.byte_offset = byte_offset;
            self.reader = Some(BufReader::new(f));
        }
        let mut line = Vec::new();
        for _ in 0..SOURCE_BATCH {
            let Some(reader) = self.reader.as_mut() else {
                return Ok(SourceStatus::Finished);
            };
            let read = bounded_line::read_line(reader, &mut line, self.max_line_length);
            let (consumed, too_long) = match read.map_err(|e| self.error(e))? {
                LineRead::End => {
                    self.skipped.warn(self.name, &self.path, self.max_line_length);
                    return Ok(SourceStatus::Finished);
                }
                LineRead::Line { consumed } => (consumed, false),
                LineRead::TooLong { consumed } => (consumed, true),
            };
            let index = self.line_no;
            self.byte_offset += consumed as u64;
            if too_long {
                if self.splits.owns(index) && !self.skip_malformed {
                    return Err(line_errors::too_long(
                        self.name,
                        &self.path,
                        index + 1,
                        self.max_line_length,
                        consumed,
                    ));
                }
                let rest = self.reader.as_mut().map_or(Ok(0), bounded_line::skip_rest_of_line);
                self.byte_offset += rest.map_err(|e| self.error(e))? as u64;
                self.line_no += 1;
                if self.splits.owns(index) {
                    self.skipped.too_long += 1;
                }
                continue;
            }
            self.line_no += 1;
            if !self.splits.owns(index) {
                continue;
            }
            while matches!(line.last(), Some(b'\n' | b'\r')) {
                line.pop();
            }
            match std::str::from_utf8(&line) {
                Ok(text) => emit(index, text)?,
                Err(_) if self.skip_malformed => self.skipped.invalid_utf8 += 1,
                Err(e) => {
                    return Err(line_errors::invalid_utf8(
                        self.name,
                        &self.path,
                        index + 1,
                        e.valid_up_to() + 1,
                    ))
                }
            }
        }
        Ok(SourceStatus::More)
    }

    /// The positions for a checkpoint.
    pub fn snapshot(&mut self) -> Result<Vec<Vec<u8>>, TaskError> {
        if self.reader.is_some() {
            self.splits.scanned_to(self.line_no, self.byte_offset);
        }
        self.splits.snapshot()
    }

    /// Resumes at restored positions (the file is reopened at the next read).
    pub fn restore(&mut self, positions: &[Vec<u8>]) -> Result<(), TaskError> {
        self.splits = SplitSet::restore(positions, self.name)?;
        self.reader = None;
        Ok(())
    }
}
