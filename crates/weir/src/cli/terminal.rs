//! Text from users and peers made safe for a terminal, and dates as Flink's CLI
//! prints them.
//!
//! Job names, vertex names, exception texts and SQL values come from whoever submitted
//! the job or from the JobManager's answers: printed raw, an escape sequence in them
//! could move the cursor, recolour or retitle the operator's terminal, and a newline
//! could forge a line of `weir list`. [`escape`] is the one function every command uses
//! before printing such text: each control character (C0, DEL, C1, the bidirectional
//! overrides) becomes a visible escape, so one field stays one field on one line.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal raw: C0 controls (newline and tab included),
/// DEL, C1 controls, and the Unicode bidirectional embeddings, overrides and isolates
/// (which reorder what the reader sees).
fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every control character shown as an escape: `\n`, `\r`, `\t`, `\0`,
/// `\e` for ESC, `\xNN` for the other C0 controls and DEL, `\u{NNNN}` for C1 controls
/// and bidirectional controls. Text without any is returned as is (no copy).
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            '\u{1b}' => out.push_str("\\e"),
            c if (c as u32) < 0x80 && is_unsafe(c) => {
                // Writing to a String cannot fail.
                write!(out, "\\x{:02x}", c as u32).unwrap_or(());
            }
            c if is_unsafe(c) => {
                write!(out, "\\u{{{:04x}}}", c as u32).unwrap_or(());
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`escape`] of a multi-line text: each line escaped, the line breaks kept (for a
/// whole table or a stack trace the terminal should show on several lines).
pub fn escape_lines(text: &str) -> String {
    text.split('\n').map(escape).collect::<Vec<_>>().join("\n")
}

/// Epoch milliseconds as Flink's CLI prints a time, `dd.MM.yyyy HH:mm:ss` in the local
/// time zone (`06.12.2026 14:03:55`); the number itself when it is out of range.
pub fn flink_date(epoch_ms: i64) -> String {
    use chrono::TimeZone;
    match chrono::Local.timestamp_millis_opt(epoch_ms).single() {
        Some(t) => t.format("%d.%m.%Y %H:%M:%S").to_string(),
        None => epoch_ms.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_kept_without_a_copy() {
        assert!(matches!(escape("orders per minute: ä €"), Cow::Borrowed(_)));
    }

    #[test]
    fn escape_sequences_newlines_and_nul_become_visible() {
        assert_eq!(
            escape("job\u{1b}[2J\u{1b}]0;pwned\u{7}\nfake : line\r\0"),
            "job\\e[2J\\e]0;pwned\\x07\\nfake : line\\r\\0"
        );
        assert_eq!(escape("a\u{7f}b\u{9b}31m\u{85}"), "a\\x7fb\\u{009b}31m\\u{0085}");
        assert_eq!(escape("left\u{202e}thgir"), "left\\u{202e}thgir");
    }

    #[test]
    fn an_escaped_field_never_holds_a_control_character() {
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        assert!(!escape(&all).chars().any(is_unsafe));
    }

    #[test]
    fn multi_line_text_keeps_its_lines_and_loses_its_escapes() {
        assert_eq!(escape_lines("one\u{1b}[1m\ntwo\t"), "one\\e[1m\ntwo\\t");
    }

    #[test]
    fn dates_are_printed_day_first_to_the_second() {
        let d = flink_date(1_700_000_000_000);
        let bytes = d.as_bytes();
        assert_eq!(d.len(), 19, "{d}");
        assert_eq!((bytes[2], bytes[5], bytes[10], bytes[13]), (b'.', b'.', b' ', b':'));
        assert!(d.contains(".2023 ") && d.ends_with(":20"), "{d}");
        assert_eq!(flink_date(i64::MAX), i64::MAX.to_string());
    }
}
