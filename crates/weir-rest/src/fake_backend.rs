//! Test support: the backend the router tests run against. It answers from the
//! [`crate::examples`] for job [`JID`] (RUNNING), [`FINISHED`] and [`PANICKY`] (whose
//! calls panic), records cancellations, submissions and exception hints, and has one
//! vertex [`VID`] with two subtasks and their metrics, JobManager and TaskManager
//! metrics, and a JobManager log file.

use crate::backend::RestBackend;
use crate::error::RestError;
use crate::examples::{self, JID, TM_ID};
use crate::messages::config::{ConfigEntry, JobConfig};
use crate::messages::environment::LogInfo;
use crate::messages::exceptions::JobExceptions;
use crate::messages::jobs::{JobDetail, JobsOverview, VertexMetrics};
use crate::messages::metrics::{ComponentMetrics, MetricValue};
use crate::messages::overview::Overview;
use crate::messages::status::{ExecutionState, ExecutionStateTimestamps, JobStatus};
use crate::messages::submit::{JobSubmitRequest, JobSubmitResponse};
use crate::messages::taskmanagers::{TaskManagerDetail, TaskManagersList};
use crate::messages::vertex_detail::{JobVertexDetail, StatusDurations, SubtaskDetail};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use weir_core::ids::JobId;

/// A finished job (cancelling it conflicts).
pub(crate) const FINISHED: JobId = JobId(0xf1);
/// A job whose backend calls panic.
pub(crate) const PANICKY: JobId = JobId(0xbad);
/// The id the fake hands out on submission.
pub(crate) const NEW_JOB: JobId = JobId(0x5eed);

/// A backend answering from the examples and recording what it was asked to do.
pub(crate) struct FakeBackend {
    statuses: Mutex<BTreeMap<JobId, JobStatus>>,
    cancelled: Mutex<Vec<JobId>>,
    pub(crate) submitted: Mutex<Vec<JobSubmitRequest>>,
    pub(crate) exception_hints: Mutex<Vec<Option<usize>>>,
    /// The JobManager's log file (removed when the fake is dropped).
    log_file: PathBuf,
}

impl FakeBackend {
    /// The fake, with a JobManager log file of its own holding [`LOG_TEXT`].
    pub(crate) fn new() -> Arc<Self> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let log_file = std::env::temp_dir().join(format!("weir-rest-fake-{}-{n}.log", std::process::id()));
        std::fs::write(&log_file, LOG_TEXT).expect("write the log file");
        let fake = Self {
            statuses: Mutex::default(),
            cancelled: Mutex::default(),
            submitted: Mutex::default(),
            exception_hints: Mutex::default(),
            log_file,
        };
        if let Ok(mut s) = fake.statuses.lock() {
            s.insert(JID, JobStatus::Running);
            s.insert(FINISHED, JobStatus::Finished);
            s.insert(PANICKY, JobStatus::Running);
        }
        Arc::new(fake)
    }

    fn known(&self, jid: JobId) -> Result<JobStatus, RestError> {
        if jid == PANICKY {
            panic!("the fake backend was asked about {jid}");
        }
        self.statuses
            .lock()
            .map_err(|_| RestError::Internal("poisoned".to_string()))?
            .get(&jid)
            .copied()
            .ok_or(RestError::JobNotFound(jid))
    }

    /// The jobs it was asked to cancel.
    pub(crate) fn cancelled(&self) -> Vec<JobId> {
        self.cancelled.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

impl RestBackend for FakeBackend {
    fn overview(&self) -> Overview {
        examples::overview()
    }

    fn jobs_overview(&self) -> JobsOverview {
        examples::jobs_overview()
    }

    fn job_detail(&self, jid: JobId) -> Result<JobDetail, RestError> {
        self.known(jid)?;
        Ok(examples::job_detail())
    }

    fn job_status(&self, jid: JobId) -> Result<JobStatus, RestError> {
        self.known(jid)
    }

    fn job_exceptions(&self, jid: JobId, max_exceptions: Option<usize>) -> Result<JobExceptions, RestError> {
        self.known(jid)?;
        if let Ok(mut h) = self.exception_hints.lock() {
            h.push(max_exceptions);
        }
        // Two entries, the older one labelled.
        let mut ex = examples::job_exceptions();
        let mut older = ex.exception_history.entries[0].clone();
        older.exception.timestamp -= 1000;
        older
            .exception
            .failure_labels
            .insert("type".to_string(), "user".to_string());
        ex.exception_history.entries.push(older);
        Ok(ex)
    }

    fn job_config(&self, jid: JobId) -> Result<JobConfig, RestError> {
        self.known(jid)?;
        Ok(examples::job_config())
    }

    fn taskmanagers(&self) -> TaskManagersList {
        TaskManagersList {
            taskmanagers: vec![examples::taskmanager_info()],
        }
    }

    fn taskmanager_detail(&self, id: &str) -> Result<TaskManagerDetail, RestError> {
        if id == TM_ID {
            Ok(examples::taskmanager_detail())
        } else {
            Err(RestError::TaskManagerNotFound(id.to_string()))
        }
    }

    fn jobmanager_config(&self) -> Vec<ConfigEntry> {
        examples::jobmanager_config()
    }

    fn cancel_job(&self, jid: JobId) -> Result<(), RestError> {
        let status = self.known(jid)?;
        if status.is_globally_terminal() && status != JobStatus::Canceled {
            return Err(RestError::job_already_terminal(status));
        }
        if let Ok(mut c) = self.cancelled.lock() {
            c.push(jid);
        }
        Ok(())
    }

    fn submit_job(&self, request: JobSubmitRequest) -> Result<JobSubmitResponse, RestError> {
        if request.program != "keyed-sum" {
            return Err(RestError::BadRequest(format!("Unknown program '{}'.", request.program)));
        }
        if let Ok(mut s) = self.submitted.lock() {
            s.push(request);
        }
        Ok(JobSubmitResponse { jobid: NEW_JOB })
    }

    fn vertex_detail(&self, jid: JobId, vid: &str) -> Result<JobVertexDetail, RestError> {
        self.known(jid)?;
        if vid != VID {
            return Err(RestError::vertex_not_found(vid));
        }
        Ok(JobVertexDetail::new(
            VID.into(),
            "Sum".into(),
            2,
            128,
            6000,
            vec![subtask(0), subtask(1)],
        ))
    }

    fn vertex_subtask_metrics(&self, jid: JobId, vid: &str) -> Result<Vec<ComponentMetrics>, RestError> {
        self.vertex_detail(jid, vid)?;
        Ok(RECORDS_IN
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut m = metrics(&[
                    ("numRecordsIn", MetricValue::Integer(*n)),
                    ("busyTimeMsPerSecond", MetricValue::Double(250.0 * (i + 1) as f64)),
                ]);
                if i == 1 {
                    m.insert("currentInputWatermark".into(), MetricValue::Integer(77));
                }
                m
            })
            .collect())
    }

    fn job_metrics(&self) -> Vec<(JobId, ComponentMetrics)> {
        let job = |restarts: i64, uptime: i64| {
            metrics(&[
                ("numRestarts", MetricValue::Integer(restarts)),
                ("uptime", MetricValue::Integer(uptime)),
            ])
        };
        vec![(JID, job(2, 5000)), (FINISHED, job(0, -1))]
    }

    fn jobmanager_metrics(&self) -> ComponentMetrics {
        metrics(&[
            ("taskSlotsTotal", MetricValue::Integer(4)),
            ("Status.JVM.CPU.Load", MetricValue::Double(0.125)),
        ])
    }

    fn taskmanager_metrics(&self) -> Vec<(String, ComponentMetrics)> {
        let threads = |n: i64| metrics(&[("Status.JVM.Threads.Count", MetricValue::Integer(n))]);
        vec![(TM_ID.into(), threads(10)), ("tm-b".into(), threads(30))]
    }

    fn jobmanager_log_files(&self) -> Vec<PathBuf> {
        vec![self.log_file.clone()]
    }

    fn jobmanager_logs(&self) -> Vec<LogInfo> {
        let name = self.log_file.file_name().map(|n| n.to_string_lossy().into_owned());
        vec![LogInfo {
            name: name.unwrap_or_default(),
            size: LOG_TEXT.len() as u64,
            mtime: 1_795_941_226_000,
        }]
    }
}

impl Drop for FakeBackend {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.log_file);
    }
}

/// The vertex of the job [`JID`]: two subtasks on [`TM_ID`].
pub(crate) const VID: &str = "c27dcf7b54ef6bfd6cff02ca8870b681";
/// Records read by its subtasks 0 and 1.
pub(crate) const RECORDS_IN: [i64; 2] = [400, 600];
/// What the JobManager's log file holds.
pub(crate) const LOG_TEXT: &str = "INFO started\n";

/// Subtask `i` of [`VID`], RUNNING since 1100 (scheduled at 900).
pub(crate) fn subtask(i: u32) -> SubtaskDetail {
    let mut timestamps = ExecutionStateTimestamps::new();
    timestamps.set(ExecutionState::Scheduled, 900);
    timestamps.set(ExecutionState::Running, 1100);
    SubtaskDetail {
        subtask: i,
        status: ExecutionState::Running,
        attempt: 0,
        endpoint: "localhost:37831".into(),
        start_time: 1000 + i as i64,
        end_time: -1,
        duration: 5000,
        metrics: VertexMetrics {
            read_records: RECORDS_IN[i as usize],
            ..VertexMetrics::default()
        },
        taskmanager_id: TM_ID.into(),
        status_duration: StatusDurations {
            running: 5000,
            ..StatusDurations::default()
        },
        start_time_deprecated: 1000 + i as i64,
        timestamps,
    }
}

fn metrics(pairs: &[(&str, MetricValue)]) -> ComponentMetrics {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}
