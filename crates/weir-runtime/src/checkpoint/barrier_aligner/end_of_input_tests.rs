//! Scenarios of checkpoints triggered at a task whose upstream tasks all finished.

use super::*;
use weir_core::{CheckpointOptions, CheckpointingMode};

fn barrier(id: u64) -> CheckpointBarrier {
    CheckpointBarrier {
        id,
        timestamp: id as i64,
        options: CheckpointOptions::checkpoint(CheckpointingMode::ExactlyOnce),
    }
}

fn outcomes(a: &mut BarrierAligner) -> Vec<BarrierOutcome> {
    std::iter::from_fn(|| a.take_outcome()).collect()
}

#[test]
fn a_trigger_at_end_of_input_waits_for_every_channel_to_end() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(2);
    assert_eq!(a.trigger_at_end_of_input(barrier(3)), EndOfInputTrigger::Accepted);
    assert!(!a.has_outcome());
    assert!(!a.is_blocked(0) && !a.is_blocked(1), "nothing is blocked while waiting");
    a.on_end_of_partition(1, t);
    assert!(!a.has_outcome(), "channel 0 may still deliver records");
    a.on_end_of_partition(0, t);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(barrier(3))]);
}

#[test]
fn a_trigger_after_every_channel_ended_is_aligned_at_once() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(1);
    a.on_end_of_partition(0, t);
    a.trigger_at_end_of_input(barrier(1));
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(barrier(1))]);
}

#[test]
fn a_checkpoint_in_progress_completes_before_the_trigger_at_end_of_input() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(2);
    a.on_barrier(0, barrier(4), t);
    assert_eq!(a.trigger_at_end_of_input(barrier(5)), EndOfInputTrigger::Accepted);
    a.on_end_of_partition(1, t);
    assert_eq!(
        outcomes(&mut a),
        vec![BarrierOutcome::Aligned(barrier(4))],
        "channel 0 delivered 4's barrier but has not ended"
    );
    a.on_end_of_partition(0, t);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(barrier(5))]);
}

#[test]
fn a_newer_trigger_aborts_the_waiting_one_and_stale_triggers_are_refused() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(1);
    a.trigger_at_end_of_input(barrier(2));
    a.trigger_at_end_of_input(barrier(3));
    assert_eq!(a.trigger_at_end_of_input(barrier(3)), EndOfInputTrigger::Refused);
    assert_eq!(a.trigger_at_end_of_input(barrier(1)), EndOfInputTrigger::Refused);
    a.on_end_of_partition(0, t);
    assert_eq!(
        outcomes(&mut a),
        vec![BarrierOutcome::Aborted(2), BarrierOutcome::Aligned(barrier(3))]
    );
}
