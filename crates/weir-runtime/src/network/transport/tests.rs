//! Scenarios of remote channels: two (or three) NetworkEnvironments in one test
//! process, each with its data server on 127.0.0.1:0, exchanging over real TCP.

use super::protocol::{self, ControlFrame, ErrorCode, Frame};
use crate::network::*;
use crate::partitioner::{ChannelSelector, CustomPartitioner};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};
use weir_core::{Event, StreamRecord, Watermark};

const JOB: &str = "00000000000000000000000000000abc";

pub(super) struct Node {
    pub(super) env: Arc<NetworkEnvironment>,
    pub(super) addr: String,
}

pub(super) fn config() -> NetworkConfig {
    NetworkConfig {
        segment_size: 256,
        total_buffers: 256,
        partition_request_timeout_ms: 5_000,
        ..NetworkConfig::default()
    }
}

pub(super) fn node(config: NetworkConfig) -> Node {
    let env = NetworkEnvironment::new(config);
    let addr = env.start_data_server("127.0.0.1:0").unwrap().to_string();
    Node { env, addr }
}

pub(super) fn pid(edge: u32, subtask: u32) -> PartitionId {
    PartitionId {
        job_id: JOB.into(),
        job_edge: edge,
        producer_subtask: subtask,
        attempt: 0,
    }
}

pub(super) fn remote(addr: &str, partition: PartitionId, subpartition: u32) -> ChannelSpec {
    ChannelSpec::Remote {
        address: addr.to_owned(),
        partition,
        subpartition,
    }
}

/// Routes `(channel, seq)` records by their first field.
fn by_channel() -> Box<dyn ChannelSelector<(u32, u64)>> {
    Box::new(CustomPartitioner::new(Arc::new(|r: &(u32, u64), _n| r.0 as usize)))
}

/// Writes `records` records `(seq % n, seq)` with timestamp `seq` round-robin over the
/// partition's `n` subpartitions, a watermark to all after every `every`-th, then
/// EndOfPartition.
pub(super) fn produce(w: ResultPartitionWriter, records: u64, every: u64) -> thread::JoinHandle<Duration> {
    thread::spawn(move || {
        let n = w.num_subpartitions() as u64;
        let mut writer = RecordWriter::new(w, by_channel());
        for seq in 0..records {
            writer
                .emit(&StreamRecord::with_timestamp(((seq % n) as u32, seq), seq as i64))
                .unwrap();
            if seq % every == every - 1 {
                writer.broadcast_event(Event::Watermark(Watermark(seq as i64))).unwrap();
            }
        }
        writer.broadcast_event(Event::EndOfPartition).unwrap();
        writer.backpressured_time()
    })
}

/// What [`read_all`] returns for a [`produce`]d partition of `n` subpartitions.
pub(super) fn expected(n: u64, records: u64, every: u64) -> Vec<Vec<String>> {
    (0..n)
        .map(|c| {
            let mut out = Vec::new();
            for seq in 0..records {
                if seq % n == c {
                    out.push(format!("r{seq}"));
                }
                if seq % every == every - 1 {
                    out.push(format!("w{seq}"));
                }
            }
            out.push("end".into());
            out
        })
        .collect()
}

/// Everything a reader delivers, per channel, as `r<seq>`, `w<watermark>` and `end`.
pub(super) fn read_all(reader: &mut RecordReader<(u32, u64)>) -> Result<Vec<Vec<String>>, NetworkError> {
    let mut out = vec![Vec::new(); reader.num_channels()];
    loop {
        match reader.next(Some(Duration::from_secs(10)))? {
            ReaderEvent::Record(r) => {
                let ch = reader.current_channel().unwrap();
                assert_eq!(r.timestamp, Some(r.value.1 as i64), "timestamps travel");
                out[ch].push(format!("r{}", r.value.1));
            }
            ReaderEvent::Event {
                channel,
                event: Event::Watermark(w),
            } => out[channel].push(format!("w{}", w.0)),
            ReaderEvent::Event {
                channel,
                event: Event::EndOfPartition,
            } => out[channel].push("end".into()),
            ReaderEvent::Event { channel, event } => out[channel].push(format!("{event:?}")),
            ReaderEvent::PriorityEvent { event, .. } => panic!("unexpected priority event {event:?}"),
            ReaderEvent::Timeout => panic!("timed out: {}", reader.gate().debug_state()),
            ReaderEvent::Finished => return Ok(out),
        }
    }
}

pub(super) use crate::test_support::wait_until;

fn data_buffer(w: &mut ResultPartitionWriter, byte: u8) -> Buffer {
    let mut b = w.request_buffer().unwrap();
    b.append(&[byte]);
    b
}

#[test]
fn remote_channel_delivers_records_and_events_in_order() {
    let a = node(config());
    let b = node(config());
    let (w, subs) = a.env.create_result_partition(2, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), subs).unwrap();
    let specs = vec![remote(&a.addr, pid(1, 0), 0), remote(&a.addr, pid(1, 0), 1)];
    let gate = b.env.create_input_gate_from_specs(specs, CancelToken::new()).unwrap();
    assert_eq!(gate.num_remote_channels(), 2);
    let producer = produce(w, 5_000, 1_000);
    let mut reader = RecordReader::<(u32, u64)>::new(gate);
    assert_eq!(read_all(&mut reader).unwrap(), expected(2, 5_000, 1_000));
    assert!(reader.is_finished());
    producer.join().unwrap();
    assert_eq!((b.env.num_connections(), a.env.num_server_connections()), (1, 1));
    assert_eq!(
        b.env.num_registered_remote_channels(),
        0,
        "ended channels leave the connection"
    );
    drop(reader);
    // Buffers go back to the pools asynchronously (the connection's reader returns the
    // floating ones): wait until every one of them is back.
    wait_until("every buffer is recycled and the receive buffers returned", || {
        a.env.buffers_in_use() == 0 && b.env.buffers_in_use() == 0 && b.env.available_buffers() == b.env.total_buffers()
    });
}

#[test]
fn many_channels_share_one_connection_and_a_stalled_channel_does_not_stall_it() {
    let cfg = NetworkConfig {
        segment_size: 128,
        ..config()
    };
    let a = node(cfg.clone());
    let b = node(cfg);
    let (stalled_w, s) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), s).unwrap();
    let (w, subs) = a.env.create_result_partition(4, CancelToken::new()).unwrap();
    a.env.register_partition(pid(2, 0), subs).unwrap();
    // This gate is never read.
    let stalled_gate = b
        .env
        .create_input_gate_from_specs(vec![remote(&a.addr, pid(1, 0), 0)], CancelToken::new())
        .unwrap();
    let specs = (0..4).map(|i| remote(&a.addr, pid(2, 0), i)).collect();
    let gate = b.env.create_input_gate_from_specs(specs, CancelToken::new()).unwrap();
    assert_eq!(b.env.num_connections(), 1, "one connection per remote address");
    assert_eq!(a.env.num_server_connections(), 1);
    let stalled_parked = stalled_w.parked_probe();
    let stalled_producer = thread::spawn(move || {
        let mut writer = RecordWriter::<(u32, u64)>::new(stalled_w, by_channel());
        let mut n = 0u64;
        loop {
            match writer.emit(&StreamRecord::with_timestamp((0, n), n as i64)) {
                Ok(()) => n += 1,
                Err(e) => return (n, e),
            }
        }
    });
    // The stalled channel fills its credit and its producer's share of the pool.
    wait_until("the stalled channel's producer is backpressured", &stalled_parked);
    let producer = produce(w, 20_000, 2_000);
    let mut reader = RecordReader::<(u32, u64)>::new(gate);
    assert_eq!(read_all(&mut reader).unwrap(), expected(4, 20_000, 2_000));
    producer.join().unwrap();
    assert!(!stalled_producer.is_finished(), "the stalled producer is backpressured");
    assert_eq!(b.env.num_connections(), 1);
    // Dropping the stalled consumer releases its producer, as in-process.
    drop(stalled_gate);
    let (written, err) = stalled_producer.join().unwrap();
    assert_eq!(err, NetworkError::ConsumerReleased { subpartition: 0 });
    assert!(written > 100, "the stalled channel moved some data before it stalled");
}

#[test]
fn a_remote_request_before_the_producer_registers_waits_and_then_succeeds() {
    let a = node(config());
    let b = node(config());
    let creator = {
        let (env, addr) = (b.env.clone(), a.addr.clone());
        thread::spawn(move || {
            let specs = vec![remote(&addr, pid(3, 1), 0), remote(&addr, pid(3, 1), 1)];
            env.create_input_gate_from_specs(specs, CancelToken::new())
        })
    };
    wait_until("the data server answered that the partition is not registered", || {
        b.env.num_partition_not_found_answers() > 0
    });
    assert!(!creator.is_finished(), "the consumer waits for the producer");
    let (w, subs) = a.env.create_result_partition(2, CancelToken::new()).unwrap();
    let producer = produce(w, 1_000, 100);
    a.env.register_partition(pid(3, 1), subs).unwrap();
    let gate = creator.join().unwrap().unwrap();
    let mut reader = RecordReader::<(u32, u64)>::new(gate);
    assert_eq!(read_all(&mut reader).unwrap(), expected(2, 1_000, 100));
    producer.join().unwrap();
}

#[test]
fn a_partition_that_never_registers_fails_with_partition_not_found() {
    let cfg = NetworkConfig {
        partition_request_timeout_ms: 300,
        ..config()
    };
    let a = node(cfg.clone());
    let b = node(cfg);
    let start = Instant::now();
    let err = b
        .env
        .create_input_gate_from_specs(vec![remote(&a.addr, pid(9, 0), 0)], CancelToken::new())
        .unwrap_err();
    let took = start.elapsed();
    assert_eq!(
        err,
        NetworkError::PartitionNotFound {
            partition: pid(9, 0),
            subpartition: 0,
            address: a.addr.clone(),
            timeout_ms: 300,
        }
    );
    assert!(
        took >= Duration::from_millis(300),
        "it waited for the timeout: {took:?}"
    );
    assert_eq!(
        b.env.num_registered_remote_channels(),
        0,
        "the failed gate left nothing behind"
    );
    // A request timeout of zero still asks once.
    let (_w, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(8, 0), subs).unwrap();
    let zero = node(NetworkConfig {
        partition_request_timeout_ms: 0,
        ..config()
    });
    assert!(zero
        .env
        .create_input_gate_from_specs(vec![remote(&a.addr, pid(8, 0), 0)], CancelToken::new())
        .is_ok());
    let local = b.env.create_input_gate_from_specs(
        vec![ChannelSpec::Local {
            partition: pid(9, 0),
            subpartition: 0,
        }],
        CancelToken::new(),
    );
    assert!(matches!(local, Err(NetworkError::PartitionNotFound { ref address, .. }) if address == "local"));
    // Cancelling the consumer ends the wait (its timeout is far longer than the test).
    let patient = node(NetworkConfig {
        partition_request_timeout_ms: 60_000,
        ..config()
    });
    let cancel = CancelToken::new();
    let creator = {
        let (env, addr, cancel) = (patient.env.clone(), a.addr.clone(), cancel.clone());
        thread::spawn(move || env.create_input_gate_from_specs(vec![remote(&addr, pid(9, 1), 0)], cancel))
    };
    wait_until("the consumer waits for an unregistered partition", || {
        patient.env.num_partition_not_found_answers() > 0
    });
    cancel.cancel();
    assert_eq!(creator.join().unwrap().unwrap_err(), NetworkError::Cancelled);
}

/// A raw connection to a data server.
pub(super) fn raw(addr: &str) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// Reads until the server closes the connection; returns what it sent.
pub(super) fn read_until_closed(s: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return got,
            Err(e) => panic!("the server did not close the connection: {e}"),
        }
    }
}

#[test]
fn garbage_and_a_wrong_magic_close_only_that_connection() {
    let a = node(config());
    let b = node(config());
    let with_hello = |frame: &[u8]| {
        let mut bytes = protocol::hello().to_vec();
        bytes.extend_from_slice(frame);
        bytes
    };
    let mut truncated = protocol::encode_control(&ControlFrame::AddCredit {
        channel: 1,
        credit: 1,
        event_credit: 0,
    });
    truncated.truncate(9);
    let mut buffer_from_client = Vec::new();
    protocol::write_buffer(&mut buffer_from_client, 0, 0, 0, protocol::KIND_DATA, b"x").unwrap();
    let attacks: Vec<(&str, Vec<u8>)> = vec![
        ("http", b"GET / HTTP/1.1\r\nHost: weir\r\n\r\n".to_vec()),
        ("wrong magic", vec![0xde, 0xad, 0xbe, 0xef, 0, 1, 0, 0]),
        ("unknown frame type", with_hello(&[0, 0, 0, 1, 42])),
        ("oversized length", with_hello(&[0x7f, 0xff, 0xff, 0xff, 1])),
        ("zero length", with_hello(&[0, 0, 0, 0, 1])),
        ("truncated frame", with_hello(&truncated)),
        ("buffer from a client", with_hello(&buffer_from_client)),
    ];
    // A well-behaved connection stays open alongside the attacks.
    let (w, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), subs).unwrap();
    let gate = b
        .env
        .create_input_gate_from_specs(vec![remote(&a.addr, pid(1, 0), 0)], CancelToken::new())
        .unwrap();
    for (name, bytes) in attacks {
        let mut s = raw(&a.addr);
        s.write_all(&bytes).unwrap();
        if name == "truncated frame" {
            s.shutdown(Shutdown::Write).unwrap();
        }
        let answer = read_until_closed(&mut s);
        if name.contains("magic") || name == "http" {
            assert!(answer.is_empty(), "{name}: no answer to a stranger");
        } else {
            assert_eq!(answer, protocol::hello(), "{name}: only the hello");
        }
    }
    wait_until("the attackers' connections are gone", || {
        a.env.num_server_connections() == 1
    });
    let producer = produce(w, 500, 100);
    let mut reader = RecordReader::<(u32, u64)>::new(gate);
    assert_eq!(read_all(&mut reader).unwrap(), expected(1, 500, 100));
    producer.join().unwrap();
    // And new requests are still served.
    let (w, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(2, 0), subs).unwrap();
    let gate = b
        .env
        .create_input_gate_from_specs(vec![remote(&a.addr, pid(2, 0), 0)], CancelToken::new())
        .unwrap();
    let producer = produce(w, 100, 10);
    assert_eq!(read_all(&mut RecordReader::new(gate)).unwrap(), expected(1, 100, 10));
    producer.join().unwrap();
}

#[test]
fn a_protocol_version_mismatch_is_rejected_with_a_clear_error() {
    let a = node(config());
    // A client of another version gets the server's hello and a connection-wide error.
    let mut s = raw(&a.addr);
    let mut hello = protocol::hello();
    hello[4..6].copy_from_slice(&99u16.to_be_bytes());
    s.write_all(&hello).unwrap();
    let answer = read_until_closed(&mut s);
    assert_eq!(answer[..8], protocol::hello());
    let mut rest = &answer[8..];
    match protocol::read_frame(&mut rest, &mut Vec::new()).unwrap() {
        Some(Frame::Control(ControlFrame::ErrorResponse {
            channel: None,
            code: ErrorCode::VersionMismatch,
            message,
        })) => assert!(
            message.contains(&format!("version {}", protocol::PROTOCOL_VERSION)) && message.contains("99"),
            "{message}"
        ),
        other => panic!("unexpected {other:?}"),
    }
    // A server of another version, or no Weir server at all, fails the client.
    let fake = |answer: Vec<u8>| {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let server = thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut hello = [0u8; 8];
            s.read_exact(&mut hello).unwrap();
            if answer.is_empty() {
                return Ok(0);
            }
            s.write_all(&answer).unwrap();
            // Hold the connection until the client gives up on it.
            s.read_to_end(&mut Vec::new())
        });
        (addr, server)
    };
    let b = node(config());
    let mut other_version = protocol::hello().to_vec();
    other_version[4..6].copy_from_slice(&7u16.to_be_bytes());
    for (answer, reason) in [
        (other_version, "protocol version mismatch"),
        (b"HTTP/1.1".to_vec(), "bad magic"),
        (Vec::new(), "no handshake answer"),
    ] {
        let (addr, server) = fake(answer);
        let err = b
            .env
            .create_input_gate_from_specs(vec![remote(&addr, pid(1, 0), 0)], CancelToken::new())
            .unwrap_err();
        match err {
            NetworkError::PartitionGone {
                partition,
                address,
                reason: r,
                ..
            } => {
                assert_eq!((partition, address), (pid(1, 0), addr));
                assert!(r.starts_with("cannot connect to its data server: "), "{r}");
                assert!(r.contains(reason), "{r}");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            server.join().unwrap().map_err(|e| e.kind()),
            Ok(0),
            "{reason}: the client closes the connection without sending more"
        );
    }
    assert_eq!(b.env.num_connections(), 0);
}

#[test]
fn losing_the_connection_fails_the_consumer_with_connection_lost() {
    let a = node(config());
    let b = node(config());
    let (mut w, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), subs).unwrap();
    let mut gate = b
        .env
        .create_input_gate_from_specs(vec![remote(&a.addr, pid(1, 0), 0)], CancelToken::new())
        .unwrap();
    let buf = data_buffer(&mut w, 7);
    w.add_buffer(0, buf).unwrap();
    let got = gate.poll_next(Some(Duration::from_secs(5))).unwrap();
    assert!(matches!(got, Some((0, BufferOrEvent::Buffer(ref b))) if b[..] == [7]));
    drop(got);
    // The producer's TaskManager goes away.
    let addr = a.addr.clone();
    drop(a);
    match gate.poll_next(Some(Duration::from_secs(5))) {
        Err(NetworkError::ConnectionLost { address, .. }) => assert_eq!(address, addr),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(b.env.num_connections(), 0);
    // The producer sees its consumer gone.
    let buf = data_buffer(&mut w, 8);
    assert_eq!(
        w.add_buffer(0, buf),
        Err(NetworkError::ConsumerReleased { subpartition: 0 })
    );
    // A new gate to the dead address fails to connect: the partition is gone for it.
    let err = b
        .env
        .create_input_gate_from_specs(vec![remote(&addr, pid(1, 0), 0)], CancelToken::new())
        .unwrap_err();
    assert!(
        matches!(err, NetworkError::PartitionGone { ref partition, .. } if *partition == pid(1, 0)),
        "{err:?}"
    );
    assert_eq!(err.missing_partition(), Some(&pid(1, 0)));
}

#[test]
fn a_fast_remote_producer_with_a_slow_consumer_stays_within_the_pools() {
    let cfg = NetworkConfig {
        segment_size: 256,
        total_buffers: 64,
        ..config()
    };
    let (exclusive, floating) = (cfg.buffers_per_channel, cfg.floating_buffers_per_gate);
    let a = node(cfg.clone());
    let b = node(cfg);
    let (w, subs) = a.env.create_result_partition(2, CancelToken::new()).unwrap();
    let producer_pool = w.pool_size();
    a.env.register_partition(pid(1, 0), subs).unwrap();
    let specs = vec![remote(&a.addr, pid(1, 0), 0), remote(&a.addr, pid(1, 0), 1)];
    let gate = b.env.create_input_gate_from_specs(specs, CancelToken::new()).unwrap();
    let receive_pool = 2 * exclusive + floating;
    let producer_parked = w.parked_probe();
    let producer = thread::spawn(move || {
        let n = w.num_subpartitions() as u64;
        let mut writer = RecordWriter::new(w, by_channel());
        for seq in 0..20_000u64 {
            writer
                .emit(&StreamRecord::with_timestamp(((seq % n) as u32, seq), seq as i64))
                .unwrap();
        }
        writer.broadcast_event(Event::EndOfPartition).unwrap();
        (
            writer.backpressured_time(),
            writer.partition_writer().peak_buffers_in_use(),
        )
    });
    let mut reader = RecordReader::<(u32, u64)>::new(gate);
    let mut count = 0;
    loop {
        match reader.next(Some(Duration::from_secs(10))).unwrap() {
            ReaderEvent::Record(_) => {
                count += 1;
                if count == 1 {
                    // The consumer stalls until its receive buffers are full and the
                    // producer waits.
                    wait_until("the receive buffers are full and the producer waits", || {
                        reader.gate().pool_usage().used == receive_pool && producer_parked()
                    });
                }
            }
            ReaderEvent::Event { .. } => {}
            ReaderEvent::Finished => break,
            ReaderEvent::PriorityEvent { event, .. } => panic!("unexpected priority event {event:?}"),
            ReaderEvent::Timeout => panic!("timed out: {}", reader.gate().debug_state()),
        }
    }
    let (backpressured, peak_a) = producer.join().unwrap();
    let peak_b = reader.gate().receive_pool_peak();
    assert_eq!(count, 20_000);
    assert!(backpressured > Duration::ZERO, "the producer was backpressured");
    assert!(
        peak_a <= producer_pool,
        "sender: {peak_a} buffers in use, pool of {producer_pool}"
    );
    assert!(
        peak_b <= receive_pool,
        "receiver: {peak_b} buffers in use, {receive_pool} receive buffers"
    );
    assert_eq!(peak_b, receive_pool, "the stalled consumer's receive buffers filled up");
    drop(reader);
    wait_until("every buffer is back", || {
        a.env.buffers_in_use() == 0 && b.env.available_buffers() == b.env.total_buffers()
    });
}

#[test]
fn local_specs_resolve_registered_partitions() {
    let a = node(config());
    let (w, subs) = a.env.create_result_partition(2, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), subs).unwrap();
    let specs = (0..2)
        .map(|i| ChannelSpec::Local {
            partition: pid(1, 0),
            subpartition: i,
        })
        .collect();
    let gate = a.env.create_input_gate_from_specs(specs, CancelToken::new()).unwrap();
    assert_eq!(gate.num_remote_channels(), 0);
    let producer = produce(w, 2_000, 500);
    assert_eq!(read_all(&mut RecordReader::new(gate)).unwrap(), expected(2, 2_000, 500));
    producer.join().unwrap();
    // A Local spec waits for a partition registered later, and each subpartition is
    // read by one gate only.
    let creator = {
        let env = a.env.clone();
        thread::spawn(move || {
            let spec = ChannelSpec::Local {
                partition: pid(2, 0),
                subpartition: 0,
            };
            env.create_input_gate_from_specs(vec![spec], CancelToken::new())
        })
    };
    wait_until("the Local spec waits for its partition", || {
        a.env.num_local_partition_waiters() == 1
    });
    let (w, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(2, 0), subs.clone()).unwrap();
    assert!(matches!(
        a.env.register_partition(pid(2, 0), subs.clone()),
        Err(NetworkError::InvalidArgument(_))
    ));
    let gate = creator.join().unwrap().unwrap();
    assert!(matches!(
        a.env
            .create_input_gate_from_specs(vec![ChannelSpec::Handle(subs[0].clone())], CancelToken::new()),
        Err(NetworkError::AlreadyConnected { .. })
    ));
    let producer = produce(w, 100, 50);
    assert_eq!(read_all(&mut RecordReader::new(gate)).unwrap(), expected(1, 100, 50));
    producer.join().unwrap();
}

#[test]
fn a_gate_mixes_handle_local_and_remote_channels() {
    let a = node(config());
    let b = node(config());
    let (w0, mut h) = b.env.create_result_partition(1, CancelToken::new()).unwrap();
    let (w1, subs) = b.env.create_result_partition(1, CancelToken::new()).unwrap();
    b.env.register_partition(pid(1, 1), subs).unwrap();
    let (w2, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 2), subs).unwrap();
    let specs = vec![
        ChannelSpec::Handle(h.remove(0)),
        ChannelSpec::Local {
            partition: pid(1, 1),
            subpartition: 0,
        },
        remote(&a.addr, pid(1, 2), 0),
    ];
    let gate = b.env.create_input_gate_from_specs(specs, CancelToken::new()).unwrap();
    assert_eq!((gate.num_channels(), gate.num_remote_channels()), (3, 1));
    let producers: Vec<_> = [w0, w1, w2].into_iter().map(|w| produce(w, 3_000, 1_000)).collect();
    let got = read_all(&mut RecordReader::new(gate)).unwrap();
    for ch in got {
        assert_eq!(ch, expected(1, 3_000, 1_000)[0]);
    }
    for p in producers {
        p.join().unwrap();
    }
}

#[test]
fn dropping_a_remote_gate_releases_the_producer() {
    let a = node(config());
    let b = node(config());
    let (mut w, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), subs).unwrap();
    let gate = b
        .env
        .create_input_gate_from_specs(vec![remote(&a.addr, pid(1, 0), 0)], CancelToken::new())
        .unwrap();
    let buf = data_buffer(&mut w, 1);
    w.add_buffer(0, buf).unwrap();
    assert_eq!(b.env.num_registered_remote_channels(), 1);
    drop(gate);
    assert_eq!(b.env.num_registered_remote_channels(), 0);
    // The release reaches the producer's process over the connection.
    wait_until("the producer is released", || {
        if w.buffers_in_use() == w.pool_size() {
            return false;
        }
        let buf = data_buffer(&mut w, 2);
        match w.add_buffer(0, buf) {
            Err(NetworkError::ConsumerReleased { subpartition: 0 }) => true,
            Ok(()) => false,
            Err(e) => panic!("unexpected {e:?}"),
        }
    });
    assert_eq!(w.buffers_in_use(), 0, "the queued buffers were recycled");
    assert_eq!(b.env.num_connections(), 1, "the connection stays for other channels");
}

#[test]
fn a_failed_remote_producer_fails_the_consumer_with_producer_released() {
    let a = node(config());
    let b = node(config());
    let (mut w, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), subs).unwrap();
    let mut gate = b
        .env
        .create_input_gate_from_specs(vec![remote(&a.addr, pid(1, 0), 0)], CancelToken::new())
        .unwrap();
    for i in 0..3 {
        let buf = data_buffer(&mut w, i);
        w.add_buffer(0, buf).unwrap();
    }
    drop(w);
    let mut bytes = Vec::new();
    let err = loop {
        match gate.poll_next(Some(Duration::from_secs(5))) {
            Ok(Some((_, BufferOrEvent::Buffer(b)))) => bytes.push(b[0]),
            Ok(other) => panic!("unexpected {other:?}"),
            Err(e) => break e,
        }
    };
    assert_eq!(bytes, vec![0, 1, 2], "what was sent before the failure arrives first");
    assert_eq!(err, NetworkError::ProducerReleased { channel: 0 });
}

#[test]
fn releasing_a_jobs_partitions_ends_their_remote_readers() {
    let cfg = NetworkConfig {
        partition_request_timeout_ms: 200,
        ..config()
    };
    let a = node(cfg.clone());
    let b = node(cfg);
    let (mut w, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), subs).unwrap();
    let mut gate = b
        .env
        .create_input_gate_from_specs(vec![remote(&a.addr, pid(1, 0), 0)], CancelToken::new())
        .unwrap();
    let buf = data_buffer(&mut w, 1);
    w.add_buffer(0, buf).unwrap();
    assert!(gate.poll_next(Some(Duration::from_secs(5))).unwrap().is_some());
    a.env.release_job_partitions("another job");
    assert_eq!(a.env.num_registered_partitions(), 1);
    a.env.release_job_partitions(JOB);
    assert_eq!(a.env.num_registered_partitions(), 0);
    assert_eq!(
        gate.poll_next(Some(Duration::from_secs(5))).unwrap_err(),
        NetworkError::ProducerReleased { channel: 0 }
    );
    let buf = data_buffer(&mut w, 2);
    assert_eq!(
        w.add_buffer(0, buf),
        Err(NetworkError::ConsumerReleased { subpartition: 0 })
    );
    assert!(matches!(
        b.env
            .create_input_gate_from_specs(vec![remote(&a.addr, pid(1, 0), 0)], CancelToken::new()),
        Err(NetworkError::PartitionNotFound { .. })
    ));
}

#[test]
fn a_consumer_reads_from_two_processes_over_two_connections() {
    let a = node(config());
    let c = node(config());
    let b = node(config());
    let (wa, s) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), s).unwrap();
    let (wc, s) = c.env.create_result_partition(1, CancelToken::new()).unwrap();
    c.env.register_partition(pid(1, 1), s).unwrap();
    let specs = vec![remote(&a.addr, pid(1, 0), 0), remote(&c.addr, pid(1, 1), 0)];
    let gate = b.env.create_input_gate_from_specs(specs, CancelToken::new()).unwrap();
    assert_eq!(b.env.num_connections(), 2);
    let producers = [produce(wa, 1_000, 250), produce(wc, 1_000, 250)];
    let got = read_all(&mut RecordReader::new(gate)).unwrap();
    assert_eq!(got[0], expected(1, 1_000, 250)[0]);
    assert_eq!(got[1], expected(1, 1_000, 250)[0]);
    for p in producers {
        p.join().unwrap();
    }
}

/// Every producer sends to every consumer across processes: producers 1.. in A,
/// producer 0 and every consumer in B (so each gate mixes a local channel with remote
/// ones), while consumers pause at random.
fn all_to_all_remote(cfg: NetworkConfig, producers: usize, consumers: usize, per_producer: u64) {
    let a = node(cfg.clone());
    let b = node(cfg);
    let mut writers = Vec::new();
    for p in 0..producers {
        let env = if p == 0 { &b.env } else { &a.env };
        let (w, subs) = env.create_result_partition(consumers, CancelToken::new()).unwrap();
        env.register_partition(pid(1, p as u32), subs).unwrap();
        writers.push(w);
    }
    let mut threads = Vec::new();
    for c in 0..consumers {
        let specs = (0..producers)
            .map(|p| {
                if p == 0 {
                    ChannelSpec::Local {
                        partition: pid(1, 0),
                        subpartition: c as u32,
                    }
                } else {
                    remote(&a.addr, pid(1, p as u32), c as u32)
                }
            })
            .collect();
        let gate = b.env.create_input_gate_from_specs(specs, CancelToken::new()).unwrap();
        threads.push(thread::spawn(move || {
            let mut reader = RecordReader::<(u32, u64)>::new(gate);
            let mut next = vec![None::<u64>; producers];
            let mut count = 0u64;
            let mut rng = c as u64 + 1;
            loop {
                match reader.next(Some(Duration::from_secs(10))).unwrap() {
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
                    ReaderEvent::Timeout => panic!("consumer {c} timed out: {}", reader.gate().debug_state()),
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
    assert_eq!(b.env.num_connections(), 1);
    wait_until("every buffer is back", || {
        a.env.buffers_in_use() == 0 && b.env.buffers_in_use() == 0
    });
}

#[test]
fn remote_all_to_all_delivers_everything_with_any_credit_config() {
    for (exclusive, floating) in [(2, 8), (0, 1), (1, 0), (0, 3)] {
        let cfg = NetworkConfig {
            segment_size: 96,
            buffers_per_channel: exclusive,
            floating_buffers_per_gate: floating,
            total_buffers: 128,
            ..config()
        };
        all_to_all_remote(cfg, 3, 3, 10_000);
    }
}

#[test]
fn a_second_data_server_is_refused_and_a_bad_bind_address_is_reported() {
    let a = node(config());
    assert!(matches!(
        a.env.start_data_server("127.0.0.1:0"),
        Err(NetworkError::InvalidArgument(_))
    ));
    assert_eq!(a.env.data_server_address().map(|s| s.to_string()), Some(a.addr.clone()));
    let env = NetworkEnvironment::new(config());
    assert!(matches!(
        env.start_data_server("not an address"),
        Err(NetworkError::Bind { .. })
    ));
}

// ----- priority events over TCP -----

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

/// Record `i`: a frame of about 120 bytes, spanning two or three 64-byte buffers.
fn wide_record(i: u64) -> StreamRecord<(u64, String)> {
    StreamRecord::with_timestamp((i, "x".repeat(90)), i as i64)
}

#[test]
fn a_priority_event_overtakes_the_buffers_queued_at_both_ends_of_a_tcp_channel_and_the_data_still_arrives_in_order() {
    let cfg = NetworkConfig {
        segment_size: 64,
        max_buffers_per_channel: 64,
        ..config()
    };
    let a = node(cfg.clone());
    let b = node(cfg);
    let (w, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), subs).unwrap();
    let gate = b
        .env
        .create_input_gate_from_specs(vec![remote(&a.addr, pid(1, 0), 0)], CancelToken::new())
        .unwrap();
    let mut writer = RecordWriter::new(w, Box::new(crate::partitioner::ForwardPartitioner));
    let mut reader = RecordReader::<(u64, String)>::new(gate);
    for i in 0..30 {
        writer.emit(&wide_record(i)).unwrap();
    }
    writer.flush_all().unwrap();
    for want in 0..3 {
        match reader.next(Some(Duration::from_secs(5))).unwrap() {
            ReaderEvent::Record(r) => assert_eq!(r.value.0, want),
            other => panic!("unexpected {other:?}"),
        }
    }
    // The consumer's receive queue fills up to its credit (2 exclusive and 8 floating
    // buffers); then the producer's queue stays as it is.
    wait_until("the receive queue is full", || b.env.buffers_in_use() == 10);
    let queued = writer.partition_writer().backlog(0);
    assert!(queued > 10, "{queued} buffers still queued at the producer");
    let overtaken = writer.broadcast_priority_event(unaligned_barrier(2)).unwrap();
    // Full buffers, the last one (flushed) in part.
    assert!(
        overtaken[0].len() > (queued - 1) * 64 && overtaken[0].len() <= queued * 64,
        "the producer gets its {queued} queued buffers' bytes: {}",
        overtaken[0].len()
    );
    wait_until("the barrier reached the consumer", || {
        reader.gate().debug_state().contains("priority events 1")
    });
    for i in 30..35 {
        writer.emit(&wide_record(i)).unwrap();
    }
    writer.broadcast_event(Event::EndOfPartition).unwrap();

    let (event, in_flight) = match reader.next(Some(Duration::from_secs(5))).unwrap() {
        ReaderEvent::PriorityEvent {
            channel: 0,
            event,
            in_flight,
        } => (event, in_flight),
        other => panic!("the barrier comes before the received buffers, got {other:?}"),
    };
    assert_eq!(event, unaligned_barrier(2));
    assert!(
        in_flight.len() > 9 * 64,
        "the consumer's in-flight data holds its received buffers: {} bytes",
        in_flight.len()
    );
    // The consumer's part, then the producer's: exactly the records not processed.
    let mut stream = in_flight;
    stream.extend_from_slice(&overtaken[0]);
    let mut decoder = weir_core::codec::FrameDecoder::new();
    let mut records = Vec::new();
    decoder
        .decode_buffer(&stream, |r| {
            records.push(r);
            Ok(())
        })
        .unwrap();
    assert!(!decoder.has_pending(), "the producer's part ends with a whole frame");
    assert_eq!(records, (3..30).map(wide_record).collect::<Vec<_>>());
    // Everything overtaken still arrives, in order, then the rest.
    let mut rest = Vec::new();
    loop {
        match reader.next(Some(Duration::from_secs(5))).unwrap() {
            ReaderEvent::Record(r) => rest.push(r.value.0),
            ReaderEvent::Event {
                event: Event::EndOfPartition,
                ..
            } => {}
            ReaderEvent::Finished => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(rest, (3..35).collect::<Vec<_>>());
}

#[test]
fn a_priority_end_of_partition_from_the_wire_fails_the_channel() {
    // A server that accepts the request and then sends EndOfPartition as a priority event.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut hello = [0u8; protocol::HELLO_LEN];
        s.read_exact(&mut hello).unwrap();
        s.write_all(&protocol::hello()).unwrap();
        let mut scratch = Vec::new();
        let channel = match protocol::read_frame(&mut s, &mut scratch).unwrap() {
            Some(Frame::Control(ControlFrame::PartitionRequest { channel, .. })) => channel,
            other => panic!("unexpected {other:?}"),
        };
        protocol::write_control(&mut s, &ControlFrame::PartitionRequestAccepted { channel }).unwrap();
        let eop = weir_core::codec::encode(&Event::EndOfPartition).unwrap();
        protocol::write_buffer(&mut s, channel, 0, 0, protocol::KIND_PRIORITY_EVENT, &eop).unwrap();
        // Keep the connection open until the client is done.
        let _ = s.read(&mut [0u8; 1]);
    });
    let b = node(config());
    let gate = b
        .env
        .create_input_gate_from_specs(vec![remote(&addr, pid(1, 0), 0)], CancelToken::new())
        .unwrap();
    let mut reader = RecordReader::<u64>::new(gate);
    let err = reader.next(Some(Duration::from_secs(5))).unwrap_err();
    assert!(
        matches!(&err, NetworkError::Protocol(m) if m.contains("EndOfPartition sent as a priority event")),
        "{err}"
    );
    drop(reader);
    drop(b);
    server.join().unwrap();
}

#[test]
fn an_aligned_barrier_in_a_remote_channels_receive_queue_is_promoted_over_the_buffers_ahead_of_it() {
    let cfg = NetworkConfig {
        segment_size: 64,
        ..config()
    };
    let a = node(cfg.clone());
    let b = node(cfg);
    let (w, subs) = a.env.create_result_partition(1, CancelToken::new()).unwrap();
    a.env.register_partition(pid(1, 0), subs).unwrap();
    let gate = b
        .env
        .create_input_gate_from_specs(vec![remote(&a.addr, pid(1, 0), 0)], CancelToken::new())
        .unwrap();
    let mut writer = RecordWriter::new(w, Box::new(crate::partitioner::ForwardPartitioner));
    let mut reader = RecordReader::<(u64, String)>::new(gate);
    let aligned = Event::CheckpointBarrier(weir_core::CheckpointBarrier {
        id: 3,
        timestamp: 0,
        options: weir_core::CheckpointOptions::for_config(
            weir_core::CheckpointingMode::ExactlyOnce,
            true,
            Duration::from_millis(100),
        ),
    });
    // Two records (four buffers, within the exclusive and floating credit), the barrier
    // in band, one more record.
    for i in 0..2 {
        writer.emit(&wide_record(i)).unwrap();
    }
    writer.broadcast_event(aligned).unwrap();
    writer.emit(&wide_record(2)).unwrap();
    writer.broadcast_event(Event::EndOfPartition).unwrap();
    // Four buffers before the barrier (the last flushed by it) and two after: once all
    // six arrived, the barrier sent between them is in the receive queue too.
    wait_until("everything is in the receive queue", || b.env.buffers_in_use() == 6);
    assert!(
        !reader.gate().promote_barrier(0, 4),
        "no barrier of checkpoint 4 is queued"
    );
    assert!(reader.gate().promote_barrier(0, 3));
    let ReaderEvent::PriorityEvent { event, in_flight, .. } = reader.next(Some(Duration::from_secs(5))).unwrap() else {
        panic!("the promoted barrier comes first");
    };
    let Event::CheckpointBarrier(promoted) = event else {
        panic!("{event:?}")
    };
    assert!(promoted.id == 3 && promoted.options.is_unaligned());
    let mut expected = Vec::new();
    for i in 0..2 {
        weir_core::codec::encode_frame(&mut expected, &wide_record(i)).unwrap();
    }
    assert_eq!(in_flight, expected, "it carries the buffers that were ahead of it");
    let mut rest = Vec::new();
    loop {
        match reader.next(Some(Duration::from_secs(5))).unwrap() {
            ReaderEvent::Record(r) => rest.push(r.value.0),
            ReaderEvent::Event { .. } => {}
            ReaderEvent::Finished => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(rest, vec![0, 1, 2]);
}
