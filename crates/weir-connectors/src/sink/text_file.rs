//! Writes one line per record into `DIR/part-<subtask>`, one part file per sink
//! subtask, so results can be gathered whichever process ran the sink.

use std::fmt::Display;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use weir_core::{StreamRecord, Watermark};
use weir_runtime::operator::Output;
use weir_runtime::TaskError;

/// A text part-file writer.
pub struct TextFileSink {
    path: PathBuf,
    out: BufWriter<File>,
}

impl TextFileSink {
    /// The sink of `subtask`, writing `dir/part-<subtask>` (creating `dir`).
    pub fn create(dir: &Path, subtask: u32) -> Result<Self, TaskError> {
        fs::create_dir_all(dir)
            .map_err(|e| TaskError::io(format!("cannot create output directory {}", dir.display()), e))?;
        let path = dir.join(format!("part-{subtask}"));
        let f = File::create(&path).map_err(|e| TaskError::io(format!("cannot create {}", path.display()), e))?;
        Ok(Self {
            path,
            out: BufWriter::with_capacity(64 * 1024, f),
        })
    }
}

impl<T: Display> Output<T> for TextFileSink {
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        writeln!(self.out, "{}", record.value)
            .map_err(|e| TaskError::io(format!("cannot write {}", self.path.display()), e))
    }
    fn emit_watermark(&mut self, _watermark: Watermark) -> Result<(), TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        self.out
            .flush()
            .map_err(|e| TaskError::io(format!("cannot write {}", self.path.display()), e))
    }
}
