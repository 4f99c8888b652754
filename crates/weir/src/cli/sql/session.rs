//! A SQL client session: the catalog, the `SET` options, and what each statement
//! does — DDL changes the catalog, `SHOW TABLES`/`DESCRIBE`/`EXPLAIN` print, and
//! `INSERT`/`EXECUTE STATEMENT SET`/`SELECT` become jobs of the program `sql` with the
//! session's options as job configuration (as `weir run -D`).

use super::collect::{drain, ResultFetcher};
use super::submit::Executor;
use super::tableau;
use anyhow::Result;
use std::collections::BTreeMap;
use weir_api::StreamExecutionEnvironment;
use weir_core::RuntimeExecutionMode;
use weir_graph::{JobGraph, JobPlan};
use weir_rest::JobSubmitRequest;
use weir_sql::catalog::{Catalog, CatalogObject};
use weir_sql::parser::{parse_statement, Statement};
use weir_sql::plan::{explain::explain, ResolvedTable};

/// The state of one `weir sql` session.
pub struct Session {
    catalog: Catalog,
    options: BTreeMap<String, String>,
    executor: Executor,
}

const SUCCEEDED: &str = "[INFO] Execute statement succeeded.";

/// Flink's option of the collect sink's batch size (a SELECT's results travel in
/// batches of it; the JobMaster buffers two).
const COLLECT_BATCH_SIZE: &str = "collect-sink.batch-size.max";

impl Session {
    /// A session submitting to `executor`.
    pub fn new(executor: Executor) -> Self {
        Self {
            catalog: Catalog::new(),
            options: BTreeMap::new(),
            executor,
        }
    }

    /// Refuses a statement longer than `table.sql.max-statement-size` (as `SET` in the
    /// session or by `-D`) before it is parsed.
    fn check_statement_size(&self, text: &str) -> Result<()> {
        let key = weir_api::limits::MAX_STATEMENT_SIZE_KEY;
        let mut config = weir_config::Configuration::new();
        if let Some(v) = self.options.get(key) {
            config.set_string(key, v);
        }
        let limits = weir_api::limits::PlanLimits {
            max_statement_bytes: Some(config.get(&weir_config::options::SQL_MAX_STATEMENT_SIZE)?.bytes()),
            max_windows_per_record: None,
        };
        limits
            .check_statement_size("the SQL statement", text)
            .map_err(anyhow::Error::msg)
    }

    /// Ends the session (waits for the embedded cluster's jobs).
    pub fn close(self) -> Result<()> {
        self.executor.close()
    }

    /// Executes one statement; what to print.
    pub fn execute(&mut self, text: &str) -> Result<String> {
        self.check_statement_size(text)?;
        let stmt = parse_statement(text)?;
        match &stmt {
            Statement::CreateTable(def) => {
                ResolvedTable::resolve(def)?;
                self.catalog.apply(&stmt, text)?;
                Ok(SUCCEEDED.into())
            }
            Statement::CreateView { query, .. } => {
                weir_sql::plan::query::plan_query(query, &self.catalog)?;
                self.catalog.apply(&stmt, text)?;
                Ok(SUCCEEDED.into())
            }
            Statement::Drop { .. } => {
                self.catalog.apply(&stmt, text)?;
                Ok(SUCCEEDED.into())
            }
            Statement::ShowTables => {
                let rows: Vec<Vec<String>> = self.catalog.names().into_iter().map(|n| vec![n]).collect();
                Ok(tableau::render(&["table name"], &rows).trim_end().to_string())
            }
            Statement::Describe(name) => self.describe(name),
            Statement::Set(None) => Ok(self
                .options
                .iter()
                .map(|(k, v)| format!("'{k}' = '{v}'"))
                .collect::<Vec<_>>()
                .join("\n")),
            Statement::Set(Some((k, v))) => {
                self.options.insert(k.clone(), v.clone());
                Ok(SUCCEEDED.into())
            }
            Statement::Reset(key) => {
                match key {
                    Some(k) => {
                        self.options.remove(k);
                    }
                    None => self.options.clear(),
                }
                Ok(SUCCEEDED.into())
            }
            Statement::Explain(inner) => self.explain(inner),
            Statement::Insert(_) | Statement::StatementSet(_) | Statement::Query(_) => self.run_job(&stmt, text),
        }
    }

    fn describe(&self, name: &str) -> Result<String> {
        let def = match self.catalog.get(name)? {
            CatalogObject::Table(def) => def.clone(),
            CatalogObject::View(q) => {
                let plan = weir_sql::plan::query::plan_query(q, &self.catalog)?;
                let rows: Vec<Vec<String>> = plan
                    .schema
                    .iter()
                    .map(|c| {
                        vec![
                            c.name.clone(),
                            c.data_type.to_string(),
                            "TRUE".into(),
                            String::new(),
                            String::new(),
                            String::new(),
                        ]
                    })
                    .collect();
                return Ok(
                    tableau::render(&["name", "type", "null", "key", "extras", "watermark"], &rows)
                        .trim_end()
                        .to_string(),
                );
            }
        };
        let t = ResolvedTable::resolve(&def)?;
        let mut rows = Vec::new();
        for (i, (c, col)) in t.schema.iter().zip(&def.columns).enumerate() {
            let nullable = match col.kind {
                weir_sql::parser::ddl::ColumnKind::Physical { nullable, .. } => nullable,
                _ => true,
            };
            let pk = def.primary_key.iter().any(|k| k.eq_ignore_ascii_case(&c.name));
            let extras = match &col.kind {
                weir_sql::parser::ddl::ColumnKind::Computed(e) => format!("AS {e}"),
                _ => String::new(),
            };
            let watermark = match (&def.watermark, t.rowtime) {
                (Some(w), Some(r)) if r == i => format!("{}", w.expr),
                _ => String::new(),
            };
            let ty = if t.rowtime == Some(i) {
                format!("{} *ROWTIME*", c.data_type)
            } else {
                c.data_type.to_string()
            };
            rows.push(vec![
                c.name.clone(),
                ty,
                if nullable && !pk { "TRUE".into() } else { "FALSE".into() },
                if pk {
                    format!("PRI({})", def.primary_key.join(", "))
                } else {
                    String::new()
                },
                extras,
                watermark,
            ]);
        }
        Ok(
            tableau::render(&["name", "type", "null", "key", "extras", "watermark"], &rows)
                .trim_end()
                .to_string(),
        )
    }

    fn args(&self, text: &str) -> BTreeMap<String, String> {
        BTreeMap::from([
            (weir_sql::program::CATALOG_ARG.to_string(), self.catalog.ddl_script()),
            (
                weir_sql::program::STATEMENT_ARG.to_string(),
                text.trim().trim_end_matches(';').to_string(),
            ),
        ])
    }

    /// The statement built into a local environment (all planning errors surface here).
    fn build_local(&self, stmt: &Statement, collect: Option<&str>) -> Result<StreamExecutionEnvironment> {
        let mut env = StreamExecutionEnvironment::new();
        env.set_runtime_mode(self.runtime_mode()?);
        weir_sql::program::build_statement(stmt, &self.catalog, &env, collect)?;
        Ok(env)
    }

    /// The collect sink's batch size (`collect-sink.batch-size.max`, Flink's key and
    /// default), checked here so that a bad value fails before submission.
    fn collect_batch_size(&self) -> Result<String> {
        let text = self
            .options
            .get(COLLECT_BATCH_SIZE)
            .cloned()
            .unwrap_or_else(|| weir_sql::exec::collect::DEFAULT_BATCH_BYTES.to_string());
        weir_sql::program::collect_batch_bytes(&text)?;
        Ok(text)
    }

    fn explain(&self, inner: &Statement) -> Result<String> {
        let plans = match inner {
            Statement::Query(q) => vec![weir_sql::plan::query::plan_query(q, &self.catalog)?],
            other => weir_sql::program::job_inserts(other)?
                .iter()
                .map(|i| weir_sql::program::plan_insert(i, &self.catalog).map(|p| p.plan))
                .collect::<Result<Vec<_>, _>>()?,
        };
        let env = self.build_local(inner, None)?;
        let graph = env.build_graph("explain")?;
        let job_graph = JobGraph::from_stream_graph(&graph.stream_graph)?;
        let mut out = String::from("== Optimized Execution Plan ==\n");
        for p in plans {
            out.push_str(&explain(&p));
        }
        out.push_str("\n== JobGraph ==\n");
        out.push_str(&JobPlan::from_job_graph(&job_graph).to_text());
        Ok(out.trim_end().to_string())
    }

    /// `execution.runtime-mode` as SET in the session (STREAMING when unset).
    fn runtime_mode(&self) -> Result<RuntimeExecutionMode> {
        match self.options.get("execution.runtime-mode") {
            None => Ok(RuntimeExecutionMode::Streaming),
            Some(v) => RuntimeExecutionMode::parse(v).ok_or_else(|| {
                anyhow::anyhow!(
                    "Could not parse value '{v}' for key 'execution.runtime-mode'. Accepted values: STREAMING, BATCH, AUTOMATIC"
                )
            }),
        }
    }

    fn run_job(&mut self, stmt: &Statement, text: &str) -> Result<String> {
        let is_query = matches!(stmt, Statement::Query(_));
        let collect = if is_query {
            Some(self.collect_batch_size()?)
        } else {
            None
        };
        let env = self.build_local(stmt, collect.as_deref())?;
        let graph = env.build_graph("sql")?;
        let batch = graph.stream_graph.config.runtime_mode.is_batch();
        let slots = weir_graph::total_slots_required(&JobGraph::from_stream_graph(&graph.stream_graph)?);
        let mut request = JobSubmitRequest::new("sql");
        request.args = self.args(text);
        if let Some(batch) = collect {
            request.args.insert(weir_sql::program::COLLECT_ARG.to_string(), batch);
        }
        let mut sync = is_query;
        for (k, v) in &self.options {
            match k.as_str() {
                "parallelism.default" => {
                    request.parallelism = Some(
                        v.trim()
                            .parse()
                            .map_err(|_| anyhow::anyhow!("invalid parallelism.default '{v}'"))?,
                    )
                }
                "pipeline.name" => request.job_name = Some(v.clone()),
                "table.dml-sync" => sync |= v.trim().eq_ignore_ascii_case("true"),
                "sql-client.execution.result-mode" => {}
                k if k.starts_with("table.") || k.starts_with("sql-client.") || k == COLLECT_BATCH_SIZE => {}
                _ => {
                    request.config.insert(k.clone(), v.clone());
                }
            }
        }
        if request.job_name.is_none() {
            request.job_name = Some(if is_query {
                "collect".into()
            } else {
                insert_job_name(&weir_sql::program::job_inserts(stmt)?)
            });
        }
        let mut out = String::new();
        if let Statement::Query(q) = stmt {
            let columns = weir_sql::plan::query::plan_query(q, &self.catalog)?.schema;
            let operator = weir_sql::exec::collect::collect_sink_operator_id(&graph.stream_graph)
                .ok_or_else(|| anyhow::anyhow!("the SELECT's plan has no collect sink"))?;
            let jid = self.executor.submit(request, slots)?;
            let mut fetcher = ResultFetcher::new(self.executor.rest_address()?, jid, operator.to_string());
            if batch {
                // A batch result is final: Flink prints it whole, without the changelog
                // column, sized by its contents.
                let mut cells: Vec<Vec<String>> = Vec::new();
                drain(&mut fetcher, |rows| {
                    cells.extend(rows.into_iter().map(|(_, values)| {
                        values
                            .into_iter()
                            .map(|v| v.unwrap_or_else(|| tableau::NULL_CELL.into()))
                            .collect()
                    }));
                    Ok(())
                })?;
                let header: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
                return Ok(tableau::render(&header, &cells).trim_end().to_string());
            }
            let columns: Vec<(&str, _)> = columns.iter().map(|c| (c.name.as_str(), c.data_type)).collect();
            return super::streaming_result::print_while_running(&columns, &mut fetcher, &mut std::io::stdout());
        }
        println!("[INFO] Submitting SQL update statement to the cluster...");
        let jid = self.executor.submit(request, slots)?;
        {
            out.push_str(&format!(
                "[INFO] SQL update statement has been successfully submitted to the cluster:\nJob ID: {jid}"
            ));
            if sync {
                println!("{out}");
                self.executor.wait(&jid)?;
                out = format!("[INFO] Job {jid} finished.");
            }
        }
        Ok(out)
    }
}

/// Flink's default name of a job of INSERTs: `insert-into_` and the sinks' full
/// identifiers, comma-separated.
fn insert_job_name(inserts: &[weir_sql::parser::Insert]) -> String {
    let sinks: Vec<String> = inserts
        .iter()
        .map(|i| format!("default_catalog.default_database.{}", i.table))
        .collect();
    format!("insert-into_{}", sinks.join(","))
}
