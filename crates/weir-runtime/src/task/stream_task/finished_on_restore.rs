//! A subtask restored as finished (Flink's tasks "deployed as finished"): it had
//! finished when the checkpoint it is restored from was taken, so everything it would
//! produce is already accounted for downstream. It runs none of its operators and
//! restores no state: it announces the end of its output (the MAX watermark, so that
//! consumers that still read other inputs are not held back, then EndOfPartition) and
//! reads its inputs to their ends, dropping whatever arrives (only the ends of its
//! upstream subtasks, which were restored as finished too).

use crate::error::TaskError;
use crate::network::{CancelToken, InputGate};
use crate::task::chain::NetworkOutput;
use std::time::Duration;
use weir_core::{Event, Watermark};

/// How long one wait for input lasts before cancellation is checked again.
const POLL: Duration = Duration::from_millis(50);

/// Ends `outputs` at once and drains `inputs` until each has ended.
pub(super) fn run_finished_on_restore(
    outputs: Vec<NetworkOutput>,
    inputs: Vec<InputGate>,
    cancel: &CancelToken,
) -> Result<(), TaskError> {
    for mut output in outputs {
        output.writer.broadcast_event(Event::Watermark(Watermark::MAX))?;
        output.writer.broadcast_event(Event::EndOfPartition)?;
    }
    for mut gate in inputs {
        while !gate.is_finished() {
            if cancel.is_cancelled() {
                return Err(TaskError::Cancelled);
            }
            gate.poll_next(Some(POLL))?;
        }
    }
    Ok(())
}
