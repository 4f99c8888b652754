//! Configuration responses: the web dashboard's `GET /config`, the cluster's
//! `GET /jobmanager/config` and a job's `GET /jobs/:jid/config`.
//!
//! Owns [`DashboardConfig`] (with [`DashboardFeatures`]), [`ConfigEntry`] and
//! [`JobConfig`] (with [`ExecutionConfigInfo`]). Configuration values are strings, as
//! Flink writes them (`"8081"`, `"1728m"`).

use crate::serde_util::display;
use serde::Serialize;
use std::collections::BTreeMap;
use weir_core::ids::JobId;

/// The body of `GET /config`: what the web dashboard needs to know about the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DashboardConfig {
    /// How often the dashboard refreshes, in milliseconds (`web.refresh-interval`).
    #[serde(rename = "refresh-interval")]
    pub refresh_interval: i64,
    /// The JobManager's time zone, e.g. `"Coordinated Universal Time"`.
    #[serde(rename = "timezone-name")]
    pub timezone_name: String,
    /// The time zone's offset from UTC in milliseconds.
    #[serde(rename = "timezone-offset")]
    pub timezone_offset: i64,
    /// The Flink version whose API is served (see [`crate::FLINK_API_VERSION`]).
    #[serde(rename = "flink-version")]
    pub flink_version: String,
    /// The build's revision and date (Weir: its own).
    #[serde(rename = "flink-revision")]
    pub flink_revision: String,
    /// Which dashboard actions the cluster allows.
    pub features: DashboardFeatures,
}

/// `features` of [`DashboardConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DashboardFeatures {
    /// Jobs may be submitted through the REST API (`web.submit.enable`).
    #[serde(rename = "web-submit")]
    pub web_submit: bool,
    /// Jobs may be cancelled through the REST API (`web.cancel.enable`).
    #[serde(rename = "web-cancel")]
    pub web_cancel: bool,
    /// Jobs may be rescaled through the REST API (`web.rescale.enable`).
    #[serde(rename = "web-rescale")]
    pub web_rescale: bool,
    /// This is a HistoryServer rather than a live cluster.
    #[serde(rename = "web-history")]
    pub web_history: bool,
}

impl DashboardConfig {
    /// Weir's dashboard configuration: 3 s refresh, UTC, Flink API version
    /// [`crate::FLINK_API_VERSION`], revision `weir <crate version>`, submit and cancel
    /// enabled, rescale and history not.
    pub fn weir_default() -> Self {
        Self {
            refresh_interval: 3000,
            timezone_name: "Coordinated Universal Time".to_string(),
            timezone_offset: 0,
            flink_version: crate::FLINK_API_VERSION.to_string(),
            flink_revision: format!("weir {}", env!("CARGO_PKG_VERSION")),
            features: DashboardFeatures {
                web_submit: true,
                web_cancel: true,
                web_rescale: false,
                web_history: false,
            },
        }
    }
}

/// One entry of `GET /jobmanager/config` (the body is a JSON array of these).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ConfigEntry {
    /// The option's key, e.g. `rest.port`.
    pub key: String,
    /// The option's value as a string, e.g. `8081`.
    pub value: String,
}

impl ConfigEntry {
    /// An entry from anything string-like.
    pub fn new(key: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            value: value.into(),
        }
    }
}

/// The body of `GET /jobs/:jid/config`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobConfig {
    /// The job id.
    #[serde(serialize_with = "display")]
    pub jid: JobId,
    /// The job's name.
    pub name: String,
    /// The job's execution settings.
    #[serde(rename = "execution-config")]
    pub execution_config: ExecutionConfigInfo,
}

/// `execution-config` of [`JobConfig`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExecutionConfigInfo {
    /// A description of the restart strategy, e.g.
    /// `"Cluster level default restart strategy"`.
    #[serde(rename = "restart-strategy")]
    pub restart_strategy: String,
    /// The job's default parallelism.
    #[serde(rename = "job-parallelism")]
    pub job_parallelism: i32,
    /// Whether records are reused between chained operators (Weir: always false).
    #[serde(rename = "object-reuse-mode")]
    pub object_reuse_mode: bool,
    /// The job's user parameters (Weir: the program's `--arg` values).
    #[serde(rename = "user-config")]
    pub user_config: BTreeMap<String, String>,
}
