//! Waiting for a gate's partition requests to be answered: a request that found no
//! partition (its producer is not registered yet) is re-sent with exponential backoff
//! until the deadline (Flink's `taskmanager.network.request-backoff.*`).

use super::input_channel::{RemoteGate, RemoteInputChannel, RequestState};
use crate::network::cancel::CancelToken;
use crate::network::error::NetworkError;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// First and longest wait before re-sending a request that found no partition.
const INITIAL_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_millis(500);
/// How long after the partition request deadline an unanswered request is given up.
const ANSWER_GRACE: Duration = Duration::from_secs(10);

/// Waits until the server of every one of `remotes` (the remote channels of `gate`)
/// accepted its request.
/// A request that found no partition is re-sent with exponential backoff; one that
/// finds none at or after `deadline` fails with [`NetworkError::PartitionNotFound`]
/// (so a zero timeout still asks once). A request the server does not answer within
/// [`ANSWER_GRACE`] after the deadline fails the same way.
pub(crate) fn await_requests<G: RemoteGate + ?Sized>(
    gate: &G,
    remotes: &[&Arc<RemoteInputChannel>],
    deadline: Instant,
    timeout: Duration,
    cancel: &CancelToken,
) -> Result<(), NetworkError> {
    // Per channel: when to re-send, and the next backoff.
    let mut retry: Vec<(Option<Instant>, Duration)> = vec![(None, INITIAL_BACKOFF); remotes.len()];
    loop {
        let version = gate.setup_version();
        let now = Instant::now();
        let mut wake = deadline.max(now) + ANSWER_GRACE;
        let mut pending = false;
        for (rc, (at, backoff)) in remotes.iter().zip(retry.iter_mut()) {
            match rc.request_state() {
                RequestState::Accepted => {}
                RequestState::Failed(e) => return Err(e),
                RequestState::Sent => {
                    pending = true;
                    if now >= deadline + ANSWER_GRACE {
                        tracing::warn!(address = rc.address(), partition = %rc.partition(), "partition request not answered");
                        return Err(rc.partition_not_found(timeout));
                    }
                }
                RequestState::NotFound => {
                    pending = true;
                    if now >= deadline {
                        tracing::warn!(address = rc.address(), partition = %rc.partition(), "partition not found");
                        return Err(rc.partition_not_found(timeout));
                    }
                    match *at {
                        None => {
                            // The last attempt goes out at the deadline.
                            let when = (now + *backoff).min(deadline);
                            *at = Some(when);
                            *backoff = (*backoff * 2).min(MAX_BACKOFF);
                            wake = wake.min(when);
                        }
                        Some(when) if now >= when => {
                            *at = None;
                            rc.resend();
                        }
                        Some(when) => wake = wake.min(when),
                    }
                }
            }
        }
        if !pending {
            return Ok(());
        }
        if cancel.is_cancelled() {
            return Err(NetworkError::Cancelled);
        }
        gate.wait_setup(version, wake.saturating_duration_since(now));
    }
}
