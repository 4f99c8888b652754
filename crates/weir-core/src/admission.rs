//! Bounding the open connections of a server: [`ConnectionLimit`] admits a connection
//! while fewer than its limit are open, and says when a refusal should be logged so
//! that a burst of refused connections gives one warning (with its count), not one
//! per connection.
//!
//! Invariants: `open` counts the admitted connections whose [`Admitted`] guard lives;
//! a warning is due at the first refusal and then at most once per
//! [`WARN_INTERVAL`], carrying the refusals since the previous warning.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The shortest time between two warnings about refused connections.
pub const WARN_INTERVAL: Duration = Duration::from_secs(10);

/// The open-connection bound of one server.
#[derive(Debug)]
pub struct ConnectionLimit {
    limit: usize,
    open: Arc<AtomicUsize>,
    refusals: Mutex<RefusalLog>,
}

/// Refusals not yet reported, and when the last report was made.
#[derive(Debug, Default)]
struct RefusalLog {
    unreported: u64,
    last_warning: Option<Instant>,
}

/// An admitted connection; dropping it frees its place.
#[derive(Debug)]
pub struct Admitted {
    open: Arc<AtomicUsize>,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A refused connection: `Some(n)` when a warning about the `n` refusals since the
/// previous one is due now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    /// Refusals to report now, if a warning is due.
    pub warn: Option<u64>,
}

impl ConnectionLimit {
    /// A bound of `limit` open connections (at least 1).
    pub fn new(limit: usize) -> Self {
        Self {
            limit: limit.max(1),
            open: Arc::new(AtomicUsize::new(0)),
            refusals: Mutex::new(RefusalLog::default()),
        }
    }

    /// The bound.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Connections admitted and still open.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// Admits a new connection, or refuses it when `limit` are open (`now` decides
    /// whether the refusal is to be logged).
    pub fn try_admit(&self, now: Instant) -> Result<Admitted, Refused> {
        let admitted = self.open.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < self.limit).then_some(n + 1)
        });
        match admitted {
            Ok(_) => Ok(Admitted {
                open: self.open.clone(),
            }),
            Err(_) => {
                let mut log = self.refusals.lock().unwrap_or_else(|p| p.into_inner());
                log.unreported += 1;
                let recent = matches!(log.last_warning, Some(at) if now.saturating_duration_since(at) < WARN_INTERVAL);
                if recent {
                    return Err(Refused { warn: None });
                }
                log.last_warning = Some(now);
                Err(Refused {
                    warn: Some(std::mem::take(&mut log.unreported)),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_beyond_the_limit_are_refused_until_one_closes() {
        let limit = ConnectionLimit::new(2);
        let now = Instant::now();
        let a = limit.try_admit(now).unwrap();
        let _b = limit.try_admit(now).unwrap();
        assert!(limit.try_admit(now).is_err());
        assert_eq!(limit.open(), 2);
        drop(a);
        assert_eq!(limit.open(), 1);
        assert!(limit.try_admit(now).is_ok());
    }

    #[test]
    fn a_burst_of_refusals_warns_once_then_reports_the_count_after_the_interval() {
        let limit = ConnectionLimit::new(1);
        let start = Instant::now();
        let _held = limit.try_admit(start).unwrap();
        assert_eq!(limit.try_admit(start).unwrap_err().warn, Some(1));
        for _ in 0..99 {
            assert_eq!(limit.try_admit(start + Duration::from_secs(1)).unwrap_err().warn, None);
        }
        let later = start + WARN_INTERVAL + Duration::from_secs(1);
        assert_eq!(limit.try_admit(later).unwrap_err().warn, Some(100));
    }
}
