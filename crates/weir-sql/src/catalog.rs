//! The session catalog (`default_catalog.default_database`): tables and views by
//! name, each with the DDL text that created it, in creation order, so that a
//! TaskManager can rebuild exactly the same catalog from [`Catalog::ddl_script`].

use crate::error::{Result, SqlError};
use crate::parser::{parse_statement, Statement, TableDef};
use sqlparser::ast::Query;

/// A table or a view.
#[derive(Debug, Clone)]
pub enum CatalogObject {
    /// A table of a connector.
    Table(Box<TableDef>),
    /// A view: a named query.
    View(Box<Query>),
}

#[derive(Debug, Clone)]
struct Entry {
    name: String,
    object: CatalogObject,
    ddl: String,
}

/// The tables and views of a session.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
}

/// The fully qualified name Flink shows for `name`.
pub fn qualified(name: &str) -> String {
    format!("default_catalog.default_database.{name}")
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rebuilds a catalog from a DDL script.
    pub fn from_script(script: &str) -> Result<Self> {
        let mut c = Catalog::new();
        let (statements, rest) = crate::parser::split_statements(script);
        for text in statements
            .iter()
            .chain(std::iter::once(&rest).filter(|r| !r.is_empty()))
        {
            let stmt = parse_statement(text)?;
            c.apply(&stmt, text)?;
        }
        Ok(c)
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.name.eq_ignore_ascii_case(name))
    }

    /// The object called `name`.
    pub fn get(&self, name: &str) -> Result<&CatalogObject> {
        self.position(name)
            .map(|i| &self.entries[i].object)
            .ok_or_else(|| SqlError::validation(format!("Object '{name}' not found")))
    }

    /// Applies a DDL statement (`CREATE TABLE/VIEW`, `DROP`); `text` is its DDL.
    /// Returns false for a statement that is not DDL.
    pub fn apply(&mut self, stmt: &Statement, text: &str) -> Result<bool> {
        match stmt {
            Statement::CreateTable(def) => {
                self.create(&def.name, def.if_not_exists, CatalogObject::Table(def.clone()), text)?
            }
            Statement::CreateView {
                name,
                query,
                if_not_exists,
            } => self.create(name, *if_not_exists, CatalogObject::View(query.clone()), text)?,
            Statement::Drop { name, view, if_exists } => match self.position(name) {
                Some(i) => {
                    let is_view = matches!(self.entries[i].object, CatalogObject::View(_));
                    if is_view != *view {
                        return Err(SqlError::validation(format!(
                            "{} '{}' is a {}; use DROP {}",
                            if is_view { "View" } else { "Table" },
                            qualified(name),
                            if is_view { "view" } else { "table" },
                            if is_view { "VIEW" } else { "TABLE" }
                        )));
                    }
                    self.entries.remove(i);
                }
                None if *if_exists => {}
                None => {
                    return Err(SqlError::validation(format!(
                        "{} with identifier '{}' does not exist.",
                        if *view { "Temporary view" } else { "Table" },
                        qualified(name)
                    )))
                }
            },
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn create(&mut self, name: &str, if_not_exists: bool, object: CatalogObject, ddl: &str) -> Result<()> {
        if self.position(name).is_some() {
            if if_not_exists {
                return Ok(());
            }
            return Err(SqlError::validation(format!(
                "Could not execute CreateTable in path `default_catalog`.`default_database`.`{name}`: Table or view already exists"
            )));
        }
        self.entries.push(Entry {
            name: name.to_string(),
            object,
            ddl: ddl.trim().trim_end_matches(';').to_string(),
        });
        Ok(())
    }

    /// The names of all tables and views, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut n: Vec<String> = self.entries.iter().map(|e| e.name.clone()).collect();
        n.sort();
        n
    }

    /// The DDL of every object, in creation order, as one script.
    pub fn ddl_script(&self) -> String {
        self.entries.iter().map(|e| format!("{};\n", e.ddl)).collect()
    }
}
