//! Helpers shared by this crate's unit tests: waiting on a condition instead of
//! sleeping for a guessed time.
//!
//! Invariant: no helper here makes a test's outcome depend on how fast the machine is;
//! the deadline only turns a hang into a failure that names what never happened.

use std::time::{Duration, Instant};

/// How long [`wait_until`] polls before it declares the condition never reached: a
/// guard against hangs, far beyond any wait a passing test does.
pub(crate) const HANG_GUARD: Duration = Duration::from_secs(60);

/// Polls `condition` until it holds; panics naming `what` if it never does.
pub(crate) fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < HANG_GUARD, "never reached: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}
