//! Validation of what a TaskManager tells the ResourceManager, before any of it is
//! believed: a registration must declare a bounded number of slots and bounded ids and
//! addresses, and every number and log file name of a heartbeat must be sane before it
//! reaches the REST API. Pure functions, no I/O: the RPC service refuses or cleans
//! what these find and logs the reasons.

use thiserror::Error;
use weir_rpc::{
    LogFile, NetworkMemory, OperatorMetricsReport, ProcessMetrics, RegisterTaskExecutorRequest, TaskMetricsReport,
};

/// The key bounding the slots of one TaskManager.
pub const MAX_SLOTS_KEY: &str = "resourcemanager.taskmanager.max-slots";
/// Longest resource id a registration may carry (real TaskManagers send 32 hex digits).
pub const MAX_RESOURCE_ID_LEN: usize = 128;
/// Longest `host:port` address a registration may carry.
pub const MAX_ADDRESS_LEN: usize = 256;
/// Most log files one heartbeat may list.
pub const MAX_LOG_FILES: usize = 16;
/// Longest log file name (bytes), as most file systems allow.
pub const MAX_LOG_NAME_LEN: usize = 255;
/// Largest byte count believed of a TaskManager (RSS, log sizes, partition bytes): 1 PiB.
pub const MAX_BYTES: u64 = 1 << 50;
/// Most threads believed of a process (Linux's largest `pid_max`).
pub const MAX_THREADS: u64 = 4_194_304;
/// Largest network buffer (segment) believed: 1 GiB.
pub const MAX_SEGMENT_SIZE: u64 = 1 << 30;
/// Most network buffers believed of one pool.
pub const MAX_SEGMENTS: u64 = 1 << 32;
/// Latest log file modification time believed (9999-12-31), ms since the epoch.
pub const MAX_MTIME_MS: i64 = 253_402_300_799_999;
/// Most operators one task's report may list.
pub const MAX_OPERATORS: usize = 1024;
/// Most extra counters one operator's report may carry.
pub const MAX_OPERATOR_COUNTERS: usize = 64;
/// Longest operator or counter name kept (characters).
pub const MAX_NAME_CHARS: usize = 128;

/// Why a registration is refused. The messages go to the registering peer, so they
/// never reveal what the JobManager expected (its binary fingerprint).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RegistrationRefused {
    /// Another version of Weir.
    #[error("TaskManager version {taskmanager} does not match JobManager version {jobmanager}")]
    VersionMismatch {
        /// What the TaskManager sent (shortened).
        taskmanager: String,
        /// This JobManager's version.
        jobmanager: String,
    },
    /// Another binary (other programs).
    #[error("TaskManager binary '{taskmanager}' does not match the JobManager's binary: every process of a cluster must run the same binary (the JobManager's log names it)")]
    BinaryMismatch {
        /// What the TaskManager sent (shortened).
        taskmanager: String,
    },
    /// A field is missing.
    #[error("registration needs a resource id, RPC and data addresses and at least one slot")]
    Incomplete,
    /// An id or address too long or not printable.
    #[error("registration field {field} is not a printable ASCII string of at most {max} bytes")]
    BadField {
        /// The field.
        field: &'static str,
        /// Its bound.
        max: usize,
    },
    /// More slots than `resourcemanager.taskmanager.max-slots`.
    #[error("TaskManager {resource_id} declares {declared} slots, more than the limit of {limit} slots per TaskManager ({key})", key = MAX_SLOTS_KEY)]
    TooManySlots {
        /// The TaskManager.
        resource_id: String,
        /// Slots it declared.
        declared: u32,
        /// The configured ceiling.
        limit: u32,
    },
}

/// What a heartbeat carried that was not believed; logged by the ResourceManager.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ReportProblem {
    /// A number out of its sane range (dropped or clamped).
    #[error("{field} = {value} is outside [0, {max}]")]
    OutOfRange {
        /// The field.
        field: &'static str,
        /// The value as sent.
        value: String,
        /// Its bound.
        max: String,
    },
    /// The network pool report contradicts itself.
    #[error("network memory report dropped: {0}")]
    InconsistentNetwork(String),
    /// A log file name that is not a plain file name.
    #[error("log file name {0:?} dropped: not a plain file name of at most {max} bytes", max = MAX_LOG_NAME_LEN)]
    BadLogName(String),
    /// Too many log files.
    #[error("{0} log files listed; only the first {max} are kept", max = MAX_LOG_FILES)]
    TooManyLogs(usize),
    /// A task report's lists or names too long.
    #[error("task metrics of attempt {attempt}: {what}")]
    TaskReport {
        /// The attempt (shortened).
        attempt: String,
        /// What was cut.
        what: String,
    },
}

/// At most `n` characters of `s`, for messages.
fn shorten(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn printable(s: &str, max: usize) -> bool {
    s.len() <= max && s.bytes().all(|b| b.is_ascii_graphic())
}

/// Checks a registration against this JobManager's version, binary identity and slot
/// ceiling, before anything is allocated for it.
pub fn check_registration(
    r: &RegisterTaskExecutorRequest,
    jobmanager_binary: &str,
    max_slots: u32,
) -> Result<(), RegistrationRefused> {
    if r.version != env!("CARGO_PKG_VERSION") {
        return Err(RegistrationRefused::VersionMismatch {
            taskmanager: shorten(&r.version, 64),
            jobmanager: env!("CARGO_PKG_VERSION").into(),
        });
    }
    if r.binary != jobmanager_binary {
        return Err(RegistrationRefused::BinaryMismatch {
            taskmanager: shorten(&r.binary, 200),
        });
    }
    if r.resource_id.is_empty() || r.rpc_address.is_empty() || r.data_address.is_empty() || r.num_slots == 0 {
        return Err(RegistrationRefused::Incomplete);
    }
    for (field, value, max) in [
        ("resource_id", &r.resource_id, MAX_RESOURCE_ID_LEN),
        ("rpc_address", &r.rpc_address, MAX_ADDRESS_LEN),
        ("data_address", &r.data_address, MAX_ADDRESS_LEN),
    ] {
        if !printable(value, max) {
            return Err(RegistrationRefused::BadField { field, max });
        }
    }
    if r.num_slots > max_slots {
        return Err(RegistrationRefused::TooManySlots {
            resource_id: r.resource_id.clone(),
            declared: r.num_slots,
            limit: max_slots,
        });
    }
    Ok(())
}

/// `value` if it is at most `max`, else `None` with a problem recorded.
fn bounded(field: &'static str, value: Option<u64>, max: u64, problems: &mut Vec<ReportProblem>) -> Option<u64> {
    match value {
        Some(v) if v > max => {
            problems.push(ReportProblem::OutOfRange {
                field,
                value: v.to_string(),
                max: max.to_string(),
            });
            None
        }
        other => other,
    }
}

/// The process metrics with every implausible field dropped: a CPU load that is not a
/// finite share in [0, 1], an RSS over [`MAX_BYTES`], more than [`MAX_THREADS`]
/// threads, a CPU time beyond `i64::MAX` ns.
pub fn sanitize_process(p: ProcessMetrics, problems: &mut Vec<ReportProblem>) -> ProcessMetrics {
    let cpu_load = match p.cpu_load {
        Some(l) if !(l.is_finite() && (0.0..=1.0).contains(&l)) => {
            problems.push(ReportProblem::OutOfRange {
                field: "process.cpu_load",
                value: l.to_string(),
                max: "1".into(),
            });
            None
        }
        other => other,
    };
    ProcessMetrics {
        cpu_time_ns: bounded("process.cpu_time_ns", p.cpu_time_ns, i64::MAX as u64, problems),
        cpu_load,
        rss_bytes: bounded("process.rss_bytes", p.rss_bytes, MAX_BYTES, problems),
        threads: bounded("process.threads", p.threads, MAX_THREADS, problems),
    }
}

/// The network pool report, or `None` when it is implausible (a segment size of 0 or
/// over [`MAX_SEGMENT_SIZE`], more available than total segments, counts or bytes out
/// of range).
pub fn sanitize_network(n: NetworkMemory, problems: &mut Vec<ReportProblem>) -> Option<NetworkMemory> {
    let bad = if n.segment_size == 0 || n.segment_size > MAX_SEGMENT_SIZE {
        Some(format!(
            "segment size {} is not in [1, {MAX_SEGMENT_SIZE}]",
            n.segment_size
        ))
    } else if n.total_segments > MAX_SEGMENTS || n.available_segments > n.total_segments {
        Some(format!(
            "{} available of {} segments (at most {MAX_SEGMENTS})",
            n.available_segments, n.total_segments
        ))
    } else if n.blocking_partitions > MAX_SEGMENTS
        || n.blocking_memory_bytes > MAX_BYTES
        || n.blocking_spilled_bytes > MAX_BYTES
    {
        Some(format!(
            "blocking partitions {} with {} bytes in memory and {} spilled (at most {MAX_BYTES} bytes)",
            n.blocking_partitions, n.blocking_memory_bytes, n.blocking_spilled_bytes
        ))
    } else {
        None
    };
    match bad {
        Some(why) => {
            problems.push(ReportProblem::InconsistentNetwork(why));
            None
        }
        None => Some(n),
    }
}

/// Whether `name` is a plain file name: not empty, not `.` or `..`, at most
/// [`MAX_LOG_NAME_LEN`] bytes, no path separator, no control character.
pub fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name.len() <= MAX_LOG_NAME_LEN
        && !name.chars().any(|c| c == '/' || c == '\\' || c.is_control())
}

/// The log files with bad names, sizes or times dropped, at most [`MAX_LOG_FILES`].
pub fn sanitize_logs(logs: Vec<LogFile>, problems: &mut Vec<ReportProblem>) -> Vec<LogFile> {
    if logs.len() > MAX_LOG_FILES {
        problems.push(ReportProblem::TooManyLogs(logs.len()));
    }
    let mut kept = Vec::new();
    for f in logs.into_iter().take(MAX_LOG_FILES) {
        if !is_plain_file_name(&f.name) {
            problems.push(ReportProblem::BadLogName(shorten(&f.name, 80)));
        } else if f.size > MAX_BYTES {
            problems.push(ReportProblem::OutOfRange {
                field: "logs.size",
                value: f.size.to_string(),
                max: MAX_BYTES.to_string(),
            });
        } else if !(0..=MAX_MTIME_MS).contains(&f.mtime_ms) {
            problems.push(ReportProblem::OutOfRange {
                field: "logs.mtime_ms",
                value: f.mtime_ms.to_string(),
                max: MAX_MTIME_MS.to_string(),
            });
        } else {
            kept.push(f);
        }
    }
    kept
}

/// Clamps a counter to `i64::MAX` (what JSON consumers can hold).
fn counter(v: &mut u64, field: &'static str, problems: &mut Vec<&'static str>) {
    if *v > i64::MAX as u64 {
        *v = i64::MAX as u64;
        problems.push(field);
    }
}

/// Bounds one operator report: its name shortened, at most
/// [`MAX_OPERATOR_COUNTERS`] extra counters with names of at most [`MAX_NAME_CHARS`].
fn sanitize_operator(op: &mut OperatorMetricsReport, cut: &mut Vec<&'static str>) {
    if op.operator_name.chars().count() > MAX_NAME_CHARS || op.operator_id.len() > 64 {
        op.operator_name = op.operator_name.chars().take(MAX_NAME_CHARS).collect();
        op.operator_id = op.operator_id.chars().take(64).collect();
        cut.push("operator name");
    }
    counter(&mut op.records_in, "operator records_in", cut);
    counter(&mut op.records_out, "operator records_out", cut);
    let before = op.counters.len();
    op.counters
        .retain(|k, v| k.chars().count() <= MAX_NAME_CHARS && *v <= i64::MAX as u64);
    while op.counters.len() > MAX_OPERATOR_COUNTERS {
        let Some(last) = op.counters.keys().max().cloned() else {
            break;
        };
        op.counters.remove(&last);
    }
    if op.counters.len() != before {
        cut.push("operator counters");
    }
}

/// Bounds a task's live counters: every counter at most `i64::MAX`, pool usage at most
/// 1000 permille, at most [`MAX_OPERATORS`] operators, each bounded.
pub fn sanitize_task_metrics(m: &mut TaskMetricsReport, problems: &mut Vec<ReportProblem>) {
    let mut cut = Vec::new();
    for (v, field) in [
        (&mut m.records_in, "records_in"),
        (&mut m.records_out, "records_out"),
        (&mut m.busy_ms, "busy_ms"),
        (&mut m.idle_ms, "idle_ms"),
        (&mut m.backpressured_ms, "backpressured_ms"),
        (&mut m.bytes_in, "bytes_in"),
        (&mut m.bytes_out, "bytes_out"),
    ] {
        counter(v, field, &mut cut);
    }
    if m.in_pool_usage_permille > 1000 || m.out_pool_usage_permille > 1000 {
        m.in_pool_usage_permille = m.in_pool_usage_permille.min(1000);
        m.out_pool_usage_permille = m.out_pool_usage_permille.min(1000);
        cut.push("pool usage");
    }
    if m.operators.len() > MAX_OPERATORS {
        m.operators.truncate(MAX_OPERATORS);
        cut.push("operators");
    }
    for op in &mut m.operators {
        sanitize_operator(op, &mut cut);
    }
    if !cut.is_empty() {
        cut.dedup();
        problems.push(ReportProblem::TaskReport {
            attempt: shorten(&m.attempt_id, 40),
            what: format!("clamped or cut: {}", cut.join(", ")),
        });
    }
}

#[cfg(test)]
#[path = "peer_validation_tests.rs"]
mod tests;
