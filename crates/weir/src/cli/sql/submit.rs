//! Where the SQL client's jobs run: the cluster at `-m host:port` (over its REST API,
//! as `weir run`), or a MiniCluster in this process started with the first job, whose
//! REST endpoint (on an ephemeral loopback port unless `rest.port` is set) serves a
//! SELECT's results as a cluster's does.

use crate::cli::client;
use crate::cli::embedded::JobResult;
use crate::minicluster::{MiniCluster, MiniClusterSpec};
use crate::programs::registry;
use anyhow::{anyhow, bail, Result};
use std::time::Duration;
use weir_config::Configuration;
use weir_core::ids::JobId;
use weir_rest::{JobStatus, JobSubmitRequest};

/// Slots of the embedded MiniCluster at least (jobs of an INSERT keep running).
const EMBEDDED_SLOTS: u32 = 16;

/// The cluster jobs go to.
pub enum Executor {
    /// A running cluster's REST endpoint.
    Remote(String),
    /// A MiniCluster in this process, once started.
    Embedded {
        /// The configuration (`-D`).
        config: Box<Configuration>,
        /// The cluster.
        cluster: Option<Box<MiniCluster>>,
        /// Jobs submitted to it.
        jobs: Vec<JobId>,
    },
}

impl Executor {
    /// Submits `request` (needing `slots` slots); the job's id (32 hex digits).
    pub fn submit(&mut self, request: JobSubmitRequest, slots: u32) -> Result<String> {
        match self {
            Executor::Remote(address) => {
                let body = serde_json::to_string(&request)?;
                let resp = client::post(address, "/jobs", &body).map_err(|e| anyhow!("submission refused: {e}"))?;
                let v: serde_json::Value = serde_json::from_str(&resp)?;
                Ok(v["jobid"]
                    .as_str()
                    .ok_or_else(|| anyhow!("unexpected response: {resp}"))?
                    .to_string())
            }
            Executor::Embedded { config, cluster, jobs } => {
                if cluster.is_none() {
                    let spec = MiniClusterSpec::for_job(config, slots.max(EMBEDDED_SLOTS))?;
                    *cluster = Some(Box::new(MiniCluster::start(config, spec, registry().clone())?));
                }
                let c = cluster
                    .as_ref()
                    .ok_or_else(|| anyhow!("the MiniCluster did not start"))?;
                let id = c.submit(request)?;
                jobs.push(id);
                Ok(id.to_string())
            }
        }
    }

    /// The REST endpoint (`host:port`) of the cluster the jobs went to; the embedded
    /// MiniCluster serves one on an ephemeral loopback port.
    pub fn rest_address(&self) -> Result<String> {
        match self {
            Executor::Remote(address) => Ok(address.clone()),
            Executor::Embedded { cluster, .. } => cluster
                .as_ref()
                .and_then(|c| c.rest_address())
                .map(|a| a.to_string())
                .ok_or_else(|| anyhow!("the MiniCluster serves no REST endpoint")),
        }
    }

    /// Waits for job `jid` to end: Ok if it FINISHED, else its root cause.
    pub fn wait(&self, jid: &str) -> Result<()> {
        match self {
            Executor::Remote(address) => loop {
                std::thread::sleep(Duration::from_millis(100));
                let detail: serde_json::Value = serde_json::from_str(&client::get(address, &format!("/jobs/{jid}"))?)?;
                match detail["state"].as_str().unwrap_or("") {
                    "FINISHED" => return Ok(()),
                    state @ ("FAILED" | "CANCELED") => {
                        let exc = client::get(address, &format!("/jobs/{jid}/exceptions")).unwrap_or_default();
                        let e: serde_json::Value = serde_json::from_str(&exc).unwrap_or_default();
                        let cause = e["exceptionHistory"]["entries"][0]["stacktrace"]
                            .as_str()
                            .unwrap_or("")
                            .to_string();
                        bail!("Job {jid} {state}: {cause}");
                    }
                    _ => {}
                }
            },
            Executor::Embedded { cluster, jobs, .. } => {
                let c = cluster.as_ref().ok_or_else(|| anyhow!("no MiniCluster runs"))?;
                let id = jobs
                    .iter()
                    .find(|j| j.to_string() == jid)
                    .copied()
                    .ok_or_else(|| anyhow!("unknown job {jid}"))?;
                outcome(jid, c.wait_for_result(id)?)
            }
        }
    }

    /// Waits for every job of the embedded MiniCluster, then stops it.
    pub fn close(self) -> Result<()> {
        if let Executor::Embedded {
            cluster: Some(c), jobs, ..
        } = self
        {
            let mut first_error = None;
            for j in jobs {
                if let Err(e) = c.wait_for_result(j).and_then(|r| outcome(&j.to_string(), r)) {
                    first_error.get_or_insert(e);
                }
            }
            // The checkpoints retention does not keep are deleted before the cluster ends.
            if !weir_jobmanager::checkpoint::discards::wait_for_discards(std::time::Duration::from_secs(30)) {
                eprintln!("[WARNING] checkpoints were still being deleted when the session ended");
            }
            (*c).shutdown();
            if let Some(e) = first_error {
                return Err(e);
            }
        }
        Ok(())
    }
}

fn outcome(jid: &str, r: JobResult) -> Result<()> {
    match (r.status, r.root_exception) {
        (JobStatus::Finished, _) => Ok(()),
        (s, Some(cause)) => bail!("Job {jid} {s}: {cause}"),
        (s, None) => bail!("Job {jid} {s}"),
    }
}
