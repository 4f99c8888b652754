//! The blocking facade over object_store's async API.
//!
//! Object store calls come from plain threads (a task's upload thread, a restoring task)
//! and from inside the JobManager's tokio runtime (its I/O shell, the Dispatcher). Both
//! use [`run`]: the future is spawned on a dedicated runtime (`weir-fs` threads, started
//! on first use and never shut down) and the caller waits for its result on a channel.
//! Nothing calls `block_on` on a caller's runtime, so a caller on a runtime worker only
//! blocks its own thread, as a `std::fs` call would.
//!
//! Invariant: [`run`] is never entered from a `weir-fs` thread (that would wait for
//! itself); it refuses with [`FsError::Runtime`] instead.

use std::cell::Cell;
use std::future::Future;
use std::sync::OnceLock;

use crate::error::FsError;

thread_local! {
    static ON_BRIDGE_THREAD: Cell<bool> = const { Cell::new(false) };
}

static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();

fn runtime() -> Result<&'static tokio::runtime::Runtime, FsError> {
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("weir-fs")
                .on_thread_start(|| ON_BRIDGE_THREAD.with(|f| f.set(true)))
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| FsError::Runtime(format!("cannot start the object store runtime: {e}")))
}

/// Runs `operation` on the object store runtime and waits for its result.
pub(crate) fn run<T, F>(operation: F) -> Result<T, FsError>
where
    T: Send + 'static,
    F: Future<Output = Result<T, FsError>> + Send + 'static,
{
    if ON_BRIDGE_THREAD.with(Cell::get) {
        return Err(FsError::Runtime(
            "a blocking storage call was made from the object store runtime itself".to_string(),
        ));
    }
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime()?.spawn(async move {
        // The caller waits on the receiver until this send; it is gone only when its
        // thread ended, and then nobody wants the result.
        tx.send(operation.await).ok();
    });
    rx.recv()
        .map_err(|_| FsError::Runtime("an object store operation panicked".to_string()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_from_a_plain_thread_and_from_inside_another_tokio_runtime() {
        assert_eq!(run(async { Ok(41 + 1) }), Ok(42));
        let other = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let inside = other.block_on(async { run(async { Ok("from a runtime worker") }) });
        assert_eq!(inside, Ok("from a runtime worker"));
    }

    #[test]
    fn an_operation_that_panics_is_an_error_not_a_hang() {
        let err = run::<(), _>(async { panic!("boom") }).unwrap_err();
        assert_eq!(err, FsError::Runtime("an object store operation panicked".to_string()));
    }

    #[test]
    fn a_call_from_the_bridge_runtime_itself_is_refused_instead_of_deadlocking() {
        let nested = run(async { Ok(run(async { Ok(()) })) }).unwrap();
        assert!(matches!(nested, Err(FsError::Runtime(_))), "{nested:?}");
    }
}
