//! A table resolved for reading and writing: its physical columns, its computed
//! columns bound over them, its rowtime column and watermark delay.
//!
//! A table read with a projection pushed into its scan (Flink's `project=[..]`) has
//! as its schema only the columns the query reads; its rowtime column, when the query
//! does not read it, follows them in `columns` (evaluated for the records' timestamps,
//! never emitted).

use crate::error::{Result, SqlError};
use crate::expr::bind::{bind, interval_millis, Scope, ScopeColumn};
use crate::expr::Expr;
use crate::parser::ddl::ColumnKind;
use crate::parser::TableDef;
use crate::types::DataType;
use sqlparser::ast::{BinaryOperator, Expr as Ast};
use std::collections::BTreeMap;

/// A table ready to plan with.
#[derive(Debug, Clone)]
pub struct ResolvedTable {
    /// Its name.
    pub name: String,
    /// Physical columns (what the connector reads or writes), in order.
    pub physical: Vec<(String, DataType)>,
    /// For every column of [`Self::schema`], where its value comes from; for a
    /// projected table whose query does not read the rowtime column, then the rowtime
    /// column's.
    pub columns: Vec<ColumnSource>,
    /// All columns: physical and computed, in declaration order (a projected table's:
    /// the columns the query reads, in its order).
    pub schema: Vec<ScopeColumn>,
    /// The rowtime column (with a watermark), if any: an index into
    /// [`Self::columns`], past [`Self::schema`] when it is evaluated but not emitted.
    pub rowtime: Option<usize>,
    /// The watermark's delay behind the largest rowtime seen, in ms.
    pub watermark_delay_ms: i64,
    /// The `WITH` options.
    pub options: BTreeMap<String, String>,
    /// Whether a projection was pushed into the scan (see [`Self::project`]).
    pub projected: bool,
}

/// Where a column's value comes from.
#[derive(Debug, Clone)]
pub enum ColumnSource {
    /// The physical column at this index.
    Physical(usize),
    /// An expression over the physical columns.
    Computed(Expr),
}

impl ResolvedTable {
    /// Resolves `def`.
    pub fn resolve(def: &TableDef) -> Result<ResolvedTable> {
        let mut physical = Vec::new();
        for c in &def.columns {
            if let ColumnKind::Physical { data_type, .. } = c.kind {
                physical.push((c.name.clone(), data_type));
            }
        }
        let physical_scope = Scope {
            columns: physical
                .iter()
                .map(|(n, t)| ScopeColumn {
                    name: n.clone(),
                    qualifier: Some(def.name.clone()),
                    data_type: *t,
                })
                .collect(),
        };
        let mut columns = Vec::new();
        let mut schema = Vec::new();
        let mut p = 0;
        for c in &def.columns {
            let (source, data_type) = match &c.kind {
                ColumnKind::Physical { data_type, .. } => {
                    p += 1;
                    (ColumnSource::Physical(p - 1), *data_type)
                }
                ColumnKind::Computed(e) => {
                    let b = bind(e, &physical_scope)?;
                    (ColumnSource::Computed(b.expr), b.ty)
                }
            };
            if schema
                .iter()
                .any(|s: &ScopeColumn| s.name.eq_ignore_ascii_case(&c.name))
            {
                return Err(SqlError::validation(format!(
                    "A column named '{}' already exists in the table.",
                    c.name
                )));
            }
            columns.push(source);
            schema.push(ScopeColumn {
                name: c.name.clone(),
                qualifier: Some(def.name.clone()),
                data_type,
            });
        }
        let mut rowtime = None;
        let mut delay = 0;
        if let Some(w) = &def.watermark {
            let i = schema
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(&w.column))
                .ok_or_else(|| {
                    SqlError::validation(
                        format!(
                            "The rowtime attribute field '{}' is not defined in the table schema, at line",
                            w.column
                        )
                        .replace(", at line", ""),
                    )
                })?;
            if !schema[i].data_type.is_timestamp() {
                return Err(SqlError::validation(format!(
                    "Invalid data type of time field for watermark definition. The field must be of type TIMESTAMP(p) or TIMESTAMP_LTZ(p), the supported precision 'p' is from 0 to 3, but the time field type is {}",
                    schema[i].data_type
                )));
            }
            delay = watermark_delay(&w.expr, &w.column)?;
            rowtime = Some(i);
        }
        for k in &def.primary_key {
            if !schema.iter().any(|c| c.name.eq_ignore_ascii_case(k)) {
                return Err(SqlError::validation(format!(
                    "Invalid primary key. Column '{k}' does not exist."
                )));
            }
        }
        Ok(ResolvedTable {
            name: def.name.clone(),
            physical,
            columns,
            schema,
            rowtime,
            watermark_delay_ms: delay,
            options: def.options.clone(),
            projected: false,
        })
    }

    /// The table as a scan reading only `picked` (indexes into [`Self::schema`], in
    /// output order, each at most once): Flink's projection pushdown. The rowtime
    /// column, when not picked, is kept past the picked ones.
    pub fn project(&self, picked: &[usize]) -> ResolvedTable {
        let mut columns: Vec<ColumnSource> = picked.iter().map(|&c| self.columns[c].clone()).collect();
        let schema = picked.iter().map(|&c| self.schema[c].clone()).collect();
        let rowtime = self.rowtime.map(|r| match picked.iter().position(|&c| c == r) {
            Some(i) => i,
            None => {
                columns.push(self.columns[r].clone());
                columns.len() - 1
            }
        });
        ResolvedTable {
            name: self.name.clone(),
            physical: self.physical.clone(),
            columns,
            schema,
            rowtime,
            watermark_delay_ms: self.watermark_delay_ms,
            options: self.options.clone(),
            projected: true,
        }
    }

    /// The rowtime column, if the table emits it.
    pub fn emitted_rowtime(&self) -> Option<usize> {
        self.rowtime.filter(|&r| r < self.schema.len())
    }
}

fn watermark_delay(e: &Ast, column: &str) -> Result<i64> {
    let is_col = |x: &Ast| matches!(x, Ast::Identifier(i) if i.value.eq_ignore_ascii_case(column));
    match e {
        x if is_col(x) => Ok(0),
        Ast::BinaryOp {
            left,
            op: BinaryOperator::Minus,
            right,
        } if is_col(left) => interval_millis(right).ok_or_else(|| {
            SqlError::unsupported(format!(
                "The watermark expression '{e}' (use `{column} - INTERVAL 'n' UNIT`)"
            ))
        }),
        Ast::Nested(inner) => watermark_delay(inner, column),
        other => Err(SqlError::unsupported(format!(
            "The watermark expression '{other}' (use `{column}` or `{column} - INTERVAL 'n' UNIT`)"
        ))),
    }
}
