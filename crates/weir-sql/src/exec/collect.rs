//! The collect sink of `SELECT` (Flink's `CollectSinkOperator`): each sink subtask
//! encodes its rows as JSON arrays — the changelog kind, then every field as its SQL
//! string or `null` — and hands them in batches of at most `batch_bytes` to the
//! sink's coordinator on the JobMaster, which the SQL client reads over REST.
//!
//! A batch goes out when it is full, at a watermark, at the latest
//! [`LINGER_MS`] after its first row (a processing-time wake-up), and at the end of
//! input, which the last batch marks. When the coordinator's buffer is full the sink
//! offers the same batch again after a pause (back pressure: the task waits, nothing
//! is dropped); every batch names the rows sent before it, so one sent twice after a
//! lost answer is not taken twice.

use crate::types::DataType;
use crate::value::{Row, Value};
use std::sync::Arc;
use std::time::Duration;
use weir_core::collect_batch::CollectBatch;
use weir_core::ids::OperatorId;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::operator::context::TaskContext;
use weir_runtime::operator::coordination::{CollectBatchEvent, OperatorEventGateway};
use weir_runtime::operator::processing_time::ProcessingTimeService;
use weir_runtime::operator::Output;
use weir_runtime::TaskError;

/// The sink's name (its operator id is found by it, see [`collect_sink_operator_id`]).
pub const COLLECT_SINK_NAME: &str = "Sink: Collect table sink";

/// Flink's default of `collect-sink.batch-size.max`: 2 MiB.
pub const DEFAULT_BATCH_BYTES: u64 = 2 << 20;

/// The coordinator keeps this many batches.
pub const BUFFER_BATCHES: u64 = 2;

/// The longest a row waits in a batch that is not full.
pub const LINGER_MS: i64 = 100;

/// One row encoded as a JSON line.
pub fn encode(row: &Row, types: &[DataType]) -> String {
    let mut cells = vec![serde_json::Value::String(row.kind.short().to_string())];
    for (v, t) in row.values.iter().zip(types) {
        cells.push(match v {
            Value::Null => serde_json::Value::Null,
            v => serde_json::Value::String(v.render(*t)),
        });
    }
    serde_json::Value::Array(cells).to_string()
}

/// A row decoded from [`encode`]'s line: the kind and the fields (`None` for NULL).
pub fn decode(line: &str) -> Option<(String, Vec<Option<String>>)> {
    let v: Vec<serde_json::Value> = serde_json::from_str(line).ok()?;
    let (kind, cells) = v.split_first()?;
    Some((
        kind.as_str()?.to_string(),
        cells.iter().map(|c| c.as_str().map(str::to_string)).collect(),
    ))
}

/// The operator id of the collect sink in `graph`, if it has one.
pub fn collect_sink_operator_id(graph: &weir_graph::StreamGraph) -> Option<OperatorId> {
    graph
        .nodes
        .iter()
        .find(|n| n.name == COLLECT_SINK_NAME)
        .map(|n| n.operator_id())
}

/// Sends rows to the sink's coordinator.
pub struct CollectSink {
    gateway: Arc<dyn OperatorEventGateway>,
    batch: CollectBatchEvent,
    batch_bytes: u64,
    max_batch_bytes: u64,
    types: Arc<Vec<DataType>>,
    timers: ProcessingTimeService,
    wakeup_at: Option<i64>,
}

impl CollectSink {
    /// The sink of the subtask of `ctx`, sending batches of at most `max_batch_bytes`.
    pub fn new(ctx: &TaskContext, types: Arc<Vec<DataType>>, max_batch_bytes: u64) -> Result<Self, TaskError> {
        let gateway = ctx.operator_event_gateway().ok_or_else(|| {
            Self::error("a SELECT's results go to the JobMaster: run it on a cluster or MiniCluster (weir sql)")
        })?;
        let operator_id = ctx
            .state()
            .current_operator()
            .ok_or_else(|| Self::error("the sink was built without its operator id"))?;
        Ok(Self {
            gateway,
            batch: CollectBatchEvent {
                operator_id,
                batch: CollectBatch {
                    subtask_index: ctx.subtask_index,
                    parallelism: ctx.parallelism,
                    attempt_number: ctx.attempt_number,
                    offset: 0,
                    rows: Vec::new(),
                    end_of_results: false,
                    buffer_bytes: max_batch_bytes.saturating_mul(BUFFER_BATCHES),
                },
            },
            batch_bytes: 0,
            max_batch_bytes,
            types,
            timers: ctx.processing_time_service(),
            wakeup_at: None,
        })
    }

    fn error(message: impl std::fmt::Display) -> TaskError {
        TaskError::user(COLLECT_SINK_NAME, message)
    }

    /// Offers the batch until the coordinator takes it.
    fn send(&mut self, end_of_results: bool) -> Result<(), TaskError> {
        self.batch.batch.end_of_results = end_of_results;
        let mut pause = Duration::from_millis(1);
        while !self.gateway.send_collect_batch(&self.batch).map_err(Self::error)? {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
        self.batch.batch.offset += self.batch.batch.rows.len() as u64;
        self.batch.batch.rows.clear();
        self.batch_bytes = 0;
        self.wakeup_at = None;
        Ok(())
    }
}

impl Output<Row> for CollectSink {
    fn collect(&mut self, record: StreamRecord<Row>) -> Result<(), TaskError> {
        let line = encode(&record.value, &self.types);
        let len = line.len() as u64;
        if !self.batch.batch.rows.is_empty() && self.batch_bytes + len > self.max_batch_bytes {
            self.send(false)?;
        }
        self.batch_bytes += len;
        self.batch.batch.rows.push(line);
        if self.wakeup_at.is_none() {
            let at = self.timers.current_processing_time() + LINGER_MS;
            self.timers.register_wakeup(at);
            self.wakeup_at = Some(at);
        }
        Ok(())
    }
    fn emit_watermark(&mut self, _watermark: Watermark) -> Result<(), TaskError> {
        if self.batch.batch.rows.is_empty() {
            return Ok(());
        }
        self.send(false)
    }
    fn on_processing_time(&mut self, now: i64) -> Result<(), TaskError> {
        match self.wakeup_at {
            Some(at) if at <= now => self.send(false),
            _ => Ok(()),
        }
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.send(true)
    }
}
