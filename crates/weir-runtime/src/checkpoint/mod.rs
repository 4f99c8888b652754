//! Checkpointing inside a task: aligning barriers over the input channels
//! ([`barrier_aligner`]), the operators' state that a snapshot collects
//! ([`state_registry`]), where it is stored ([`storage`]), and what a task reports
//! back ([`responder`]).

pub mod barrier_aligner;
pub mod responder;
pub mod state_registry;
pub mod storage;

pub use barrier_aligner::{BarrierAligner, BarrierOutcome, ChannelAction};
pub use responder::{CheckpointResponder, CompletedSnapshot, SnapshotMetrics};
pub use state_registry::{CheckpointedOperator, StateRegistry};
pub use storage::{TaskRestore, TaskStateStorage};
