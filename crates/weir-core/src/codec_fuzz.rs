//! Hostile bytes against the record codec: arbitrary bytes and mutated valid frames,
//! whole or split at arbitrary buffer boundaries, never panic and never make the
//! decoder hold more than it was given; values decoded from arbitrary bytes with a
//! huge length prefix fail instead of allocating that length.

use crate::codec::{decode, encode, encode_frame, FrameDecoder};
use crate::fuzz::{cases, corpus, mutate, mutations};
use crate::{CheckpointBarrier, CheckpointOptions, CheckpointingMode, Event, StreamRecord, Watermark};
use proptest::prelude::*;

type Rec = (u64, String, Vec<u32>);

/// Decodes `bytes` split at `cuts` as records and as events; returns the records.
fn feed(bytes: &[u8], cuts: &[usize]) -> Vec<StreamRecord<Rec>> {
    let mut decoder = FrameDecoder::new();
    let mut got = Vec::new();
    let mut at = 0;
    for (i, cut) in cuts.iter().cycle().enumerate() {
        if at >= bytes.len() || i > bytes.len() {
            break;
        }
        let end = (at + cut.max(&1)).min(bytes.len());
        let result = decoder.decode_buffer::<Rec, _>(&bytes[at..end], |r| {
            got.push(r);
            Ok(())
        });
        assert!(decoder.pending_bytes().len() <= bytes.len());
        if result.is_err() {
            break;
        }
        at = end;
    }
    check_values(bytes);
    got
}

/// Decodes `bytes` as an event and as strings: what decodes re-encodes to the same
/// value and holds no more bytes than it was decoded from.
fn check_values(bytes: &[u8]) {
    if let Ok(event) = decode::<Event>(bytes) {
        assert_eq!(decode::<Event>(&encode(&event).expect("encodes")).ok(), Some(event));
    }
    if let Ok(strings) = decode::<Vec<String>>(bytes) {
        assert!(strings.iter().map(String::len).sum::<usize>() <= bytes.len());
    }
}

fn valid_frames(values: &[(u64, String, Option<i64>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (a, s, ts) in values {
        let record = StreamRecord {
            value: (*a, s.clone(), vec![*a as u32; s.len() % 5]),
            timestamp: *ts,
        };
        encode_frame(&mut out, &record).expect("encodes");
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn arbitrary_bytes_decode_to_an_error_or_records_without_panicking(
        bytes in proptest::collection::vec(any::<u8>(), 0..512),
        cuts in proptest::collection::vec(1usize..64, 1..8),
    ) {
        feed(&bytes, &cuts);
    }

    #[test]
    fn mutated_valid_frames_decode_to_an_error_or_records_without_panicking(
        values in proptest::collection::vec((any::<u64>(), ".{0,20}", proptest::option::of(any::<i64>())), 1..8),
        mutations in mutations(1..6),
        cuts in proptest::collection::vec(1usize..64, 1..8),
    ) {
        let bytes = mutate(&valid_frames(&values), &mutations);
        feed(&bytes, &cuts);
    }

    #[test]
    fn mutated_events_decode_to_an_error_or_an_event(
        id in any::<u64>(),
        mutations in mutations(1..6),
    ) {
        let barrier = Event::CheckpointBarrier(CheckpointBarrier {
            id,
            timestamp: 1_700_000_000_000,
            options: CheckpointOptions::checkpoint(CheckpointingMode::ExactlyOnce),
        });
        for event in [Event::EndOfPartition, Event::Watermark(Watermark(id as i64)), barrier] {
            check_values(&mutate(&encode(&event).expect("encodes"), &mutations));
        }
    }
}

#[test]
fn a_length_prefix_of_u64_max_fails_without_allocating() {
    let mut bytes = vec![0u8; 8];
    bytes.extend_from_slice(&u64::MAX.to_le_bytes());
    let err = decode::<(u64, String)>(&bytes).unwrap_err().to_string();
    assert!(err.starts_with("could not decode a value"), "{err}");
    let mut frame = vec![0u8];
    frame.extend_from_slice(&u32::MAX.to_le_bytes());
    let mut decoder = FrameDecoder::new();
    decoder
        .decode_buffer::<Rec, _>(&frame, |_| Ok(()))
        .expect("an incomplete frame is kept");
    assert_eq!(decoder.pending_bytes().len(), frame.len());
}

#[test]
fn the_codec_corpus_replays_without_panicking() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/codec");
    for (path, bytes) in corpus(&dir).expect("corpus readable") {
        let got = feed(&bytes, &[7, 1, 64]);
        assert!(got.len() <= bytes.len(), "{}", path.display());
    }
}
