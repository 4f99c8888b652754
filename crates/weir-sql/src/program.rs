//! The built-in program `sql`: a SQL job travels as its catalog's DDL script
//! (`--arg catalog=...`) and its statement (`--arg statement=...`, an `INSERT INTO`,
//! an `EXECUTE STATEMENT SET` or a `SELECT`), so every TaskManager rebuilds exactly
//! the same plan and operators from the text.

use crate::catalog::{qualified, Catalog, CatalogObject};
use crate::error::{Result, SqlError};
use crate::exec::compile;
use crate::expr::bind::ScopeColumn;
use crate::expr::cast::can_cast;
use crate::expr::Expr;
use crate::parser::{parse_statement, Insert, Statement};
use crate::plan::query::plan_query;
use crate::plan::{PlanKind, PlanNode, ResolvedTable};
use weir_api::prelude::*;

/// The argument holding the catalog's DDL.
pub const CATALOG_ARG: &str = "catalog";
/// The argument holding the statement.
pub const STATEMENT_ARG: &str = "statement";
/// The argument sending a SELECT's rows to the JobMaster's collect coordinator (else
/// printed): the batch size, Flink's `collect-sink.batch-size.max` (e.g. `2mb`).
pub const COLLECT_ARG: &str = "collect";

/// The collect sink's batch size from the `collect` argument (a memory size, at most
/// the coordinator's batch limit of 3 MiB).
pub fn collect_batch_bytes(text: &str) -> Result<u64> {
    let bytes = weir_config::value::MemorySize::parse(text.trim())
        .map_err(|e| SqlError::validation(format!("Invalid value '{text}' for 'collect-sink.batch-size.max': {e}")))?
        .0;
    if bytes == 0 || bytes > MAX_COLLECT_BATCH_BYTES {
        return Err(SqlError::validation(format!(
            "'collect-sink.batch-size.max' must be between 1 byte and {MAX_COLLECT_BATCH_BYTES} bytes, not '{text}'"
        )));
    }
    Ok(bytes)
}

/// The largest collect batch the JobMaster takes (under gRPC's message limit).
pub const MAX_COLLECT_BATCH_BYTES: u64 = 3 << 20;

/// One INSERT planned: the query's plan (cast to the sink's types) and the sink.
pub struct PlannedInsert {
    /// The query, with a final Calc casting to the sink's column types if needed.
    pub plan: PlanNode,
    /// The sink table.
    pub sink: ResolvedTable,
}

/// Plans `insert`, checking the query's columns against the sink's.
pub fn plan_insert(insert: &Insert, catalog: &Catalog) -> Result<PlannedInsert> {
    let plan = plan_query(&insert.query, catalog)?;
    let sink = match catalog.get(&insert.table)? {
        CatalogObject::Table(def) => ResolvedTable::resolve(def)?,
        CatalogObject::View(_) => {
            return Err(SqlError::validation(format!(
                "View '{}' cannot be written to",
                qualified(&insert.table)
            )))
        }
    };
    let mismatch = || {
        SqlError::validation(format!(
            "Column types of query result and sink for '{}' do not match.\nQuery schema: [{}]\nSink schema:  [{}]",
            qualified(&sink.name),
            plan.schema
                .iter()
                .map(|c| format!("{}: {}", c.name, c.data_type))
                .collect::<Vec<_>>()
                .join(", "),
            sink.physical
                .iter()
                .map(|(n, t)| format!("{n}: {t}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    };
    if plan.schema.len() != sink.physical.len() {
        return Err(mismatch());
    }
    let mut exprs = Vec::new();
    let mut needs_cast = false;
    for (i, (c, (_, t))) in plan.schema.iter().zip(&sink.physical).enumerate() {
        if c.data_type == *t {
            exprs.push(Expr::Column(i));
        } else if can_cast(c.data_type, *t)
            && (c.data_type.is_numeric() == t.is_numeric() || c.data_type == crate::types::DataType::Null)
        {
            needs_cast = true;
            exprs.push(Expr::Cast {
                expr: Box::new(Expr::Column(i)),
                from: c.data_type,
                to: *t,
                try_cast: false,
            });
        } else {
            return Err(mismatch());
        }
    }
    let plan = if needs_cast {
        let schema = sink
            .physical
            .iter()
            .map(|(n, t)| ScopeColumn {
                name: n.clone(),
                qualifier: None,
                data_type: *t,
            })
            .collect();
        let updates_from = plan.updates_from.clone();
        let desc = format!(
            "Calc(select=[{}])",
            sink.physical
                .iter()
                .map(|(n, t)| format!("CAST({n} AS {t})"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        PlanNode {
            kind: PlanKind::Calc {
                input: Box::new(plan),
                exprs,
                filter: None,
                desc,
            },
            schema,
            updates_from,
        }
    } else {
        plan
    };
    Ok(PlannedInsert { plan, sink })
}

/// The INSERTs of a job statement.
pub fn job_inserts(stmt: &Statement) -> Result<Vec<Insert>> {
    match stmt {
        Statement::Insert(i) => Ok(vec![i.clone()]),
        Statement::StatementSet(v) => Ok(v.clone()),
        _ => Err(SqlError::validation(
            "The sql program runs an INSERT INTO, EXECUTE STATEMENT SET or SELECT statement",
        )),
    }
}

/// Adds the operators of a job statement (INSERTs, or a SELECT sent to the collect
/// coordinator in batches of `collect` bytes, else printed as a changelog) to `env`.
pub fn build_statement(
    stmt: &Statement,
    catalog: &Catalog,
    env: &StreamExecutionEnvironment,
    collect: Option<&str>,
) -> Result<()> {
    if let Statement::Query(q) = stmt {
        let plan = plan_query(q, catalog)?;
        crate::plan_limits::check_windows(&plan, &env.plan_limits())?;
        let types = plan.types();
        let stream = compile(&plan, env)?;
        if let Some(batch) = collect {
            let batch_bytes = collect_batch_bytes(batch)?;
            let types = std::sync::Arc::new(types);
            stream
                .add_sink(crate::exec::collect::COLLECT_SINK_NAME, move |ctx| {
                    Ok(Box::new(crate::exec::collect::CollectSink::new(
                        ctx,
                        types.clone(),
                        batch_bytes,
                    )?))
                })
                .set_parallelism(1);
            return Ok(());
        }
        stream
            .map(move |row: crate::value::Row| {
                crate::value::PrintRow {
                    row: &row,
                    types: &types,
                }
                .to_string()
            })
            .name("Changelog(format=[+I[...]])")
            .print()
            .name("Sink: Collect table sink");
        return Ok(());
    }
    let mut planned = Vec::new();
    for insert in job_inserts(stmt)? {
        let p = plan_insert(&insert, catalog)?;
        crate::plan_limits::check_windows(&p.plan, &env.plan_limits())?;
        let stream = compile(&p.plan, env)?;
        planned.push((p, stream));
    }
    // Every source is known now: in BATCH mode aggregates emit final rows only, so any
    // sink takes them.
    let batch = env.resolve_runtime_mode().is_batch();
    for (p, stream) in planned {
        let updates_from = if batch { None } else { p.plan.updates_from.as_deref() };
        crate::connectors::sink(&p.sink, &stream, updates_from)?;
    }
    Ok(())
}

/// The `sql` program's build function.
pub fn build(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> std::result::Result<(), ProgramError> {
    let limits = env.plan_limits();
    let script = args.get(CATALOG_ARG).unwrap_or_default();
    crate::plan_limits::check_text("the catalog script of the SQL job", script, &limits)
        .map_err(|e| ProgramError::Invalid(e.to_string()))?;
    if let Some(text) = args.get(STATEMENT_ARG) {
        crate::plan_limits::check_text("the SQL statement", text, &limits)
            .map_err(|e| ProgramError::Invalid(e.to_string()))?;
    }
    let catalog =
        Catalog::from_script(script).map_err(|e| ProgramError::Invalid(format!("the catalog of the SQL job: {e}")))?;
    let text = args.get(STATEMENT_ARG).ok_or_else(|| {
        ProgramError::Invalid("the sql program needs --arg statement=<INSERT INTO ... | SELECT ...>".into())
    })?;
    let stmt = parse_statement(text).map_err(|e| ProgramError::Invalid(e.to_string()))?;
    build_statement(&stmt, &catalog, env, args.get(COLLECT_ARG)).map_err(|e| ProgramError::Invalid(e.to_string()))
}
