//! The JobManager's REST view: its state translated into `weir-rest`'s Flink-shaped
//! bodies.

pub(crate) mod attempts;
pub mod backend;
pub mod checkpoints;
pub mod metrics;
pub(crate) mod operator_metrics;
pub mod taskmanager_logs;
pub mod vertex;
