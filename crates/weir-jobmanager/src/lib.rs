//! Weir's JobManager: the control plane of a cluster.
//!
//! Folders by mechanism, as Flink's runtime packages:
//! - [`dispatcher`]: a submission becomes a program invocation ([`dispatcher::invocation`]).
//! - [`resource_manager`]: registered TaskManagers, slots, heartbeats
//!   ([`resource_manager::slot_table`]).
//! - [`job_master`]: one job's scheduling, deployment, failover, checkpointing and
//!   savepoints — a state machine emitting [`job_master::Action`]s.
//! - [`scheduler`]: which slot each subtask runs in under slot sharing.
//! - [`failover`]: Flink's restart backoff strategies as state machines.
//! - [`coordination`]: the collect sinks' operator coordinators, which hold a SELECT's
//!   results between the sink subtasks and the client.
//! - [`rest`]: the JobManager's REST view (jobs, vertices, attempts, metrics,
//!   checkpoints, TaskManager logs) behind `weir-rest`'s `RestBackend`.
//! - [`rpc`]: the I/O shell — gRPC services and carrying out actions;
//!   [`jobmanager`] is the process core (Dispatcher + ResourceManager + JobMasters
//!   behind one lock) and [`process`] starts the servers.

#![warn(missing_docs)]

pub mod checkpoint;
pub mod coordination;
pub mod dispatcher;
pub mod failover;
pub mod job_master;
pub mod jobmanager;
pub mod metrics_source;
pub mod process;
pub mod resource_manager;
pub mod rest;
pub mod rpc;
pub mod scheduler;
pub mod secret_id;
pub mod settings;

pub use failover::restart_strategy::{
    FailureHandling, RestartBackoffTimeStrategy, RestartDecision, RestartStrategyConfig,
};
pub use process::{run_jobmanager, start_jobmanager, JobManagerError, RestEndpoint, RunningJobManager};
pub use settings::JobManagerSettings;
