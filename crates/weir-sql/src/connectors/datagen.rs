//! The `datagen` connector: `rows-per-second` (default 10000), `number-of-rows`
//! (unbounded if unset), and per field `fields.<f>.kind` = `random` (default;
//! `.min/.max` for numbers, `.length` for strings) or `sequence` (`.start/.end`, both
//! required; the table ends after the longest sequence). Values are deterministic per
//! row index.

use super::check_options;
use super::row_source::{add_declared_source, Completer, RowSource, SourceDecl};
use crate::catalog::qualified;
use crate::error::{Result, SqlError};
use crate::plan::ResolvedTable;
use crate::types::DataType;
use crate::value::{Row, Value};
use smallvec::SmallVec;
use std::sync::Arc;
use weir_api::prelude::*;
use weir_connectors::source::GeneratorSource;
use weir_core::StreamRecord;

#[derive(Debug, Clone)]
enum FieldGen {
    Sequence { start: i64 },
    Random { min: f64, max: f64, length: usize },
}

fn option_error(t: &ResolvedTable, reason: String) -> SqlError {
    SqlError::TableOption {
        table: qualified(&t.name),
        is_source: true,
        reason,
    }
}

fn num(t: &ResolvedTable, key: &str) -> Result<Option<f64>> {
    match t.options.get(key) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| option_error(t, format!("Could not parse value '{v}' for key '{key}'."))),
    }
}

fn value_of(g: &FieldGen, ty: DataType, index: u64, rng: &mut Rng) -> Value {
    match g {
        FieldGen::Sequence { start } => {
            let v = start + index as i64;
            match ty {
                t if t.is_string() => Value::Str(v.to_string()),
                DataType::Decimal(_, s) => Value::Decimal(v as i128 * 10i128.pow(s as u32), s),
                DataType::Float | DataType::Double => Value::Double(v as f64),
                _ => Value::Int(v),
            }
        }
        FieldGen::Random { min, max, length } => {
            let x = min + rng.next_f64() * (max - min);
            match ty {
                DataType::Boolean => Value::Bool(rng.next_below(2) == 1),
                t if t.is_integer() => Value::Int(x.round() as i64),
                DataType::Float | DataType::Double => Value::Double(x),
                DataType::Decimal(_, s) => Value::Decimal((x * 10f64.powi(s as i32)).round() as i128, s),
                t if t.is_string() => Value::Str(
                    (0..*length)
                        .map(|_| char::from(b"0123456789abcdef"[rng.next_below(16) as usize]))
                        .collect(),
                ),
                t if t.is_timestamp() => Value::Timestamp(
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_millis() as i64)
                        .unwrap_or(0),
                ),
                DataType::Date => Value::Date(19_000 + rng.next_below(1000) as i32),
                _ => Value::Null,
            }
        }
    }
}

/// One generated row's physical values (few: kept off the heap).
type Physical = SmallVec<[Value; 4]>;

/// The seed of every row's random values: row `i`'s come from `Rng::for_index(SEED, i)`.
const SEED: u64 = 42;

/// The source of a datagen table: rows of its emitted columns only (a projection
/// pushed into the scan is evaluated here), stamped with their rowtime.
pub fn source(env: &StreamExecutionEnvironment, t: Arc<ResolvedTable>) -> Result<DataStream<Row>> {
    let mut allowed = vec!["rows-per-second".to_string(), "number-of-rows".to_string()];
    for (f, _) in &t.physical {
        for s in ["kind", "start", "end", "min", "max", "length", "null-rate"] {
            allowed.push(format!("fields.{f}.{s}"));
        }
    }
    let allowed_refs: Vec<&str> = allowed.iter().map(String::as_str).collect();
    check_options(&t, true, &[], &allowed_refs, &[])?;
    let rate = num(&t, "rows-per-second")?.unwrap_or(10_000.0);
    let mut rows = num(&t, "number-of-rows")?.map(|n| n as u64);
    let mut gens = Vec::new();
    for (f, ty) in &t.physical {
        let key = |s: &str| format!("fields.{f}.{s}");
        let g = match t.options.get(&key("kind")).map(String::as_str) {
            Some("sequence") => {
                let (start, end) = match (num(&t, &key("start"))?, num(&t, &key("end"))?) {
                    (Some(s), Some(e)) => (s as i64, e as i64),
                    _ => {
                        return Err(option_error(
                            &t,
                            format!(
                                "Could not find the required options for a sequence generator: {} and {}",
                                key("start"),
                                key("end")
                            ),
                        ))
                    }
                };
                let n = (end - start + 1).max(0) as u64;
                rows = Some(rows.map_or(n, |r| r.min(n)));
                FieldGen::Sequence { start }
            }
            None | Some("random") => FieldGen::Random {
                min: num(&t, &key("min"))?.unwrap_or(if ty.is_integer() { i32::MIN as f64 } else { 0.0 }),
                max: num(&t, &key("max"))?.unwrap_or(if ty.is_integer() { i32::MAX as f64 } else { 1.0 }),
                length: num(&t, &key("length"))?.unwrap_or(100.0) as usize,
            },
            Some(other) => {
                return Err(option_error(
                    &t,
                    format!(
                        "Unsupported kind '{other}' for {}: expected random or sequence",
                        key("kind")
                    ),
                ))
            }
        };
        gens.push((g, *ty));
    }
    let boundedness = match rows {
        Some(_) => weir_api::Boundedness::Bounded,
        None => weir_api::Boundedness::ContinuousUnbounded,
    };
    let count = rows.unwrap_or(u64::MAX);
    let gens = Arc::new(gens);
    // The generator yields row indexes only; each row is built from its index on the
    // converting side, its physical values kept on the stack.
    let index: weir_connectors::source::generator::GeneratorFn<u64> = Arc::new(|i, _| i);
    let table = t.clone();
    let decl = SourceDecl {
        description: format!("{}[datagen]", t.name),
        boundedness,
        stamped: true,
    };
    Ok(add_declared_source(env, &t, decl, move |ctx| {
        let inner =
            GeneratorSource::new(count, SEED, index.clone(), ctx.subtask_index, ctx.parallelism).with_rate(rate);
        let completer = Completer::new(table.clone());
        let gens = gens.clone();
        let random = gens.iter().any(|(g, _)| matches!(g, FieldGen::Random { .. }));
        Ok(Box::new(RowSource::new(
            Box::new(inner),
            move |r: StreamRecord<u64>| {
                let i = r.value;
                // Sequences need no random numbers: their rows skip seeding them.
                let mut rng = if random {
                    Rng::for_index(SEED, i)
                } else {
                    Rng::new(SEED)
                };
                let mut physical: Physical = SmallVec::new();
                for (g, ty) in gens.iter() {
                    physical.push(value_of(g, *ty, i, &mut rng));
                }
                completer.record(&physical, r.timestamp).map(Some)
            },
        )))
    }))
}
