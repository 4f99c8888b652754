//! The JSON bodies of Flink's REST API, one file per resource, each with exactly Flink
//! 2.3's field names, nesting and value types (checked against real responses in
//! `tests/samples/`). Pure data: no routing, no I/O.

pub mod accumulators;
pub mod attempts;
pub mod backpressure;
pub mod checkpoint_config;
pub mod checkpoints;
pub mod config;
pub mod coordination;
pub mod environment;
pub mod exceptions;
pub mod execution_result;
pub mod jobs;
pub mod metrics;
pub mod overview;
pub mod savepoints;
pub mod status;
pub mod submit;
pub mod taskmanagers;
pub mod vertex_detail;
pub mod vertex_subtasks;
