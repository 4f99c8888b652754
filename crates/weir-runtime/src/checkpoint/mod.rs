//! Checkpointing inside a task: handling barriers over the input channels, aligned or
//! unaligned ([`barrier_aligner`]), the in-flight input data of unaligned checkpoints
//! ([`channel_state`]; the output side is the network's priority events, see
//! [`ResultPartitionWriter::add_priority_event`](crate::network::ResultPartitionWriter::add_priority_event)), the operators' state that a snapshot collects
//! ([`state_registry`]), where it is stored ([`storage`]), and what a task reports
//! back ([`responder`]).

pub mod barrier_aligner;
pub mod channel_state;
pub mod responder;
pub mod state_registry;
pub mod storage;

pub use barrier_aligner::{BarrierAligner, BarrierOutcome, ChannelAction, EndOfInputTrigger};
pub use channel_state::ChannelStateRecorder;
pub use responder::{CheckpointResponder, CompletedSnapshot, SnapshotMetrics};
pub use state_registry::{CheckpointedOperator, StateRegistry};
pub use storage::{TaskRestore, TaskStateStorage};
