//! Weir's metrics as Flink names and exports them.
//!
//! - [`names`]: the metric names, spelled as Flink's `MetricNames` and metric groups
//!   spell them; shared by the REST API and the reporters.
//! - [`sample`]: what a process exports — a [`MetricSample`] per metric and scope
//!   instance — and the [`MetricSource`] that produces them on demand.
//! - [`reporter_config`]: Flink's `metrics.reporter.<name>.*` options, read into
//!   [`PrometheusReporterConfig`]s.
//! - [`exposition`]: samples in the Prometheus text format, through `prometheus-client`,
//!   with the names and labels of Flink's PrometheusReporter.
//! - [`exporter`]: the HTTP endpoint a process serves them on.
//! - [`http_admission`]: HTTP/1.1 connections under a connection gate (limits per
//!   server and per peer, idle connections evicted first), for the exporter and the
//!   REST endpoint.
//! - [`rates`]: per-second rates of counters between reads, for reporters of processes
//!   that only keep totals.
//!
//! Nothing here touches the record path: sources read the totals task threads publish,
//! when a scrape asks.

#![warn(missing_docs)]

pub mod error;
pub mod exporter;
pub mod exposition;
pub mod http_admission;
pub mod lag;
pub mod names;
pub mod rates;
pub mod reporter_config;
pub mod sample;

pub use error::MetricsError;
pub use exporter::{start_prometheus_exporters, PrometheusExporter};
pub use reporter_config::{PortRange, PrometheusReporterConfig};
pub use sample::{MetricSample, MetricSource, Scope};
