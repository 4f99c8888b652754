//! Nexmark's bounded side input (q13): a table of `key BIGINT, value VARCHAR` rows that
//! the query joins every bid with, by `MOD(auction, 10000) = key`.
//!
//! The suite makes it with `side_input_gen.sh`: rows `i,i` for `i` in `0..10000`, one
//! per line. [`SideInput::generated`] builds the same table in memory; [`SideInput::load`]
//! reads a file of that shape (CSV without quoting: two fields per line, a BIGINT key
//! and the value). A key may appear on several lines; a lookup then finds every row,
//! as a lookup join into a filesystem table does.
//!
//! Invariants: every row of the table came from a well-formed line; a file that has a
//! malformed line is refused whole, naming the file and the line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The number of rows `side_input_gen.sh` writes (and the divisor of q13's join key).
pub const SUITE_ROWS: i64 = 10_000;

/// Longest excerpt of a malformed line quoted in an error.
const EXCERPT: usize = 120;

/// Why a side-input file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SideInputError {
    /// The file cannot be read.
    #[error("cannot read the side input {file}: {source}")]
    Read {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not `key,value` with a BIGINT key.
    #[error("side input {file}, line {line}: {reason} in '{excerpt}'")]
    Malformed {
        /// The file.
        file: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
        /// The start of the line.
        excerpt: String,
    },
}

/// The side input's rows, looked up by key.
#[derive(Debug, Default)]
pub struct SideInput {
    rows: HashMap<i64, Vec<String>>,
}

impl SideInput {
    /// The table `side_input_gen.sh` writes for `rows` rows: `i,i` for `i` in `0..rows`.
    pub fn generated(rows: i64) -> Self {
        Self {
            rows: (0..rows).map(|i| (i, vec![i.to_string()])).collect(),
        }
    }

    /// Reads the table from `file`.
    pub fn load(file: &Path) -> Result<Self, SideInputError> {
        let bytes = std::fs::read(file).map_err(|source| SideInputError::Read {
            file: file.to_path_buf(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
            malformed(file, line, "not valid UTF-8", "")
        })?;
        Self::parse(&text, file)
    }

    /// Parses the lines of `text`, read from `file` (named in errors).
    pub fn parse(text: &str, file: &Path) -> Result<Self, SideInputError> {
        let mut table = Self::default();
        for (index, line) in text.lines().enumerate() {
            let (key, value) = split_row(line).map_err(|reason| malformed(file, index + 1, reason, line))?;
            table.rows.entry(key).or_default().push(value.to_string());
        }
        Ok(table)
    }

    /// The values of the rows whose key is `key`, in file order.
    pub fn lookup(&self, key: i64) -> &[String] {
        self.rows.get(&key).map_or(&[], Vec::as_slice)
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.rows.values().map(Vec::len).sum()
    }

    /// Whether the table has no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// The key and value of one line.
fn split_row(line: &str) -> Result<(i64, &str), &'static str> {
    let (key, value) = line.split_once(',').ok_or("expected 2 fields 'key,value', found 1")?;
    if value.contains(',') {
        return Err("expected 2 fields 'key,value', found more");
    }
    let key = key.parse().map_err(|_| "the key is not a BIGINT")?;
    Ok((key, value))
}

fn malformed(file: &Path, line: usize, reason: &str, text: &str) -> SideInputError {
    let mut end = text.len().min(EXCERPT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    SideInputError::Malformed {
        file: file.to_path_buf(),
        line,
        reason: reason.to_string(),
        excerpt: text[..end].to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_table_maps_every_key_below_the_row_count_to_its_decimal_text() {
        let t = SideInput::generated(SUITE_ROWS);
        assert_eq!(t.len(), 10_000);
        assert_eq!(t.lookup(0), ["0"]);
        assert_eq!(t.lookup(9_999), ["9999"]);
        assert!(t.lookup(10_000).is_empty());
    }

    #[test]
    fn a_file_with_a_repeated_key_finds_both_rows_in_file_order() {
        let t = SideInput::parse("1,one\n2,two\n1,uno\n", Path::new("s.csv")).unwrap();
        assert_eq!(t.lookup(1), ["one", "uno"]);
        assert_eq!(t.lookup(2), ["two"]);
        assert_eq!(t.len(), 3);
    }

    #[test]
    fn a_line_without_a_numeric_key_is_refused_with_file_and_line() {
        let err = SideInput::parse("1,one\nx,two\n", Path::new("s.csv")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "side input s.csv, line 2: the key is not a BIGINT in 'x,two'"
        );
        let err = SideInput::parse("7\n", Path::new("s.csv")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "side input s.csv, line 1: expected 2 fields 'key,value', found 1 in '7'"
        );
        let err = SideInput::parse("7,a,b\n", Path::new("s.csv")).unwrap_err();
        assert!(err.to_string().contains("found more"), "{err}");
    }

    #[test]
    fn a_long_malformed_line_is_quoted_only_in_part() {
        let line = format!("k{}", "é".repeat(500));
        let err = SideInput::parse(&line, Path::new("s.csv")).unwrap_err().to_string();
        assert!(err.len() < 250, "{err}");
    }

    #[test]
    fn a_missing_file_names_the_file() {
        let err = SideInput::load(Path::new("/nonexistent/side.csv")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot read the side input /nonexistent/side.csv"),
            "{err}"
        );
    }
}
