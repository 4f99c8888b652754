//! The TaskManager process: a TaskExecutor with slots.
//!
//! It registers with the JobManager's ResourceManager and heartbeats; it serves the
//! `TaskExecutorGateway` RPC through which JobMasters deploy and cancel tasks; it
//! rebuilds each deployed chain's operators by running the job's program (checking the
//! StreamGraph fingerprint), runs every task on its own thread, and reports state
//! changes. Records go through its `NetworkEnvironment`: in memory between its own
//! tasks, over its data server to and from other TaskManagers.

#![warn(missing_docs)]

pub mod attempt_ref;
pub mod checkpointing;
pub mod error;
pub mod executor;
pub mod fencing;
pub mod log_files;
mod metric_reports;
pub mod metrics_source;
pub mod operator_events;
pub mod process;
pub mod registration;
pub mod report_text;
pub mod reporter;
pub mod rpc_service;
pub mod settings;
pub mod state_backends;
pub mod task_identity;

pub use error::TaskManagerError;
pub use process::{run_taskmanager, start_taskmanager, RunningTaskManager};
pub use settings::TaskManagerSettings;
