//! End-to-end scenarios of the network stack: writer → subpartition → gate → reader,
//! on threads where the scenario needs them.

use super::*;
use crate::partitioner::{BroadcastPartitioner, ChannelSelector, CustomPartitioner, ForwardPartitioner};
use crate::test_support::wait_until;
use proptest::prelude::*;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};
use weir_core::{Event, StreamRecord, Watermark};

fn env(segment_size: usize, total_buffers: usize) -> Arc<NetworkEnvironment> {
    NetworkEnvironment::new(NetworkConfig {
        segment_size,
        total_buffers,
        ..NetworkConfig::default()
    })
}

/// Routes `(channel, seq)` records by their first field.
fn by_channel() -> Box<dyn ChannelSelector<(u32, u64)>> {
    Box::new(CustomPartitioner::new(Arc::new(|r: &(u32, u64), _n| r.0 as usize)))
}

fn data_buffer(w: &mut ResultPartitionWriter, byte: u8) -> Buffer {
    let mut b = w.request_buffer().unwrap();
    b.append(&[byte]);
    b
}

#[test]
fn frames_larger_than_a_buffer_span_into_the_next_buffers() {
    let env = env(64, 64);
    let (w, subs) = env.create_result_partition(1, CancelToken::new()).unwrap();
    let gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    let mut writer = RecordWriter::new(w, Box::new(ForwardPartitioner));
    let mut reader = RecordReader::<String>::new(gate);
    let records: Vec<_> = (0..20)
        .map(|i| StreamRecord::with_timestamp("x".repeat(i * 17), i as i64))
        .collect();
    let consumer = thread::spawn(move || {
        let mut got = Vec::new();
        loop {
            match reader.next(None).unwrap() {
                ReaderEvent::Record(r) => got.push(r),
                ReaderEvent::Event { .. } => {}
                ReaderEvent::Finished => return got,
                ReaderEvent::PriorityEvent { event, .. } => panic!("unexpected priority event {event:?}"),
                ReaderEvent::Timeout => unreachable!("no timeout given"),
            }
        }
    });
    for r in &records {
        writer.emit(r).unwrap();
    }
    writer.broadcast_event(Event::EndOfPartition).unwrap();
    assert_eq!(writer.records_out(), 20);
    assert!(writer.bytes_out() > 64 * 20, "most frames are larger than a buffer");
    assert_eq!(consumer.join().unwrap(), records);
}

#[test]
fn events_keep_their_order_relative_to_records_per_channel() {
    let env = env(128, 256);
    let mut writers = Vec::new();
    let mut handles = Vec::new();
    for _ in 0..3 {
        let (w, mut subs) = env.create_result_partition(1, CancelToken::new()).unwrap();
        writers.push(RecordWriter::<(u32, u64)>::new(w, Box::new(ForwardPartitioner)));
        handles.push(subs.remove(0));
    }
    let gate = env.create_input_gate(handles, CancelToken::new()).unwrap();
    // Everything is written before reading: small enough to fit the pools.
    for (p, w) in writers.iter_mut().enumerate() {
        for seq in 0..30u64 {
            w.emit(&StreamRecord::new((p as u32, seq))).unwrap();
            if seq % 10 == 9 {
                w.broadcast_event(Event::Watermark(Watermark(seq as i64))).unwrap();
            }
        }
        w.broadcast_event(Event::EndOfPartition).unwrap();
    }
    drop(writers);
    let mut reader = RecordReader::<(u32, u64)>::new(gate);
    let mut per_channel: Vec<Vec<String>> = vec![Vec::new(); 3];
    loop {
        match reader.next(Some(Duration::from_secs(5))).unwrap() {
            ReaderEvent::Record(r) => {
                let ch = reader.current_channel().unwrap();
                assert_eq!(ch, r.value.0 as usize, "record reported on its channel");
                per_channel[ch].push(format!("r{}", r.value.1));
            }
            ReaderEvent::Event {
                channel,
                event: Event::Watermark(w),
            } => per_channel[channel].push(format!("w{}", w.0)),
            ReaderEvent::Event {
                channel,
                event: Event::EndOfPartition,
            } => per_channel[channel].push("end".into()),
            ReaderEvent::Event { event, .. } => panic!("unexpected event {event:?}"),
            ReaderEvent::PriorityEvent { event, .. } => panic!("unexpected priority event {event:?}"),
            ReaderEvent::Timeout => panic!("timed out"),
            ReaderEvent::Finished => break,
        }
    }
    let mut expected = Vec::new();
    for seq in 0..30 {
        expected.push(format!("r{seq}"));
        if seq % 10 == 9 {
            expected.push(format!("w{seq}"));
        }
    }
    expected.push("end".into());
    for ch in per_channel {
        assert_eq!(ch, expected);
    }
    assert!(reader.is_finished());
}

#[test]
fn end_of_partition_from_all_channels_finishes_the_gate() {
    let env = env(256, 64);
    let (mut w, subs) = env.create_result_partition(2, CancelToken::new()).unwrap();
    let mut gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    assert_eq!(gate.num_channels(), 2);
    w.add_event(0, Event::EndOfPartition).unwrap();
    let (ch, e) = gate.poll_next(Some(Duration::from_secs(1))).unwrap().unwrap();
    assert!(matches!((ch, e), (0, BufferOrEvent::Event(Event::EndOfPartition))));
    assert!(!gate.is_finished());
    assert!(gate.is_channel_finished(0));
    assert!(
        gate.poll_next(Some(Duration::from_millis(10))).unwrap().is_none(),
        "channel 1 has nothing yet"
    );
    w.add_event(1, Event::EndOfPartition).unwrap();
    assert!(gate.poll_next(None).unwrap().is_some());
    assert!(gate.is_finished());
    assert!(
        gate.poll_next(None).unwrap().is_none(),
        "a finished gate returns instead of waiting without a timeout"
    );
    assert!(matches!(
        w.add_event(0, Event::Watermark(Watermark(1))),
        Err(NetworkError::Protocol(_))
    ));
}

#[test]
fn stalled_channel_does_not_block_other_channels_of_the_gate() {
    let config = NetworkConfig {
        segment_size: 64,
        total_buffers: 200,
        max_buffers_per_channel: 30,
        ..NetworkConfig::default()
    };
    let (exclusive, floating) = (config.buffers_per_channel, config.floating_buffers_per_gate);
    let env = NetworkEnvironment::new(config);
    let (mut slow, mut s) = env.create_result_partition(1, CancelToken::new()).unwrap();
    let (mut fast, f) = env.create_result_partition(1, CancelToken::new()).unwrap();
    s.extend(f);
    let mut gate = env.create_input_gate(s, CancelToken::new()).unwrap();
    // The slow channel has far more queued than it has credit for.
    for _ in 0..slow.pool_size() {
        let b = data_buffer(&mut slow, 1);
        slow.add_buffer(0, b).unwrap();
    }
    // The consumer keeps every buffer of channel 0 (it is stalled) and drops those of
    // channel 1 at once; channel 1's producer keeps going.
    let mut held = Vec::new();
    let mut fast_received = 0;
    for round in 0..500 {
        let b = data_buffer(&mut fast, 2);
        fast.add_buffer(0, b).unwrap();
        while let Some((ch, item)) = gate.poll_next(Some(Duration::ZERO)).unwrap() {
            match (ch, item) {
                (0, BufferOrEvent::Buffer(b)) => held.push(b),
                (1, BufferOrEvent::Buffer(_)) => fast_received += 1,
                other => panic!("unexpected {other:?} in round {round}"),
            }
        }
    }
    assert_eq!(fast_received, 500, "the healthy channel delivered everything");
    assert!(
        held.len() <= exclusive + floating,
        "channel 0 received only against credit: {}",
        held.len()
    );
    assert!(held.len() > exclusive, "channel 0 got floating credit for its backlog");
    assert!(slow.backlog(0) > 0);
    // Releasing the stalled buffers returns their credit: channel 0 flows again and the
    // floating buffers end up back in the gate.
    let backlog = slow.backlog(0);
    held.clear();
    let mut slow_received = 0;
    while let Some((ch, item)) = gate.poll_next(Some(Duration::ZERO)).unwrap() {
        assert_eq!(ch, 0);
        assert!(item.is_buffer());
        slow_received += 1;
    }
    assert_eq!(slow_received, backlog);
    assert_eq!(slow.backlog(0), 0);
    assert_eq!(gate.floating_buffers_available(), floating);
}

#[test]
fn fast_producer_blocks_on_slow_consumer_and_buffers_stay_bounded() {
    let env = env(256, 64);
    let (w, subs) = env.create_result_partition(2, CancelToken::new()).unwrap();
    let pool_size = w.pool_size();
    assert_eq!(pool_size, 20, "2 subpartitions x max 10 buffers per channel");
    let gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    let producer_parked = w.parked_probe();
    let producer = thread::spawn(move || {
        let mut writer = RecordWriter::new(w, by_channel());
        for seq in 0..20_000u64 {
            writer.emit(&StreamRecord::new(((seq % 2) as u32, seq))).unwrap();
        }
        writer.broadcast_event(Event::EndOfPartition).unwrap();
        (
            writer.backpressured_time(),
            writer.partition_writer().peak_buffers_in_use(),
        )
    });
    let mut reader = RecordReader::<(u32, u64)>::new(gate);
    let mut next = [0u64, 1];
    let mut count = 0u64;
    loop {
        match reader.next(None).unwrap() {
            ReaderEvent::Record(r) => {
                let ch = r.value.0 as usize;
                assert_eq!(r.value.1, next[ch]);
                next[ch] += 2;
                count += 1;
                if count % 5_000 == 1 {
                    // The consumer stalls until the producer has filled its pool and waits.
                    wait_until("the producer is backpressured", &producer_parked);
                }
            }
            ReaderEvent::Finished => break,
            _ => {}
        }
    }
    let (backpressured, partition_peak) = producer.join().unwrap();
    assert_eq!(count, 20_000);
    assert!(backpressured > Duration::ZERO, "the producer was backpressured");
    assert!(
        partition_peak <= pool_size,
        "{partition_peak} buffers in use, pool of {pool_size}"
    );
    drop(reader);
    assert_eq!(env.buffers_in_use(), 0);
    assert_eq!(
        env.available_buffers(),
        env.total_buffers(),
        "every segment is back in the global pool"
    );
}

/// Runs `call` on a thread, waits until `parked` says it blocks, cancels `cancel` and
/// checks that the call returns [`NetworkError::Cancelled`].
fn assert_cancel_wakes(
    name: &str,
    cancel: CancelToken,
    parked: impl Fn() -> bool,
    call: impl FnOnce() -> NetworkError + Send + 'static,
) {
    let worker = thread::spawn(call);
    wait_until(&format!("{name} blocks"), || parked() || worker.is_finished());
    assert!(
        !worker.is_finished(),
        "{name}: the call returned before it was cancelled"
    );
    cancel.cancel();
    assert_eq!(worker.join().unwrap(), NetworkError::Cancelled, "{name}");
}

#[test]
fn cancel_wakes_a_blocked_producer() {
    let env = env(64, 16);
    let cancel = CancelToken::new();
    let (mut w, _subs) = env.create_result_partition(1, cancel.clone()).unwrap();
    let parked = w.parked_probe();
    assert_cancel_wakes("request_buffer", cancel, parked, move || {
        let mut held = Vec::new();
        loop {
            match w.request_buffer() {
                Ok(b) => held.push(b),
                Err(e) => return e,
            }
        }
    });
}

#[test]
fn cancel_wakes_a_blocked_producer_waiting_for_event_space() {
    let env = env(64, 16);
    let cancel = CancelToken::new();
    let (mut w, _subs) = env.create_result_partition(1, cancel.clone()).unwrap();
    let parked = w.parked_probe();
    assert_cancel_wakes("add_event", cancel, parked, move || loop {
        if let Err(e) = w.add_event(0, Event::Watermark(Watermark(0))) {
            return e;
        }
    });
}

#[test]
fn cancel_wakes_a_blocked_consumer() {
    let env = env(64, 16);
    let cancel = CancelToken::new();
    let (_w, subs) = env.create_result_partition(1, CancelToken::new()).unwrap();
    let mut gate = env.create_input_gate(subs, cancel.clone()).unwrap();
    let parked = gate.parked_probe();
    assert_cancel_wakes("poll_next", cancel, parked, move || match gate.poll_next(None) {
        Err(e) => e,
        Ok(x) => panic!("unexpected {x:?}"),
    });
}

#[test]
fn poll_times_out_with_none() {
    let env = env(64, 16);
    let (_w, subs) = env.create_result_partition(1, CancelToken::new()).unwrap();
    let mut gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    let start = Instant::now();
    assert!(gate.poll_next(Some(Duration::from_millis(30))).unwrap().is_none());
    assert!(start.elapsed() >= Duration::from_millis(30));
    assert!(gate.poll_next(Some(Duration::ZERO)).unwrap().is_none());
    let mut reader = RecordReader::<u64>::new(gate);
    assert_eq!(
        reader.next(Some(Duration::from_millis(5))).unwrap(),
        ReaderEvent::Timeout
    );
}

#[test]
fn dropping_the_gate_releases_the_producer() {
    let env = env(64, 16);
    let (mut w, subs) = env.create_result_partition(1, CancelToken::new()).unwrap();
    let gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    let b = data_buffer(&mut w, 1);
    w.add_buffer(0, b).unwrap();
    drop(gate);
    let b = data_buffer(&mut w, 1);
    assert_eq!(
        w.add_buffer(0, b),
        Err(NetworkError::ConsumerReleased { subpartition: 0 })
    );
    assert_eq!(
        w.add_event(0, Event::EndOfPartition),
        Err(NetworkError::ConsumerReleased { subpartition: 0 })
    );
    assert_eq!(w.buffers_in_use(), 0, "queued buffers were recycled");
}

#[test]
fn dropping_the_writer_without_end_of_partition_fails_the_consumer() {
    let env = env(64, 16);
    let (mut w, subs) = env.create_result_partition(1, CancelToken::new()).unwrap();
    let mut gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    let b = data_buffer(&mut w, 7);
    w.add_buffer(0, b).unwrap();
    drop(w);
    // What was queued is still delivered, then the failure.
    let got = gate.poll_next(Some(Duration::from_secs(1))).unwrap();
    assert!(matches!(got, Some((0, BufferOrEvent::Buffer(ref b))) if b[..] == [7]));
    assert_eq!(
        gate.poll_next(Some(Duration::from_secs(1))).unwrap_err(),
        NetworkError::ProducerReleased { channel: 0 }
    );
}

#[test]
fn data_written_before_the_gate_connects_is_delivered() {
    let env = env(64, 32);
    let (mut w, subs) = env.create_result_partition(1, CancelToken::new()).unwrap();
    for i in 0..5 {
        let b = data_buffer(&mut w, i);
        w.add_buffer(0, b).unwrap();
    }
    w.add_event(0, Event::EndOfPartition).unwrap();
    drop(w);
    let mut gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    let mut bytes = Vec::new();
    while let Some((_, item)) = gate.poll_next(Some(Duration::from_secs(1))).unwrap() {
        if let BufferOrEvent::Buffer(b) = item {
            bytes.push(b[0]);
        }
    }
    assert_eq!(bytes, vec![0, 1, 2, 3, 4]);
    assert!(gate.is_finished());
}

#[test]
fn a_subpartition_is_read_by_one_gate_only() {
    let env = env(64, 32);
    let (_w, subs) = env.create_result_partition(2, CancelToken::new()).unwrap();
    let twice = vec![subs[0].clone(), subs[0].clone()];
    assert!(matches!(
        env.create_input_gate(twice, CancelToken::new()),
        Err(NetworkError::AlreadyConnected { .. })
    ));
    // The failed attempt left nothing connected.
    let _gate = env.create_input_gate(subs.clone(), CancelToken::new()).unwrap();
    assert!(matches!(
        env.create_input_gate(vec![subs[1].clone()], CancelToken::new()),
        Err(NetworkError::AlreadyConnected { .. })
    ));
    assert!(matches!(
        env.create_input_gate(Vec::new(), CancelToken::new()),
        Err(NetworkError::InvalidArgument(_))
    ));
}

#[test]
fn partitions_beyond_the_pool_fail_with_pool_exhausted() {
    let env = env(64, 10);
    let (a, _) = env.create_result_partition(4, CancelToken::new()).unwrap();
    assert_eq!(a.pool_size(), 10, "a lone partition may use the whole pool");
    let (b, _) = env.create_result_partition(4, CancelToken::new()).unwrap();
    assert_eq!(
        (a.pool_size(), b.pool_size()),
        (5, 5),
        "both shrink to their guaranteed minimum"
    );
    let err = env.create_result_partition(1, CancelToken::new()).unwrap_err();
    assert_eq!(
        err,
        NetworkError::PoolExhausted {
            required: 2,
            available: 0,
            total: 10,
            segment_size: 64
        }
    );
    drop(b);
    assert_eq!(a.pool_size(), 10);
    assert!(env.create_result_partition(1, CancelToken::new()).is_ok());
}

#[test]
fn broadcast_writes_every_record_to_every_channel() {
    let env = env(128, 64);
    let (w, subs) = env.create_result_partition(3, CancelToken::new()).unwrap();
    let gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    let mut writer = RecordWriter::<u64>::new(w, Box::new(BroadcastPartitioner));
    for i in 0..10 {
        writer.emit(&StreamRecord::new(i)).unwrap();
    }
    writer.broadcast_event(Event::EndOfPartition).unwrap();
    assert_eq!(writer.records_out(), 10);
    let mut reader = RecordReader::<u64>::new(gate);
    let mut per_channel = vec![Vec::new(); 3];
    loop {
        match reader.next(Some(Duration::from_secs(1))).unwrap() {
            ReaderEvent::Record(r) => per_channel[reader.current_channel().unwrap()].push(r.value),
            ReaderEvent::Event { .. } => {}
            ReaderEvent::Finished => break,
            ReaderEvent::PriorityEvent { event, .. } => panic!("unexpected priority event {event:?}"),
            ReaderEvent::Timeout => panic!("timed out"),
        }
    }
    for ch in per_channel {
        assert_eq!(ch, (0..10).collect::<Vec<_>>());
    }
}

/// Writes `records` (channel, payload) through a writer with `channels` subpartitions
/// and `segment_size` buffers on one thread, reads them on another.
fn round_trip(
    segment_size: usize,
    channels: usize,
    records: Vec<(u32, String, Option<i64>)>,
) -> Vec<Vec<StreamRecord<(u32, String)>>> {
    let env = env(segment_size, 4 * channels + 8);
    let (w, subs) = env.create_result_partition(channels, CancelToken::new()).unwrap();
    let gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    let selector: Box<dyn ChannelSelector<(u32, String)>> =
        Box::new(CustomPartitioner::new(Arc::new(|r: &(u32, String), _n| r.0 as usize)));
    let producer = thread::spawn(move || {
        let mut writer = RecordWriter::new(w, selector);
        for (i, (ch, s, ts)) in records.into_iter().enumerate() {
            writer
                .emit(&StreamRecord {
                    value: (ch, s),
                    timestamp: ts,
                })
                .unwrap();
            if i % 7 == 3 {
                writer.flush(ch as usize).unwrap();
            }
        }
        writer.broadcast_event(Event::EndOfPartition).unwrap();
    });
    let mut reader = RecordReader::<(u32, String)>::new(gate);
    let mut out = vec![Vec::new(); channels];
    loop {
        match reader.next(Some(Duration::from_secs(10))).unwrap() {
            ReaderEvent::Record(r) => out[reader.current_channel().unwrap()].push(r),
            ReaderEvent::Event { .. } => {}
            ReaderEvent::Finished => break,
            ReaderEvent::PriorityEvent { event, .. } => panic!("unexpected priority event {event:?}"),
            ReaderEvent::Timeout => panic!("timed out"),
        }
    }
    producer.join().unwrap();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_reader_returns_exactly_the_records_written_in_order_per_channel(
        segment_size in 64usize..4096,
        channels in 1usize..4,
        raw in proptest::collection::vec((0u32..4, ".{0,300}", proptest::option::of(any::<i64>())), 0..300),
    ) {
        let records: Vec<_> = raw.into_iter().map(|(c, s, ts)| (c % channels as u32, s, ts)).collect();
        let mut expected = vec![Vec::new(); channels];
        for (c, s, ts) in &records {
            expected[*c as usize].push(StreamRecord { value: (*c, s.clone()), timestamp: *ts });
        }
        let got = round_trip(segment_size, channels, records);
        prop_assert_eq!(got, expected);
    }
}

/// Every producer sends to every consumer (rebalance-like by sequence number) while
/// consumers hold buffers for random short times; run with several credit configs,
/// including floating-only channels.
fn all_to_all(config: NetworkConfig, producers: usize, consumers: usize, per_producer: u64) {
    let env = NetworkEnvironment::new(config);
    let mut writers = Vec::new();
    let mut handles: Vec<Vec<SubpartitionHandle>> = vec![Vec::new(); consumers];
    for _ in 0..producers {
        let (w, subs) = env.create_result_partition(consumers, CancelToken::new()).unwrap();
        writers.push(w);
        for (c, h) in subs.into_iter().enumerate() {
            handles[c].push(h);
        }
    }
    let mut threads = Vec::new();
    for (c, hs) in handles.into_iter().enumerate() {
        let gate = env.create_input_gate(hs, CancelToken::new()).unwrap();
        threads.push(thread::spawn(move || {
            let mut reader = RecordReader::<(u32, u64)>::new(gate);
            let mut next = vec![None::<u64>; producers];
            let mut count = 0u64;
            let mut rng = c as u64 + 1;
            loop {
                match reader.next(Some(Duration::from_secs(20))).unwrap() {
                    ReaderEvent::Record(r) => {
                        let (p, seq) = (r.value.0 as usize, r.value.1);
                        assert_eq!(reader.current_channel(), Some(p));
                        if let Some(n) = next[p] {
                            assert!(seq > n, "out of order");
                        }
                        assert_eq!(seq as usize % consumers, c, "misrouted");
                        next[p] = Some(seq);
                        count += 1;
                        rng = weir_core::ids::splitmix64(rng);
                        if rng & 63 == 0 {
                            // A pause of random length lets the producers run ahead.
                            for _ in 0..rng % 64 {
                                thread::yield_now();
                            }
                        }
                    }
                    ReaderEvent::Event { .. } => {}
                    ReaderEvent::Finished => return count,
                    ReaderEvent::PriorityEvent { event, .. } => panic!("unexpected priority event {event:?}"),
                    ReaderEvent::Timeout => {
                        panic!("consumer {c} timed out: {}", reader.gate().debug_state())
                    }
                }
            }
        }));
    }
    for (p, w) in writers.into_iter().enumerate() {
        threads.push(thread::spawn(move || {
            let selector: Box<dyn ChannelSelector<(u32, u64)>> =
                Box::new(CustomPartitioner::new(Arc::new(|r: &(u32, u64), n| r.1 as usize % n)));
            let mut writer = RecordWriter::new(w, selector);
            for seq in 0..per_producer {
                writer.emit(&StreamRecord::new((p as u32, seq))).unwrap();
                if seq % 1000 == 999 {
                    writer.broadcast_event(Event::Watermark(Watermark(seq as i64))).unwrap();
                }
            }
            writer.broadcast_event(Event::EndOfPartition).unwrap();
            0
        }));
    }
    let total: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(total, producers as u64 * per_producer);
    assert_eq!(env.buffers_in_use(), 0);
    assert_eq!(env.available_buffers(), env.total_buffers());
}

#[test]
fn all_to_all_exchange_delivers_everything_with_any_credit_config() {
    for (exclusive, floating) in [(2, 8), (0, 1), (1, 0), (0, 3)] {
        let config = NetworkConfig {
            segment_size: 96,
            buffers_per_channel: exclusive,
            floating_buffers_per_gate: floating,
            total_buffers: 64,
            ..NetworkConfig::default()
        };
        all_to_all(config, 3, 3, 20_000);
    }
}

/// A longer all-to-all run for shaking out races: more producers and consumers, every
/// credit configuration (including floating-only and exclusive-only channels) and
/// segment sizes from tiny (a frame spans several buffers) to a few hundred bytes.
#[test]
fn all_to_all_stress() {
    for round in 0..5 {
        for (exclusive, floating) in [(2, 8), (0, 1), (1, 0), (0, 3), (1, 1)] {
            let config = NetworkConfig {
                segment_size: 40 + round * 61,
                buffers_per_channel: exclusive,
                floating_buffers_per_gate: floating,
                total_buffers: 128,
                ..NetworkConfig::default()
            };
            all_to_all(config, 4, 4, 15_000);
        }
    }
}

#[test]
fn the_handles_move_between_threads() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<ResultPartitionWriter>();
    send::<InputGate>();
    send::<SubpartitionHandle>();
    send::<Buffer>();
    send::<BufferOrEvent>();
    send::<RecordWriter<String>>();
    send::<RecordReader<String>>();
    send::<CancelToken>();
    sync::<NetworkEnvironment>();
    sync::<CancelToken>();
}

// ----- priority events (the barriers of unaligned checkpoints) -----

fn unaligned_barrier(id: u64) -> Event {
    Event::CheckpointBarrier(weir_core::CheckpointBarrier {
        id,
        timestamp: 0,
        options: weir_core::CheckpointOptions::for_config(
            weir_core::CheckpointingMode::ExactlyOnce,
            true,
            Duration::ZERO,
        ),
    })
}

/// Record `i`: a frame of [`WIDE_FRAME`] bytes, so that with 64-byte segments every
/// frame spans two or three buffers.
fn wide_record(i: u64) -> StreamRecord<(u64, String)> {
    StreamRecord::with_timestamp((i, "x".repeat(90)), i as i64)
}

/// Bytes of a [`wide_record`] frame: tag, timestamp, length, u64, string length, 90 bytes.
const WIDE_FRAME: usize = 1 + 8 + 4 + 8 + 8 + 90;

/// The records of `bytes` (a byte stream of record frames) and whether it ends inside
/// a frame.
fn decode_stream(bytes: &[u8]) -> (Vec<StreamRecord<(u64, String)>>, bool) {
    let mut decoder = weir_core::codec::FrameDecoder::new();
    let mut records = Vec::new();
    decoder
        .decode_buffer(bytes, |r| {
            records.push(r);
            Ok(())
        })
        .unwrap();
    (records, decoder.has_pending())
}

/// Reads until the priority event: the records before it and its in-flight data.
fn read_until_priority_event(reader: &mut RecordReader<(u64, String)>) -> (Vec<u64>, Event, Vec<u8>) {
    let mut before = Vec::new();
    loop {
        match reader.next(Some(Duration::from_secs(5))).unwrap() {
            ReaderEvent::Record(r) => before.push(r.value.0),
            ReaderEvent::PriorityEvent { event, in_flight, .. } => return (before, event, in_flight),
            other => panic!("unexpected {other:?} before the priority event"),
        }
    }
}

/// Reads everything after the priority event: record numbers, then `"wm<n>"` and
/// `"end"` markers in their place.
fn read_rest(reader: &mut RecordReader<(u64, String)>) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        match reader.next(Some(Duration::from_secs(5))).unwrap() {
            ReaderEvent::Record(r) => out.push(r.value.0.to_string()),
            ReaderEvent::Event {
                event: Event::Watermark(w),
                ..
            } => out.push(format!("wm{}", w.0)),
            ReaderEvent::Event {
                event: Event::EndOfPartition,
                ..
            } => out.push("end".into()),
            ReaderEvent::Finished => return out,
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn a_priority_event_overtakes_the_queued_buffers_which_its_producer_gets_back_and_which_still_arrive_in_order() {
    let env = NetworkEnvironment::new(NetworkConfig {
        segment_size: 64,
        total_buffers: 128,
        max_buffers_per_channel: 64,
        ..NetworkConfig::default()
    });
    let (w, subs) = env.create_result_partition(1, CancelToken::new()).unwrap();
    let gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    let mut writer = RecordWriter::new(w, Box::new(ForwardPartitioner));
    let mut reader = RecordReader::<(u64, String)>::new(gate);
    for i in 0..20 {
        writer.emit(&wide_record(i)).unwrap();
    }
    writer.broadcast_event(Event::Watermark(Watermark(19))).unwrap();
    writer.emit(&wide_record(20)).unwrap();
    // The consumer takes the first records; its decoder then holds part of the next.
    let mut processed = Vec::new();
    for _ in 0..3 {
        match reader.next(Some(Duration::from_secs(1))).unwrap() {
            ReaderEvent::Record(r) => processed.push(r.value.0),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(processed, vec![0, 1, 2]);
    let queued = writer.partition_writer().backlog(0);
    // The current buffer (record 20's end) is flushed and overtaken too.
    let overtaken = writer.broadcast_priority_event(unaligned_barrier(1)).unwrap();
    assert_eq!(overtaken.len(), 1);
    assert!(queued >= 20, "{queued} buffers queued");
    assert!(
        overtaken[0].len() > queued * 64,
        "{} bytes overtaken: the {queued} queued buffers and the flushed one",
        overtaken[0].len()
    );
    for i in 21..25 {
        writer.emit(&wide_record(i)).unwrap();
    }
    writer.broadcast_event(Event::EndOfPartition).unwrap();

    let (before, event, in_flight) = read_until_priority_event(&mut reader);
    assert!(
        before.is_empty(),
        "the barrier comes before every queued buffer: {before:?}"
    );
    assert_eq!(event, unaligned_barrier(1));
    assert!(
        !in_flight.is_empty() && in_flight.len() < WIDE_FRAME,
        "a local channel's in-flight data is the frame its decoder holds in part: {} bytes",
        in_flight.len()
    );
    // Consumer's in-flight data, then the producer's overtaken buffers: exactly the
    // records not processed at the barrier, ending with a whole frame.
    let mut stream = in_flight;
    stream.extend_from_slice(&overtaken[0]);
    let (records, partial) = decode_stream(&stream);
    assert!(!partial);
    assert_eq!(records, (3..=20).map(wide_record).collect::<Vec<_>>());
    // Everything overtaken still arrives, in order, then what came after the barrier.
    let mut expected: Vec<String> = (3..20).map(|i| i.to_string()).collect();
    expected.push("wm19".into());
    expected.extend((20..25).map(|i| i.to_string()));
    expected.push("end".into());
    assert_eq!(read_rest(&mut reader), expected);
}

#[test]
fn a_channel_with_a_priority_event_is_served_before_the_buffers_of_the_other_channels() {
    let env = env(64, 64);
    let (mut w, subs) = env.create_result_partition(2, CancelToken::new()).unwrap();
    let mut gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    for i in 0..3 {
        for s in 0..2 {
            let b = data_buffer(&mut w, i);
            w.add_buffer(s, b).unwrap();
        }
    }
    let overtaken = w.add_priority_event(1, unaligned_barrier(4)).unwrap();
    assert_eq!(overtaken, vec![0, 1, 2]);
    assert_eq!(
        w.add_priority_event(0, Event::EndOfPartition),
        Err(NetworkError::InvalidArgument(
            "EndOfPartition cannot overtake the data before it".into()
        ))
    );
    match gate.poll_next(Some(Duration::from_secs(1))).unwrap() {
        Some((1, BufferOrEvent::Priority(p))) => {
            assert_eq!(p.event, unaligned_barrier(4));
            assert!(p.overtaken.is_empty(), "a local channel has no receive queue");
        }
        other => panic!("the priority event comes first, got {other:?}"),
    }
    let mut rest: Vec<(usize, u8)> = Vec::new();
    while let Some((c, item)) = gate.poll_next(Some(Duration::from_millis(50))).unwrap() {
        match item {
            BufferOrEvent::Buffer(b) => rest.push((c, b[0])),
            other => panic!("unexpected {other:?}"),
        }
    }
    for c in 0..2 {
        let of_c: Vec<u8> = rest.iter().filter(|(ch, _)| *ch == c).map(|(_, b)| *b).collect();
        assert_eq!(of_c, vec![0, 1, 2], "channel {c} keeps its order");
    }
}

#[test]
fn restored_output_channel_state_is_sent_before_anything_else_and_completes_the_consumers_partial_frame() {
    let env = env(64, 64);
    let (mut w, subs) = env.create_result_partition(1, CancelToken::new()).unwrap();
    let gate = env.create_input_gate(subs, CancelToken::new()).unwrap();
    let mut reader = RecordReader::<(u64, String)>::new(gate);
    let mut frames = Vec::new();
    for i in 0..3 {
        weir_core::codec::encode_frame(&mut frames, &wide_record(i)).unwrap();
    }
    // The consumer's input channel state ends 50 bytes into record 1; the producer's
    // output channel state is the rest.
    assert_eq!(frames.len(), 3 * WIDE_FRAME);
    let (input_state, output_state) = frames.split_at(WIDE_FRAME + 50);
    let replayed = reader.resume_channel(0, input_state).unwrap();
    assert_eq!(replayed, vec![wide_record(0)]);
    w.add_recovered_data(0, output_state).unwrap();
    let mut writer = RecordWriter::new(w, Box::new(ForwardPartitioner));
    writer.emit(&wide_record(3)).unwrap();
    writer.broadcast_event(Event::EndOfPartition).unwrap();
    assert_eq!(read_rest(&mut reader), vec!["1", "2", "3", "end"]);
}

#[test]
fn corrupt_restored_in_flight_data_is_an_error_naming_the_channel() {
    let env = env(64, 16);
    let (_w, subs) = env.create_result_partition(1, CancelToken::new()).unwrap();
    let mut reader = RecordReader::<u64>::new(env.create_input_gate(subs, CancelToken::new()).unwrap());
    let err = reader.resume_channel(0, &[9, 9]).unwrap_err();
    assert!(
        matches!(&err, NetworkError::Corrupt(m) if m.contains("channel 0") && m.contains("unknown frame tag 9")),
        "{err}"
    );
    assert!(matches!(
        reader.resume_channel(3, &[]),
        Err(NetworkError::InvalidArgument(_))
    ));
}
