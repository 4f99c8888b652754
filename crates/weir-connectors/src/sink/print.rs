//! Prints records to standard output as Flink's `print()` does: `N> value` with the
//! 1-based subtask index when the sink's parallelism is above 1, else just `value`.
//!
//! Invariant: each subtask buffers whole lines and hands them to stdout in one locked
//! write, so the lines of parallel sink subtasks interleave but never tear. The buffer
//! goes out when it passes 16 KiB, when 100 ms have passed since the last write, and at
//! the end of input.

use std::fmt::Display;
use std::io::Write;
use std::time::{Duration, Instant};
use weir_core::{StreamRecord, Watermark};
use weir_runtime::operator::Output;
use weir_runtime::TaskError;

const FLUSH_BYTES: usize = 16 * 1024;
const FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// Writes one line per record to stdout.
pub struct PrintSink {
    prefix: String,
    buf: Vec<u8>,
    last_flush: Instant,
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
            buf: Vec::with_capacity(FLUSH_BYTES * 2),
            last_flush: Instant::now(),
        }
    }

    fn flush_lines(&mut self) -> Result<(), TaskError> {
        if !self.buf.is_empty() {
            let mut out = std::io::stdout().lock();
            out.write_all(&self.buf)
                .and_then(|_| out.flush())
                .map_err(stdout_error)?;
            self.buf.clear();
        }
        self.last_flush = Instant::now();
        Ok(())
    }
}

/// The context of the error a print sink fails with when standard output's reader has
/// gone (`weir local … | head`). The sink never ends the process itself — in a
/// TaskManager that would end every other job's tasks too; the command line that ran
/// the job recognises this text in the job's failure and ends quietly, as a Unix tool
/// killed by SIGPIPE does.
pub const STDOUT_CLOSED: &str = "standard output was closed by its reader";

/// A failed write to stdout: fails the task, naming a closed reader distinctly.
fn stdout_error(e: std::io::Error) -> TaskError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return TaskError::io(STDOUT_CLOSED, e);
    }
    TaskError::io("cannot write to standard output", e)
}

impl<T: Display> Output<T> for PrintSink {
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        writeln!(self.buf, "{}{}", self.prefix, record.value).map_err(stdout_error)?;
        if self.buf.len() >= FLUSH_BYTES || self.last_flush.elapsed() >= FLUSH_INTERVAL {
            self.flush_lines()?;
        }
        Ok(())
    }
    fn emit_watermark(&mut self, _watermark: Watermark) -> Result<(), TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.flush_lines()
    }
}
