//! The `filesystem` connector: `'path'` (a file, or a directory whose visible files are
//! read in name order) and `'format'` (`csv` or `json`). A line that is not valid UTF-8
//! or does not parse fails the job naming it, or is skipped when
//! `'<format>.ignore-parse-errors' = 'true'` (Flink's option); so is a line longer than
//! `'source.max-line-length'` (Weir's option, a memory size, default 16 MiB), of which
//! no more than that is ever held in memory. As a sink it writes part files
//! into the directory through the exactly-once file sink (committed per checkpoint and
//! at the end of input); it takes only insert-only input.

use super::check_options;
use super::csv_line::CsvLineParser;
use super::file_rows::FileRowsSource;
use super::format::{parse_json, to_csv, to_json};
use super::row_source::{add_declared_source, Completer, SourceDecl};
use crate::error::{Result, SqlError};
use crate::plan::ResolvedTable;
use crate::types::DataType;
use crate::value::{Row, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use weir_api::prelude::*;
use weir_connectors::source::DEFAULT_MAX_LINE_LENGTH;
use weir_core::excerpt::excerpt;
use weir_core::StreamRecord;
use weir_runtime::operator::SourceFunction;
use weir_runtime::TaskError;

const OPTIONS: [&str; 6] = [
    "format",
    "source.monitor-interval",
    "source.max-line-length",
    "sink.rolling-policy.file-size",
    "csv.ignore-parse-errors",
    "json.ignore-parse-errors",
];

/// Whether the table skips lines that do not parse (`'<format>.ignore-parse-errors'`).
fn ignore_parse_errors(t: &ResolvedTable, format: &str) -> Result<bool> {
    let key = format!("{format}.ignore-parse-errors");
    match t.options.get(&key).map(|v| v.to_ascii_lowercase()) {
        None => Ok(false),
        Some(v) if v == "true" => Ok(true),
        Some(v) if v == "false" => Ok(false),
        Some(v) => Err(SqlError::TableOption {
            table: crate::catalog::qualified(&t.name),
            is_source: true,
            reason: format!(
                "Unrecognized option for boolean: {}. Expected either true or false(case insensitive)",
                excerpt(&v)
            ),
        }),
    }
}

/// The bound on a line's length (`'source.max-line-length'`, a memory size).
fn max_line_length(t: &ResolvedTable) -> Result<usize> {
    let Some(text) = t.options.get("source.max-line-length") else {
        return Ok(DEFAULT_MAX_LINE_LENGTH);
    };
    weir_config::MemorySize::parse(text)
        .map_err(|reason| format!("'source.max-line-length' = '{}': {reason}", excerpt(text)))
        .and_then(|size| {
            usize::try_from(size.bytes())
                .map_err(|_| format!("'source.max-line-length' = '{}' is too large", excerpt(text)))
        })
        .and_then(|bytes| match bytes {
            0 => Err("'source.max-line-length' must be at least 1 byte".to_string()),
            n => Ok(n),
        })
        .map_err(|reason| SqlError::TableOption {
            table: crate::catalog::qualified(&t.name),
            is_source: true,
            reason,
        })
}

fn format_of(t: &ResolvedTable, source: bool) -> Result<&'static str> {
    match t.options.get("format").map(String::as_str) {
        Some("csv") => Ok("csv"),
        Some("json") => Ok("json"),
        Some(other) => Err(SqlError::TableOption {
            table: crate::catalog::qualified(&t.name),
            is_source: source,
            reason: format!(
                "Could not find any format factory for identifier '{other}' in the classpath. Available: csv, json"
            ),
        }),
        None => Err(SqlError::TableOption {
            table: crate::catalog::qualified(&t.name),
            is_source: source,
            reason: "One or more required options are missing.\n\nMissing required options are:\n\nformat".into(),
        }),
    }
}

/// The files of `path`: itself, or a directory's visible files sorted by name.
pub fn input_files(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        std::fs::metadata(path)?;
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(['.', '_']))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// The source of a filesystem table.
pub fn source(env: &StreamExecutionEnvironment, t: Arc<ResolvedTable>) -> Result<DataStream<Row>> {
    check_options(&t, true, &["path"], &OPTIONS, &["json.", "csv."])?;
    let format = format_of(&t, true)?;
    let skip_malformed = ignore_parse_errors(&t, format)?;
    let max_line = max_line_length(&t)?;
    let path = PathBuf::from(&t.options["path"]);
    let name = format!("{}[filesystem]", t.name);
    let table = t.clone();
    let build = move |ctx: &weir_runtime::operator::TaskContext| -> std::result::Result<Box<dyn SourceFunction<Row>>, TaskError> {
        let files = input_files(&path).map_err(|e| TaskError::io(format!("cannot read input path {}", path.display()), e))?;
        let t = table.clone();
        let types: Vec<DataType> = t.physical.iter().map(|(_, ty)| *ty).collect();
        let op = format!("Source: {}", t.name);
        let completer = Completer::new(t.clone());
        let mut csv = CsvLineParser::new(&types);
        let projected = t.projected;
        let width = types.len().max(completer.width());
        // A line's physical values; reused from line to line when the row is built
        // aside (a projected scan), else handed on as the row's vector.
        let mut physical: Vec<Value> = Vec::with_capacity(width);
        let convert = Box::new(move |line: &str| {
            let parsed = if format == "csv" {
                physical.clear();
                csv.parse_into(line, &mut physical)
            } else {
                parse_json(line, &t.physical).map(|values| physical = values)
            };
            match parsed {
                // A projected scan's rows are stamped with their rowtime here, as the
                // row may not hold it.
                Ok(()) if projected => completer.record(&physical, None).map(Some),
                Ok(()) => {
                    let values = std::mem::replace(&mut physical, Vec::with_capacity(width));
                    completer.complete(values).map(|row| Some(StreamRecord::new(row)))
                }
                Err(_) if skip_malformed => Ok(None),
                Err(cause) => Err(TaskError::user(
                    &op,
                    format!(
                        "Failed to deserialize {} row '{}'. Caused by: {cause}",
                        format.to_uppercase(),
                        excerpt(line)
                    ),
                )),
            }
        });
        Ok(Box::new(FileRowsSource::new(
            files,
            ctx.subtask_index,
            ctx.parallelism,
            skip_malformed,
            max_line,
            convert,
        )))
    };
    let decl = SourceDecl {
        description: name,
        boundedness: weir_api::Boundedness::Bounded,
        stamped: t.projected,
    };
    let stream = add_declared_source(env, &t, decl, build);
    // A path not readable now fails the job when the source opens it.
    Ok(match split_count(&t.options["path"]) {
        Some(splits) => stream.set_source_splits(splits),
        None => stream,
    })
}

/// The bytes of a file one source subtask is expected to read when the parallelism is
/// inferred: 128 MiB (Spark's `maxPartitionBytes`, HDFS's block size).
const SPLIT_BYTES: u64 = 128 * 1024 * 1024;

/// The number of splits of the input files under `path` when they can be listed now:
/// one per started 128 MiB of each file, at least one per file. Flink reads a CSV or
/// JSON file whole, as one split; Weir cuts a file into byte ranges at line boundaries
/// ([`RangeLineReader`](weir_connectors::source::RangeLineReader)), so that a large
/// file is read by several subtasks.
fn split_count(path: &str) -> Option<u32> {
    let files = input_files(&PathBuf::from(path)).ok()?;
    let splits: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(1, |m| m.len().div_ceil(SPLIT_BYTES).max(1)))
        .sum();
    Some(u32::try_from(splits).unwrap_or(u32::MAX))
}

/// Writes rows of `t`'s physical columns as part files under `t`'s path.
pub fn sink(t: &ResolvedTable, stream: &DataStream<Row>, types: Arc<Vec<DataType>>) -> Result<()> {
    check_options(t, false, &["path"], &OPTIONS, &["json.", "csv.", "sink."])?;
    let format = format_of(t, false)?;
    let columns = t.physical.clone();
    let lines = stream
        .map(move |row: Row| {
            if format == "csv" {
                to_csv(&row, &types)
            } else {
                to_json(&row, &columns)
            }
        })
        .name(format!("Writer(format=[{format}])"));
    lines
        .write_as_text(PathBuf::from(&t.options["path"]))
        .name(format!("Sink: {}[filesystem]", t.name));
    Ok(())
}
