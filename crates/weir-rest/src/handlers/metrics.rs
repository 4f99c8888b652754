//! Flink's metric query routes (each also under `/v1`), answered with the semantics of
//! [`crate::messages::metrics`]:
//!
//! | path | components | query |
//! |---|---|---|
//! | `/jobmanager/metrics` | the JobManager | `get` |
//! | `/taskmanagers/:tmid/metrics` | one TaskManager | `get` |
//! | `/taskmanagers/metrics` | TaskManagers, aggregated | `get`, `agg`, `taskmanagers` |
//! | `/jobs/metrics` | jobs, aggregated | `get`, `agg`, `jobs` |
//! | `/jobs/:jid/metrics` | one job | `get` |
//! | `/jobs/:jid/vertices/:vid/metrics` | a vertex: ids `<subtask>.<name>` | `get` |
//! | `/jobs/:jid/vertices/:vid/subtasks/metrics` | its subtasks, aggregated | `get`, `agg`, `subtasks` |
//! | `/jobs/:jid/vertices/:vid/subtasks/:subtaskindex/metrics` | one subtask | `get` |
//!
//! The fixed words `metrics` are routes of their own, never read as ids. As in Flink, a
//! job, vertex, subtask or TaskManager without metrics (unknown, or not measured yet)
//! answers `[]`; a malformed job or vertex id or subtask index in the path, a job id in
//! `jobs` that is not 32 hex characters, or an unknown aggregation in `agg` answers 400.

use crate::error::RestError;
use crate::handlers::path_params::bad_parameter;
use crate::handlers::path_params::{is_hex_id, PathParams, RawPath};
use crate::handlers::reply::{call, query_pairs, query_value, reply, Backend, QueryPairs};
use crate::handlers::vertices::job_and_vertex;
use crate::messages::metrics::{aggregate, list_or_get, requested, subtask_ranges, AggregationMode, ComponentMetrics};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use std::collections::BTreeSet;
use weir_core::ids::JobId;

type RawQuery = Result<Query<QueryPairs>, QueryRejection>;

/// Adds the routes of the module table under `prefix`.
pub(crate) fn add(r: Router<Backend>, prefix: &str) -> Router<Backend> {
    let v = format!("{prefix}/jobs/{{jid}}/vertices/{{vid}}");
    r.route(&format!("{prefix}/jobmanager/metrics"), get(jobmanager_metrics))
        .route(&format!("{prefix}/taskmanagers/metrics"), get(taskmanagers_metrics))
        .route(
            &format!("{prefix}/taskmanagers/{{tmid}}/metrics"),
            get(taskmanager_metrics),
        )
        .route(&format!("{prefix}/jobs/metrics"), get(jobs_metrics))
        .route(&format!("{prefix}/jobs/{{jid}}/metrics"), get(job_metrics))
        .route(&format!("{v}/metrics"), get(vertex_metrics))
        .route(&format!("{v}/subtasks/metrics"), get(subtasks_metrics))
        .route(&format!("{v}/subtasks/{{subtaskindex}}/metrics"), get(subtask_metrics))
}

/// The parsed query of a metric route.
struct MetricQuery {
    /// The requested ids; `None` lists what is available.
    get: Option<Vec<String>>,
    /// The requested aggregations (empty: all).
    agg: BTreeSet<AggregationMode>,
    pairs: QueryPairs,
}

impl MetricQuery {
    fn of(query: RawQuery) -> Result<Self, RestError> {
        let pairs = query_pairs(query)?;
        let agg = match query_value(&pairs, "agg") {
            Some(raw) => AggregationMode::parse_list(&raw)?,
            None => BTreeSet::new(),
        };
        Ok(Self {
            get: requested(query_value(&pairs, "get").as_deref()),
            agg,
            pairs,
        })
    }

    /// The values of the component filter `key` (`None`: every component).
    fn filter(&self, key: &str) -> Option<String> {
        query_value(&self.pairs, key)
    }
}

/// A backend answer where "no such job/vertex" means "no metrics", as in Flink.
fn or_none<T>(result: Result<T, RestError>) -> Result<Option<T>, RestError> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(RestError::JobNotFound(_) | RestError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

async fn jobmanager_metrics(State(b): State<Backend>, query: RawQuery) -> Response {
    reply(MetricQuery::of(query).and_then(|q| {
        let store = call(|| Ok(b.jobmanager_metrics()))?;
        Ok(list_or_get(Some(&store), q.get.as_deref()))
    }))
}

async fn taskmanager_metrics(State(b): State<Backend>, path: RawPath, query: RawQuery) -> Response {
    reply(PathParams::of(path).and_then(|p| {
        let q = MetricQuery::of(query)?;
        let id = p.text("tmid")?;
        let all = call(|| Ok(b.taskmanager_metrics()))?;
        let store = all.iter().find(|(tm, _)| tm == id).map(|(_, m)| m);
        Ok(list_or_get(store, q.get.as_deref()))
    }))
}

async fn taskmanagers_metrics(State(b): State<Backend>, query: RawQuery) -> Response {
    reply(MetricQuery::of(query).and_then(|q| {
        let all = call(|| Ok(b.taskmanager_metrics()))?;
        let wanted: Option<BTreeSet<String>> = q.filter("taskmanagers").map(|raw| {
            crate::messages::metrics::java_split(&raw)
                .into_iter()
                .map(str::to_string)
                .collect()
        });
        let stores: Vec<&ComponentMetrics> = all
            .iter()
            .filter(|(id, _)| wanted.as_ref().is_none_or(|w| w.contains(id)))
            .map(|(_, m)| m)
            .collect();
        Ok(aggregate(&stores, q.get.as_deref(), &q.agg))
    }))
}

async fn jobs_metrics(State(b): State<Backend>, query: RawQuery) -> Response {
    reply(MetricQuery::of(query).and_then(|q| {
        let wanted: Option<BTreeSet<JobId>> = match q.filter("jobs") {
            None => None,
            Some(raw) => Some(
                crate::messages::metrics::java_split(&raw)
                    .into_iter()
                    .map(|id| {
                        is_hex_id(id)
                            .then(|| JobId::parse(id))
                            .flatten()
                            .ok_or_else(|| bad_parameter("query", "jobs", &raw))
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        let all = call(|| Ok(b.job_metrics()))?;
        let stores: Vec<&ComponentMetrics> = all
            .iter()
            .filter(|(jid, _)| wanted.as_ref().is_none_or(|w| w.contains(jid)))
            .map(|(_, m)| m)
            .collect();
        Ok(aggregate(&stores, q.get.as_deref(), &q.agg))
    }))
}

async fn job_metrics(State(b): State<Backend>, path: RawPath, query: RawQuery) -> Response {
    reply(PathParams::of(path).and_then(|p| {
        let jid = p.job()?;
        let q = MetricQuery::of(query)?;
        let all = call(|| Ok(b.job_metrics()))?;
        let store = all.iter().find(|(j, _)| *j == jid).map(|(_, m)| m);
        Ok(list_or_get(store, q.get.as_deref()))
    }))
}

/// The metrics of each subtask of vertex `vid`; `None` for an unknown job or vertex.
fn subtask_stores(b: &Backend, jid: JobId, vid: &str) -> Result<Option<Vec<ComponentMetrics>>, RestError> {
    or_none(call(|| b.vertex_subtask_metrics(jid, vid)))
}

async fn vertex_metrics(State(b): State<Backend>, path: RawPath, query: RawQuery) -> Response {
    reply(job_and_vertex(path).and_then(|(_, jid, vid)| {
        let q = MetricQuery::of(query)?;
        let flat: Option<ComponentMetrics> = subtask_stores(&b, jid, &vid)?.map(|subtasks| {
            subtasks
                .iter()
                .enumerate()
                .flat_map(|(i, m)| m.iter().map(move |(name, v)| (format!("{i}.{name}"), *v)))
                .collect()
        });
        Ok(list_or_get(flat.as_ref(), q.get.as_deref()))
    }))
}

async fn subtasks_metrics(State(b): State<Backend>, path: RawPath, query: RawQuery) -> Response {
    reply(job_and_vertex(path).and_then(|(_, jid, vid)| {
        let q = MetricQuery::of(query)?;
        let subtasks = subtask_stores(&b, jid, &vid)?.unwrap_or_default();
        let chosen: Vec<&ComponentMetrics> = match q.filter("subtasks") {
            None => subtasks.iter().collect(),
            Some(raw) => subtask_ranges(&raw, subtasks.len())
                .into_iter()
                .filter_map(|i| subtasks.get(i))
                .collect(),
        };
        Ok(aggregate(&chosen, q.get.as_deref(), &q.agg))
    }))
}

async fn subtask_metrics(State(b): State<Backend>, path: RawPath, query: RawQuery) -> Response {
    reply(job_and_vertex(path).and_then(|(p, jid, vid)| {
        let subtask = p.subtask()? as usize;
        let q = MetricQuery::of(query)?;
        let stores = subtask_stores(&b, jid, &vid)?;
        let store = stores.as_ref().and_then(|s| s.get(subtask));
        Ok(list_or_get(store, q.get.as_deref()))
    }))
}
