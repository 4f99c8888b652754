//! Reading one line of a byte stream with a bound on its length, so that a file with a
//! 200 MB line never holds 200 MB in memory: a line longer than the bound is reported
//! after `bound + 1` bytes of it were kept, and can then be skipped without keeping any
//! more of it.
//!
//! Invariant: the reader is always left at a line boundary or inside the line that was
//! reported too long; the byte counts returned add up to the bytes consumed.

use std::io::{self, BufRead};

/// The default bound on a line read by the text-file sources: 16 MiB.
pub const DEFAULT_MAX_LINE_LENGTH: usize = 16 * 1024 * 1024;

/// What [`read_line`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRead {
    /// The stream ended before any byte of a new line.
    End,
    /// A whole line is in the buffer (with its `\n` unless it was the last line);
    /// `consumed` bytes were read.
    Line {
        /// Bytes taken from the reader for this line, its `\n` (if any) included: what a
        /// source adds to its split offset.
        consumed: usize,
    },
    /// The line has more than the bound's bytes before its `\n`: `consumed` bytes of it
    /// were read (and kept), the rest is still to be skipped ([`skip_rest_of_line`]).
    TooLong {
        /// Bytes taken from the reader, all of them kept in the buffer: `max + 1`.
        consumed: usize,
    },
}

/// Reads the next line into `line` (cleared first), keeping at most `max + 1` bytes.
pub fn read_line(reader: &mut impl BufRead, line: &mut Vec<u8>, max: usize) -> io::Result<LineRead> {
    line.clear();
    let mut consumed = 0;
    loop {
        let chunk = fill(reader)?;
        if chunk.is_empty() {
            return Ok(if consumed == 0 {
                LineRead::End
            } else {
                LineRead::Line { consumed }
            });
        }
        let newline = find_newline(chunk);
        let content = newline.unwrap_or(chunk.len());
        if line.len() + content > max {
            let take = max + 1 - line.len();
            line.extend_from_slice(&chunk[..take]);
            reader.consume(take);
            return Ok(LineRead::TooLong {
                consumed: consumed + take,
            });
        }
        let take = newline.map_or(chunk.len(), |at| at + 1);
        line.extend_from_slice(&chunk[..take]);
        reader.consume(take);
        consumed += take;
        if newline.is_some() {
            return Ok(LineRead::Line { consumed });
        }
    }
}

/// The position of the first `\n` in `bytes`, looked for eight bytes at a time (a
/// word XORed with `\n` in every byte has a zero byte where a `\n` was; the lowest
/// byte flagged by the zero-byte test is the first such byte).
fn find_newline(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = ONES << 7;
    const NEWLINES: u64 = ONES * b'\n' as u64;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in words.by_ref() {
        let mut le = [0u8; 8];
        le.copy_from_slice(word);
        let x = u64::from_le_bytes(le) ^ NEWLINES;
        let zero_bytes = x.wrapping_sub(ONES) & !x & HIGHS;
        if zero_bytes != 0 {
            return Some(at + (zero_bytes.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    words.remainder().iter().position(|&b| b == b'\n').map(|p| at + p)
}

/// The reader's buffered bytes, refilled when empty (retrying interrupted reads).
fn fill(reader: &mut impl BufRead) -> io::Result<&[u8]> {
    loop {
        match reader.fill_buf() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
            // Asked again: the first borrow cannot leave the loop.
            Ok(_) => return reader.fill_buf(),
        }
    }
}

/// Consumes the rest of a line reported [`LineRead::TooLong`], through its `\n`,
/// without keeping it; the number of bytes consumed.
pub fn skip_rest_of_line(reader: &mut impl BufRead) -> io::Result<usize> {
    let mut consumed = 0;
    loop {
        let chunk = fill(reader)?;
        if chunk.is_empty() {
            return Ok(consumed);
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (chunk.len(), false),
        };
        reader.consume(take);
        consumed += take;
        if done {
            return Ok(consumed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    #[test]
    fn the_first_newline_is_found_at_every_offset_and_beside_any_byte() {
        for len in 0..40 {
            for at in 0..=len {
                let mut bytes: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(37) | 0x0b).collect();
                if at < len {
                    bytes[at] = b'\n';
                    // Bytes that trip naive zero-byte tests: 0x0b ^ 0x0a = 0x01, and a
                    // later newline.
                    if at + 1 < len {
                        bytes[at + 1] = 0x0b;
                    }
                    if at + 3 < len {
                        bytes[at + 3] = b'\n';
                    }
                }
                let expected = bytes.iter().position(|&b| b == b'\n');
                assert_eq!(find_newline(&bytes), expected, "len {len}, newline at {at}");
            }
        }
    }

    #[test]
    fn lines_within_the_bound_are_read_whole_across_buffer_refills() {
        let text = b"abc\ndefghij\n\nlast";
        let mut r = BufReader::with_capacity(3, &text[..]);
        let mut line = Vec::new();
        let mut got = Vec::new();
        loop {
            match read_line(&mut r, &mut line, 7).unwrap() {
                LineRead::End => break,
                LineRead::Line { consumed } => got.push((String::from_utf8(line.clone()).unwrap(), consumed)),
                LineRead::TooLong { .. } => panic!("no line is longer than 7 bytes"),
            }
        }
        let expected = [("abc\n", 4), ("defghij\n", 8), ("\n", 1), ("last", 4)];
        assert_eq!(
            got,
            expected.iter().map(|(l, n)| (l.to_string(), *n)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_line_over_the_bound_keeps_one_byte_more_than_the_bound_and_can_be_skipped() {
        let text = format!("{}\nnext\n", "x".repeat(100));
        let mut r = BufReader::with_capacity(16, text.as_bytes());
        let mut line = Vec::new();
        assert_eq!(
            read_line(&mut r, &mut line, 10).unwrap(),
            LineRead::TooLong { consumed: 11 }
        );
        assert_eq!(line.len(), 11);
        assert_eq!(skip_rest_of_line(&mut r).unwrap(), 90);
        assert_eq!(
            read_line(&mut r, &mut line, 10).unwrap(),
            LineRead::Line { consumed: 5 }
        );
        assert_eq!(line, b"next\n");
        assert_eq!(read_line(&mut r, &mut line, 10).unwrap(), LineRead::End);
    }

    #[test]
    fn a_line_of_exactly_the_bound_is_accepted_and_its_newline_is_not_counted() {
        let mut r = BufReader::new(&b"0123456789\n01234567890"[..]);
        let mut line = Vec::new();
        assert_eq!(
            read_line(&mut r, &mut line, 10).unwrap(),
            LineRead::Line { consumed: 11 }
        );
        assert_eq!(
            read_line(&mut r, &mut line, 10).unwrap(),
            LineRead::TooLong { consumed: 11 }
        );
        assert_eq!(
            skip_rest_of_line(&mut r).unwrap(),
            0,
            "the too-long last line had no more bytes"
        );
    }
}
