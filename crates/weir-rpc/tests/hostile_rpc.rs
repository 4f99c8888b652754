//! Hostile gRPC payloads: arbitrary and mutated protobuf bytes decode to a message or
//! a decode error, and the conversions of what they carry (state handles, checkpoint
//! settings, barrier options) give a domain value or an error naming the bad field;
//! never a panic.

use proptest::prelude::*;
use prost::Message;
use weir_core::checkpoint::StreamStateHandle;
use weir_core::fuzz::{cases, corpus, mutate, mutations};
use weir_rpc::convert::{barrier_from_wire, WireOptions};
use weir_rpc::{
    AcknowledgeCheckpointRequest, CheckpointingSettings, StateHandle, TaskDeploymentDescriptor, TaskRestoreDescriptor,
    TriggerCheckpointRequest,
};

/// Decodes `bytes` as each message that carries state handles or checkpoint options
/// and converts what it carries.
fn decode_all(bytes: &[u8]) {
    if let Ok(tdd) = TaskDeploymentDescriptor::decode(bytes) {
        if let Some(restore) = &tdd.restore {
            for h in &restore.handles {
                check_handle(h);
            }
        }
        if let Some(c) = &tdd.checkpointing {
            assert_eq!(c.directory().is_some(), !c.directory.is_empty());
        }
    }
    if let Ok(ack) = AcknowledgeCheckpointRequest::decode(bytes) {
        if let Some(h) = &ack.handle {
            check_handle(h);
        }
    }
    if let Ok(t) = TriggerCheckpointRequest::decode(bytes) {
        let wire = WireOptions {
            snapshot_type: &t.snapshot_type,
            mode: &t.mode,
            alignment: &t.alignment,
            aligned_timeout_ms: t.aligned_timeout_ms,
        };
        if let Err(e) = barrier_from_wire(t.checkpoint_id, t.timestamp, wire) {
            assert!(e.len() < 1024, "an error of {} bytes", e.len());
        }
    }
}

/// A decoded handle converts back to the same wire handle, or is refused as empty.
fn check_handle(h: &StateHandle) {
    match h.to_domain() {
        Some(domain) => assert_eq!(&StateHandle::from(&domain), h),
        None => assert!(h.kind.is_none()),
    }
}

fn valid_tdd(inline: Vec<u8>, path: String, size: u64) -> Vec<u8> {
    let handles = [
        StreamStateHandle::Inline(inline),
        StreamStateHandle::File { path, size },
    ];
    TaskDeploymentDescriptor {
        job_id: "0123456789abcdef0123456789abcdef".into(),
        attempt_id: "a-1".into(),
        checkpointing: Some(CheckpointingSettings {
            directory: "/tmp/chk".into(),
            inline_threshold: 1024,
            periodic: true,
            incremental: false,
        }),
        restore: Some(TaskRestoreDescriptor {
            checkpoint_id: 3,
            handles: handles.iter().map(StateHandle::from).collect(),
            rescaled: true,
            union_only: vec![false, true],
            finished: false,
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

fn valid_trigger(id: u64) -> Vec<u8> {
    TriggerCheckpointRequest {
        job_id: "0123456789abcdef0123456789abcdef".into(),
        attempt_id: "a-1".into(),
        checkpoint_id: id,
        timestamp: 1_700_000_000_000,
        snapshot_type: "SAVEPOINT".into(),
        mode: "EXACTLY_ONCE".into(),
        drain: false,
        alignment: "UNALIGNED".into(),
        aligned_timeout_ms: 0,
        job_master_id: "00112233445566778899aabbccddeeff".into(),
    }
    .encode_to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn arbitrary_bytes_decode_and_convert_or_fail(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        decode_all(&bytes);
    }

    #[test]
    fn mutated_valid_messages_decode_and_convert_or_fail(
        inline in proptest::collection::vec(any::<u8>(), 0..32),
        path in ".{0,20}",
        size in any::<u64>(),
        id in any::<u64>(),
        mutations in mutations(1..6),
    ) {
        decode_all(&mutate(&valid_tdd(inline, path, size), &mutations));
        decode_all(&mutate(&valid_trigger(id), &mutations));
    }
}

#[test]
fn a_huge_declared_length_is_a_decode_error_not_an_allocation() {
    // Field 13 (restore), wire type 2, length 2^62.
    let mut bytes = vec![(13 << 3) | 2];
    let mut len = 1u64 << 62;
    while len >= 0x80 {
        bytes.push((len as u8) | 0x80);
        len >>= 7;
    }
    bytes.push(len as u8);
    assert!(TaskDeploymentDescriptor::decode(&bytes[..]).is_err());
}

#[test]
fn the_rpc_corpus_replays_without_panicking() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/rpc");
    for (_, bytes) in corpus(&dir).expect("corpus readable") {
        decode_all(&bytes);
    }
}
