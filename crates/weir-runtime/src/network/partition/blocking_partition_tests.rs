//! Blocking partitions: stored in memory within the budget, spilled beyond it, readable
//! again and again after the producer finished, gone when released.

use super::*;
use crate::network::{BufferOrEvent, ChannelSpec, NetworkConfig, NetworkEnvironment, PartitionId};
use std::time::Duration;

fn config(budget: usize, dir: &std::path::Path) -> NetworkConfig {
    NetworkConfig {
        segment_size: 64,
        total_buffers: 64,
        blocking_memory_budget: budget,
        tmp_dirs: vec![dir.to_path_buf()],
        ..NetworkConfig::default()
    }
}

fn env(budget: usize, dir: &std::path::Path) -> Arc<NetworkEnvironment> {
    NetworkEnvironment::new(config(budget, dir))
}

/// [`env`] whose partition requests wait `timeout_ms` for an unregistered partition.
fn env_waiting(budget: usize, dir: &std::path::Path, timeout_ms: u64) -> Arc<NetworkEnvironment> {
    NetworkEnvironment::new(NetworkConfig {
        partition_request_timeout_ms: timeout_ms,
        ..config(budget, dir)
    })
}

fn pid(subtask: u32) -> PartitionId {
    PartitionId {
        job_id: "j".into(),
        job_edge: 0,
        producer_subtask: subtask,
        attempt: 0,
    }
}

/// Writes `n` one-byte buffers (0, 1, 2, ...) into each of two subpartitions, byte
/// `i + 100 * s` for subpartition `s`, then EndOfPartition, and drops the writer.
fn write_two_subpartitions(env: &NetworkEnvironment, n: u8) -> Arc<BlockingPartition> {
    let (mut w, partition) = env
        .create_blocking_result_partition(2, "test".into(), CancelToken::new())
        .unwrap();
    for i in 0..n {
        for s in 0..2u8 {
            let mut b = w.request_buffer_for(s as usize).unwrap();
            b.append(&[i + 100 * s]);
            w.add_buffer(s as usize, b).unwrap();
        }
    }
    w.broadcast_event(Event::EndOfPartition).unwrap();
    drop(w);
    partition
}

/// Reads subpartition `s` of the registered partition through a local input gate.
fn read(env: &Arc<NetworkEnvironment>, s: u32) -> Vec<u8> {
    let spec = ChannelSpec::Local {
        partition: pid(0),
        subpartition: s,
    };
    let mut gate = env
        .create_input_gate_from_specs(vec![spec], CancelToken::new())
        .unwrap();
    let mut bytes = Vec::new();
    while let Some((_, item)) = gate.poll_next(Some(Duration::from_secs(5))).unwrap() {
        if let BufferOrEvent::Buffer(b) = item {
            bytes.extend_from_slice(&b[..]);
        }
    }
    assert!(gate.is_finished());
    bytes
}

/// A gate over subpartition 0 of the registered partition.
fn local_gate(env: &Arc<NetworkEnvironment>) -> crate::network::InputGate {
    let spec = ChannelSpec::Local {
        partition: pid(0),
        subpartition: 0,
    };
    env.create_input_gate_from_specs(vec![spec], CancelToken::new())
        .unwrap()
}

#[test]
fn a_producer_writes_its_whole_output_without_a_consumer_and_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let env = env(1 << 20, dir.path());
    // 100 buffers per subpartition: far more than the writer's pool of 3 buffers.
    let partition = write_two_subpartitions(&env, 100);
    assert!(partition.is_finished());
    assert_eq!(partition.stored_bytes(), (200, 0));
    assert_eq!(env.blocking_memory_used(), 200);
    assert!(partition.spill_path().is_none());
}

#[test]
fn a_finished_partition_is_read_by_one_consumer_after_another_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let env = env(1 << 20, dir.path());
    let partition = write_two_subpartitions(&env, 50);
    env.register_blocking_partition(pid(0), partition).unwrap();
    let expected: Vec<u8> = (0..50).collect();
    assert_eq!(read(&env, 0), expected);
    assert_eq!(read(&env, 0), expected, "a restarted consumer reads it again");
    assert_eq!(read(&env, 1), (100..150).collect::<Vec<u8>>());
}

#[test]
fn a_local_consumer_reads_a_finished_partition_in_its_own_thread_even_holding_every_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let env = env(10, dir.path());
    let partition = write_two_subpartitions(&env, 20);
    env.register_blocking_partition(pid(0), partition).unwrap();
    let specs = (0..2)
        .map(|s| ChannelSpec::Local {
            partition: pid(0),
            subpartition: s,
        })
        .collect();
    let mut gate = env.create_input_gate_from_specs(specs, CancelToken::new()).unwrap();
    assert!(gate.is_channel_stored(0) && gate.is_channel_stored(1));
    let mut held = Vec::new();
    let mut channels = Vec::new();
    while let Some((channel, item)) = gate.poll_next(Some(Duration::ZERO)).unwrap() {
        if let BufferOrEvent::Buffer(b) = item {
            channels.push(channel);
            held.push(b);
        }
    }
    assert!(gate.is_finished(), "read without waiting for any other thread");
    let bytes: Vec<u8> = held.iter().flat_map(|b| b.to_vec()).collect();
    let expected: Vec<u8> = (0..20).flat_map(|i| [i, i + 100]).collect();
    assert_eq!(bytes, expected, "the channels take turns, each in its stored order");
    assert_eq!(channels, (0..40).map(|i| i % 2).collect::<Vec<usize>>());
    assert!(
        env.buffers_in_use() <= 2,
        "beyond its pool the gate reads into buffers of no pool"
    );
    drop(held);
    assert_eq!(env.buffers_in_use(), 0);
}

#[test]
fn beyond_the_memory_budget_the_partition_spills_to_a_file_under_the_tmp_dir_and_deletes_it_on_release() {
    let dir = tempfile::tempdir().unwrap();
    let env = env(10, dir.path());
    let partition = write_two_subpartitions(&env, 30);
    assert_eq!(partition.stored_bytes(), (10, 50));
    let path = partition.spill_path().expect("spilled");
    assert_eq!(path.parent(), Some(dir.path()));
    assert!(path.exists());
    env.register_blocking_partition(pid(0), partition).unwrap();
    assert_eq!(read(&env, 0), (0..30).collect::<Vec<u8>>());
    assert_eq!(read(&env, 1), (100..130).collect::<Vec<u8>>());
    assert!(env.release_partition(&pid(0)));
    assert!(!path.exists(), "the spill file is deleted on release");
    assert_eq!(env.blocking_memory_used(), 0, "the budget is given back");
    assert!(!env.release_partition(&pid(0)));
}

#[test]
fn spilled_buffers_are_written_in_large_writes_when_the_partition_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let env = env(0, dir.path());
    let (mut w, partition) = env
        .create_blocking_result_partition(1, "test".into(), CancelToken::new())
        .unwrap();
    for i in 0..40u8 {
        let mut b = w.request_buffer_for(0).unwrap();
        b.append(&[i; 64]);
        w.add_buffer(0, b).unwrap();
    }
    let path = partition.spill_path().expect("a budget of 0 spills everything");
    assert_eq!(partition.stored_bytes(), (0, 40 * 64));
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        0,
        "no write per buffer: the bytes wait in the spill file's write buffer"
    );
    w.add_event(0, Event::EndOfPartition).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 40 * 64, "flushed at the end");
    env.register_blocking_partition(pid(0), partition).unwrap();
    let expected: Vec<u8> = (0..40u8).flat_map(|i| [i; 64]).collect();
    assert_eq!(read(&env, 0), expected);
    assert_eq!(read(&env, 0), expected, "a restarted consumer reads it again");
}

#[test]
fn releasing_the_jobs_partitions_releases_blocking_ones_and_later_reads_find_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_waiting(0, dir.path(), 50);
    let path = spilled_and_registered(&env, 5);
    env.release_job_partitions("j");
    assert!(!path.exists());
    let spec = ChannelSpec::Local {
        partition: pid(0),
        subpartition: 0,
    };
    assert!(matches!(
        env.create_input_gate_from_specs(vec![spec], CancelToken::new()),
        Err(NetworkError::PartitionNotFound { .. })
    ));
}

#[test]
fn a_consumer_that_connects_while_the_producer_still_writes_waits_for_the_whole_output() {
    let dir = tempfile::tempdir().unwrap();
    let env = env(1 << 20, dir.path());
    let (mut w, partition) = env
        .create_blocking_result_partition(1, "test".into(), CancelToken::new())
        .unwrap();
    env.register_blocking_partition(pid(0), partition).unwrap();
    let mut gate = local_gate(&env);
    assert!(
        !gate.is_channel_stored(0),
        "an unfinished partition is replayed by a thread"
    );
    let mut b = w.request_buffer_for(0).unwrap();
    b.append(&[1]);
    w.add_buffer(0, b).unwrap();
    assert!(
        gate.poll_next(Some(Duration::from_millis(20))).unwrap().is_none(),
        "nothing is replayed before the partition is finished"
    );
    w.add_event(0, Event::EndOfPartition).unwrap();
    let got = gate.poll_next(Some(Duration::from_secs(5))).unwrap();
    assert!(matches!(got, Some((0, BufferOrEvent::Buffer(ref b))) if b[..] == [1]));
}

#[test]
fn a_producer_that_goes_away_before_the_end_fails_its_readers_and_takes_no_priority_events() {
    let dir = tempfile::tempdir().unwrap();
    let env = env(1 << 20, dir.path());
    let (mut w, partition) = env
        .create_blocking_result_partition(1, "test".into(), CancelToken::new())
        .unwrap();
    assert!(matches!(
        w.add_priority_event(0, Event::Watermark(weir_core::Watermark(1))),
        Err(NetworkError::InvalidArgument(_))
    ));
    env.register_blocking_partition(pid(0), partition).unwrap();
    drop(w);
    let mut gate = local_gate(&env);
    assert_eq!(
        gate.poll_next(Some(Duration::from_secs(5))).unwrap_err(),
        NetworkError::ProducerReleased { channel: 0 }
    );
}

/// Reads subpartition `s` of partition `pid(0)` through `spec`'s kind of channel until
/// the end or an error: the bytes received, and the error.
fn read_until_error(env: &Arc<NetworkEnvironment>, spec: ChannelSpec) -> (Vec<u8>, Option<NetworkError>) {
    let mut gate = match env.create_input_gate_from_specs(vec![spec], CancelToken::new()) {
        Ok(gate) => gate,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let mut bytes = Vec::new();
    loop {
        match gate.poll_next(Some(Duration::from_secs(5))) {
            Ok(Some((_, BufferOrEvent::Buffer(b)))) => bytes.extend_from_slice(&b[..]),
            Ok(Some(_)) => {}
            Ok(None) => return (bytes, None),
            Err(e) => return (bytes, Some(e)),
        }
    }
}

fn local_spec() -> ChannelSpec {
    ChannelSpec::Local {
        partition: pid(0),
        subpartition: 0,
    }
}

/// A second process's environment with a data server, and a spec reading subpartition
/// 0 of `pid(0)` from `producer`'s data server.
fn remote_reader(producer: &Arc<NetworkEnvironment>, dir: &std::path::Path) -> (Arc<NetworkEnvironment>, ChannelSpec) {
    let address = producer.start_data_server("127.0.0.1:0").unwrap().to_string();
    let consumer = env(0, dir);
    let spec = ChannelSpec::Remote {
        address,
        partition: pid(0),
        subpartition: 0,
    };
    (consumer, spec)
}

/// Writes two subpartitions of `n` one-byte buffers into a partition that spills
/// beyond `env`'s budget, registers it as `pid(0)`, and returns its spill file.
fn spilled_and_registered(env: &Arc<NetworkEnvironment>, n: u8) -> std::path::PathBuf {
    let partition = write_two_subpartitions(env, n);
    let path = partition
        .spill_path()
        .expect("the budget is smaller than the partition");
    env.register_blocking_partition(pid(0), partition).unwrap();
    path
}

const RELEASED: &str = "released by the JobManager once every consumer of it finished";

#[test]
fn a_partition_released_once_consumed_frees_memory_and_file_and_a_late_reader_is_told_why() {
    let dir = tempfile::tempdir().unwrap();
    // A request would wait a minute for a partition that is not registered (yet).
    let env = env_waiting(20, dir.path(), 60_000);
    let path = spilled_and_registered(&env, 30);
    let held = env.blocking_partition_bytes();
    assert_eq!((held.partitions, held.memory, held.spilled), (1, 20, 40));
    assert_eq!(read(&env, 0), (0..30).collect::<Vec<u8>>());

    assert!(env.release_blocking_partition(&pid(0), RELEASED));
    assert!(!path.exists(), "the spill file is deleted");
    assert_eq!(env.blocking_memory_used(), 0, "the budget is given back");
    assert_eq!(
        env.blocking_partition_bytes(),
        crate::network::BlockingPartitionBytes::default()
    );
    assert_eq!(env.num_registered_partitions(), 0);
    assert!(!env.release_blocking_partition(&pid(0), RELEASED), "released once");

    let (bytes, err) = read_until_error(&env, local_spec());
    assert!(bytes.is_empty());
    let expected = NetworkError::PartitionGone {
        partition: pid(0),
        subpartition: 0,
        address: "local".into(),
        reason: RELEASED.into(),
    };
    assert_eq!(err, Some(expected.clone()));
    assert_eq!(err.as_ref().and_then(NetworkError::missing_partition), Some(&pid(0)));
    assert_eq!(
        expected.to_string(),
        format!("result partition j/edge-0/subtask-0/attempt-0 (subpartition 0) at local is gone: {RELEASED}")
    );

    let (consumer, spec) = remote_reader(&env, dir.path());
    let address = env.data_server_address().unwrap().to_string();
    let (_, err) = read_until_error(&consumer, spec);
    assert_eq!(
        err,
        Some(NetworkError::PartitionGone {
            partition: pid(0),
            subpartition: 0,
            address,
            reason: RELEASED.into(),
        }),
        "a remote reader is told at once too"
    );
}

#[test]
fn a_truncated_spill_file_fails_its_reader_naming_the_partition_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let env = env(0, dir.path());
    // One-byte buffers alternate between the subpartitions: subpartition 0's are at
    // the even offsets of the spill file.
    let path = spilled_and_registered(&env, 30);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(10)
        .unwrap();
    let expected = NetworkError::Spill {
        partition: "test".into(),
        path: path.display().to_string(),
        reason: "unexpected end of file at offset 10: a buffer of 1 bytes is stored at offset 10".into(),
    };
    let (bytes, err) = read_until_error(&env, local_spec());
    assert_eq!(
        bytes,
        vec![0, 1, 2, 3, 4],
        "what the file still holds is delivered first"
    );
    assert_eq!(err, Some(expected.clone()));
    assert!(
        !expected.is_peer_gone(),
        "the consumer fails rather than ends as cancelled"
    );
    assert_eq!(expected.missing_partition(), None, "its producer need not run again");

    let (consumer, spec) = remote_reader(&env, dir.path());
    let address = env.data_server_address().unwrap().to_string();
    let (bytes, err) = read_until_error(&consumer, spec);
    assert_eq!(bytes, vec![0, 1, 2, 3, 4]);
    assert_eq!(
        err,
        Some(NetworkError::Remote {
            address,
            message: expected.to_string(),
        })
    );
}

#[test]
fn a_deleted_spill_file_fails_its_reader_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let env = env(0, dir.path());
    let path = spilled_and_registered(&env, 3);
    std::fs::remove_file(&path).unwrap();
    let (bytes, err) = read_until_error(&env, local_spec());
    assert!(bytes.is_empty());
    match err {
        Some(NetworkError::Spill {
            partition,
            path: named,
            reason,
        }) => {
            assert_eq!(partition, "test");
            assert_eq!(named, path.display().to_string());
            assert!(reason.starts_with("cannot open: "), "{reason}");
        }
        other => panic!("expected the spill file's error, got {other:?}"),
    }
}
