//! Rate-limited reporting of refused and closed connections: the first one is
//! reported at once, later ones at most once per [`WARN_INTERVAL`] with their counts, so
//! that a flood of connections gives a few log lines, not one per connection.

use std::time::{Duration, Instant};

/// The shortest time between two warnings about refused connections.
pub const WARN_INTERVAL: Duration = Duration::from_secs(10);

/// What happened since the previous warning.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Warning {
    /// New connections refused, and handshakes refused because the server was full.
    pub refused: u64,
    /// Pending connections closed: evicted to make room, or past their deadline.
    pub evicted: u64,
}

/// Counts not yet reported, and when the last report was made.
#[derive(Debug, Default)]
pub(super) struct RefusalLog {
    unreported: Warning,
    last_warning: Option<Instant>,
}

impl RefusalLog {
    /// Counts `refused` refusals and `evicted` closings at `now`; the warning to log,
    /// if one is due.
    pub(super) fn note(&mut self, refused: u64, evicted: u64, now: Instant) -> Option<Warning> {
        if refused == 0 && evicted == 0 {
            return None;
        }
        self.unreported.refused += refused;
        self.unreported.evicted += evicted;
        let recent = matches!(self.last_warning, Some(at) if now.saturating_duration_since(at) < WARN_INTERVAL);
        if recent {
            return None;
        }
        self.last_warning = Some(now);
        Some(std::mem::take(&mut self.unreported))
    }
}
