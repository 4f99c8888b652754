//! Window table-valued functions in Flink's syntax, `TABLE(TUMBLE(TABLE t, ...))`,
//! rewritten token by token to `TUMBLE(t, ...)`, a table function call `sqlparser`
//! parses; a SESSION window's `TABLE t PARTITION BY k1, k2, DESCRIPTOR(ts), ..` becomes
//! `t, DESCRIPTOR(k1, k2), DESCRIPTOR(ts), ..`. Tokens are removed, or inserted with the
//! location of the token they replace, so every original token keeps its location.

use super::{error_at, is_word};
use crate::error::Result;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// The window TVFs.
pub const WINDOW_TVFS: [&str; 4] = ["TUMBLE", "HOP", "CUMULATE", "SESSION"];

fn matching_paren(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Rewrites every `TABLE(<tvf>(TABLE t, ...))` of `tokens`.
pub fn rewrite(mut tokens: Vec<TokenWithSpan>) -> Result<Vec<TokenWithSpan>> {
    let mut i = 0;
    while i + 4 < tokens.len() {
        let is_tvf = is_word(&tokens[i], "TABLE")
            && matches!(tokens[i + 1].token, Token::LParen)
            && WINDOW_TVFS.iter().any(|w| is_word(&tokens[i + 2], w))
            && matches!(tokens[i + 3].token, Token::LParen);
        if !is_tvf {
            i += 1;
            continue;
        }
        let close = matching_paren(&tokens, i + 1).ok_or_else(|| error_at(&tokens[tokens.len() - 1], "\")\""))?;
        tokens.remove(close);
        if is_word(&tokens[i + 4], "TABLE") {
            tokens.remove(i + 4);
        }
        tokens.drain(i..i + 2);
        // Now `tokens[i]` is the TVF's name, `[i + 1]` its `(` and `[i + 2]` the table.
        rewrite_partition_by(&mut tokens, i + 3);
        i += 1;
    }
    Ok(tokens)
}

/// Rewrites `PARTITION BY k1, k2, DESCRIPTOR` starting at `at` (if there) to
/// `, DESCRIPTOR(k1, k2), DESCRIPTOR`.
fn rewrite_partition_by(tokens: &mut Vec<TokenWithSpan>, at: usize) {
    let starts =
        tokens.get(at).is_some_and(|t| is_word(t, "PARTITION")) && tokens.get(at + 1).is_some_and(|t| is_word(t, "BY"));
    if !starts {
        return;
    }
    let Some(descriptor) = (at + 2..tokens.len()).find(|&j| is_word(&tokens[j], "DESCRIPTOR")) else {
        return;
    };
    // The comma before DESCRIPTOR ends the keys.
    if descriptor < at + 4 || !matches!(tokens[descriptor - 1].token, Token::Comma) {
        return;
    }
    let with_token = |like: &TokenWithSpan, token: Token| TokenWithSpan { token, span: like.span };
    let close = with_token(&tokens[descriptor - 1], Token::RParen);
    tokens.insert(descriptor - 1, close);
    let open = with_token(&tokens[at + 1], Token::LParen);
    tokens[at + 1].token = Token::make_word("DESCRIPTOR", None);
    tokens[at].token = Token::Comma;
    tokens.insert(at + 2, open);
}
