//! Checkpoint discards still to be carried out, so that a process ending right after a
//! job (`weir local`, the SQL client's embedded cluster) first deletes the checkpoints
//! the retention policy does not keep, as Flink's MiniCluster waits for its
//! `CheckpointsCleaner` before it closes.
//!
//! A discard is counted when the JobMaster decides it (under the JobManager's state
//! lock, before the job's terminal status can be seen) and uncounted once the storage
//! layer has deleted it (or failed to, which is logged).

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Discards decided but not finished in this process.
static PENDING: Mutex<usize> = Mutex::new(0);
/// Notified when a discard finishes.
static FINISHED: Condvar = Condvar::new();

/// A discard was decided.
pub(crate) fn started() {
    *PENDING.lock().unwrap_or_else(|p| p.into_inner()) += 1;
}

/// A discard finished (or failed).
pub(crate) fn finished() {
    let mut pending = PENDING.lock().unwrap_or_else(|p| p.into_inner());
    *pending = pending.saturating_sub(1);
    FINISHED.notify_all();
}

/// Waits until every discard decided so far in this process has finished, at most
/// `max`; true when none is left.
pub fn wait_for_discards(max: Duration) -> bool {
    let deadline = Instant::now() + max;
    let mut pending = PENDING.lock().unwrap_or_else(|p| p.into_inner());
    while *pending > 0 {
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        pending = FINISHED
            .wait_timeout(pending, deadline - now)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiter_returns_once_the_started_discards_have_finished() {
        started();
        let worker = std::thread::spawn(finished);
        assert!(wait_for_discards(Duration::from_secs(60)));
        worker.join().unwrap();
        assert!(wait_for_discards(Duration::ZERO));
    }
}
