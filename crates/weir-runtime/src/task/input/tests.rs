//! The input processor with real in-process gates: unaligned checkpoints record exactly
//! the records a channel delivers between the snapshot and its barrier, and a restored
//! processor replays them before any network input.

use super::*;
use crate::network::{CancelToken, NetworkConfig, NetworkEnvironment, RecordWriter};
use crate::partitioner::ForwardPartitioner;
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
    let env = NetworkEnvironment::new(NetworkConfig {
        segment_size: 4096,
        total_buffers: 64,
        ..NetworkConfig::default()
    });
    let (wa, mut subs) = env.create_result_partition(1, CancelToken::new()).unwrap();
    let (wb, subs_b) = env.create_result_partition(1, CancelToken::new()).unwrap();
    subs.extend(subs_b);
    let gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let processor = StreamInputProcessor::new(RecordReader::new(gate), Box::new(Head(seen.clone())));
    (
        RecordWriter::new(wa, Box::new(ForwardPartitioner)),
        RecordWriter::new(wb, Box::new(ForwardPartitioner)),
        processor,
        seen,
    )
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
fn records_between_the_first_barrier_and_a_channels_own_barrier_become_its_channel_state_and_are_replayed_first() {
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
    emit(&mut b, [10, 11]);
    b.broadcast_event(unaligned_barrier(1)).unwrap();
    emit(&mut b, [12]);
    b.flush_all().unwrap();
    assert_eq!(next_outcome(&mut p), Some(BarrierOutcome::ChannelStateComplete(1)));
    let mut processed = seen.borrow().clone();
    processed.sort_unstable();
    assert_eq!(processed, vec![1, 2, 3, 10, 11], "recorded records are processed too");
    let state = p.take_channel_state(1);
    assert_eq!(state.len(), 1, "only channel 1 recorded: {state:?}");
    assert_eq!((state[0].gate, state[0].channel), (0, 1));

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
fn channel_state_of_a_gate_or_channel_the_task_lacks_is_refused_on_restore() {
    let (_a, _b, mut p, _) = two_channels();
    let bad = InputChannelState {
        gate: 0,
        channel: 5,
        frames: vec![],
    };
    let err = p.restore_channel_state(3, vec![bad]).unwrap_err().to_string();
    assert!(err.contains("checkpoint 3") && err.contains("channel 5"), "{err}");
}
