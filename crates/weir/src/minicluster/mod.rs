//! Flink's MiniCluster: a JobManager and TaskManagers in this one process, running the
//! same code as the processes of `weir start-cluster` ([`MiniCluster`]), and the
//! executor that runs the pipelines of [`StreamExecutionEnvironment::execute`] on one
//! ([`MiniClusterExecutor`]).
//!
//! `weir local`, `weir sql`, `weir bench`, `weir bench nexmark` and every API test run
//! their jobs here: there is one execution path, the JobMaster's and TaskExecutors'.
//! [`install`] makes the MiniCluster the process default executor of the DataStream
//! API (the `weir` binary and `weir::main!` call it); [`LocalEnvironment`] gives an
//! environment that runs on it without installing anything.
//!
//! [`StreamExecutionEnvironment::execute`]: weir_api::StreamExecutionEnvironment::execute

mod cluster;
mod executor;

pub use cluster::{MiniCluster, MiniClusterSpec};
pub use executor::MiniClusterExecutor;

use std::sync::Arc;
use weir_api::StreamExecutionEnvironment;

/// Makes a [`MiniClusterExecutor`] that starts one MiniCluster per job, with the
/// default configuration, the process default executor of the DataStream API.
pub fn install() {
    weir_api::executor::set_default_executor(Arc::new(
        MiniClusterExecutor::per_job(weir_config::Configuration::new()),
    ));
}

/// Environments that run their jobs on a MiniCluster (Flink's
/// `createLocalEnvironment`), whatever the process default executor is.
pub trait LocalEnvironment {
    /// A new environment running each job on a MiniCluster of its own.
    fn create_local_environment() -> StreamExecutionEnvironment;
}

impl LocalEnvironment for StreamExecutionEnvironment {
    fn create_local_environment() -> StreamExecutionEnvironment {
        StreamExecutionEnvironment::new().with_executor(Arc::new(MiniClusterExecutor::per_job(
            weir_config::Configuration::new(),
        )))
    }
}
