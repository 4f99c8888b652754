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

const FLUSH_BYTES: usize = 16 * 1024;
const FLUSH_INTERVAL: Duration = Duration::from_millis(100);
use weir_core::{StreamRecord, Watermark};
use weir_runtime::operator::Output;
use weir_runtime::TaskError;

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

/// The exit status of a process that stdout's reader left, as a shell reports one
/// killed by SIGPIPE (128 + 13).
const BROKEN_PIPE_EXIT: i32 = 141;

/// A failed write to stdout: when its reader has gone (`weir local … | head`), the
/// process ends at once and quietly, as a Unix tool killed by SIGPIPE does; any other
/// error fails the task.
fn stdout_error(e: std::io::Error) -> TaskError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(BROKEN_PIPE_EXIT);
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
