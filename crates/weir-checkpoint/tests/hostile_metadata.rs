//! Hostile `_metadata` files: arbitrary and mutated bytes decode to metadata that
//! passes validation or to a `CheckpointError` naming the file; metadata that decodes
//! is assigned to a job's vertices (at its own and at another parallelism) without
//! panicking.

use proptest::prelude::*;
use weir_checkpoint::metadata::{decode, encode, CheckpointMetadata, SubtaskState, TaskState};
use weir_checkpoint::{assign_restore, RestoreVertex, VertexInfo};
use weir_core::checkpoint::StreamStateHandle;
use weir_core::fuzz::{cases, corpus, mutate, mutations};
use weir_core::ids::{JobId, JobVertexId, OperatorId};
use weir_core::{KeyGroupRange, SnapshotType};

fn sample(parallelism: u32, inline: Vec<u8>) -> CheckpointMetadata {
    let subtasks = (0..parallelism)
        .map(|i| SubtaskState {
            subtask: i,
            key_group_range: KeyGroupRange::for_subtask(128, parallelism, i),
            handle: Some(StreamStateHandle::Inline(inline.clone())),
            state_size: inline.len() as u64,
            union_state: i == 0,
            finished: false,
            shared_state: Vec::new(),
        })
        .collect();
    CheckpointMetadata {
        job_id: JobId(7),
        checkpoint_id: 3,
        timestamp: 1_700_000_000_000,
        snapshot_type: SnapshotType::Checkpoint,
        tasks: vec![TaskState {
            vertex_id: JobVertexId(1),
            vertex_name: "Count".into(),
            operator_ids: vec![OperatorId(11), OperatorId(12)],
            parallelism,
            max_parallelism: 128,
            subtasks,
        }],
    }
}

fn vertex(parallelism: u32) -> RestoreVertex {
    RestoreVertex {
        info: VertexInfo {
            vertex_id: JobVertexId(1),
            name: "Count".into(),
            parallelism,
            max_parallelism: 128,
            operator_ids: vec![OperatorId(11), OperatorId(12)],
            is_source: true,
            upstream: vec![Vec::new(); parallelism as usize],
        },
        max_parallelism_configured: false,
    }
}

/// Decodes `bytes`; what decodes is assigned at parallelism 1, 3 and 4.
fn decode_and_assign(bytes: &[u8]) {
    match decode(bytes, "/chk/_metadata") {
        Ok(metadata) => {
            metadata.state_size();
            for p in [1, 3, 4] {
                if let Err(e) = assign_restore(&metadata, "/chk/_metadata", &[vertex(p)], true) {
                    assert!(e.to_string().contains("/chk/_metadata"), "{e}");
                }
            }
        }
        Err(e) => assert!(e.to_string().contains("/chk/_metadata"), "{e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn arbitrary_bytes_after_the_header_are_metadata_or_a_corrupt_file(
        version in 1u32..5,
        body in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let mut bytes = encode(&sample(1, Vec::new())).expect("encodes")[..8].to_vec();
        bytes.extend_from_slice(&version.to_be_bytes());
        bytes.extend_from_slice(&body);
        decode_and_assign(&bytes);
    }

    #[test]
    fn mutated_valid_metadata_is_metadata_or_a_corrupt_file(
        parallelism in 1u32..5,
        inline in proptest::collection::vec(any::<u8>(), 0..16),
        mutations in mutations(1..6),
    ) {
        let valid = encode(&sample(parallelism, inline)).expect("encodes");
        decode_and_assign(&valid);
        decode_and_assign(&mutate(&valid, &mutations));
    }
}

#[test]
fn the_metadata_corpus_replays_without_panicking() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/metadata");
    for (_, bytes) in corpus(&dir).expect("corpus readable") {
        decode_and_assign(&bytes);
    }
}
