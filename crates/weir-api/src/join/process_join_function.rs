//! What an interval join calls per joined pair: [`ProcessJoinFunction`] and the
//! [`ProcessJoinContext`] it sees (Flink's `ProcessJoinFunction` and its `Context`).

use crate::functions::{Collector, TaskInfo};
use weir_runtime::error::UserError;

/// Processes each pair an interval join finds (Flink's `ProcessJoinFunction`). One
/// instance is cloned per subtask.
pub trait ProcessJoinFunction<A, B, O>: Clone + Send + Sync + 'static {
    /// Called once per subtask before the first pair.
    fn open(&mut self) -> Result<(), UserError> {
        Ok(())
    }

    /// A left and a right element of the same key within the interval; what `out`
    /// collects carries [`ProcessJoinContext::timestamp`].
    fn process_element(
        &mut self,
        left: A,
        right: B,
        ctx: &ProcessJoinContext<'_>,
        out: &mut Collector<'_, O>,
    ) -> Result<(), UserError>;
}

/// What a [`ProcessJoinFunction`] knows of the pair (Flink's
/// `ProcessJoinFunction.Context`).
pub struct ProcessJoinContext<'a> {
    pub(crate) left_timestamp: i64,
    pub(crate) right_timestamp: i64,
    pub(crate) watermark: i64,
    pub(crate) task_info: &'a TaskInfo,
}

impl ProcessJoinContext<'_> {
    /// The left element's timestamp.
    pub fn left_timestamp(&self) -> i64 {
        self.left_timestamp
    }

    /// The right element's timestamp.
    pub fn right_timestamp(&self) -> i64 {
        self.right_timestamp
    }

    /// The timestamp of the results: the larger of both.
    pub fn timestamp(&self) -> i64 {
        self.left_timestamp.max(self.right_timestamp)
    }

    /// The operator's current event-time watermark.
    pub fn current_watermark(&self) -> i64 {
        self.watermark
    }

    /// The subtask this call runs in, with its execution attempt number.
    pub fn task_info(&self) -> &TaskInfo {
        self.task_info
    }
}
