//! A bound on how deeply a statement's expressions nest, checked on its tokens before
//! parsing. Binding, planning, evaluating and dropping an expression recurse once per
//! level, and a chain of binary operators (`a + a + … + a`, `p AND p AND …`) is one
//! level per operator; a few thousand would overflow a thread's stack and abort the
//! process (the SQL client, or the JobManager rebuilding a submitted SQL job).
//!
//! Invariant: the estimate is never below the depth of the tree `sqlparser` builds:
//! it counts every binary operator of a chain (reset only where an expression ends: a
//! comma or a clause keyword) plus the parenthesis nesting it sits in.

use crate::error::SqlError;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// The deepest expression nesting a statement may have.
pub const MAX_EXPRESSION_DEPTH: usize = 256;

const ENDS_EXPRESSION: [&str; 14] = [
    "SELECT", "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "BY", "ON", "WHEN", "THEN", "ELSE", "END", "AS", "UNION",
];

fn is_binary_operator(token: &Token) -> bool {
    match token {
        Token::Plus
        | Token::Minus
        | Token::Mul
        | Token::Div
        | Token::Mod
        | Token::StringConcat
        | Token::Eq
        | Token::DoubleEq
        | Token::Neq
        | Token::Lt
        | Token::Gt
        | Token::LtEq
        | Token::GtEq
        | Token::Ampersand
        | Token::Pipe
        | Token::Caret => true,
        Token::Word(w) if w.quote_style.is_none() => ["AND", "OR", "LIKE", "IS", "IN", "BETWEEN"]
            .iter()
            .any(|k| w.value.eq_ignore_ascii_case(k)),
        _ => false,
    }
}

fn ends_expression(token: &Token) -> bool {
    match token {
        Token::Comma | Token::SemiColon => true,
        Token::Word(w) if w.quote_style.is_none() => ENDS_EXPRESSION.iter().any(|k| w.value.eq_ignore_ascii_case(k)),
        _ => false,
    }
}

/// An error naming where the statement's expressions nest deeper than
/// [`MAX_EXPRESSION_DEPTH`].
pub fn check_depth(tokens: &[TokenWithSpan]) -> Result<(), SqlError> {
    // The operator chain length of each open parenthesis level, outermost first.
    let mut chains: Vec<usize> = vec![0];
    for t in tokens {
        match &t.token {
            Token::LParen => chains.push(0),
            Token::RParen if chains.len() > 1 => {
                chains.pop();
            }
            token if ends_expression(token) => {
                if let Some(chain) = chains.last_mut() {
                    *chain = 0;
                }
            }
            token if is_binary_operator(token) => {
                if let Some(chain) = chains.last_mut() {
                    *chain += 1;
                }
            }
            _ => {}
        }
        let depth = chains.len() + chains.last().copied().unwrap_or(0);
        if depth > MAX_EXPRESSION_DEPTH {
            let at = t.span.start;
            return Err(SqlError::Parse(format!(
                "Expression nested too deeply at line {}, column {}: more than {MAX_EXPRESSION_DEPTH} levels of operators and parentheses.",
                at.line, at.column
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::tokenize;

    fn depth_error(sql: &str) -> Option<String> {
        check_depth(&tokenize(sql).expect("tokenizes"))
            .err()
            .map(|e| e.to_string())
    }

    #[test]
    fn a_long_operator_chain_is_refused_with_its_location() {
        let sum = vec!["id"; 2000].join(" + ");
        let err = depth_error(&format!("SELECT {sum} FROM seq")).expect("refused");
        assert!(
            err.starts_with("SQL parse failed. Expression nested too deeply at line 1, column "),
            "{err}"
        );
    }

    #[test]
    fn many_short_expressions_are_fine() {
        let columns = vec!["a + b * c"; 500].join(", ");
        assert_eq!(
            depth_error(&format!("SELECT {columns} FROM t WHERE a > 1 AND b < 2")),
            None
        );
    }
}
