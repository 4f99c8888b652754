//! One subtask: its operator chain, wired on its own thread, run in a loop that
//! alternates between input (or the source) and its mailbox duties — cancellation,
//! processing-time wake-ups (timers, periodic watermarks) and the buffer-timeout flush.

pub mod chain;
pub mod chain_metrics;
pub mod combined_watermark;
pub mod input;
pub mod mailbox;
pub mod metrics;
pub mod stream_task;
pub mod two_input;
pub mod valve;

pub use stream_task::{run_task, TaskCheckpointing, TaskSpec};
