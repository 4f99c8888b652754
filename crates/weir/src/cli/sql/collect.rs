//! The client side of a SELECT's results (Flink's `CollectResultFetcher`): rows are
//! pulled from the collect sink's coordinator on the JobMaster with
//! `POST /jobs/:jid/coordinators/:operatorid` (`{"version", "offset"}`), the same way
//! for a cluster at `-m` and for the embedded MiniCluster. The offset is the number of
//! rows received, so a request sent again after an error neither loses nor repeats a
//! row. While no rows come the job's status is checked: a failed or cancelled job ends
//! the fetch with its cause. Ctrl-C during the fetch cancels the job.

use crate::cli::client;
use anyhow::{anyhow, bail, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use weir_rest::{CoordinationRequest, CoordinationResponse};

/// A decoded row: the changelog kind and the fields (`None` for NULL).
pub type CollectedRow = (String, Vec<Option<String>>);

/// The longest pause between two requests that brought no rows.
const MAX_PAUSE: Duration = Duration::from_millis(100);

/// What one fetch brought.
pub enum Fetched {
    /// Rows, in the order the coordinator took them (possibly none yet).
    Rows(Vec<CollectedRow>),
    /// Every row was received and the job finished.
    End,
}

/// Reads one SELECT's results.
pub struct ResultFetcher {
    address: String,
    jid: String,
    operator: String,
    version: String,
    offset: u64,
    pause: Duration,
}

impl ResultFetcher {
    /// The results of collect sink `operator` of job `jid` at the REST endpoint `address`.
    pub fn new(address: String, jid: String, operator: String) -> Self {
        Self {
            address,
            jid,
            operator,
            version: String::new(),
            offset: 0,
            pause: Duration::from_millis(1),
        }
    }

    /// The job's id.
    pub fn job_id(&self) -> &str {
        &self.jid
    }

    fn request(&self) -> Result<CoordinationResponse> {
        let body = serde_json::to_string(&CoordinationRequest {
            version: self.version.clone(),
            offset: self.offset,
        })?;
        let path = format!("/jobs/{}/coordinators/{}", self.jid, self.operator);
        let text = client::post(&self.address, &path, &body)?;
        serde_json::from_str(&text).map_err(|e| anyhow!("unexpected answer of the result coordinator: {e}: {text}"))
    }

    /// The job's status, and its newest exception when it failed.
    fn job_outcome(&self) -> Result<Option<String>> {
        let status: serde_json::Value =
            serde_json::from_str(&client::get(&self.address, &format!("/jobs/{}/status", self.jid))?)?;
        match status["status"].as_str().unwrap_or("") {
            state @ ("FAILED" | "CANCELED") => {
                let exc = client::get(&self.address, &format!("/jobs/{}/exceptions", self.jid)).unwrap_or_default();
                let e: serde_json::Value = serde_json::from_str(&exc).unwrap_or_default();
                let cause = e["exceptionHistory"]["entries"][0]["stacktrace"].as_str().unwrap_or("");
                Ok(Some(format!("Job {} {state}: {cause}", self.jid)))
            }
            _ => Ok(None),
        }
    }

    /// The next rows, waiting (with growing pauses) while none are there; an error for
    /// a failed or cancelled job or results that cannot go on.
    pub fn fetch_next(&mut self) -> Result<Fetched> {
        let response = self.request()?;
        if let Some(failure) = response.failure {
            bail!("{failure}");
        }
        if !response.version.is_empty() {
            self.version = response.version;
        }
        let rows: Vec<CollectedRow> = response
            .results
            .iter()
            .map(|line| {
                weir_sql::exec::collect::decode(line).ok_or_else(|| anyhow!("a result row is not a JSON array: {line}"))
            })
            .collect::<Result<_>>()?;
        self.offset += rows.len() as u64;
        if !rows.is_empty() {
            self.pause = Duration::from_millis(1);
            return Ok(Fetched::Rows(rows));
        }
        if response.end_of_results {
            return Ok(Fetched::End);
        }
        if let Some(failure) = self.job_outcome()? {
            bail!("{failure}");
        }
        std::thread::sleep(self.pause);
        self.pause = (self.pause * 2).min(MAX_PAUSE);
        Ok(Fetched::Rows(Vec::new()))
    }

    /// Cancels the job (a Ctrl-C or an error while fetching).
    pub fn cancel(&self) -> Result<()> {
        client::patch(&self.address, &format!("/jobs/{}?mode=cancel", self.jid)).map(|_| ())
    }
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_signal: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Ctrl-C turned into a flag while a query's results are fetched; the previous
/// handler comes back when dropped.
pub struct InterruptGuard {
    previous: libc::sighandler_t,
}

impl InterruptGuard {
    /// Catches SIGINT from now on.
    pub fn install() -> Self {
        INTERRUPTED.store(false, Ordering::SeqCst);
        let handler: extern "C" fn(libc::c_int) = on_interrupt;
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        let previous = unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) };
        Self { previous }
    }

    /// True once Ctrl-C was pressed.
    pub fn interrupted(&self) -> bool {
        INTERRUPTED.load(Ordering::SeqCst)
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        // SAFETY: puts back the handler that was installed before.
        unsafe {
            libc::signal(libc::SIGINT, self.previous);
        }
    }
}

/// Hands every batch of rows to `on_rows` until the results end. Ctrl-C cancels the
/// job; so does an error while fetching (the job may still run, e.g. restarting).
pub fn drain(fetcher: &mut ResultFetcher, mut on_rows: impl FnMut(Vec<CollectedRow>) -> Result<()>) -> Result<()> {
    let guard = InterruptGuard::install();
    loop {
        if guard.interrupted() {
            fetcher.cancel()?;
            bail!("Query cancelled: job {} is being cancelled.", fetcher.job_id());
        }
        match fetcher.fetch_next() {
            Ok(Fetched::Rows(rows)) if rows.is_empty() => {}
            Ok(Fetched::Rows(rows)) => on_rows(rows)?,
            Ok(Fetched::End) => return Ok(()),
            Err(e) => {
                if let Err(c) = fetcher.cancel() {
                    // A job that already ended cannot be cancelled: nothing is lost.
                    tracing::debug!("cancelling job {} after a failed fetch: {c}", fetcher.job_id());
                }
                return Err(e);
            }
        }
    }
}
