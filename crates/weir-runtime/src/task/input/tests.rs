//! The input processor with real in-process gates: unaligned checkpoints record exactly
//! the records a channel delivers between the snapshot and its barrier, and a restored
//! processor replays them before any network input.

use super::*;
use crate::network::{CancelToken, NetworkConfig, NetworkEnvironment, RecordWriter};
use crate::partitioner::ForwardPartitioner;
use crate::test_support::wait_until;
use weir_core::{CheckpointBarrier, CheckpointOptions, CheckpointingMode, StreamRecord, Watermark};

/// Collects the records that reach the chain head.
struct Head(Rc<RefCell<Vec<u32>>>);

impl Output<u32> for Head {
    fn collect(&mut self, record: StreamRecord<u32>) -> Result<(), TaskError> {
        self.0.borrow_mut().push(record.value);
        Ok(())
    }
    fn emit_watermark(&mut self, _watermark: Watermark) -> Result<(), TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        Ok(())
    }
}

/// Two producers (one per channel), the processor and what reached its head.
type Fixture = (
    RecordWriter<u32>,
    RecordWriter<u32>,
    StreamInputProcessor<u32>,
    Rc<RefCell<Vec<u32>>>,
);

/// Two producers, each writing one channel of the processor's gate.
fn two_channels() -> Fixture {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let (a, b, processor) = two_channels_into(Box::new(Head(seen.clone())));
    (a, b, processor, seen)
}

/// Two producers, each writing one channel of a gate read into `head`.
fn two_channels_into(head: Box<dyn Output<u32>>) -> (RecordWriter<u32>, RecordWriter<u32>, StreamInputProcessor<u32>) {
    let env = NetworkEnvironment::new(NetworkConfig {
        segment_size: 4096,
        total_buffers: 64,
        ..NetworkConfig::default()
    });
    let (wa, mut subs) = env.create_result_partition(1, CancelToken::new()).unwrap();
    let (wb, subs_b) = env.create_result_partition(1, CancelToken::new()).unwrap();
    subs.extend(subs_b);
    let gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    let processor = StreamInputProcessor::new(RecordReader::new(gate), head);
    (
        RecordWriter::new(wa, Box::new(ForwardPartitioner)),
        RecordWriter::new(wb, Box::new(ForwardPartitioner)),
        processor,
    )
}

/// Logs what reaches the head: `p<v>` a prefetch hint, `c<v>` a record, `w<t>` a
/// watermark.
struct Log(Rc<RefCell<Vec<String>>>);

impl Output<u32> for Log {
    fn collect(&mut self, record: StreamRecord<u32>) -> Result<(), TaskError> {
        self.0.borrow_mut().push(format!("c{}", record.value));
        Ok(())
    }
    fn emit_watermark(&mut self, watermark: Watermark) -> Result<(), TaskError> {
        self.0.borrow_mut().push(format!("w{}", watermark.0));
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        Ok(())
    }
    fn prefetch(&mut self, record: &StreamRecord<u32>) {
        self.0.borrow_mut().push(format!("p{}", record.value));
    }
}

#[test]
fn the_head_hears_of_each_record_before_the_one_ahead_of_it_is_collected_and_records_stay_ahead_of_watermarks() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let (mut a, mut b, mut p) = two_channels_into(Box::new(Log(log.clone())));
    b.broadcast_event(Event::Watermark(Watermark(5))).unwrap();
    b.flush_all().unwrap();
    while p.process(Some(Duration::from_millis(20))).unwrap() == InputStatus::MoreAvailable {}
    assert!(log.borrow().is_empty(), "one channel's watermark holds nothing back");
    emit(&mut a, [1, 2, 3]);
    a.broadcast_event(Event::Watermark(Watermark(7))).unwrap();
    emit(&mut a, [4]);
    a.flush_all().unwrap();
    while p.process(Some(Duration::from_millis(20))).unwrap() == InputStatus::MoreAvailable {}
    assert_eq!(
        *log.borrow(),
        ["p1", "p2", "c1", "p3", "c2", "c3", "w5", "p4", "c4"],
        "a record read last in a batch is collected before the batch ends"
    );
}

fn unaligned_barrier(id: u64) -> Event {
    Event::CheckpointBarrier(CheckpointBarrier {
        id,
        timestamp: 0,
        options: CheckpointOptions::for_config(CheckpointingMode::ExactlyOnce, true, Duration::ZERO),
    })
}

fn emit(w: &mut RecordWriter<u32>, values: impl IntoIterator<Item = u32>) {
    for v in values {
        w.emit(&StreamRecord::new(v)).unwrap();
    }
}

/// Processes until the aligner has an outcome (or nothing more arrives) and takes it.
fn next_outcome(p: &mut StreamInputProcessor<u32>) -> Option<BarrierOutcome> {
    for _ in 0..100 {
        p.process(Some(Duration::from_millis(20))).unwrap();
        if let Some(o) = p.take_barrier_outcome() {
            return Some(o);
        }
    }
    None
}

#[test]
fn a_barrier_queued_in_band_behind_a_recording_channels_records_is_promoted_and_the_records_become_its_channel_state() {
    let (mut a, mut b, mut p, seen) = two_channels();
    emit(&mut a, [1, 2]);
    a.broadcast_event(unaligned_barrier(1)).unwrap();
    emit(&mut a, [3]);
    a.flush_all().unwrap();
    let Some(BarrierOutcome::Unaligned(barrier)) = next_outcome(&mut p) else {
        panic!("the first barrier snapshots at once");
    };
    assert_eq!(barrier.id, 1);
    assert_eq!(
        *seen.borrow(),
        vec![1, 2],
        "the snapshot comes before any record after the barrier"
    );
    // Channel 1's barrier comes in band (as from a producer without priority events):
    // the recording channel promotes it over the records queued ahead of it.
    emit(&mut b, [10, 11]);
    b.broadcast_event(unaligned_barrier(1)).unwrap();
    emit(&mut b, [12]);
    b.flush_all().unwrap();
    assert_eq!(next_outcome(&mut p), Some(BarrierOutcome::ChannelStateComplete(1)));
    assert_eq!(*seen.borrow(), vec![1, 2], "the promoted barrier came before 10 and 11");
    let state = p.take_channel_state(1);
    assert_eq!(state.len(), 1, "only channel 1 has in-flight data: {state:?}");
    assert_eq!((state[0].gate, state[0].channel), (0, 1));
    while p.process(Some(Duration::from_millis(20))).unwrap() == InputStatus::MoreAvailable {}
    let mut processed = seen.borrow().clone();
    processed.sort_unstable();
    assert_eq!(
        processed,
        vec![1, 2, 3, 10, 11, 12],
        "what it overtook is processed after it"
    );

    let (mut a2, _b2, mut restored, seen2) = two_channels();
    restored.restore_channel_state(1, state).unwrap();
    emit(&mut a2, [20]);
    a2.flush_all().unwrap();
    restored.process(Some(Duration::from_millis(50))).unwrap();
    assert_eq!(
        *seen2.borrow(),
        vec![10, 11, 20],
        "in-flight data first, then the network"
    );
}

#[test]
fn channel_state_of_a_gate_or_channel_the_task_lacks_or_of_another_gate_size_is_refused_on_restore() {
    let (_a, _b, mut p, _) = two_channels();
    let bad = InputChannelState {
        gate: 0,
        channel: 5,
        channels: 2,
        data: vec![],
    };
    let err = p.restore_channel_state(3, vec![bad]).unwrap_err().to_string();
    assert!(err.contains("checkpoint 3") && err.contains("channel 5"), "{err}");
    // Recorded when the gate had three channels (its producer had another parallelism).
    let other_size = InputChannelState {
        gate: 0,
        channel: 1,
        channels: 3,
        data: vec![],
    };
    let err = p.restore_channel_state(3, vec![other_size]).unwrap_err().to_string();
    assert!(err.contains("(of 3)") && err.contains("2 channels"), "{err}");
}

#[test]
fn priority_barriers_overtake_queued_records_which_become_channel_state_and_a_restore_processes_everything_exactly_once(
) {
    let (mut a, mut b, mut p, seen) = two_channels();
    emit(&mut a, [1, 2]);
    emit(&mut b, [10]);
    a.flush_all().unwrap();
    b.flush_all().unwrap();
    // Channel 0's barrier overtakes records 1 and 2: its producer keeps them.
    let output_a = a.broadcast_priority_event(unaligned_barrier(1)).unwrap();
    let Some(BarrierOutcome::Unaligned(barrier)) = next_outcome(&mut p) else {
        panic!("the first barrier snapshots at once");
    };
    assert_eq!(barrier.id, 1);
    assert!(seen.borrow().is_empty(), "the barrier came before every queued record");
    // Channel 1 delivers 10 and 11 after the snapshot (recorded), then its barrier
    // overtakes 12 and 13.
    emit(&mut b, [11]);
    b.flush_all().unwrap();
    p.process(Some(Duration::from_millis(50))).unwrap();
    assert!(p.take_barrier_outcome().is_none());
    emit(&mut b, [12, 13]);
    let output_b = b.broadcast_priority_event(unaligned_barrier(1)).unwrap();
    assert_eq!(next_outcome(&mut p), Some(BarrierOutcome::ChannelStateComplete(1)));
    let state = p.take_channel_state(1);
    assert_eq!(
        state.len(),
        1,
        "channel 0 processed nothing after the snapshot: {state:?}"
    );
    assert_eq!((state[0].channel, state[0].channels), (1, 2));
    // Everything overtaken is still processed once, after the barriers.
    emit(&mut a, [3]);
    a.broadcast_event(Event::EndOfPartition).unwrap();
    b.broadcast_event(Event::EndOfPartition).unwrap();
    while p.process(Some(Duration::from_millis(50))).unwrap() != InputStatus::EndOfInput {}
    let mut processed = seen.borrow().clone();
    processed.sort_unstable();
    assert_eq!(processed, vec![1, 2, 3, 10, 11, 12, 13]);

    // Restored: the input channel state first, then each producer's output channel
    // state, then new records: the records after the snapshot, each once.
    let (mut a2, mut b2, mut restored, seen2) = two_channels();
    restored.restore_channel_state(1, state).unwrap();
    a2.partition_writer_mut().add_recovered_data(0, &output_a[0]).unwrap();
    b2.partition_writer_mut().add_recovered_data(0, &output_b[0]).unwrap();
    emit(&mut a2, [3]);
    a2.broadcast_event(Event::EndOfPartition).unwrap();
    b2.broadcast_event(Event::EndOfPartition).unwrap();
    while restored.process(Some(Duration::from_millis(50))).unwrap() != InputStatus::EndOfInput {}
    let got = seen2.borrow().clone();
    assert_eq!(&got[..2], &[10, 11], "in-flight input data first");
    let mut all = got.clone();
    all.sort_unstable();
    assert_eq!(all, vec![1, 2, 3, 10, 11, 12, 13]);
    let of_a: Vec<u32> = got.iter().copied().filter(|v| *v < 10).collect();
    assert_eq!(of_a, vec![1, 2, 3], "a channel's order is kept");
}

#[test]
fn a_priority_event_that_is_no_unaligned_barrier_is_a_corrupt_stream() {
    let (mut a, _b, mut p, _) = two_channels();
    a.broadcast_priority_event(Event::Watermark(Watermark(5))).unwrap();
    let err = p.process(Some(Duration::from_millis(200))).unwrap_err().to_string();
    assert!(err.contains("not an unaligned checkpoint barrier"), "{err}");
}

#[test]
fn after_the_alignment_timeout_an_aligned_barrier_queued_behind_records_overtakes_them() {
    let (mut a, mut b, mut p, seen) = two_channels();
    let barrier = Event::CheckpointBarrier(CheckpointBarrier {
        id: 2,
        timestamp: 0,
        options: CheckpointOptions::for_config(CheckpointingMode::ExactlyOnce, true, Duration::from_millis(20)),
    });
    emit(&mut a, [1]);
    a.broadcast_event(barrier).unwrap();
    emit(&mut a, [2]);
    a.flush_all().unwrap();
    assert_eq!(
        p.process(Some(Duration::from_millis(50))).unwrap(),
        InputStatus::MoreAvailable
    );
    assert!(p.take_barrier_outcome().is_none(), "channel 0 is blocked, aligning");
    // The alignment began inside that call: once 20 ms passed since, it has timed out.
    let aligning_since = Instant::now();
    wait_until("the aligned checkpoint timeout has passed", || {
        aligning_since.elapsed() > Duration::from_millis(20)
    });
    // Channel 1's barrier is queued in band behind 10 and 11 when the timeout strikes.
    emit(&mut b, [10, 11]);
    b.broadcast_event(barrier).unwrap();
    emit(&mut b, [12]);
    b.flush_all().unwrap();
    let Some(BarrierOutcome::Unaligned(switched)) = next_outcome(&mut p) else {
        panic!("the alignment timed out");
    };
    assert!(switched.options.is_unaligned());
    assert_eq!(next_outcome(&mut p), Some(BarrierOutcome::ChannelStateComplete(2)));
    assert_eq!(*seen.borrow(), vec![1], "the barrier overtook 10 and 11");
    let state = p.take_channel_state(2);
    assert_eq!(state.len(), 1, "{state:?}");
    assert_eq!(state[0].channel, 1);
    let mut expected = Vec::new();
    for v in [10u32, 11] {
        weir_core::codec::encode_frame(&mut expected, &StreamRecord::new(v)).unwrap();
    }
    assert_eq!(state[0].data, expected);
    while p.process(Some(Duration::from_millis(20))).unwrap() == InputStatus::MoreAvailable {}
    let mut processed = seen.borrow().clone();
    processed.sort_unstable();
    assert_eq!(processed, vec![1, 2, 10, 11, 12]);
}
