//! A collect sink subtask's batch of result rows for the sink's coordinator on the
//! JobMaster (the results of a SELECT, sent as an operator event). The one shape the
//! sink builds, the TaskManager sends and the coordinator checks and takes.
//!
//! Invariant kept by the sender: `offset` counts the rows this attempt sent before this
//! batch, so a batch sent again is recognised by its offset.

/// One batch of a collect sink subtask's rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectBatch {
    /// The sink subtask.
    pub subtask_index: u32,
    /// The sink's parallelism.
    pub parallelism: u32,
    /// The subtask's attempt number.
    pub attempt_number: u32,
    /// Rows this attempt sent before this batch.
    pub offset: u64,
    /// The rows, each one JSON array.
    pub rows: Vec<String>,
    /// The subtask's input ended with this batch: no rows follow.
    pub end_of_results: bool,
    /// The coordinator's buffer the sink asks for, in bytes.
    pub buffer_bytes: u64,
}

impl CollectBatch {
    /// The bytes of the rows.
    pub fn row_bytes(&self) -> u64 {
        self.rows.iter().map(|r| r.len() as u64).sum()
    }
}
