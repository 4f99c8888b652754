//! Weir: a stream processor with Apache Flink's architecture and semantics, in one
//! native binary.
//!
//! This facade re-exports the DataStream API (`use weir::prelude::*`) and holds the
//! MiniCluster every in-process job runs on ([`minicluster`]: the executor of
//! `StreamExecutionEnvironment::execute`), the built-in programs and the command line.

#![warn(missing_docs)]

pub mod cli;
pub mod minicluster;
pub mod programs;

pub use weir_api as api;
pub use weir_core as core;
pub use weir_graph as graph;
pub use weir_runtime as runtime;

/// The `main` of a user's own Weir binary: the built-in programs plus the given ones,
/// with every command of `weir` (`jobmanager`, `taskmanager`, `start-cluster`, `local`,
/// `run`, …), named and versioned after the calling crate:
///
/// ```ignore
/// weir::main!(my_job::program(), my_other_job::program());
/// ```
#[macro_export]
macro_rules! main {
    ($($program:expr),* $(,)?) => {
        fn main() {
            $crate::cli::entry::main_with(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
                vec![$($program),*],
            );
        }
    };
}

/// Everything a program needs, with
/// `StreamExecutionEnvironment::create_local_environment()` ([`minicluster::LocalEnvironment`]).
pub mod prelude {
    pub use crate::minicluster::LocalEnvironment;
    pub use weir_api::prelude::*;
}
