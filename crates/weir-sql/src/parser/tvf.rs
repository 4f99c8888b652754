//! Window table-valued functions in Flink's syntax, `TABLE(TUMBLE(TABLE t, ...))`,
//! rewritten token by token to `TUMBLE(t, ...)`, a table function call `sqlparser`
//! parses. Only tokens are removed, so every other token keeps its location.

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
        i += 1;
    }
    Ok(tokens)
}
