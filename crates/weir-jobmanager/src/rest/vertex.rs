//! The JobManager's answers about one vertex of a job, for the REST backend: the
//! vertex's detail with the current attempt of each subtask (from which `weir-rest`
//! also derives `/subtasks/:idx`, `/subtasktimes` and `/taskmanagers`), its
//! back-pressure, and the metrics of each subtask.
//!
//! Subtask metrics are what the attempts' heartbeats carry (records and bytes in and
//! out, busy, idle and back-pressured time, input and output watermarks,
//! [`crate::job_master::AttemptMetrics`]) and the per-second rates of their last two
//! reports ([`crate::job_master::AttemptRates`]). A subtask that has not reported yet
//! has no metrics; rates appear with the second report; a watermark appears once the
//! subtask has one (Flink's `Long.MIN_VALUE` is never shown).

use crate::job_master::JobMaster;
use crate::jobmanager::State;
use weir_graph::{Execution, ExecutionJobVertex};
use weir_metrics::lag::watermark_lag;
use weir_rest::metric_names as names;
use weir_rest::{
    ComponentMetrics, ExecutionState, ExecutionStateTimestamps, JobVertexDetail, MetricValue, RestError,
    StatusDurations, SubtaskDetail, VertexBackPressure, VertexMetrics, UNASSIGNED,
};

/// Vertex `vertex_id` of `jm` with its index, or Flink's 404.
pub(crate) fn find_vertex<'a>(
    jm: &'a JobMaster,
    vertex_id: &str,
) -> Result<(usize, &'a ExecutionJobVertex), RestError> {
    jm.execution_graph
        .job_vertices
        .iter()
        .enumerate()
        .find(|(_, v)| v.id.to_string() == vertex_id)
        .ok_or_else(|| RestError::vertex_not_found(vertex_id))
}

/// `GET /jobs/:jid/vertices/:vid` of `jm`.
pub(crate) fn vertex_detail(
    st: &State,
    jm: &JobMaster,
    vertex_id: &str,
    now: i64,
) -> Result<JobVertexDetail, RestError> {
    let (_, v) = find_vertex(jm, vertex_id)?;
    let subtasks = v
        .task_vertices
        .iter()
        .enumerate()
        .map(|(i, t)| subtask_detail(st, jm, i as u32, &t.current, now))
        .collect();
    Ok(JobVertexDetail::new(
        v.id.to_string(),
        v.name.clone(),
        v.parallelism,
        v.max_parallelism,
        now,
        subtasks,
    ))
}

/// Attempt `e` of subtask `index` (the current one, or an earlier one for
/// [`crate::rest::attempts`]).
pub(crate) fn subtask_detail(st: &State, jm: &JobMaster, index: u32, e: &Execution, now: i64) -> SubtaskDetail {
    let attempt = e.attempt_id.to_string();
    let location = jm
        .attempt_location(&attempt)
        .and_then(|slot| st.slots.get(&slot.resource_id));
    let start = e.state_timestamp(ExecutionState::Deploying).unwrap_or(-1);
    let end = if e.state.is_terminal() {
        e.state_timestamp(e.state).unwrap_or(-1)
    } else {
        -1
    };
    let duration = match (start, end) {
        (s, _) if s < 0 => -1,
        (s, en) if en >= 0 => en - s,
        (s, _) => now - s,
    };
    let m = jm.attempt_metrics(&attempt).unwrap_or_default();
    let finished = e.state == ExecutionState::Finished;
    SubtaskDetail {
        subtask: index,
        status: e.state,
        attempt: e.attempt_number,
        endpoint: location.map_or_else(|| UNASSIGNED.to_string(), |tm| tm.registration.data_address.clone()),
        start_time: start,
        end_time: end,
        duration,
        metrics: VertexMetrics {
            read_records: m.records_in as i64,
            read_records_complete: finished,
            write_records: m.records_out as i64,
            write_records_complete: finished,
            read_bytes: m.bytes_in as i64,
            read_bytes_complete: finished,
            write_bytes: m.bytes_out as i64,
            write_bytes_complete: finished,
            accumulated_backpressured_time: m.backpressured_ms as i64,
            accumulated_idle_time: m.idle_ms as i64,
            accumulated_busy_time: m.busy_ms as f64,
        },
        taskmanager_id: location.map_or_else(|| UNASSIGNED.to_string(), |tm| tm.registration.resource_id.clone()),
        status_duration: status_durations(e, now),
        start_time_deprecated: start,
        timestamps: timestamps(e),
    }
}

/// Milliseconds the attempt spent in each state up to RUNNING (the last one until now).
fn status_durations(e: &Execution, now: i64) -> StatusDurations {
    let mut entered: Vec<(ExecutionState, i64)> = e.state_timestamps.iter().map(|(k, v)| (*k, *v)).collect();
    entered.sort_by_key(|(_, at)| *at);
    let mut d = StatusDurations::default();
    for (n, (state, at)) in entered.iter().enumerate() {
        let until = entered.get(n + 1).map_or(now, |(_, next)| *next);
        let ms = (until - at).max(0);
        match state {
            ExecutionState::Created => d.created = ms,
            ExecutionState::Scheduled => d.scheduled = ms,
            ExecutionState::Deploying => d.deploying = ms,
            ExecutionState::Initializing => d.initializing = ms,
            ExecutionState::Running => d.running = ms,
            _ => {}
        }
    }
    d
}

/// When the attempt entered each state.
fn timestamps(e: &Execution) -> ExecutionStateTimestamps {
    let mut ts = ExecutionStateTimestamps::new();
    for (state, at) in &e.state_timestamps {
        ts.set(*state, *at);
    }
    ts
}

/// `GET /jobs/:jid/vertices/:vid/backpressure` of `jm`.
pub(crate) fn vertex_backpressure(jm: &JobMaster, vertex_id: &str, now: i64) -> Result<VertexBackPressure, RestError> {
    let (index, _) = find_vertex(jm, vertex_id)?;
    Ok(VertexBackPressure::from_ratios(now, &jm.vertex_time_ratios(index)))
}

/// The metrics of each subtask of vertex `vertex_id` of `jm` (task-scoped names), at
/// `now_ms` (a source's `watermarkLag` is measured against it).
pub(crate) fn subtask_metrics(
    jm: &JobMaster,
    vertex_id: &str,
    now_ms: i64,
) -> Result<Vec<ComponentMetrics>, RestError> {
    let (index, v) = find_vertex(jm, vertex_id)?;
    let is_source = jm.job_graph.vertices.get(index).is_some_and(|v| v.is_source);
    let place = if is_source {
        VertexPlace::Source { now_ms }
    } else {
        VertexPlace::WithInputs
    };
    Ok(v.task_vertices
        .iter()
        .map(|t| attempt_metrics(jm, &t.current.attempt_id.to_string(), place))
        .collect())
}

/// Where a vertex stands in the job, for the metrics only one kind has.
#[derive(Debug, Clone, Copy)]
enum VertexPlace {
    /// A source: its `watermarkLag` is measured against `now_ms`.
    Source { now_ms: i64 },
    /// A vertex with inputs: its `currentInputWatermark` is Long.MIN_VALUE until a
    /// watermark arrives (Flink's WatermarkGauge starts there).
    WithInputs,
}

/// What attempt `attempt` reported, and its rates once it reported twice; a source's
/// `watermarkLag`, and a consumer's input watermark even before one arrived.
fn attempt_metrics(jm: &JobMaster, attempt: &str, place: VertexPlace) -> ComponentMetrics {
    let mut out = ComponentMetrics::new();
    let Some(m) = jm.attempt_metrics(attempt) else {
        return out;
    };
    let lag_at = match place {
        VertexPlace::Source { now_ms } => Some(now_ms),
        VertexPlace::WithInputs => None,
    };
    let lag = lag_at
        .zip(m.output_watermark)
        .and_then(|(now, w)| watermark_lag(now, w));
    if let Some(lag) = lag {
        out.insert(names::WATERMARK_LAG.to_string(), MetricValue::Integer(lag));
    }
    let mut integer = |name: &str, v: u64| {
        out.insert(
            name.to_string(),
            MetricValue::Integer(i64::try_from(v).unwrap_or(i64::MAX)),
        );
    };
    integer(names::NUM_RECORDS_IN, m.records_in);
    integer(names::NUM_RECORDS_OUT, m.records_out);
    integer(names::ACCUMULATED_BUSY_TIME, m.busy_ms);
    integer(names::ACCUMULATED_IDLE_TIME, m.idle_ms);
    integer(names::ACCUMULATED_BACK_PRESSURED_TIME, m.backpressured_ms);
    integer(names::NUM_BYTES_IN, m.bytes_in);
    integer(names::NUM_BYTES_OUT, m.bytes_out);
    for (in_name, out_name) in [
        (names::IN_POOL_USAGE, names::OUT_POOL_USAGE),
        (names::LEGACY_IN_POOL_USAGE, names::LEGACY_OUT_POOL_USAGE),
    ] {
        out.insert(
            in_name.into(),
            MetricValue::Double(m.in_pool_usage_permille as f64 / 1000.0),
        );
        out.insert(
            out_name.into(),
            MetricValue::Double(m.out_pool_usage_permille as f64 / 1000.0),
        );
    }
    let input_watermark = match place {
        VertexPlace::WithInputs => Some(m.input_watermark.unwrap_or(i64::MIN)),
        VertexPlace::Source { .. } => m.input_watermark,
    };
    for (name, watermark) in [
        (names::CURRENT_INPUT_WATERMARK, input_watermark),
        (names::CURRENT_OUTPUT_WATERMARK, m.output_watermark),
    ] {
        if let Some(w) = watermark {
            out.insert(name.to_string(), MetricValue::Integer(w));
        }
    }
    crate::rest::operator_metrics::add_operator_metrics(&mut out, &m, jm.operator_rates(attempt).as_deref());
    if let Some(r) = jm.attempt_rates(attempt) {
        // Flink's types: meters and busy time are doubles, idle and back-pressured
        // time per second are longs.
        out.insert(
            names::NUM_RECORDS_IN_PER_SECOND.into(),
            MetricValue::Double(r.records_in_per_second),
        );
        out.insert(
            names::NUM_RECORDS_OUT_PER_SECOND.into(),
            MetricValue::Double(r.records_out_per_second),
        );
        out.insert(
            names::NUM_BYTES_IN_PER_SECOND.into(),
            MetricValue::Double(r.bytes_in_per_second),
        );
        out.insert(
            names::NUM_BYTES_OUT_PER_SECOND.into(),
            MetricValue::Double(r.bytes_out_per_second),
        );
        out.insert(
            names::BUSY_TIME_MS_PER_SECOND.into(),
            MetricValue::Double(r.busy_ms_per_second),
        );
        out.insert(
            names::IDLE_TIME_MS_PER_SECOND.into(),
            MetricValue::Integer(r.idle_ms_per_second.round() as i64),
        );
        out.insert(
            names::BACK_PRESSURED_TIME_MS_PER_SECOND.into(),
            MetricValue::Integer(r.backpressured_ms_per_second.round() as i64),
        );
    }
    out
}
