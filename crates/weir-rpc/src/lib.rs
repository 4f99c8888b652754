//! Weir's control-plane RPC: the gRPC services and messages of `proto/weir.proto`
//! (version 1), generated with tonic and prost.
//!
//! - `resource_manager_*` and `job_master_gateway_*`: served by the JobManager.
//! - `task_executor_gateway_*`: served by every TaskManager.
//! - [`convert`]: state handles and barriers to and from their wire form.
//! - [`blocking_gauges`]: the names and values of the blocking partition gauges a
//!   TaskManager reports in its [`NetworkMemory`].
//! - [`process`]: how a process samples its own [`ProcessMetrics`] (CPU, memory,
//!   threads) and describes its [`LogFile`]s.
//! - [`tls`]: server and client endpoints over mutual TLS (`security.ssl.internal.*`).

#![warn(missing_docs)]

/// Generated messages and service stubs.
// prost/tonic generate the items from `proto/weir.proto`, whose comments are the docs.
#[allow(missing_docs)]
pub mod v1 {
    tonic::include_proto!("weir.rpc.v1");
}

pub use v1::*;

pub mod blocking_gauges;
pub mod convert;
pub mod process;
pub mod tls;
