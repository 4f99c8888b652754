//! The routes about the processes themselves (each also under `/v1`):
//!
//! | path | answer |
//! |---|---|
//! | `/jobmanager/environment` | [`EnvironmentInfo`] of [`RestBackend::jobmanager_environment`] |
//! | `/jobmanager/logs` | `{"logs": [{"name", "size", "mtime"}]}` of [`RestBackend::jobmanager_logs`] |
//! | `/jobmanager/logs/:filename` | that file's text (`text/plain`) |
//! | `/jobmanager/log` | the first log file's text |
//! | `/taskmanagers/:tmid/logs` | [`RestBackend::taskmanager_logs`] |
//! | `/taskmanagers/:tmid/logs/:filename` | that file's text, from the TaskManager ([`RestBackend::taskmanager_log_file`]) |
//! | `/taskmanagers/:tmid/log` | its main log file's text |
//!
//! Only the files of [`RestBackend::jobmanager_log_files`] are served, matched by file
//! name, so no path outside them can be read. A name not among them answers Flink's 404 `This file does not
//! exist in JobManager log dir.`; a process that logs to no file lists no logs.
//! Files are read on tokio's blocking pool by the router, not by the backend.
//!
//! [`RestBackend::jobmanager_environment`]: crate::RestBackend::jobmanager_environment
//! [`RestBackend::jobmanager_logs`]: crate::RestBackend::jobmanager_logs
//! [`RestBackend::jobmanager_log_files`]: crate::RestBackend::jobmanager_log_files
//! [`RestBackend::taskmanager_logs`]: crate::RestBackend::taskmanager_logs
//! [`RestBackend::taskmanager_log_file`]: crate::RestBackend::taskmanager_log_file

use crate::error::RestError;
use crate::handlers::path_params::{PathParams, RawPath};
use crate::handlers::reply::{call, reply, Backend};
use crate::messages::environment::{EnvironmentInfo, LogListInfo};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::path::PathBuf;

/// Flink's answer for a log file the JobManager does not have.
pub const NO_SUCH_LOG_FILE: &str = "This file does not exist in JobManager log dir.";

/// Adds the routes of the module table under `prefix`.
pub(crate) fn add(r: Router<Backend>, prefix: &str) -> Router<Backend> {
    r.route(&format!("{prefix}/jobmanager/environment"), get(environment))
        .route(&format!("{prefix}/jobmanager/logs"), get(jobmanager_logs))
        .route(
            &format!("{prefix}/jobmanager/logs/{{filename}}"),
            get(jobmanager_log_file),
        )
        .route(&format!("{prefix}/jobmanager/log"), get(jobmanager_main_log))
        .route(&format!("{prefix}/taskmanagers/{{tmid}}/logs"), get(taskmanager_logs))
        .route(
            &format!("{prefix}/taskmanagers/{{tmid}}/logs/{{filename}}"),
            get(taskmanager_log_file),
        )
        .route(
            &format!("{prefix}/taskmanagers/{{tmid}}/log"),
            get(taskmanager_main_log),
        )
}

async fn environment(State(b): State<Backend>) -> Response {
    reply(call(|| Ok::<EnvironmentInfo, RestError>(b.jobmanager_environment())))
}

async fn jobmanager_logs(State(b): State<Backend>) -> Response {
    reply(call(|| {
        Ok(LogListInfo {
            logs: b.jobmanager_logs(),
        })
    }))
}

/// Runs file system work on tokio's blocking pool, off the router's tasks.
async fn off_runtime<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::task::spawn_blocking(f).await.ok()
}

/// The text of `file`, or Flink's 404.
async fn serve_log(file: Option<PathBuf>) -> Response {
    let text = match file {
        Some(path) => off_runtime(move || std::fs::read(path).ok()).await.flatten(),
        None => None,
    };
    match text {
        Some(bytes) => ([(header::CONTENT_TYPE, "text/plain; charset=UTF-8")], bytes).into_response(),
        None => RestError::NotFound(NO_SUCH_LOG_FILE.to_string()).into_response(),
    }
}

async fn jobmanager_log_file(State(b): State<Backend>, path: RawPath) -> Response {
    let result = PathParams::of(path).and_then(|p| {
        let name = p.text("filename")?.to_string();
        let files = call(|| Ok(b.jobmanager_log_files()))?;
        Ok(files
            .into_iter()
            .find(|f| f.file_name().is_some_and(|n| n.to_string_lossy() == name)))
    });
    match result {
        Ok(file) => serve_log(file).await,
        Err(e) => e.into_response(),
    }
}

async fn jobmanager_main_log(State(b): State<Backend>) -> Response {
    match call(|| Ok(b.jobmanager_log_files())) {
        Ok(files) => serve_log(files.into_iter().next()).await,
        Err(e) => e.into_response(),
    }
}

async fn taskmanager_logs(State(b): State<Backend>, path: RawPath) -> Response {
    reply(PathParams::of(path).and_then(|p| {
        let id = p.text("tmid")?.to_string();
        call(|| b.taskmanager_logs(&id))
    }))
}

/// A TaskManager's log text, or the backend's error.
async fn serve_taskmanager_log(b: Backend, id: String, name: Option<String>) -> Response {
    match b.taskmanager_log_file(&id, name.as_deref()).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, "text/plain; charset=UTF-8")], bytes).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn taskmanager_log_file(State(b): State<Backend>, path: RawPath) -> Response {
    let params = PathParams::of(path).and_then(|p| Ok((p.text("tmid")?.to_string(), p.text("filename")?.to_string())));
    match params {
        Ok((id, name)) => serve_taskmanager_log(b, id, Some(name)).await,
        Err(e) => e.into_response(),
    }
}

async fn taskmanager_main_log(State(b): State<Backend>, path: RawPath) -> Response {
    match PathParams::of(path).and_then(|p| Ok(p.text("tmid")?.to_string())) {
        Ok(id) => serve_taskmanager_log(b, id, None).await,
        Err(e) => e.into_response(),
    }
}
