//! Prints records to standard output as Flink's `print()` does: `N> value` with the
//! 1-based subtask index when the sink's parallelism is above 1, else just `value`.

use std::fmt::Display;
use std::io::{BufWriter, Stdout, Write};
use weir_core::{StreamRecord, Watermark};
use weir_runtime::operator::Output;
use weir_runtime::TaskError;

/// Writes one line per record to stdout.
pub struct PrintSink {
    prefix: String,
    out: BufWriter<Stdout>,
}

impl PrintSink {
    /// The print sink of `subtask` of `parallelism`.
    pub fn new(subtask: u32, parallelism: u32) -> Self {
        let prefix = if parallelism > 1 {
            format!("{}> ", subtask + 1)
        } else {
            String::new()
        };
        Self {
            prefix,
            out: BufWriter::with_capacity(64 * 1024, std::io::stdout()),
        }
    }
}

fn stdout_error(e: std::io::Error) -> TaskError {
    TaskError::io("cannot write to standard output", e)
}

impl<T: Display> Output<T> for PrintSink {
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        writeln!(self.out, "{}{}", self.prefix, record.value).map_err(stdout_error)
    }
    fn emit_watermark(&mut self, _watermark: Watermark) -> Result<(), TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out.flush().map_err(stdout_error)
    }
}
