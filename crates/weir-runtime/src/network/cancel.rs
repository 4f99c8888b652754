//! Cancellation of blocking network calls: [`CancelToken`].
//!
//! A token is a shared flag. Every blocking wait in the network stack waits in slices
//! of at most [`CANCEL_POLL_INTERVAL`] and checks the flag between slices, so a wait
//! returns [`NetworkError::Cancelled`](super::NetworkError::Cancelled) at most one
//! slice after [`CancelToken::cancel`]. Cancelling is permanent.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The longest a blocking wait sleeps before it re-checks its cancel token.
pub const CANCEL_POLL_INTERVAL: Duration = Duration::from_millis(20);

/// A cloneable cancellation flag shared by a task and the network calls it makes.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every holder of this token (and its clones).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// True once [`cancel`](Self::cancel) was called on this token or a clone.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancelling_a_clone_cancels_the_original() {
        let a = CancelToken::new();
        let b = a.clone();
        assert!(!a.is_cancelled());
        b.cancel();
        assert!(a.is_cancelled());
    }
}
