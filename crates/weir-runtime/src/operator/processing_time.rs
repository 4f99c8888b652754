//! The processing-time service of one task: the task's clock and the wake-ups its
//! operators asked for.
//!
//! Operators keep their own processing-time timers (per key and namespace, or the
//! periodic watermark emission); what they register here is only *when the task must
//! call them*. The task loop waits for input at most until the earliest wake-up, and
//! once it is due calls `on_processing_time(now)` down the chain, on the task thread,
//! between batches. A spurious call is harmless: every operator checks its own
//! deadlines against `now`.
//!
//! Invariants: wake-ups are kept in order and deduplicated; taking the due ones removes
//! exactly those `<= now`. The clock is the wall clock in epoch milliseconds (Flink's
//! `System.currentTimeMillis()`), or a manual clock in tests.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Where the current processing time comes from.
#[derive(Debug, Clone)]
enum Clock {
    /// The wall clock.
    System,
    /// A clock that only moves when a test sets it.
    Manual(Rc<Cell<i64>>),
}

#[derive(Debug)]
struct Inner {
    clock: Clock,
    wakeups: BTreeSet<i64>,
}

/// A task's clock and pending wake-ups; cheap to clone (all clones share them).
#[derive(Debug, Clone)]
pub struct ProcessingTimeService {
    inner: Rc<RefCell<Inner>>,
}

/// The handle that moves a manual clock (tests).
#[derive(Debug, Clone)]
pub struct ManualClock(Rc<Cell<i64>>);

impl ManualClock {
    /// Sets the current processing time.
    pub fn set(&self, now: i64) {
        self.0.set(now);
    }

    /// The current processing time.
    pub fn get(&self) -> i64 {
        self.0.get()
    }
}

impl Default for ProcessingTimeService {
    fn default() -> Self {
        Self::system()
    }
}

/// The wall clock in epoch milliseconds.
pub fn wall_clock_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl ProcessingTimeService {
    fn with_clock(clock: Clock) -> Self {
        Self {
            inner: Rc::new(RefCell::new(Inner {
                clock,
                wakeups: BTreeSet::new(),
            })),
        }
    }

    /// A service on the wall clock.
    pub fn system() -> Self {
        Self::with_clock(Clock::System)
    }

    /// A service on a manual clock starting at `start`, and the handle that moves it.
    pub fn manual(start: i64) -> (Self, ManualClock) {
        let cell = Rc::new(Cell::new(start));
        (Self::with_clock(Clock::Manual(cell.clone())), ManualClock(cell))
    }

    /// The current processing time in epoch milliseconds.
    pub fn current_processing_time(&self) -> i64 {
        match &self.inner.borrow().clock {
            Clock::System => wall_clock_millis(),
            Clock::Manual(c) => c.get(),
        }
    }

    /// Asks the task to call `on_processing_time` once the clock reaches `at`.
    pub fn register_wakeup(&self, at: i64) {
        self.inner.borrow_mut().wakeups.insert(at);
    }

    /// The earliest pending wake-up.
    pub fn next_wakeup(&self) -> Option<i64> {
        self.inner.borrow().wakeups.first().copied()
    }

    /// Removes every wake-up `<= now`; true if there was one.
    pub fn take_due(&self, now: i64) -> bool {
        let mut inner = self.inner.borrow_mut();
        let mut any = false;
        while let Some(&first) = inner.wakeups.first() {
            if first > now {
                break;
            }
            inner.wakeups.pop_first();
            any = true;
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_wakeups_are_taken_in_order_and_later_ones_stay() {
        let (svc, clock) = ProcessingTimeService::manual(100);
        svc.register_wakeup(150);
        svc.register_wakeup(120);
        svc.register_wakeup(120);
        assert_eq!(svc.next_wakeup(), Some(120));
        assert!(!svc.take_due(clock.get()));
        clock.set(130);
        assert_eq!(svc.current_processing_time(), 130);
        assert!(svc.take_due(130));
        assert_eq!(svc.next_wakeup(), Some(150));
        assert!(svc.take_due(1_000));
        assert_eq!(svc.next_wakeup(), None);
    }

    #[test]
    fn the_system_clock_reads_epoch_milliseconds() {
        // 2020-01-01 in epoch ms: any sane wall clock is past it.
        assert!(ProcessingTimeService::system().current_processing_time() > 1_577_836_800_000);
    }
}
