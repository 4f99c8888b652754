//! A sink that drops every record (Flink's `DiscardingSink`), for benchmarks.

use weir_core::{StreamRecord, Watermark};
use weir_runtime::operator::Output;
use weir_runtime::TaskError;

/// Counts and drops records.
#[derive(Debug, Default)]
pub struct DiscardSink {
    /// Records received.
    pub count: u64,
}

impl<T> Output<T> for DiscardSink {
    #[inline]
    fn collect(&mut self, _record: StreamRecord<T>) -> Result<(), TaskError> {
        self.count += 1;
        Ok(())
    }
    fn emit_watermark(&mut self, _watermark: Watermark) -> Result<(), TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        Ok(())
    }
}
