//! Collects records into memory, for tests and embedding (in-process runs only).

use std::sync::{Arc, Mutex};
use weir_core::{StreamRecord, Watermark};
use weir_runtime::operator::Output;
use weir_runtime::TaskError;

/// Where a collect sink's subtasks put their records.
#[derive(Debug)]
pub struct CollectHandle<T> {
    inner: Arc<Mutex<Vec<T>>>,
}

impl<T> Clone for CollectHandle<T> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<T> Default for CollectHandle<T> {
    fn default() -> Self {
        Self {
            inner: Arc::new(Mutex::new(Vec::new())),
        }
    }
}

impl<T: Clone> CollectHandle<T> {
    /// An empty handle.
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything collected so far (subtasks interleaved).
    pub fn get(&self) -> Vec<T> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Takes everything collected so far.
    pub fn take(&self) -> Vec<T> {
        std::mem::take(&mut *self.inner.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Buffers records locally and appends them to the handle at the end of input.
pub struct CollectSink<T> {
    handle: CollectHandle<T>,
    local: Vec<T>,
}

impl<T> CollectSink<T> {
    /// A sink subtask writing to `handle`.
    pub fn new(handle: CollectHandle<T>) -> Self {
        Self {
            handle,
            local: Vec::new(),
        }
    }
}

impl<T> Output<T> for CollectSink<T> {
    fn collect(&mut self, record: StreamRecord<T>) -> Result<(), TaskError> {
        self.local.push(record.value);
        Ok(())
    }
    fn emit_watermark(&mut self, _watermark: Watermark) -> Result<(), TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        let mut all = self.handle.inner.lock().unwrap_or_else(|p| p.into_inner());
        all.append(&mut self.local);
        Ok(())
    }
}
