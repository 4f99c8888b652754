//! Reading a text file's lines by byte ranges, so that the subtasks of a source each
//! read their own part of one file: split `s` of `n` of a file of `len` bytes holds the
//! lines whose first byte lies in `[len·s/n, len·(s+1)/n)` (a line begins at byte 0 or
//! right after a `\n`). The splits together hold every line exactly once, whatever the
//! line lengths, and no subtask reads more of the file than its range and one line.
//!
//! The file is read in large chunks; lines are found with `memchr` and handed out as
//! `&str` borrowed from the chunk (no copy, no string per line). UTF-8 is validated once
//! for all whole lines of a chunk, and line by line only when that fails, to name the
//! bad line or skip it. A line longer than the bound (before its `\n`) fails the source
//! or is skipped, like a line that is not valid UTF-8; the buffer never grows past the
//! bound. Line numbers in errors are counted from the start of the file then, as a
//! split does not know how many lines precede its range.
//!
//! Positions for checkpoints are [`SplitPosition`]s: `byte_offset` is where the split's
//! next line begins (for a split not started, its next line is the first beginning at
//! or after it), `offset` the number of lines the split emitted. A restore deals them
//! out like any split list state ([`SplitSet::restore`]); a subtask reads its splits
//! one after the other.
//!
//! Invariants: `base + pos` is the file offset of a line start once the split is
//! aligned; `buf[..filled]` are the file's bytes from `base` on; a batch stops at a line
//! boundary, so a snapshot between batches resumes at the next line exactly.

use super::line_errors::{self, MalformedLines, SkippedLines};
use super::{SplitPosition, SplitSet};
use memchr::{memchr, memrchr};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use weir_runtime::operator::SourceStatus;
use weir_runtime::TaskError;

/// Bytes read from the file at a time (the buffer grows beyond it only for a longer
/// line, up to the bound).
const CHUNK: usize = 256 * 1024;

/// The bytes of split `split` of `num_splits` of a file of `len` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    /// The first byte a line of the split may begin at.
    pub start: u64,
    /// The first byte past the split: a line beginning here is the next split's.
    pub end: u64,
}

impl ByteRange {
    /// Split `split` of `num_splits` (at least 1) of a file of `len` bytes.
    pub fn of_split(len: u64, split: u32, num_splits: u32) -> Self {
        let n = u128::from(num_splits.max(1));
        let at = |s: u128| (u128::from(len) * s.min(n) / n) as u64;
        Self {
            start: at(u128::from(split)),
            end: at(u128::from(split) + 1),
        }
    }
}

/// The line number (from 1) of the line beginning at byte `offset` of `path`: one
/// more than the `\n`s before it.
fn line_number_at(path: &Path, offset: u64) -> io::Result<u64> {
    let mut file = crate::file_policy::open(path)?.take(offset);
    let mut buf = vec![0; CHUNK];
    let mut newlines = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(newlines + 1);
        }
        newlines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
    }
}

/// The error of failing to read `path`.
fn read_error(path: &Path, e: io::Error) -> TaskError {
    TaskError::io(format!("cannot read input file {}", path.display()), e)
}

/// One split being read.
struct OpenSplit {
    file: File,
    /// The end of the split's range.
    end: u64,
    buf: Vec<u8>,
    /// The file offset of `buf[0]`.
    base: u64,
    /// The next unread byte of `buf`.
    pos: usize,
    filled: usize,
    eof: bool,
}

/// What the buffer holds next.
enum Fill {
    /// Whole lines up to `buf[..end]` (the last one may be the file's last line,
    /// without `\n`).
    Lines { end: usize },
    /// The line at `at` is longer than the bound; it was skipped.
    TooLong { at: u64 },
    /// The split has no more lines.
    End,
}

impl OpenSplit {
    /// Opens `path` at the next line of split `p` (aligned to a line start).
    fn open(path: &Path, p: &SplitPosition, chunk: usize) -> io::Result<Self> {
        let mut file = crate::file_policy::open(path)?;
        let range = ByteRange::of_split(file.metadata()?.len(), p.split, p.num_splits);
        let from = p.byte_offset.max(range.start);
        let base = from.saturating_sub(1);
        file.seek(SeekFrom::Start(base))?;
        let mut split = Self {
            file,
            end: range.end,
            buf: vec![0; chunk.max(1)],
            base,
            pos: 0,
            filled: 0,
            eof: false,
        };
        if from > 0 {
            // The byte before `from` belongs to the line before unless it is its `\n`.
            split.skip_rest_of_line()?;
        }
        Ok(split)
    }

    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Moves the unread bytes to the front and reads more, growing the buffer (up to
    /// `max + 2` bytes: a line of the bound, `\r` and `\n`) when it is full.
    fn refill(&mut self, max: usize) -> io::Result<()> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.filled, 0);
            self.base += self.pos as u64;
            self.filled -= self.pos;
            self.pos = 0;
        }
        if self.filled == self.buf.len() {
            let grown = (self.buf.len() * 2).min(max.saturating_add(2)).max(self.buf.len() + 1);
            self.buf.resize(grown, 0);
        }
        let n = loop {
            match self.file.read(&mut self.buf[self.filled..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        self.eof = n == 0;
        self.filled += n;
        Ok(())
    }

    /// Skips the bytes up to and with the next `\n` (or to the end of the file).
    fn skip_rest_of_line(&mut self) -> io::Result<()> {
        loop {
            if let Some(i) = memchr(b'\n', &self.buf[self.pos..self.filled]) {
                self.pos += i + 1;
                return Ok(());
            }
            self.pos = self.filled;
            if self.eof {
                return Ok(());
            }
            let len = self.buf.len();
            self.refill(len)?;
        }
    }

    /// Makes the buffer hold at least one whole line of the split, unless it ends or
    /// its next line is longer than `max` bytes.
    fn fill_lines(&mut self, max: usize) -> io::Result<Fill> {
        loop {
            if self.offset() >= self.end {
                return Ok(Fill::End);
            }
            let pending = &self.buf[self.pos..self.filled];
            if let Some(i) = memrchr(b'\n', pending) {
                return Ok(Fill::Lines { end: self.pos + i + 1 });
            }
            if self.eof {
                return Ok(match pending.is_empty() {
                    true => Fill::End,
                    false => Fill::Lines { end: self.filled },
                });
            }
            if pending.len() > max {
                let at = self.offset();
                self.skip_rest_of_line()?;
                return Ok(Fill::TooLong { at });
            }
            self.refill(max)?;
        }
    }
}

/// A line reader over one file for the byte-range splits of one subtask.
pub struct RangeLineReader {
    path: PathBuf,
    name: &'static str,
    /// This subtask's splits, in split order.
    splits: Vec<SplitPosition>,
    /// The split being read (an index of `splits`).
    current: usize,
    open: Option<OpenSplit>,
    max_line_length: usize,
    skip_malformed: bool,
    skipped: SkippedLines,
    /// Bytes read at a time ([`CHUNK`]; smaller in tests, to cut batches short).
    chunk: usize,
}

impl RangeLineReader {
    /// Subtask `subtask` of `parallelism` of the source `name` over `path`: one split
    /// of as many, its malformed lines treated as `malformed` says.
    pub fn new(path: PathBuf, name: &'static str, subtask: u32, parallelism: u32, malformed: MalformedLines) -> Self {
        let num_splits = parallelism.max(1);
        Self {
            path,
            name,
            splits: vec![SplitPosition {
                split: subtask,
                num_splits,
                offset: 0,
                byte_offset: 0,
            }],
            current: 0,
            open: None,
            max_line_length: malformed.max_line_length.max(1),
            skip_malformed: malformed.skip,
            skipped: SkippedLines::default(),
            chunk: CHUNK,
        }
    }

    /// How many lines were skipped as not valid UTF-8 so far.
    pub fn skipped_invalid_utf8(&self) -> u64 {
        self.skipped.invalid_utf8
    }

    /// The number of the line at byte `at`, or the error of failing to count it.
    fn line_number(&self, at: u64) -> Result<u64, TaskError> {
        line_number_at(&self.path, at).map_err(|e| read_error(&self.path, e))
    }

    fn malformed_too_long(&mut self, at: u64) -> Result<(), TaskError> {
        if self.skip_malformed {
            self.skipped.too_long += 1;
            return Ok(());
        }
        let max = self.max_line_length;
        Err(line_errors::too_long(
            self.name,
            &self.path,
            self.line_number(at)?,
            max,
            max + 1,
        ))
    }

    fn malformed_utf8(&mut self, at: u64, e: std::str::Utf8Error) -> Result<(), TaskError> {
        if self.skip_malformed {
            self.skipped.invalid_utf8 += 1;
            return Ok(());
        }
        let line = self.line_number(at)?;
        Err(line_errors::invalid_utf8(
            self.name,
            &self.path,
            line,
            e.valid_up_to() + 1,
        ))
    }

    /// Reads the whole lines of the next chunk of the file, calling `emit` for each
    /// (without its line terminator). A line that is not valid UTF-8 or longer than the
    /// bound is an error, or skipped (see [`MalformedLines`]).
    pub fn read_batch(
        &mut self,
        mut emit: impl FnMut(&str) -> Result<(), TaskError>,
    ) -> Result<SourceStatus, TaskError> {
        loop {
            let Some(&position) = self.splits.get(self.current) else {
                self.skipped.warn(self.name, &self.path, self.max_line_length);
                return Ok(SourceStatus::Finished);
            };
            let open = match &mut self.open {
                Some(open) => open,
                None => {
                    let split = OpenSplit::open(&self.path, &position, self.chunk);
                    self.open.insert(split.map_err(|e| read_error(&self.path, e))?)
                }
            };
            let fill = open.fill_lines(self.max_line_length);
            let end = match fill.map_err(|e| read_error(&self.path, e))? {
                Fill::Lines { end } => end,
                Fill::TooLong { at } => {
                    self.record_progress(0);
                    self.malformed_too_long(at)?;
                    continue;
                }
                Fill::End => {
                    self.record_progress(0);
                    self.open = None;
                    self.current += 1;
                    continue;
                }
            };
            let emitted = self.emit_lines(end, &mut emit)?;
            self.record_progress(emitted);
            return Ok(SourceStatus::More);
        }
    }

    /// Emits the lines of `buf[pos..end]` that begin inside the split's range; the
    /// number emitted.
    fn emit_lines(
        &mut self,
        end: usize,
        emit: &mut impl FnMut(&str) -> Result<(), TaskError>,
    ) -> Result<u64, TaskError> {
        let max = self.max_line_length;
        let Some(open) = self.open.as_mut() else { return Ok(0) };
        let (start, base, range_end) = (open.pos, open.base, open.end);
        let chunk = &open.buf[start..end];
        let text = std::str::from_utf8(chunk).ok();
        let mut at = 0;
        let mut emitted = 0u64;
        let mut malformed = None;
        while at < chunk.len() {
            let line_start = base + (start + at) as u64;
            if line_start >= range_end {
                break;
            }
            let newline = memchr(b'\n', &chunk[at..]).map_or(chunk.len(), |i| at + i);
            let next = (newline + 1).min(chunk.len());
            if newline - at > max {
                malformed = Some((line_start, None));
                at = next;
                break;
            }
            let mut stop = newline;
            while stop > at && chunk[stop - 1] == b'\r' {
                stop -= 1;
            }
            let line = match text.and_then(|t| t.get(at..stop)) {
                Some(line) => line,
                None => match std::str::from_utf8(&chunk[at..stop]) {
                    Ok(line) => line,
                    Err(e) => {
                        malformed = Some((line_start, Some(e)));
                        at = next;
                        break;
                    }
                },
            };
            emit(line)?;
            emitted += 1;
            at = next;
        }
        open.pos = start + at;
        match malformed {
            None => Ok(emitted),
            Some((line_start, Some(e))) => self.malformed_utf8(line_start, e).map(|()| emitted),
            Some((line_start, None)) => self.malformed_too_long(line_start).map(|()| emitted),
        }
    }

    /// Records in the current split's position that `emitted` more lines were emitted
    /// and where its next line begins.
    fn record_progress(&mut self, emitted: u64) {
        if let (Some(p), Some(open)) = (self.splits.get_mut(self.current), self.open.as_ref()) {
            p.offset += emitted;
            p.byte_offset = p.byte_offset.max(open.offset());
        }
    }

    /// The positions for a checkpoint (one per split, finished ones too).
    pub fn snapshot(&mut self) -> Result<Vec<Vec<u8>>, TaskError> {
        self.splits.iter().map(SplitPosition::encode).collect()
    }

    /// Resumes at restored positions (the file is reopened at the next read).
    pub fn restore(&mut self, positions: &[Vec<u8>]) -> Result<(), TaskError> {
        self.splits = SplitSet::restore(positions, self.name)?.into_positions();
        self.current = 0;
        self.open = None;
        Ok(())
    }
}

#[cfg(test)]
#[path = "line_range_tests.rs"]
mod tests;
