//! Weir's JobManager: the control plane of a cluster.
//!
//! - [`slot_table`]: the ResourceManager's registered TaskManagers, slots, heartbeats.
//! - [`slot_assignment`]: which slot each subtask runs in under slot sharing.
//! - [`restart_strategy`]: Flink's restart backoff strategies as state machines.
//! - [`job_master`]: one job's scheduling, deployment, failover — a state machine
//!   emitting [`job_master::Action`]s.
//! - [`jobmanager`]: the process core (Dispatcher + ResourceManager + JobMasters behind
//!   one lock) and [`rest_backend`], its REST view (with [`rest_vertex`] and
//!   [`rest_metrics`]).
//! - [`collect_coordinator`], [`collect_results`]: the collect sinks' coordinators, which
//!   hold a SELECT's results between the sink subtasks and the client.
//! - [`rpc_service`], [`actions`], [`process`]: the I/O shell — gRPC services, carrying
//!   out actions, starting the servers.

#![warn(missing_docs)]

pub mod actions;
pub mod checkpoint_discards;
pub mod checkpoint_rest;
pub mod collect_coordinator;
pub mod collect_results;
pub mod invocation;
pub mod job_master;
pub mod jobmanager;
pub mod metrics_source;
pub mod process;
mod rest_attempts;
pub mod rest_backend;
pub mod rest_metrics;
mod rest_operator_metrics;
pub mod rest_vertex;
pub mod restart_strategy;
pub mod rpc_service;
pub mod settings;
pub mod slot_assignment;
pub mod slot_table;
pub mod taskmanager_logs;

pub use process::{run_jobmanager, start_jobmanager, JobManagerError, RestEndpoint, RunningJobManager};
pub use restart_strategy::{FailureHandling, RestartBackoffTimeStrategy, RestartDecision, RestartStrategyConfig};
pub use settings::JobManagerSettings;
