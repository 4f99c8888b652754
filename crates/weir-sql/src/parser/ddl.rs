//! `CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name (columns, computed columns,
//! WATERMARK FOR, PRIMARY KEY .. NOT ENFORCED) [COMMENT '..'] WITH ('k' = 'v', ...)`,
//! parsed over tokens: the column list is split at its top-level commas, and each
//! type or expression is parsed by `sqlparser` over its slice of tokens.

use super::{error_at, is_word, parse_error, parser_over};
use crate::error::{Result, SqlError};
use crate::types::DataType;
use sqlparser::ast::Expr;
use sqlparser::tokenizer::{Token, TokenWithSpan};
use std::collections::BTreeMap;

/// One column of a table.
#[derive(Debug, Clone)]
pub struct ColumnDef {
    /// The column's name.
    pub name: String,
    /// Its type, or its expression for a computed column.
    pub kind: ColumnKind,
}

/// Physical or computed.
#[derive(Debug, Clone)]
pub enum ColumnKind {
    /// Read from the connector.
    Physical {
        /// The type.
        data_type: DataType,
        /// False with `NOT NULL`.
        nullable: bool,
    },
    /// `name AS expr`, computed from the physical columns.
    Computed(Box<Expr>),
}

/// `WATERMARK FOR column AS expr`.
#[derive(Debug, Clone)]
pub struct WatermarkDef {
    /// The rowtime column.
    pub column: String,
    /// The watermark expression.
    pub expr: Expr,
}

/// A parsed `CREATE TABLE`.
#[derive(Debug, Clone)]
pub struct TableDef {
    /// The table's name.
    pub name: String,
    /// `TEMPORARY`.
    pub temporary: bool,
    /// `IF NOT EXISTS`.
    pub if_not_exists: bool,
    /// The columns in order.
    pub columns: Vec<ColumnDef>,
    /// The watermark, if any.
    pub watermark: Option<WatermarkDef>,
    /// The primary key's columns (not enforced).
    pub primary_key: Vec<String>,
    /// The `WITH` options.
    pub options: BTreeMap<String, String>,
}

struct Cursor {
    tokens: Vec<TokenWithSpan>,
    pos: usize,
}

impl Cursor {
    fn peek(&self) -> &TokenWithSpan {
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }
    fn next(&mut self) -> TokenWithSpan {
        let t = self.peek().clone();
        self.pos += 1;
        t
    }
    fn eat_word(&mut self, w: &str) -> bool {
        if is_word(self.peek(), w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_word(&mut self, w: &str) -> Result<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(error_at(self.peek(), w))
        }
    }
    fn expect(&mut self, token: Token, what: &str) -> Result<()> {
        if self.peek().token == token {
            self.pos += 1;
            Ok(())
        } else {
            Err(error_at(self.peek(), what))
        }
    }
    fn ident(&mut self) -> Result<String> {
        match &self.peek().token {
            Token::Word(w) => {
                let v = w.value.clone();
                self.pos += 1;
                Ok(v)
            }
            _ => Err(error_at(self.peek(), "an identifier")),
        }
    }
}

fn with_eof(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let end = tokens
        .last()
        .map_or(sqlparser::tokenizer::Location::of(1, 1), |t| t.span.end);
    tokens.push(TokenWithSpan::at(Token::EOF, end, end));
    tokens
}

/// Parses an expression that must span all of `tokens`.
pub fn parse_expr_tokens(tokens: Vec<TokenWithSpan>) -> Result<Expr> {
    let mut p = parser_over(with_eof(tokens));
    let e = p.parse_expr().map_err(parse_error)?;
    let t = p.peek_token();
    if !matches!(t.token, Token::EOF) {
        return Err(error_at(&t, "end of the expression"));
    }
    Ok(e)
}

/// Splits the tokens between the parentheses at `cur` at their top-level commas.
fn parenthesized_items(cur: &mut Cursor) -> Result<Vec<Vec<TokenWithSpan>>> {
    cur.expect(Token::LParen, "\"(\"")?;
    let mut items = vec![Vec::new()];
    let mut depth = 0usize;
    loop {
        let t = cur.next();
        match t.token {
            Token::EOF => return Err(error_at(&t, "\")\"")),
            Token::LParen => depth += 1,
            Token::RParen if depth == 0 => break,
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 => {
                items.push(Vec::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = items.last_mut() {
            last.push(t);
        }
    }
    if items.iter().any(|i| i.is_empty()) {
        return Err(error_at(cur.peek(), "a column definition"));
    }
    Ok(items)
}

/// Parses `CREATE [TEMPORARY] TABLE ...` from its tokens (ending with EOF).
pub fn parse_create_table(tokens: Vec<TokenWithSpan>) -> Result<TableDef> {
    let mut cur = Cursor { tokens, pos: 0 };
    cur.expect_word("CREATE")?;
    let temporary = cur.eat_word("TEMPORARY");
    cur.expect_word("TABLE")?;
    let if_not_exists = if cur.eat_word("IF") {
        cur.expect_word("NOT")?;
        cur.expect_word("EXISTS")?;
        true
    } else {
        false
    };
    let mut name = cur.ident()?;
    while cur.peek().token == Token::Period {
        cur.pos += 1;
        name = cur.ident()?;
    }
    let mut def = TableDef {
        name,
        temporary,
        if_not_exists,
        columns: Vec::new(),
        watermark: None,
        primary_key: Vec::new(),
        options: BTreeMap::new(),
    };
    for item in parenthesized_items(&mut cur)? {
        parse_item(item, &mut def)?;
    }
    if cur.eat_word("COMMENT") {
        cur.next();
    }
    if is_word(cur.peek(), "PARTITIONED") {
        return Err(SqlError::unsupported("PARTITIONED BY"));
    }
    if cur.eat_word("WITH") {
        for item in parenthesized_items(&mut cur)? {
            match item.as_slice() {
                [k, eq, v] if eq.token == Token::Eq => match (&k.token, &v.token) {
                    (Token::SingleQuotedString(k), Token::SingleQuotedString(v)) => {
                        def.options.insert(k.clone(), v.clone());
                    }
                    _ => return Err(error_at(k, "'key' = 'value'")),
                },
                other => return Err(error_at(&other[0], "'key' = 'value'")),
            }
        }
    }
    let end = cur.peek();
    if end.token != Token::EOF {
        return Err(error_at(end, "WITH or the end of the statement"));
    }
    Ok(def)
}

fn parse_item(item: Vec<TokenWithSpan>, def: &mut TableDef) -> Result<()> {
    let mut cur = Cursor {
        tokens: with_eof(item),
        pos: 0,
    };
    if cur.eat_word("WATERMARK") {
        cur.expect_word("FOR")?;
        let column = cur.ident()?;
        cur.expect_word("AS")?;
        let rest = cur.tokens[cur.pos..cur.tokens.len() - 1].to_vec();
        def.watermark = Some(WatermarkDef {
            column,
            expr: parse_expr_tokens(rest)?,
        });
        return Ok(());
    }
    if cur.eat_word("CONSTRAINT") {
        cur.ident()?;
    }
    if cur.eat_word("PRIMARY") {
        cur.expect_word("KEY")?;
        let cols = parenthesized_items(&mut cur)?;
        for c in cols {
            match c.as_slice() {
                [TokenWithSpan {
                    token: Token::Word(w), ..
                }] => def.primary_key.push(w.value.clone()),
                other => return Err(error_at(&other[0], "a column name")),
            }
        }
        return not_enforced(&mut cur);
    }
    let name = cur.ident()?;
    if cur.eat_word("AS") {
        let rest = cur.tokens[cur.pos..cur.tokens.len() - 1].to_vec();
        def.columns.push(ColumnDef {
            name,
            kind: ColumnKind::Computed(Box::new(parse_expr_tokens(rest)?)),
        });
        return Ok(());
    }
    let mut p = parser_over(cur.tokens[cur.pos..].to_vec());
    let ast_type = p.parse_data_type().map_err(parse_error)?;
    let data_type = DataType::from_ast(&ast_type)?;
    let mut rest = Cursor {
        tokens: cur.tokens[cur.pos..].to_vec(),
        pos: p.index(),
    };
    let mut nullable = true;
    loop {
        if rest.eat_word("NOT") {
            rest.expect_word("NULL")?;
            nullable = false;
        } else if rest.eat_word("NULL") {
        } else if rest.eat_word("PRIMARY") {
            rest.expect_word("KEY")?;
            def.primary_key.push(name.clone());
            not_enforced(&mut rest)?;
            break;
        } else if rest.eat_word("COMMENT") {
            rest.next();
        } else if rest.eat_word("METADATA") {
            return Err(SqlError::unsupported(format!("The metadata column '{name}'")));
        } else {
            break;
        }
    }
    if rest.peek().token != Token::EOF {
        return Err(error_at(rest.peek(), "\",\" or \")\""));
    }
    def.columns.push(ColumnDef {
        name,
        kind: ColumnKind::Physical { data_type, nullable },
    });
    Ok(())
}

fn not_enforced(cur: &mut Cursor) -> Result<()> {
    if cur.eat_word("NOT") {
        cur.expect_word("ENFORCED")?;
        Ok(())
    } else {
        Err(SqlError::validation(
            "Flink doesn't support ENFORCED mode for PRIMARY KEY constraint. ENFORCED/NOT ENFORCED controls if the constraint checks are performed on the incoming/outgoing data. Flink does not own the data therefore the only supported mode is the NOT ENFORCED mode",
        ))
    }
}
