//! Bounded quotes of input in error texts: an error that quotes a line or a field of
//! user input must stay small however large the input was (a 200 MB line must not
//! become a 200 MB error report).

/// How many characters of input an error text quotes at most.
pub const MAX_QUOTED_CHARS: usize = 120;

/// `text` as an error quotes it: whole when it has at most [`MAX_QUOTED_CHARS`]
/// characters, else its first ones followed by how long it was:
/// `… (<n> bytes; first <MAX_QUOTED_CHARS> characters shown)`.
pub fn excerpt(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => format!(
            "{}… ({} bytes; first {MAX_QUOTED_CHARS} characters shown)",
            &text[..cut],
            text.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_quoted_whole_and_long_text_is_cut_with_its_length() {
        assert_eq!(excerpt("1,2,x,4"), "1,2,x,4");
        let long = "é".repeat(1_000_000);
        let quoted = excerpt(&long);
        assert!(quoted.chars().count() < MAX_QUOTED_CHARS + 60, "{}", quoted.len());
        assert!(
            quoted.ends_with("… (2000000 bytes; first 120 characters shown)"),
            "{quoted}"
        );
    }
}
