//! Output rows written field by field: [`CsvLine`] appends integers without the
//! formatting machinery (`itoa`) and separates fields with commas. It writes exactly
//! what `format!("{},{}", ..)` writes for the same fields.

use crate::format::Euros;
use std::fmt::Write;

/// A CSV line being written.
pub struct CsvLine {
    text: String,
    first: bool,
}

impl CsvLine {
    /// An empty line with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            text: String::with_capacity(capacity),
            first: true,
        }
    }

    fn separate(&mut self) {
        if !self.first {
            self.text.push(',');
        }
        self.first = false;
    }

    /// Appends an integer field.
    pub fn int(mut self, v: impl itoa::Integer) -> Self {
        self.separate();
        self.text.push_str(itoa::Buffer::new().format(v));
        self
    }

    /// Appends a text field as it is (no quoting: the suite's columns hold no commas).
    pub fn text(mut self, s: &str) -> Self {
        self.separate();
        self.text.push_str(s);
        self
    }

    /// Appends `0.908 * price` with three fractional digits, as [`Euros`] writes it.
    pub fn euros(mut self, price: i64) -> Self {
        self.separate();
        let thousandths = price * 908;
        if thousandths < 0 {
            write!(self.text, "{}", Euros(price)).expect("writing to a String cannot fail");
            return self;
        }
        self.text.push_str(itoa::Buffer::new().format(thousandths / 1000));
        let fraction = thousandths % 1000;
        self.text.push('.');
        for digit in [fraction / 100, fraction / 10 % 10, fraction % 10] {
            self.text.push(char::from(b'0' + digit as u8));
        }
        self
    }

    /// The line.
    pub fn finish(self) -> String {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_as_format_writes_it() {
        let line = CsvLine::with_capacity(8)
            .int(-42i64)
            .text("")
            .euros(100)
            .euros(12_345)
            .euros(1)
            .int(i64::MAX)
            .text("x y")
            .finish();
        assert_eq!(
            line,
            format!(
                "{},{},{},{},{},{},{}",
                -42,
                "",
                Euros(100),
                Euros(12_345),
                Euros(1),
                i64::MAX,
                "x y"
            )
        );
        assert_eq!(CsvLine::with_capacity(0).euros(-7).finish(), Euros(-7).to_string());
        assert_eq!(CsvLine::with_capacity(0).finish(), "");
    }
}
