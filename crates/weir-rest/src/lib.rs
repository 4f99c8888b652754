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
//! Modules, one idea each:
//! - [`status`]: [`JobStatus`], [`ExecutionState`] and the per-state maps built on them.
//! - [`overview`]: `GET /overview`.
//! - [`config`]: `GET /config`, `GET /jobmanager/config`, `GET /jobs/:jid/config`.
//! - [`jobs`]: `GET /jobs`, `/jobs/overview`, `/jobs/:jid`, `/jobs/:jid/plan`.
//! - [`exceptions`]: `GET /jobs/:jid/exceptions`.
//! - [`checkpoints`]: `GET /jobs/:jid/checkpoints`, `/jobs/:jid/checkpoints/details/:checkpointid`.
//! - [`checkpoint_config`]: `GET /jobs/:jid/checkpoints/config`.
//! - [`taskmanagers`]: `GET /taskmanagers`, `/taskmanagers/:tmid`.
//! - [`vertex_detail`]: `GET /jobs/:jid/vertices/:vid` and one subtask's detail.
//! - [`vertex_subtasks`]: a vertex's `subtasktimes` and `taskmanagers`.
//! - [`backpressure`]: `GET /jobs/:jid/vertices/:vid/backpressure`.
//! - [`accumulators`]: `GET /jobs/:jid/accumulators`.
//! - [`attempts`]: one execution attempt of a subtask and the vertex, subtask and
//!   attempt accumulators; [`execution_result`]: `GET /jobs/:jid/execution-result`.
//! - [`metrics`]: metric values and Flink's metric query semantics; [`metric_names`]:
//!   the names Weir reports.
//! - [`environment`]: `GET /jobmanager/environment` and log lists.
//! - [`submit`]: Weir's own `POST /jobs` body and its response.
//! - [`error`]: [`RestError`] and the `{"errors": [...]}` body.
//! - [`backend`]: [`RestBackend`], what the JobManager implements.
//! - [`http_policy`]: JSON-only writes (415 otherwise) and the configured CORS header.
//! - [`server`]: the socket side: HTTP or HTTPS ([`RestServerOptions`]), a connection
//!   bound and a header read timeout.
//! - [`router`](mod@router): [`router()`], [`serve`] and [`RestServerHandle`], with the
//!   routes of [`vertex_routes`], [`attempt_routes`], [`metric_routes`] and
//!   [`process_routes`], and the
//!   web dashboard's files (`web_assets`, `web/`).
//!
//! The crate depends on `weir-core` only (for ids); the JobManager converts its own
//! state into these types.

pub mod accumulators;
pub mod attempt_routes;
pub mod attempts;
pub mod backend;
pub mod backpressure;
pub mod checkpoint_config;
pub mod checkpoints;
pub mod config;
pub mod coordination;
pub mod environment;
pub mod error;
pub mod exceptions;
pub mod execution_result;
pub mod http_policy;
pub mod jobs;
/// Flink's metric names (kept in `weir-metrics`, shared with the Prometheus reporter).
pub use weir_metrics::names as metric_names;
pub mod metric_routes;
pub mod metrics;
pub mod overview;
mod path_params;
pub mod process_routes;
pub mod router;
pub mod savepoints;
mod serde_util;
pub mod server;
pub mod status;
pub mod submit;
pub mod taskmanagers;
pub mod vertex_detail;
pub mod vertex_routes;
pub mod vertex_subtasks;
mod web_assets;

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

pub use accumulators::{JobAccumulatorsInfo, UserAccumulator};
pub use attempts::{
    attempt_not_found, invalid_attempt, JobVertexAccumulators, SubtaskAccumulators, SubtaskAttempt,
    SubtaskAttemptAccumulators, SubtasksAccumulators,
};
pub use backend::{LogFileFuture, RestBackend};
pub use backpressure::{BackPressureLevel, SubtaskBackPressure, VertexBackPressure};
pub use checkpoint_config::{
    CheckpointConfigInfo, CheckpointingProcessingMode, ExternalizedCheckpointInfo, DISABLED_CHECKPOINT_INTERVAL,
};
pub use checkpoints::{
    CheckpointCounts, CheckpointDetails, CheckpointOutcome, CheckpointStatistics, CheckpointStatus, CheckpointSummary,
    CheckpointType, CheckpointingStatistics, LatestCheckpoints, RestoredCheckpointStatistics, StatsSummary,
    TaskCheckpointStatistics,
};
pub use config::{ConfigEntry, DashboardConfig, DashboardFeatures, ExecutionConfigInfo, JobConfig};
pub use coordination::{CoordinationRequest, CoordinationResponse};
pub use environment::{EnvironmentInfo, EnvironmentVariable, JvmInfo, LogInfo, LogListInfo};
pub use error::{ErrorResponse, RestError};
pub use exceptions::{ExceptionHistory, ExceptionInfo, JobExceptions, RootExceptionInfo};
pub use execution_result::{JobExecutionResultResponse, JobResult};
pub use jobs::{
    JobDetail, JobIdWithStatus, JobOverview, JobPlan, JobPlanInfo, JobType, JobsList, JobsOverview, PlanInput,
    PlanNode, SchedulerType, VertexDetail, VertexMetrics,
};
pub use metrics::{AggregatedMetric, AggregationMode, ComponentMetrics, Metric, MetricValue};
pub use overview::Overview;
pub use router::{router, router_with_origin, serve, serve_with_shutdown, RestServerHandle};
pub use savepoints::{SavepointStatusResponse, SavepointTriggerRequest, StopWithSavepointRequest, TriggerResponse};
pub use server::{serve_app, RestServerOptions};
pub use status::{
    ExecutionState, ExecutionStateCounts, ExecutionStateTimestamps, JobStatus, JobStatusInfo, JobStatusTimestamps,
    JobTaskCounts,
};
pub use submit::{JobSubmitRequest, JobSubmitResponse};
pub use taskmanagers::{
    AllocatedSlot, GarbageCollectorInfo, HardwareDescription, MemoryConfiguration, ResourceProfileInfo,
    TaskManagerDetail, TaskManagerInfo, TaskManagerMetrics, TaskManagersList,
};
pub use vertex_detail::{
    AggregatedMetrics, AggregatedStats, AggregatedStatusDurations, AggregatedSubtasks, JobVertexDetail,
    StatusDurations, SubtaskDetail,
};
pub use vertex_subtasks::{JobVertexTaskManagers, SubtaskTimes, SubtasksTimes, VertexTaskManager, UNASSIGNED};

/// The Flink version whose REST API this crate reproduces. Backends report it as
/// `flink-version` so that tools that gate features on the version work.
pub const FLINK_API_VERSION: &str = "2.3.0";
