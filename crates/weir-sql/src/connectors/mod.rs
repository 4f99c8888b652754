//! Table connectors (Flink's table factories), chosen by `'connector'`: `datagen`,
//! `filesystem` (csv, json), `print`, `blackhole`. Options are validated with Flink's
//! messages before anything runs; sources emit complete rows (physical columns read,
//! computed columns evaluated) and, for a table with a watermark, record timestamps
//! from the rowtime column and bounded-out-of-orderness watermarks.

pub mod csv_line;
pub mod datagen;
pub mod file_rows;
pub mod filesystem;
pub mod format;
pub mod row_source;

use crate::catalog::qualified;
use crate::error::{Result, SqlError};
use crate::plan::ResolvedTable;
use crate::value::{PrintRow, Row};
use std::sync::Arc;
use weir_api::prelude::*;
use weir_connectors::sink::PrintSink;

/// The connector named by a table's options.
pub fn connector_of(t: &ResolvedTable, source: bool) -> Result<String> {
    t.options
        .get("connector")
        .cloned()
        .ok_or_else(|| SqlError::TableOption {
            table: qualified(&t.name),
            is_source: source,
            reason: "Table options do not contain an option key 'connector' for discovering a connector.".into(),
        })
}

/// Checks `t`'s options against a connector's required and optional keys (and key
/// prefixes such as `fields.`).
pub fn check_options(
    t: &ResolvedTable,
    source: bool,
    required: &[&str],
    optional: &[&str],
    prefixes: &[&str],
) -> Result<()> {
    let connector = connector_of(t, source)?;
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|k| !t.options.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        return Err(SqlError::TableOption {
            table: qualified(&t.name),
            is_source: source,
            reason: format!(
                "One or more required options are missing.\n\nMissing required options are:\n\n{}",
                missing.join("\n")
            ),
        });
    }
    let unsupported: Vec<&str> = t
        .options
        .keys()
        .map(String::as_str)
        .filter(|k| {
            *k != "connector"
                && !required.contains(k)
                && !optional.contains(k)
                && !prefixes.iter().any(|p| k.starts_with(p))
        })
        .collect();
    if !unsupported.is_empty() {
        let mut supported: Vec<&str> = std::iter::once("connector")
            .chain(required.iter().copied())
            .chain(optional.iter().copied())
            .collect();
        supported.extend(prefixes.iter().copied());
        supported.sort();
        return Err(SqlError::TableOption {
            table: qualified(&t.name),
            is_source: source,
            reason: format!(
                "Unsupported options found for '{connector}'.\n\nUnsupported options:\n\n{}\n\nSupported options:\n\n{}",
                unsupported.join("\n"),
                supported.join("\n")
            ),
        });
    }
    Ok(())
}

/// The source of table `t`.
pub fn source(env: &StreamExecutionEnvironment, t: Arc<ResolvedTable>) -> Result<DataStream<Row>> {
    match connector_of(&t, true)?.as_str() {
        "datagen" => datagen::source(env, t),
        "filesystem" => filesystem::source(env, t),
        other => Err(unknown_connector(&t, other, true)),
    }
}

fn unknown_connector(t: &ResolvedTable, name: &str, source: bool) -> SqlError {
    SqlError::TableOption {
        table: qualified(&t.name),
        is_source: source,
        reason: format!(
            "Could not find any factory for identifier '{name}' that implements 'org.apache.flink.table.factories.Dynamic{}Factory' in the classpath.\n\nAvailable factory identifiers are:\n\n{}",
            if source { "TableSource" } else { "TableSink" },
            if source { "datagen\nfilesystem" } else { "blackhole\nfilesystem\nprint" }
        ),
    }
}

/// Writes `stream` (of `t`'s physical columns) into table `t`. `updates_from` names
/// the node that makes the stream updating, if it is.
pub fn sink(t: &ResolvedTable, stream: &DataStream<Row>, updates_from: Option<&str>) -> Result<()> {
    let types: Arc<Vec<_>> = Arc::new(t.physical.iter().map(|(_, ty)| *ty).collect());
    let name = format!("Sink: {}", t.name);
    match connector_of(t, false)?.as_str() {
        "print" => {
            check_options(
                t,
                false,
                &[],
                &["print-identifier", "standard-error", "sink.parallelism"],
                &[],
            )?;
            let prefix = t
                .options
                .get("print-identifier")
                .map(|p| format!("{p}:"))
                .unwrap_or_default();
            stream
                .add_sink(name, move |ctx| {
                    Ok(Box::new(PrintRows {
                        types: types.clone(),
                        prefix: prefix.clone(),
                        inner: PrintSink::new(ctx.subtask_index, ctx.parallelism),
                    }))
                })
                .name(format!("Sink: {}[print]", t.name));
        }
        "blackhole" => {
            check_options(t, false, &[], &[], &[])?;
            stream.discard().name(format!("Sink: {}[blackhole]", t.name));
        }
        "filesystem" => {
            if let Some(node) = updates_from {
                return Err(SqlError::Planner(format!(
                    "Table sink '{}' doesn't support consuming update changes which is produced by node {node}",
                    qualified(&t.name)
                )));
            }
            filesystem::sink(t, stream, types)?;
        }
        other => return Err(unknown_connector(t, other, false)),
    }
    Ok(())
}

/// The print connector: `+I[a, b]` lines.
struct PrintRows {
    types: Arc<Vec<crate::types::DataType>>,
    prefix: String,
    inner: PrintSink,
}

impl weir_runtime::operator::Output<Row> for PrintRows {
    fn collect(&mut self, record: StreamRecord<Row>) -> std::result::Result<(), weir_runtime::TaskError> {
        let line = format!(
            "{}{}",
            self.prefix,
            PrintRow {
                row: &record.value,
                types: &self.types
            }
        );
        weir_runtime::operator::Output::<String>::collect(&mut self.inner, StreamRecord::new(line))
    }
    fn emit_watermark(&mut self, _w: Watermark) -> std::result::Result<(), weir_runtime::TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> std::result::Result<(), weir_runtime::TaskError> {
        weir_runtime::operator::Output::<String>::end_input(&mut self.inner)
    }
}
