//! The keyed state backends of one TaskManager: its own (`state.backend.*` of its
//! configuration) and those jobs ask for (a job's own `state.backend.*` settings over
//! the TaskManager's, Flink's per-job state backend). Each distinct set of job settings
//! opens its backend once, so the tasks of a job (and of jobs asking for the same)
//! share one block cache.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use weir_state::KeyedStateStoreFactory;

/// A keyed state store factory, or none for the heap backend.
pub type StateBackend = Option<Arc<dyn KeyedStateStoreFactory>>;

/// Opens the backend that a job's `state.backend.*` settings, applied over the
/// TaskManager's configuration, describe; the error says which setting is wrong.
pub type StateBackendLoader = Arc<dyn Fn(&BTreeMap<String, String>) -> Result<StateBackend, String> + Send + Sync>;

/// The TaskManager's backend and those opened for jobs.
pub struct StateBackends {
    own: StateBackend,
    loader: Option<StateBackendLoader>,
    for_jobs: Mutex<BTreeMap<BTreeMap<String, String>, StateBackend>>,
}

impl std::fmt::Debug for StateBackends {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateBackends")
            .field("own", &self.own)
            .field("per_job", &self.loader.is_some())
            .finish_non_exhaustive()
    }
}

impl StateBackends {
    /// The TaskManager's own backend `own`; jobs with settings of their own get theirs
    /// from `loader` (none: every job runs on `own`).
    pub fn new(own: StateBackend, loader: Option<StateBackendLoader>) -> Self {
        Self {
            own,
            loader,
            for_jobs: Mutex::new(BTreeMap::new()),
        }
    }

    /// The TaskManager's own backend.
    pub fn own(&self) -> StateBackend {
        self.own.clone()
    }

    /// Drops the local state copies of job `job_id` in every backend.
    pub fn release_local_copies(&self, job_id: &str) {
        let prefix = format!("{job_id}/");
        if let Some(own) = &self.own {
            own.release_local_copies(&prefix);
        }
        let opened = self.for_jobs.lock().unwrap_or_else(|p| p.into_inner());
        for backend in opened.values().flatten() {
            backend.release_local_copies(&prefix);
        }
    }

    /// The backend of a job whose own `state.backend.*` settings are `settings`.
    pub fn for_job(&self, settings: &BTreeMap<String, String>) -> Result<StateBackend, String> {
        let Some(loader) = self.loader.as_ref().filter(|_| !settings.is_empty()) else {
            return Ok(self.own.clone());
        };
        let mut opened = self.for_jobs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(backend) = opened.get(settings) {
            return Ok(backend.clone());
        }
        let backend = loader(settings)?;
        opened.insert(settings.clone(), backend.clone());
        Ok(backend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_job_without_settings_runs_on_the_taskmanagers_backend_and_each_distinct_set_opens_once() {
        let loads = Arc::new(AtomicUsize::new(0));
        let counted = loads.clone();
        let loader: StateBackendLoader = Arc::new(move |settings| {
            counted.fetch_add(1, Ordering::Relaxed);
            match settings.get("state.backend.type").map(String::as_str) {
                Some("hashmap") => Ok(None),
                other => Err(format!("bad state.backend.type {other:?}")),
            }
        });
        let backends = StateBackends::new(None, Some(loader));
        assert!(backends.for_job(&BTreeMap::new()).unwrap().is_none());
        let heap: BTreeMap<String, String> = [("state.backend.type".to_string(), "hashmap".to_string())].into();
        assert!(backends.for_job(&heap).unwrap().is_none());
        assert!(backends.for_job(&heap).unwrap().is_none());
        assert_eq!(loads.load(Ordering::Relaxed), 1, "the same settings open once");
        let bad: BTreeMap<String, String> = [("state.backend.type".to_string(), "x".to_string())].into();
        assert!(backends.for_job(&bad).unwrap_err().contains("state.backend.type"));
    }
}
