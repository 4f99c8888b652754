//! Scenarios of the barrier aligner, one per rule, then an exhaustive check of the
//! module's invariants over every short event sequence in every alignment mode, and
//! in the mixed mode where some barriers of an aligned-with-timeout checkpoint come
//! unaligned (forwarded by an upstream task that switched).

use super::*;
use weir_core::{CheckpointOptions, CheckpointingMode, SnapshotType};

/// How the barriers of a run are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Aligned,
    AtLeastOnce,
    Unaligned,
    /// Aligned, switching to unaligned after [`TIMEOUT`].
    Timeout,
    /// [`Mode::Timeout`] barriers, and unaligned ones of the same checkpoints.
    Mixed,
}

const TIMEOUT: Duration = Duration::from_millis(100);

fn options(mode: Mode) -> CheckpointOptions {
    match mode {
        Mode::Aligned => CheckpointOptions::checkpoint(CheckpointingMode::ExactlyOnce),
        Mode::AtLeastOnce => CheckpointOptions::checkpoint(CheckpointingMode::AtLeastOnce),
        Mode::Unaligned => CheckpointOptions::for_config(CheckpointingMode::ExactlyOnce, true, Duration::ZERO),
        Mode::Timeout | Mode::Mixed => CheckpointOptions::for_config(CheckpointingMode::ExactlyOnce, true, TIMEOUT),
    }
}

fn barrier(id: u64, mode: Mode) -> CheckpointBarrier {
    CheckpointBarrier {
        id,
        timestamp: id as i64,
        options: options(mode),
    }
}

fn outcomes(a: &mut BarrierAligner) -> Vec<BarrierOutcome> {
    std::iter::from_fn(|| a.take_outcome()).collect()
}

fn unaligned(b: CheckpointBarrier) -> BarrierOutcome {
    BarrierOutcome::Unaligned(CheckpointBarrier {
        options: b.options.as_unaligned(),
        ..b
    })
}

#[test]
fn exactly_once_blocks_early_channels_until_the_last_barrier_arrives() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(3);
    let b = barrier(1, Mode::Aligned);
    assert_eq!(a.on_barrier(0, b, t), ChannelAction::Block);
    assert_eq!(a.on_barrier(2, b, t), ChannelAction::Block);
    assert!(a.is_blocked(0) && a.is_blocked(2) && !a.is_blocked(1));
    assert!(!a.has_outcome() && !a.is_recording(1));
    let before = a.releases();
    assert_eq!(a.on_barrier(1, b, t), ChannelAction::None);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b)]);
    assert!(a.releases() > before);
    assert!((0..3).all(|c| !a.is_blocked(c)));
}

#[test]
fn at_least_once_never_blocks_and_aligns_on_the_last_barrier() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(2);
    let b = barrier(4, Mode::AtLeastOnce);
    assert_eq!(a.on_barrier(1, b, t), ChannelAction::None);
    assert!(!a.is_blocked(1));
    a.on_barrier(0, b, t);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b)]);
}

#[test]
fn an_ended_channel_counts_as_aligned() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(2);
    let b = barrier(1, Mode::Aligned);
    a.on_barrier(0, b, t);
    a.on_end_of_partition(1, t);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b)]);
    let b2 = barrier(2, Mode::Aligned);
    assert_eq!(a.on_barrier(0, b2, t), ChannelAction::None);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b2)]);
}

#[test]
fn a_newer_barrier_aborts_the_alignment_in_progress_and_late_old_barriers_are_ignored() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(2);
    let (b1, b2) = (barrier(1, Mode::Aligned), barrier(2, Mode::Aligned));
    a.on_barrier(0, b1, t);
    a.on_barrier(1, b2, t);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aborted(1)]);
    assert!(a.is_blocked(1) && !a.is_blocked(0));
    assert_eq!(a.on_barrier(0, b1, t), ChannelAction::None);
    assert!(!a.has_outcome());
    a.on_barrier(0, b2, t);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b2)]);
    assert_eq!(
        a.on_barrier(1, b2, t),
        ChannelAction::None,
        "a repeated barrier of a finished checkpoint is ignored"
    );
    assert!(!a.has_outcome());
}

#[test]
fn a_single_channel_aligns_at_once_but_an_unaligned_barrier_persists_what_it_overtook() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(1);
    let b = barrier(9, Mode::Aligned);
    assert_eq!(a.on_barrier(0, b, t), ChannelAction::None);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b)]);
    let mut a = BarrierAligner::new(1);
    let b = barrier(9, Mode::Unaligned);
    assert_eq!(a.on_barrier(0, b, t), ChannelAction::PersistInFlight);
    assert_eq!(
        outcomes(&mut a),
        vec![BarrierOutcome::Unaligned(b), BarrierOutcome::ChannelStateComplete(9)],
        "the in-flight data it overtook is the checkpoint's channel state"
    );
}

#[test]
fn unaligned_snapshots_on_the_first_barrier_and_records_the_other_channels_until_their_barriers() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(3);
    let b = barrier(3, Mode::Unaligned);
    assert_eq!(a.on_barrier(1, b, t), ChannelAction::PersistInFlight);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Unaligned(b)]);
    assert_eq!(a.recording_checkpoint(), Some(3));
    assert!(a.is_recording(0) && !a.is_recording(1) && a.is_recording(2));
    assert!((0..3).all(|c| !a.is_blocked(c)));
    assert_eq!(a.on_barrier(0, b, t), ChannelAction::PersistInFlight);
    assert!(!a.is_recording(0) && !a.has_outcome());
    assert_eq!(
        a.on_barrier(0, b, t),
        ChannelAction::None,
        "a repeated barrier counts once"
    );
    a.on_end_of_partition(2, t + Duration::from_millis(7));
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::ChannelStateComplete(3)]);
    assert!((0..3).all(|c| !a.is_recording(c)));
    assert_eq!(a.recording_checkpoint(), None);
    assert_eq!(a.last_alignment_duration(), Duration::from_millis(7));
}

#[test]
fn a_newer_barrier_aborts_an_unaligned_checkpoint_whose_channel_state_is_incomplete() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(2);
    a.on_barrier(0, barrier(1, Mode::Unaligned), t);
    a.on_barrier(0, barrier(2, Mode::Unaligned), t);
    assert_eq!(
        outcomes(&mut a),
        vec![
            BarrierOutcome::Unaligned(barrier(1, Mode::Unaligned)),
            BarrierOutcome::Aborted(1),
            BarrierOutcome::Unaligned(barrier(2, Mode::Unaligned)),
        ]
    );
    assert_eq!(a.recording_checkpoint(), Some(2));
}

#[test]
fn an_aligned_checkpoint_switches_to_unaligned_once_alignment_outlasts_its_timeout() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(3);
    let b = barrier(5, Mode::Timeout);
    assert_eq!(a.on_barrier(0, b, t), ChannelAction::Block);
    assert_eq!(a.alignment_deadline(), Some(t + TIMEOUT));
    assert!(!a.check_timeout(t + TIMEOUT - Duration::from_millis(1)));
    let before = a.releases();
    assert!(a.check_timeout(t + TIMEOUT));
    assert_eq!(outcomes(&mut a), vec![unaligned(b)]);
    assert!(a.releases() > before, "the blocked channel is released");
    assert!(!a.is_blocked(0) && !a.is_recording(0));
    assert!(a.is_recording(1) && a.is_recording(2));
    assert_eq!(a.alignment_deadline(), None);
    assert_eq!(a.on_barrier(1, b, t + TIMEOUT), ChannelAction::None);
    a.on_barrier(2, b, t + TIMEOUT);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::ChannelStateComplete(5)]);
}

#[test]
fn an_aligned_checkpoint_that_aligns_within_its_timeout_stays_aligned() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(2);
    let b = barrier(5, Mode::Timeout);
    a.on_barrier(0, b, t);
    a.on_barrier(1, b, t + TIMEOUT / 2);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::Aligned(b)]);
    assert!(!a.check_timeout(t + TIMEOUT * 2));
}

#[test]
fn an_unaligned_barrier_switches_an_aligned_checkpoint_at_once_and_releases_the_blocked_channels() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(3);
    let aligned = barrier(5, Mode::Timeout);
    let switched = CheckpointBarrier {
        options: aligned.options.as_unaligned(),
        ..aligned
    };
    assert_eq!(a.on_barrier(0, aligned, t), ChannelAction::Block);
    let before = a.releases();
    assert_eq!(a.on_barrier(1, switched, t), ChannelAction::PersistInFlight);
    assert_eq!(outcomes(&mut a), vec![unaligned(switched)]);
    assert!(a.releases() > before && !a.is_blocked(0));
    assert!(a.is_recording(2) && !a.is_recording(0) && !a.is_recording(1));
    // The last one may be unaligned too: it still persists what it overtook.
    assert_eq!(a.on_barrier(2, switched, t), ChannelAction::PersistInFlight);
    assert_eq!(outcomes(&mut a), vec![BarrierOutcome::ChannelStateComplete(5)]);
}

#[test]
fn savepoints_stay_aligned_when_unaligned_checkpoints_are_enabled() {
    let t = Instant::now();
    let mut a = BarrierAligner::new(2);
    let sp = CheckpointBarrier {
        options: CheckpointOptions::savepoint(SnapshotType::Savepoint, CheckpointingMode::ExactlyOnce),
        ..barrier(1, Mode::Unaligned)
    };
    assert_eq!(a.on_barrier(0, sp, t), ChannelAction::Block);
    assert!(!a.check_timeout(t + TIMEOUT * 100) && !a.has_outcome());
}

/// One event of the exhaustive test.
#[derive(Clone, Copy, Debug)]
enum Ev {
    Barrier(usize, u64),
    /// An unaligned barrier (a priority event) of the mode's checkpoint `id`.
    UnalignedBarrier(usize, u64),
    End(usize),
    /// Time passes beyond the aligned-checkpoint timeout and the task checks it.
    Tick,
}

/// What the test knows of one checkpoint's outcomes so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Unaligned,
    Done,
}

/// Runs `seq` in `mode` and checks every invariant of the module doc after each event.
fn check_sequence(mode: Mode, seq: &[Ev]) {
    const N: usize = 3;
    let t0 = Instant::now();
    let mut now = t0;
    let mut a = BarrierAligner::new(N);
    let mut delivered: [Option<u64>; N] = [None; N];
    let mut ended = [false; N];
    let mut seen: std::collections::BTreeMap<u64, Seen> = Default::default();
    let mut last_started = 0u64;
    // Checkpoints an unaligned barrier counted for, and the newest one a barrier counted for.
    let mut overtaken: std::collections::BTreeSet<u64> = Default::default();
    let mut newest = 0u64;
    for ev in seq {
        let mut persisted = None;
        match *ev {
            Ev::Barrier(c, id) | Ev::UnalignedBarrier(c, id) => {
                let mut b = barrier(id, mode);
                if matches!(ev, Ev::UnalignedBarrier(..)) {
                    b.options = b.options.as_unaligned();
                }
                // Counts: a live channel's first barrier of the checkpoint in progress, or
                // of a newer one.
                let counts = !ended[c]
                    && if a.current() == Some(id) {
                        delivered[c].is_none_or(|d| d < id)
                    } else {
                        id > newest
                    };
                if counts {
                    newest = newest.max(id);
                }
                let action = a.on_barrier(c, b, now);
                if !ended[c] {
                    delivered[c] = Some(delivered[c].map_or(id, |d| d.max(id)));
                }
                if action == ChannelAction::Block {
                    assert!(matches!(mode, Mode::Aligned | Mode::Timeout | Mode::Mixed), "{seq:?}");
                    assert!(!b.options.is_unaligned(), "{seq:?}");
                }
                let persist = action == ChannelAction::PersistInFlight;
                assert_eq!(
                    persist,
                    counts && b.options.is_unaligned(),
                    "PersistInFlight exactly for unaligned barriers that count: {seq:?}"
                );
                if persist {
                    overtaken.insert(id);
                    persisted = Some(id);
                }
            }
            Ev::End(c) => {
                ended[c] = true;
                a.on_end_of_partition(c, now);
            }
            Ev::Tick => {
                now += TIMEOUT;
                a.check_timeout(now);
            }
        }
        while let Some(o) = a.take_outcome() {
            let all_delivered = |id: u64| (0..N).all(|c| ended[c] || delivered[c].is_some_and(|d| d >= id));
            match o {
                BarrierOutcome::Aligned(b) => {
                    assert!(b.id > last_started && !seen.contains_key(&b.id), "{seq:?}");
                    assert!(
                        !overtaken.contains(&b.id),
                        "aligned after an overtaking barrier: {seq:?}"
                    );
                    assert!(all_delivered(b.id), "aligned too early: {seq:?}");
                    last_started = b.id;
                    seen.insert(b.id, Seen::Done);
                }
                BarrierOutcome::Unaligned(b) => {
                    assert!(matches!(mode, Mode::Unaligned | Mode::Timeout | Mode::Mixed), "{seq:?}");
                    assert!(b.options.is_unaligned(), "forwarded barriers are unaligned: {seq:?}");
                    assert!(b.id > last_started && !seen.contains_key(&b.id), "{seq:?}");
                    last_started = b.id;
                    seen.insert(b.id, Seen::Unaligned);
                }
                BarrierOutcome::ChannelStateComplete(id) => {
                    assert_eq!(seen.get(&id), Some(&Seen::Unaligned), "{seq:?}");
                    assert_eq!(id, last_started, "{seq:?}");
                    assert!(all_delivered(id), "channel state complete too early: {seq:?}");
                    seen.insert(id, Seen::Done);
                }
                BarrierOutcome::Aborted(id) => {
                    assert!(id >= last_started, "{seq:?}");
                    assert!(matches!(seen.get(&id), None | Some(Seen::Unaligned)), "{seq:?}");
                    last_started = id;
                    seen.insert(id, Seen::Done);
                }
            }
        }
        if let Some(id) = persisted {
            assert!(
                seen.contains_key(&id),
                "in-flight data of a checkpoint not taken unaligned: {seq:?}"
            );
        }
        let current = a.current();
        let recording = a.recording_checkpoint();
        if let Some(r) = recording {
            assert_eq!(Some(r), current, "{seq:?}");
        }
        for c in 0..N {
            if a.is_blocked(c) {
                assert!(matches!(mode, Mode::Aligned | Mode::Timeout | Mode::Mixed), "{seq:?}");
                assert!(recording.is_none(), "blocked while unaligned: {seq:?}");
                assert_eq!(delivered[c], current, "{seq:?}");
            }
            let should_record = recording.is_some_and(|id| !ended[c] && delivered[c].is_none_or(|d| d < id));
            assert_eq!(a.is_recording(c), should_record, "channel {c}: {seq:?}");
        }
    }
}

/// Every sequence of up to 6 events over 3 channels (barriers 1..=3, ends, and timeout
/// ticks where a timeout applies), in each mode, and of up to 5 events in the mixed
/// mode (aligned and unaligned barriers 1..=2, ends, ticks), checked against the
/// invariants of the module doc.
#[test]
fn every_event_sequence_over_three_channels_keeps_the_invariants_in_every_mode() {
    for mode in [
        Mode::Aligned,
        Mode::AtLeastOnce,
        Mode::Unaligned,
        Mode::Timeout,
        Mode::Mixed,
    ] {
        let (ids, depth) = if mode == Mode::Mixed { (2, 5) } else { (3, 6) };
        let mut events = Vec::new();
        for c in 0..3 {
            for id in 1..=ids {
                events.push(Ev::Barrier(c, id));
                if mode == Mode::Mixed {
                    events.push(Ev::UnalignedBarrier(c, id));
                }
            }
            events.push(Ev::End(c));
        }
        if matches!(mode, Mode::Timeout | Mode::Mixed) {
            events.push(Ev::Tick);
        }
        let mut stack: Vec<Vec<Ev>> = vec![vec![]];
        let mut explored = 0usize;
        while let Some(seq) = stack.pop() {
            explored += 1;
            check_sequence(mode, &seq);
            if seq.len() < depth {
                for ev in &events {
                    let mut next = seq.clone();
                    next.push(*ev);
                    stack.push(next);
                }
            }
        }
        assert!(explored > 1_000_000, "{mode:?}: {explored}");
    }
}
