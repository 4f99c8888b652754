//! Parsing one SQL statement: `sqlparser` for standard SQL, plus a token-level pass for
//! Flink's syntax it does not know.
//!
//! The statement is tokenized once, with locations. Then:
//! - `CREATE [TEMPORARY] TABLE` is parsed here ([`ddl`]): computed columns, `WATERMARK
//!   FOR`, `PRIMARY KEY .. NOT ENFORCED` and `WITH (...)` are Flink's, while types and
//!   expressions are parsed by `sqlparser` over the slice of tokens;
//! - `SET`, `RESET` and `EXECUTE STATEMENT SET BEGIN .. END` are recognized here;
//! - window TVFs `TABLE(TUMBLE(TABLE t, ...))` are rewritten token by token
//!   ([`tvf`]) to `TUMBLE(t, ...)`, which `sqlparser` parses as a table function; the
//!   tokens keep their locations, so errors point into the original text.
//!
//! Statements whose expressions nest deeper than [`depth::MAX_EXPRESSION_DEPTH`] are
//! refused before parsing. Syntax errors read `SQL parse failed. Encountered "<token>" at line L, column C.`

pub mod ddl;
pub mod depth;
pub mod tvf;

use crate::error::{Result, SqlError};
use sqlparser::ast::{ObjectName, Query, Statement as Ast};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

pub use ddl::{ColumnDef, TableDef, WatermarkDef};

/// One parsed statement of the SQL client.
#[derive(Debug, Clone)]
pub enum Statement {
    /// `CREATE [TEMPORARY] TABLE`.
    CreateTable(Box<TableDef>),
    /// `CREATE [TEMPORARY] VIEW name AS query`.
    CreateView {
        /// The view's name.
        name: String,
        /// Its query.
        query: Box<Query>,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
    },
    /// `DROP TABLE|VIEW [IF EXISTS] name`.
    Drop {
        /// The object's name.
        name: String,
        /// True for `DROP VIEW`.
        view: bool,
        /// `IF EXISTS`.
        if_exists: bool,
    },
    /// `SHOW TABLES`.
    ShowTables,
    /// `DESCRIBE name`.
    Describe(String),
    /// `SET` (list) or `SET 'key' = 'value'`.
    Set(Option<(String, String)>),
    /// `RESET` (all) or `RESET 'key'`.
    Reset(Option<String>),
    /// `INSERT INTO table query`.
    Insert(Insert),
    /// `EXECUTE STATEMENT SET BEGIN insert; ... END`.
    StatementSet(Vec<Insert>),
    /// A query.
    Query(Box<Query>),
    /// `EXPLAIN statement`.
    Explain(Box<Statement>),
}

/// `INSERT INTO table query`.
#[derive(Debug, Clone)]
pub struct Insert {
    /// The sink table.
    pub table: String,
    /// The query.
    pub query: Box<Query>,
}

/// The dialect Weir's SQL is tokenized and parsed with.
pub fn dialect() -> GenericDialect {
    GenericDialect {}
}

/// A syntax error in Flink's words, from a `sqlparser` error.
pub fn parse_error(e: ParserError) -> SqlError {
    let msg = match e {
        ParserError::TokenizerError(m) | ParserError::ParserError(m) => m,
        ParserError::RecursionLimitExceeded => return SqlError::Parse("The statement is nested too deeply.".into()),
    };
    let re = regex::Regex::new(r"^(?:Expected: (.*), )?found: (.*) at Line: (\d+), Column: (\d+)$").ok();
    match re.as_ref().and_then(|r| r.captures(&msg)) {
        Some(c) => {
            let mut text = format!("Encountered \"{}\" at line {}, column {}.", &c[2], &c[3], &c[4]);
            if let Some(expected) = c.get(1) {
                text.push_str(&format!("\nWas expecting: {}", expected.as_str()));
            }
            SqlError::Parse(text)
        }
        None => SqlError::Parse(msg),
    }
}

/// A syntax error at `token`.
pub fn error_at(token: &TokenWithSpan, expected: &str) -> SqlError {
    let loc = token.span.start;
    let found = match &token.token {
        Token::EOF => "<EOF>".to_string(),
        t => t.to_string(),
    };
    SqlError::Parse(format!(
        "Encountered \"{found}\" at line {}, column {}.\nWas expecting: {expected}",
        loc.line, loc.column
    ))
}

/// The tokens of `sql` without whitespace and comments, ending with EOF.
pub fn tokenize(sql: &str) -> Result<Vec<TokenWithSpan>> {
    let d = dialect();
    let tokens = Tokenizer::new(&d, sql).tokenize_with_location().map_err(|e| {
        SqlError::Parse(
            format!("{e}")
                .replace("at Line:", "at line")
                .replace(", Column:", ", column"),
        )
    })?;
    let mut out: Vec<TokenWithSpan> = tokens
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let end = out
        .last()
        .map_or(sqlparser::tokenizer::Location::of(1, 1), |t| t.span.end);
    out.push(TokenWithSpan::at(Token::EOF, end, end));
    Ok(out)
}

/// True if `t` is the keyword (or plain word) `word`.
pub fn is_word(t: &TokenWithSpan, word: &str) -> bool {
    matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

/// A `sqlparser` parser over `tokens` (which must end with EOF).
pub fn parser_over(tokens: Vec<TokenWithSpan>) -> Parser<'static> {
    static DIALECT: GenericDialect = GenericDialect {};
    Parser::new(&DIALECT).with_tokens_with_locations(tokens)
}

/// Parses one statement (a trailing `;` is allowed).
pub fn parse_statement(sql: &str) -> Result<Statement> {
    let mut tokens = tokenize(sql)?;
    depth::check_depth(&tokens)?;
    while tokens.len() >= 2 && matches!(tokens[tokens.len() - 2].token, Token::SemiColon) {
        tokens.remove(tokens.len() - 2);
    }
    parse_tokens(tokens)
}

fn parse_tokens(tokens: Vec<TokenWithSpan>) -> Result<Statement> {
    let first = |i: usize, w: &str| tokens.get(i).is_some_and(|t| is_word(t, w));
    if first(0, "EXPLAIN") {
        let rest = tokens[1..].to_vec();
        if rest.first().is_some_and(|t| is_word(t, "PLAN")) {
            return Err(SqlError::unsupported("EXPLAIN PLAN FOR"));
        }
        return Ok(Statement::Explain(Box::new(parse_tokens(rest)?)));
    }
    if first(0, "CREATE") && (first(1, "TABLE") || (first(1, "TEMPORARY") && first(2, "TABLE"))) {
        return ddl::parse_create_table(tokens).map(|d| Statement::CreateTable(Box::new(d)));
    }
    if first(0, "SET") {
        return parse_set(&tokens);
    }
    if first(0, "RESET") {
        return match tokens.get(1).map(|t| &t.token) {
            Some(Token::EOF) => Ok(Statement::Reset(None)),
            Some(Token::SingleQuotedString(k)) if matches!(tokens[2].token, Token::EOF) => {
                Ok(Statement::Reset(Some(k.clone())))
            }
            _ => Err(error_at(&tokens[1], "a quoted key or the end of the statement")),
        };
    }
    if first(0, "EXECUTE") && first(1, "STATEMENT") && first(2, "SET") {
        return parse_statement_set(tokens);
    }
    if first(0, "SHOW") && !first(1, "TABLES") {
        return Err(SqlError::unsupported(format!(
            "SHOW {}",
            tokens.get(1).map(|t| t.token.to_string()).unwrap_or_default()
        )));
    }
    let tokens = tvf::rewrite(tokens)?;
    let mut parser = parser_over(tokens);
    let ast = parser.parse_statement().map_err(parse_error)?;
    let end = parser.peek_token();
    if !matches!(end.token, Token::EOF) {
        return Err(error_at(&end, "end of statement"));
    }
    from_ast(ast)
}

fn parse_set(tokens: &[TokenWithSpan]) -> Result<Statement> {
    let key_value = |t: &TokenWithSpan| match &t.token {
        Token::SingleQuotedString(s) => Some(s.clone()),
        _ => None,
    };
    match tokens.get(1).map(|t| &t.token) {
        Some(Token::EOF) => Ok(Statement::Set(None)),
        _ => {
            let key = key_value(&tokens[1]).ok_or_else(|| error_at(&tokens[1], "a quoted key"))?;
            let eq = &tokens[2];
            if !matches!(eq.token, Token::Eq) {
                return Err(error_at(eq, "\"=\""));
            }
            let value = tokens
                .get(3)
                .and_then(key_value)
                .ok_or_else(|| error_at(&tokens[3], "a quoted value"))?;
            match tokens.get(4) {
                Some(t) if matches!(t.token, Token::EOF) => Ok(Statement::Set(Some((key, value)))),
                Some(t) => Err(error_at(t, "end of statement")),
                None => Ok(Statement::Set(Some((key, value)))),
            }
        }
    }
}

fn parse_statement_set(tokens: Vec<TokenWithSpan>) -> Result<Statement> {
    if !tokens.get(3).is_some_and(|t| is_word(t, "BEGIN")) {
        return Err(error_at(&tokens[3.min(tokens.len() - 1)], "BEGIN"));
    }
    let eof = tokens.len() - 1;
    let end = tokens[..eof]
        .iter()
        .rposition(|t| is_word(t, "END"))
        .filter(|&i| i + 1 == eof)
        .ok_or_else(|| error_at(&tokens[eof], "END"))?;
    let mut inserts = Vec::new();
    let mut current: Vec<TokenWithSpan> = Vec::new();
    for t in tokens[4..end]
        .iter()
        .cloned()
        .chain(std::iter::once(TokenWithSpan::wrap(Token::SemiColon)))
    {
        if matches!(t.token, Token::SemiColon) {
            if current.is_empty() {
                continue;
            }
            let at = current[0].clone();
            current.push(TokenWithSpan::at(Token::EOF, at.span.end, at.span.end));
            match parse_tokens(std::mem::take(&mut current))? {
                Statement::Insert(i) => inserts.push(i),
                _ => {
                    return Err(error_at(
                        &at,
                        "INSERT INTO (a statement set holds only INSERT statements)",
                    ))
                }
            }
        } else {
            current.push(t);
        }
    }
    if inserts.is_empty() {
        return Err(SqlError::validation(
            "A statement set must contain at least one INSERT statement.",
        ));
    }
    Ok(Statement::StatementSet(inserts))
}

/// The plain name of a table (`t`, or `default_catalog.default_database.t`).
pub fn object_name(name: &ObjectName) -> String {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| p.to_string().trim_matches('`').to_string())
        .collect();
    match parts.as_slice() {
        [catalog, db, t] if catalog == "default_catalog" && db == "default_database" => t.clone(),
        [db, t] if db == "default_database" => t.clone(),
        _ => parts.join("."),
    }
}

fn from_ast(ast: Ast) -> Result<Statement> {
    Ok(match ast {
        Ast::Query(q) => Statement::Query(q),
        Ast::Insert(insert) => {
            let table = match &insert.table {
                sqlparser::ast::TableObject::TableName(n) => object_name(n),
                other => return Err(SqlError::unsupported(format!("INSERT INTO {other}"))),
            };
            if !insert.columns.is_empty() {
                return Err(SqlError::unsupported("INSERT with a column list"));
            }
            let query = insert
                .source
                .ok_or_else(|| SqlError::unsupported("INSERT without a query"))?;
            Statement::Insert(Insert { table, query })
        }
        Ast::CreateView(v) => {
            if v.materialized || !v.columns.is_empty() {
                return Err(SqlError::unsupported("CREATE MATERIALIZED VIEW or a view column list"));
            }
            Statement::CreateView {
                name: object_name(&v.name),
                query: v.query,
                if_not_exists: v.if_not_exists,
            }
        }
        Ast::Drop {
            object_type,
            if_exists,
            names,
            ..
        } => {
            let view = match object_type {
                sqlparser::ast::ObjectType::Table => false,
                sqlparser::ast::ObjectType::View => true,
                other => return Err(SqlError::unsupported(format!("DROP {other}"))),
            };
            let name = names
                .first()
                .map(object_name)
                .ok_or_else(|| SqlError::Parse("DROP needs a name".into()))?;
            Statement::Drop { name, view, if_exists }
        }
        Ast::ShowTables { .. } => Statement::ShowTables,
        Ast::ExplainTable { table_name, .. } => Statement::Describe(object_name(&table_name)),
        Ast::Explain { statement, .. } => Statement::Explain(Box::new(from_ast(*statement)?)),
        other => {
            let text = other.to_string();
            let head: String = text.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
            return Err(SqlError::unsupported(format!("The statement '{head} ...'")));
        }
    })
}

/// Splits a script into statements at `;` (outside quotes and comments);
/// `EXECUTE STATEMENT SET BEGIN .. END;` is one statement. Returns the statements
/// (without the `;`) and whatever follows the last `;` (an unfinished statement).
pub fn split_statements(script: &str) -> (Vec<String>, String) {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = script.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                current.push(c);
                if c == q {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' || c == '`' => {
                quote = Some(c);
                current.push(c);
            }
            None if c == '-' && chars.peek() == Some(&'-') => {
                for c2 in chars.by_ref() {
                    if c2 == '\n' {
                        current.push('\n');
                        break;
                    }
                }
            }
            None if c == ';' => {
                let upper = current.to_ascii_uppercase();
                let words: Vec<&str> = upper.split_whitespace().collect();
                let in_set = words.starts_with(&["EXECUTE", "STATEMENT", "SET"]) && words.last() != Some(&"END");
                if in_set {
                    current.push(';');
                } else {
                    if !current.trim().is_empty() {
                        out.push(current.trim().to_string());
                    }
                    current.clear();
                }
            }
            None => current.push(c),
        }
    }
    (out, current.trim().to_string())
}

#[cfg(test)]
mod tests;
