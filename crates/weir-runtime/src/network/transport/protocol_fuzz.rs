//! Hostile bytes against the data protocol's frame decoder: arbitrary byte streams
//! and mutated valid frame sequences end in frames, a clean end, or a `WireError`;
//! never a panic, and the decoder's scratch never exceeds the control-frame bound
//! whatever the length fields say. Inputs that once crashed it are replayed from
//! `tests/corpus/protocol/`.

use super::protocol::*;
use super::PartitionId;
use proptest::prelude::*;
use weir_core::fuzz::{cases, corpus, mutate, mutations};

/// Reads frames until the end or an error, skipping buffer payloads as the client
/// does; returns how many frames were read.
fn read_all(bytes: &[u8]) -> usize {
    let mut input = bytes;
    let mut scratch = Vec::new();
    let mut frames = 0;
    loop {
        match read_frame(&mut input, &mut scratch) {
            Ok(Some(Frame::Buffer(h))) => {
                assert!(h.size < MAX_FRAME_LENGTH);
                let skipped = h.size.min(input.len());
                input = &input[skipped..];
            }
            Ok(Some(Frame::Control(_))) => {}
            Ok(None) | Err(_) => return frames,
        }
        assert!(scratch.len() <= MAX_CONTROL_FRAME_LENGTH);
        frames += 1;
    }
}

fn valid_stream(channel: u64, job: &str, message: &str, payload: &[u8]) -> Vec<u8> {
    let frames = [
        ControlFrame::PartitionRequest {
            channel,
            partition: PartitionId {
                job_id: job.to_string(),
                job_edge: 1,
                producer_subtask: 2,
                attempt: 0,
            },
            subpartition: 3,
            credit: 2,
            event_credit: 8,
        },
        ControlFrame::AddCredit {
            channel,
            credit: 1,
            event_credit: 1,
        },
        ControlFrame::BacklogAnnouncement { channel, backlog: 4 },
        ControlFrame::ErrorResponse {
            channel: Some(channel),
            code: ErrorCode::PartitionNotFound,
            message: message.to_string(),
        },
    ];
    let mut out = hello().to_vec();
    for f in &frames {
        out.extend_from_slice(&encode_control(f));
    }
    write_buffer(&mut out, channel, 0, 1, KIND_DATA, payload).expect("encodes");
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn arbitrary_bytes_are_frames_or_a_wire_error(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        read_all(&bytes);
    }

    #[test]
    fn mutated_valid_frames_are_frames_or_a_wire_error(
        channel in any::<u64>(),
        job in "[0-9a-f]{0,32}",
        message in ".{0,40}",
        payload in proptest::collection::vec(any::<u8>(), 0..64),
        mutations in mutations(1..6),
    ) {
        let valid = valid_stream(channel, &job, &message, &payload);
        prop_assert_eq!(read_all(&valid[HELLO_LEN..]), 5);
        read_all(&mutate(&valid[HELLO_LEN..], &mutations));
    }
}

#[test]
fn a_frame_announcing_four_gigabytes_is_refused_before_reading_it() {
    let mut bytes = u32::MAX.to_be_bytes().to_vec();
    bytes.push(7);
    let mut scratch = Vec::new();
    let err = read_frame(&mut &bytes[..], &mut scratch).unwrap_err().to_string();
    assert!(err.contains("exceeds the maximum"), "{err}");
    assert!(scratch.capacity() < 1024);
}

#[test]
fn the_protocol_corpus_replays_without_panicking() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/protocol");
    for (_, bytes) in corpus(&dir).expect("corpus readable") {
        read_all(&bytes);
    }
}
