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
    let env = NetworkEnvironment::new(NetworkConfig {
        partition_request_timeout_ms: 50,
        ..config(0, dir.path())
    });
    let partition = write_two_subpartitions(&env, 5);
    let path = partition.spill_path().expect("a budget of 0 spills everything");
    env.register_blocking_partition(pid(0), partition).unwrap();
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
