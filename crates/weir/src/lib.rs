//! Weir: a stream processor with Apache Flink's architecture and semantics, in one
//! native binary.
//!
//! This facade re-exports the DataStream API (`use weir::prelude::*`) and holds the
//! built-in programs and the command line.

pub mod cli;
pub mod programs;

pub use weir_api as api;
pub use weir_core as core;
pub use weir_graph as graph;
pub use weir_runtime as runtime;

/// Everything a program needs.
pub mod prelude {
    pub use weir_api::prelude::*;
}
