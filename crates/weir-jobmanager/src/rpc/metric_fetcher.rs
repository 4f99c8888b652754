//! Flink's MetricFetcher: before REST serves task metrics older than
//! `metrics.fetcher.update-interval`, the JobManager asks every registered TaskManager
//! for its tasks' live counters (`QueryMetrics`) instead of waiting for their next
//! heartbeat, so a new job's metrics show at its first read.
//!
//! [`FetchSchedule`] decides (no I/O); [`MetricFetcher`] asks the TaskManagers.
//! Invariants: at most one fetch runs at a time, and a read that waited for another
//! read's fetch does not fetch again when that one made its scope fresh; a fetch waits
//! at most [`FETCH_TIMEOUT`] for each TaskManager, and one that does not answer keeps
//! the values it last reported. Departure from Flink: Flink's REST handlers trigger
//! the fetch and serve the values already held; Weir's wait for the fetch (bounded),
//! so a read is never older than the interval while the TaskManagers answer.

use crate::jobmanager::JobManager;
use crate::rpc::actions::{registered, Clients};
use crate::rpc::service::accept_live_task_metrics;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinSet;
use weir_rest::MetricsScope;
use weir_rpc::QueryMetricsRequest;

/// The longest a fetch waits for one TaskManager's answer.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(2);

/// When each scope's metrics were last fetched, and whether a read needs a fetch.
#[derive(Debug)]
pub struct FetchSchedule {
    interval: Duration,
    /// When the fetch that last refreshed each scope started. A fetch refreshes every
    /// job, so it also stamps [`MetricsScope::AllJobs`]; a job read for the first time
    /// has no stamp of its own and is fetched once.
    fetched_at: HashMap<MetricsScope, Instant>,
}

impl FetchSchedule {
    /// Metrics older than `interval` are fetched again.
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            fetched_at: HashMap::new(),
        }
    }

    /// Whether a read of `scope` at `now` must fetch first.
    pub fn is_due(&self, scope: MetricsScope, now: Instant) -> bool {
        self.fetched_at
            .get(&scope)
            .is_none_or(|at| now.saturating_duration_since(*at) >= self.interval)
    }

    /// A fetch for `scope` that started at `started` is done. Stamps older than the
    /// interval are dropped, so the schedule holds at most the scopes read within one
    /// interval.
    pub fn fetched(&mut self, scope: MetricsScope, started: Instant) {
        let interval = self.interval;
        self.fetched_at
            .retain(|_, at| started.saturating_duration_since(*at) < interval);
        self.fetched_at.insert(scope, started);
        self.fetched_at.insert(MetricsScope::AllJobs, started);
    }

    /// Scopes with a stamp (for tests and diagnostics).
    pub fn stamped(&self) -> usize {
        self.fetched_at.len()
    }
}

/// Fetches task metrics from the TaskManagers when REST reads stale ones.
pub struct MetricFetcher {
    jm: Arc<JobManager>,
    clients: Clients,
    schedule: Mutex<FetchSchedule>,
    /// Held while a fetch runs.
    fetching: tokio::sync::Mutex<()>,
}

impl MetricFetcher {
    /// A fetcher over `jm`'s TaskManagers, reached through `clients`, with `jm`'s
    /// `metrics.fetcher.update-interval`.
    pub fn new(jm: Arc<JobManager>, clients: Clients) -> Self {
        let interval = jm.settings.metric_fetcher_update_interval;
        Self {
            jm,
            clients,
            schedule: Mutex::new(FetchSchedule::new(interval)),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    fn is_due(&self, scope: MetricsScope) -> bool {
        let schedule = self.schedule.lock().unwrap_or_else(|p| p.into_inner());
        schedule.is_due(scope, Instant::now())
    }

    /// Makes the metrics of `scope` at most one interval old: fetches them from every
    /// registered TaskManager unless a fetch within the interval did.
    pub async fn update(&self, scope: MetricsScope) {
        if !self.is_due(scope) {
            return;
        }
        let _one_at_a_time = self.fetching.lock().await;
        if !self.is_due(scope) {
            return;
        }
        let started = Instant::now();
        self.fetch_all().await;
        self.schedule
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .fetched(scope, started);
    }

    async fn fetch_all(&self) {
        let mut asked = JoinSet::new();
        for (id, address) in registered(&self.jm) {
            let Some(mut client) = self.clients.get(&address) else {
                tracing::debug!("metric fetcher: no client for TaskManager {id} at {address}");
                continue;
            };
            asked.spawn(async move {
                let answer = tokio::time::timeout(FETCH_TIMEOUT, client.query_metrics(QueryMetricsRequest {})).await;
                (id, answer)
            });
        }
        while let Some(joined) = asked.join_next().await {
            let (id, answer) = match joined {
                Ok(answered) => answered,
                Err(e) => {
                    tracing::warn!("metric fetcher: a query stopped: {e}");
                    continue;
                }
            };
            match answer {
                Ok(Ok(response)) => {
                    let mut problems = Vec::new();
                    accept_live_task_metrics(&self.jm, response.into_inner().task_metrics, &mut problems);
                    if !problems.is_empty() {
                        let reasons: Vec<String> = problems.iter().take(8).map(ToString::to_string).collect();
                        tracing::warn!(
                            "metrics of TaskManager {id}: {} implausible values not believed: {}",
                            problems.len(),
                            reasons.join("; ")
                        );
                    }
                }
                Ok(Err(status)) => {
                    tracing::debug!("metric fetcher: TaskManager {id} did not answer: {}", status.message());
                }
                Err(_) => {
                    tracing::debug!("metric fetcher: TaskManager {id} did not answer within {FETCH_TIMEOUT:?}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_core::ids::JobId;

    const SECOND: Duration = Duration::from_secs(1);

    fn job(n: u8) -> MetricsScope {
        MetricsScope::Job(JobId::parse(&format!("{n:032x}")).unwrap())
    }

    #[test]
    fn a_job_read_for_the_first_time_is_fetched_and_then_served_from_the_fetch_for_one_interval() {
        let t0 = Instant::now();
        let mut s = FetchSchedule::new(10 * SECOND);
        assert!(s.is_due(job(1), t0));
        s.fetched(job(1), t0);
        assert!(!s.is_due(job(1), t0 + 9 * SECOND));
        assert!(s.is_due(job(1), t0 + 10 * SECOND));
    }

    #[test]
    fn a_fetch_for_one_job_refreshes_all_jobs_but_a_job_never_read_is_fetched_once() {
        let t0 = Instant::now();
        let mut s = FetchSchedule::new(10 * SECOND);
        s.fetched(job(1), t0);
        assert!(!s.is_due(MetricsScope::AllJobs, t0 + SECOND));
        assert!(s.is_due(job(2), t0 + SECOND));
        s.fetched(MetricsScope::AllJobs, t0 + 2 * SECOND);
        assert!(!s.is_due(job(1), t0 + 3 * SECOND));
    }

    #[test]
    fn stamps_older_than_the_interval_are_forgotten() {
        let t0 = Instant::now();
        let mut s = FetchSchedule::new(10 * SECOND);
        for n in 0..100 {
            s.fetched(job(n), t0);
        }
        assert_eq!(s.stamped(), 101);
        s.fetched(job(200), t0 + 11 * SECOND);
        assert_eq!(s.stamped(), 2);
        assert!(s.is_due(job(1), t0 + 11 * SECOND));
    }

    #[test]
    fn a_zero_interval_fetches_at_every_read() {
        let t0 = Instant::now();
        let mut s = FetchSchedule::new(Duration::ZERO);
        s.fetched(job(1), t0);
        assert!(s.is_due(job(1), t0));
    }
}
