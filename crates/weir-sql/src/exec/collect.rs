//! The collect sink of `SELECT` in the SQL client: each sink subtask connects to the
//! client's socket (`--arg collect=host:port`) and writes one JSON array per row —
//! the changelog kind, then every field as its SQL string or `null` — and closes the
//! connection at the end of its input.

use crate::types::DataType;
use crate::value::{Row, Value};
use std::io::{BufWriter, Write};
use std::net::TcpStream;
use std::sync::Arc;
use weir_core::{StreamRecord, Watermark};
use weir_runtime::operator::Output;
use weir_runtime::TaskError;

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

/// Sends rows to the SQL client.
pub struct CollectSink {
    out: BufWriter<TcpStream>,
    types: Arc<Vec<DataType>>,
}

impl CollectSink {
    /// Connects to the client at `address`.
    pub fn connect(address: &str, types: Arc<Vec<DataType>>) -> Result<Self, TaskError> {
        let stream = TcpStream::connect(address)
            .map_err(|e| TaskError::io(format!("cannot connect to the SQL client at {address}"), e))?;
        Ok(Self {
            out: BufWriter::new(stream),
            types,
        })
    }

    fn io(e: std::io::Error) -> TaskError {
        TaskError::io("cannot send a row to the SQL client", e)
    }
}

impl Output<Row> for CollectSink {
    fn collect(&mut self, record: StreamRecord<Row>) -> Result<(), TaskError> {
        // Each row goes out at once: the client shows rows while the job runs.
        writeln!(self.out, "{}", encode(&record.value, &self.types)).map_err(Self::io)?;
        self.out.flush().map_err(Self::io)
    }
    fn emit_watermark(&mut self, _watermark: Watermark) -> Result<(), TaskError> {
        self.out.flush().map_err(Self::io)
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.flush().map_err(Self::io)?;
        self.out.get_ref().shutdown(std::net::Shutdown::Write).map_err(Self::io)
    }
}
