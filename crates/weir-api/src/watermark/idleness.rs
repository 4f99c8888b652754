//! Idleness detection (Flink's `WatermarksWithIdleness`).
//!
//! Idleness is only checked in `on_periodic_emit`: the first periodic emit that sees
//! no event since the last one starts a timer; once more than the timeout has passed
//! without events, the output is marked idle, once, and no watermark is emitted while
//! idle. Any event makes the input active again (the next watermark the wrapped
//! generator emits re-activates the output). Detection therefore takes the timeout
//! plus up to a few emit intervals.

use super::generator::{WatermarkGenerator, WatermarkOutput};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// A monotonic clock in milliseconds.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// Monotonic milliseconds since the first call in this process.
pub fn monotonic_millis() -> i64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    i64::try_from(start.elapsed().as_millis()).unwrap_or(i64::MAX)
}

/// Counts activity between periodic checks and tells when the input has been idle
/// for longer than the timeout (Flink's `IdlenessTimer`).
pub struct IdlenessTimer {
    counter: u64,
    last_counter: u64,
    start_of_inactivity: Option<i64>,
    max_idle_ms: i64,
    clock: Clock,
}

impl IdlenessTimer {
    /// A timer that reports idleness after `timeout` without activity, on `clock`.
    pub fn new(timeout: Duration, clock: Clock) -> Self {
        Self {
            counter: 0,
            last_counter: 0,
            start_of_inactivity: None,
            max_idle_ms: super::generator::millis(timeout),
            clock,
        }
    }

    /// An event arrived.
    pub fn activity(&mut self) {
        self.counter = self.counter.wrapping_add(1);
    }

    /// Called on every periodic emit: true once more than the timeout has passed since
    /// the first check that saw no activity.
    pub fn check_if_idle(&mut self) -> bool {
        if self.counter != self.last_counter {
            self.last_counter = self.counter;
            self.start_of_inactivity = None;
            return false;
        }
        let now = (self.clock)();
        match self.start_of_inactivity {
            None => {
                self.start_of_inactivity = Some(now);
                false
            }
            Some(start) => now.saturating_sub(start) > self.max_idle_ms,
        }
    }
}

/// Wraps a generator so that its output is marked idle after a period without events.
pub struct WithIdleness<T> {
    inner: Box<dyn WatermarkGenerator<T>>,
    timer: IdlenessTimer,
    idle_now: bool,
}

impl<T> WithIdleness<T> {
    /// `inner`, marked idle after `timeout` without events on `clock`.
    pub fn new(inner: Box<dyn WatermarkGenerator<T>>, timeout: Duration, clock: Clock) -> Self {
        Self {
            inner,
            timer: IdlenessTimer::new(timeout, clock),
            idle_now: false,
        }
    }
}

impl<T> WatermarkGenerator<T> for WithIdleness<T> {
    fn on_event(&mut self, event: &T, timestamp: i64, output: &mut dyn WatermarkOutput) {
        self.inner.on_event(event, timestamp, output);
        self.timer.activity();
        self.idle_now = false;
    }

    fn on_periodic_emit(&mut self, output: &mut dyn WatermarkOutput) {
        if self.timer.check_if_idle() {
            if !self.idle_now {
                output.mark_idle();
                self.idle_now = true;
            }
        } else {
            self.inner.on_periodic_emit(output);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watermark::generator::BoundedOutOfOrderness;
    use std::sync::atomic::{AtomicI64, Ordering};
    use weir_core::Watermark;

    #[derive(Default, Debug, PartialEq)]
    struct Log(Vec<String>);

    impl WatermarkOutput for Log {
        fn emit_watermark(&mut self, w: Watermark) {
            self.0.push(format!("w{}", w.0));
        }
        fn mark_idle(&mut self) {
            self.0.push("idle".into());
        }
        fn mark_active(&mut self) {
            self.0.push("active".into());
        }
    }

    fn manual() -> (Arc<AtomicI64>, Clock) {
        let t = Arc::new(AtomicI64::new(0));
        let c = t.clone();
        (t, Arc::new(move || c.load(Ordering::SeqCst)))
    }

    #[test]
    fn input_is_marked_idle_once_after_the_timeout_without_events_and_emits_nothing_while_idle() {
        let (time, clock) = manual();
        let mut g = WithIdleness::new(
            Box::new(BoundedOutOfOrderness::new(Duration::ZERO)),
            Duration::from_millis(100),
            clock,
        );
        let mut out = Log::default();
        g.on_event(&(), 10, &mut out);
        g.on_periodic_emit(&mut out); // activity since last check: emit
        time.store(50, Ordering::SeqCst);
        g.on_periodic_emit(&mut out); // first check without activity: starts the timer, emits
        time.store(150, Ordering::SeqCst);
        g.on_periodic_emit(&mut out); // 100 ms: not yet more than the timeout
        time.store(151, Ordering::SeqCst);
        g.on_periodic_emit(&mut out); // idle
        time.store(500, Ordering::SeqCst);
        g.on_periodic_emit(&mut out); // still idle: nothing
        assert_eq!(out.0, vec!["w9", "w9", "w9", "idle"]);
    }

    #[test]
    fn an_event_resets_idleness() {
        let (time, clock) = manual();
        let mut g = WithIdleness::new(
            Box::new(BoundedOutOfOrderness::new(Duration::ZERO)),
            Duration::from_millis(10),
            clock,
        );
        let mut out = Log::default();
        g.on_periodic_emit(&mut out);
        time.store(100, Ordering::SeqCst);
        g.on_periodic_emit(&mut out);
        assert_eq!(out.0.last().map(String::as_str), Some("idle"));
        g.on_event(&(), 7, &mut out);
        g.on_periodic_emit(&mut out);
        assert_eq!(out.0.last().map(String::as_str), Some("w6"));
    }
}
