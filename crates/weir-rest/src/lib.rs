//! The JobManager's REST endpoint, as a library: Flink-compatible JSON response types
//! and an axum router that serves them from a [`RestBackend`].
//!
//! Flink's tools (the `flink` CLI, the web UI's API calls, operators, scripts written
//! against Flink's REST API) talk to Weir unchanged because every response here has
//! **exactly** Flink 2.3's field names, nesting and value types, checked against real
//! Flink 2.3 responses kept in `tests/samples/`. Every path is served with and without
//! the `/v1` prefix, and every error is Flink's `{"errors": [...]}` body with Flink's
//! status code.
//!
//! Where things are:
//! - [`messages`]: the response and request bodies, one file per resource
//!   ([`messages::status`] holds [`JobStatus`], [`ExecutionState`] and the per-state
//!   maps; [`messages::metrics`] Flink's metric query semantics; [`metric_names`] the
//!   names Weir reports).
//! - [`handlers`]: the axum routes, one file per resource ([`handlers::jobs`],
//!   [`handlers::vertices`], [`handlers::attempts`], [`handlers::metrics`],
//!   [`handlers::process`], [`handlers::coordination`]) and the web dashboard's files;
//!   [`router()`] assembles them.
//! - [`backend`]: [`RestBackend`], what the JobManager implements.
//! - [`error`]: [`RestError`] and the `{"errors": [...]}` body.
//! - [`http_policy`]: JSON-only writes (415 otherwise) and the configured CORS header.
//! - [`server`]: the socket side: HTTP or HTTPS ([`RestServerOptions`]), a connection
//!   bound and a header read timeout; [`endpoint`]: [`serve`] and [`RestServerHandle`].
//!
//! The crate depends on `weir-core` only (for ids); the JobManager converts its own
//! state into these types.

#![warn(missing_docs)]

pub mod backend;
pub mod endpoint;
pub mod error;
pub mod handlers;
pub mod http_policy;
pub mod messages;
/// Flink's metric names (kept in `weir-metrics`, shared with the Prometheus reporter).
pub use weir_metrics::names as metric_names;
mod serde_util;
pub mod server;

#[cfg(test)]
mod attempt_router_tests;
#[cfg(test)]
mod checkpoint_router_tests;
#[cfg(test)]
mod checkpoints_tests;
#[cfg(test)]
mod config_tests;
#[cfg(test)]
mod examples;
#[cfg(test)]
mod exceptions_tests;
#[cfg(test)]
mod execution_result_tests;
#[cfg(test)]
mod fake_backend;
#[cfg(test)]
mod jobs_tests;
#[cfg(test)]
mod observability_router_tests;
#[cfg(test)]
mod overview_tests;
#[cfg(test)]
mod router_fuzz;
#[cfg(test)]
mod router_tests;
#[cfg(test)]
mod sample_check;
#[cfg(test)]
mod server_tests;
#[cfg(test)]
mod taskmanagers_tests;
#[cfg(test)]
mod test_client;

pub use backend::{LogFileFuture, MetricsScope, MetricsUpdate, RestBackend};
pub use endpoint::{serve, serve_with_shutdown, RestServerHandle};
pub use error::{ErrorResponse, RestError};
pub use handlers::jobs::DEFAULT_MAX_EXCEPTIONS;
pub use handlers::{router, router_with_origin};
pub use messages::accumulators::{JobAccumulatorsInfo, UserAccumulator};
pub use messages::attempts::{
    attempt_not_found, invalid_attempt, JobVertexAccumulators, SubtaskAccumulators, SubtaskAttempt,
    SubtaskAttemptAccumulators, SubtasksAccumulators,
};
pub use messages::backpressure::{BackPressureLevel, SubtaskBackPressure, VertexBackPressure};
pub use messages::checkpoint_config::{
    CheckpointConfigInfo, CheckpointingProcessingMode, ExternalizedCheckpointInfo, DISABLED_CHECKPOINT_INTERVAL,
};
pub use messages::checkpoints::{
    CheckpointCounts, CheckpointDetails, CheckpointOutcome, CheckpointStatistics, CheckpointStatus, CheckpointSummary,
    CheckpointType, CheckpointingStatistics, LatestCheckpoints, RestoredCheckpointStatistics, StatsSummary,
    TaskCheckpointStatistics,
};
pub use messages::config::{ConfigEntry, DashboardConfig, DashboardFeatures, ExecutionConfigInfo, JobConfig};
pub use messages::coordination::{no_coordinator, CoordinationRequest, CoordinationResponse};
pub use messages::environment::{EnvironmentInfo, EnvironmentVariable, JvmInfo, LogInfo, LogListInfo};
pub use messages::exceptions::{ExceptionHistory, ExceptionInfo, JobExceptions, RootExceptionInfo};
pub use messages::execution_result::{JobExecutionResultResponse, JobResult};
pub use messages::jobs::{
    JobDetail, JobIdWithStatus, JobOverview, JobPlan, JobPlanInfo, JobType, JobsList, JobsOverview, PlanInput,
    PlanNode, SchedulerType, VertexDetail, VertexMetrics,
};
pub use messages::metrics::{AggregatedMetric, AggregationMode, ComponentMetrics, Metric, MetricValue};
pub use messages::overview::Overview;
pub use messages::savepoints::{
    SavepointStatusResponse, SavepointTriggerRequest, StopWithSavepointRequest, TriggerResponse,
};
pub use messages::status::{
    ExecutionState, ExecutionStateCounts, ExecutionStateTimestamps, JobStatus, JobStatusInfo, JobStatusTimestamps,
    JobTaskCounts,
};
pub use messages::submit::{JobSubmitRequest, JobSubmitResponse};
pub use messages::taskmanagers::{
    AllocatedSlot, GarbageCollectorInfo, HardwareDescription, MemoryConfiguration, ResourceProfileInfo,
    TaskManagerDetail, TaskManagerInfo, TaskManagerMetrics, TaskManagersList,
};
pub use messages::vertex_detail::{
    AggregatedMetrics, AggregatedStats, AggregatedStatusDurations, AggregatedSubtasks, JobVertexDetail,
    StatusDurations, SubtaskDetail,
};
pub use messages::vertex_subtasks::{
    JobVertexTaskManagers, SubtaskTimes, SubtasksTimes, VertexTaskManager, UNASSIGNED,
};
pub use server::{serve_app, RestServerOptions};

/// The Flink version whose REST API this crate reproduces. Backends report it as
/// `flink-version` so that tools that gate features on the version work.
pub const FLINK_API_VERSION: &str = "2.3.0";
