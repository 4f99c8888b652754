//! The binary codec for records in network buffers.
//!
//! Values are encoded with bincode (fixed-width little-endian integers, strings and
//! sequences prefixed by a u64 length). In a buffer each record is a *frame*:
//!
//! ```text
//! tag: u8 (0 = no timestamp, 1 = timestamp follows) | [timestamp: i64 LE] | len: u32 LE | payload
//! ```
//!
//! Frames may span buffers: [`FrameDecoder`] keeps the unfinished tail of one buffer
//! and completes it with the next.

use crate::element::StreamRecord;
use crate::error::CoreError;
use serde::de::DeserializeOwned;
use serde::Serialize;

const TAG_NO_TS: u8 = 0;
const TAG_TS: u8 = 1;

/// Appends the bincode encoding of `value` to `buf`.
pub fn encode_into<T: Serialize + ?Sized>(buf: &mut Vec<u8>, value: &T) -> Result<(), CoreError> {
    bincode::serialize_into(buf, value).map_err(|e| CoreError::Encode(e.to_string()))
}

/// Writes the bincode encoding of `value` to the front of `buf`; the number of bytes
/// written, or `None` if the encoding does not fit (or fails).
#[inline]
pub fn encode_into_slice<T: Serialize + ?Sized>(buf: &mut [u8], value: &T) -> Option<usize> {
    let capacity = buf.len();
    let mut rest = &mut buf[..];
    bincode::serialize_into(&mut rest, value).ok()?;
    Some(capacity - rest.len())
}

/// Encodes `value` into a new vector.
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, CoreError> {
    bincode::serialize(value).map_err(|e| CoreError::Encode(e.to_string()))
}

/// Decodes a value from exactly `bytes`.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CoreError> {
    bincode::deserialize(bytes).map_err(|e| CoreError::Decode(e.to_string()))
}

/// Appends one record frame for `record` to `out`.
pub fn encode_frame<T: Serialize>(out: &mut Vec<u8>, record: &StreamRecord<T>) -> Result<(), CoreError> {
    match record.timestamp {
        None => out.push(TAG_NO_TS),
        Some(ts) => {
            out.push(TAG_TS);
            out.extend_from_slice(&ts.to_le_bytes());
        }
    }
    let len_at = out.len();
    out.extend_from_slice(&[0; 4]);
    encode_into(out, &record.value)?;
    let len = out.len() - len_at - 4;
    let len = u32::try_from(len).map_err(|_| CoreError::Encode(format!("record of {len} bytes exceeds 4 GiB")))?;
    out[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
    Ok(())
}

/// Decodes record frames from a sequence of buffers, completing frames that span
/// buffer boundaries.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    pending: Vec<u8>,
}

impl FrameDecoder {
    /// A decoder with no pending bytes.
    pub fn new() -> Self {
        Self::default()
    }

    /// True when a frame is partially received.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The bytes of the partially received frame (empty when none): the prefix of the
    /// next frame, which the following buffers complete.
    pub fn pending_bytes(&self) -> &[u8] {
        &self.pending
    }

    /// Decodes every complete frame of `buffer` (preceded by any pending tail of the
    /// previous buffer), calling `f` for each; keeps an incomplete last frame.
    pub fn decode_buffer<T, F>(&mut self, buffer: &[u8], mut f: F) -> Result<(), CoreError>
    where
        T: DeserializeOwned,
        F: FnMut(StreamRecord<T>) -> Result<(), CoreError>,
    {
        let mut data = buffer;
        if !self.pending.is_empty() {
            // Complete the pending frame with as many bytes as it needs.
            loop {
                match frame_len(&self.pending)? {
                    Some(total) => {
                        let need = total - self.pending.len();
                        let take = need.min(data.len());
                        self.pending.extend_from_slice(&data[..take]);
                        data = &data[take..];
                        if take < need {
                            return Ok(());
                        }
                        let pending = std::mem::take(&mut self.pending);
                        let (rec, _) = decode_frame::<T>(&pending)?
                            .ok_or_else(|| CoreError::CorruptStream("pending frame incomplete".into()))?;
                        f(rec)?;
                        break;
                    }
                    None => {
                        if data.is_empty() {
                            return Ok(());
                        }
                        self.pending.push(data[0]);
                        data = &data[1..];
                    }
                }
            }
        }
        while !data.is_empty() {
            match decode_frame::<T>(data)? {
                Some((rec, used)) => {
                    data = &data[used..];
                    f(rec)?;
                }
                None => {
                    self.pending.extend_from_slice(data);
                    break;
                }
            }
        }
        Ok(())
    }
}

/// Total length of the frame starting at `bytes[0]`, if its header is complete.
fn frame_len(bytes: &[u8]) -> Result<Option<usize>, CoreError> {
    let Some(&tag) = bytes.first() else { return Ok(None) };
    let header = if tag > TAG_TS {
        return Err(CoreError::CorruptStream(format!("unknown frame tag {tag}")));
    } else if tag & TAG_TS != 0 {
        13
    } else {
        5
    };
    if bytes.len() < header {
        return Ok(None);
    }
    let mut len = [0u8; 4];
    len.copy_from_slice(&bytes[header - 4..header]);
    Ok(Some(header + u32::from_le_bytes(len) as usize))
}

/// Decodes one complete frame from the start of `bytes`; `None` if it is incomplete.
fn decode_frame<T: DeserializeOwned>(bytes: &[u8]) -> Result<Option<(StreamRecord<T>, usize)>, CoreError> {
    let Some(&tag) = bytes.first() else {
        return Ok(None);
    };
    if tag > TAG_TS {
        return Err(CoreError::CorruptStream(format!("unknown frame tag {tag}")));
    }
    let (timestamp, header) = match bytes.get(..13) {
        Some(head) if tag & TAG_TS != 0 => {
            let mut ts = [0u8; 8];
            ts.copy_from_slice(&head[1..9]);
            (Some(i64::from_le_bytes(ts)), 13)
        }
        None if tag & TAG_TS != 0 => return Ok(None),
        _ => (None, 5),
    };
    let Some(len) = bytes.get(header - 4..header) else {
        return Ok(None);
    };
    let total = header + u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let Some(payload) = bytes.get(header..total) else {
        return Ok(None);
    };
    let value = decode(payload)?;
    Ok(Some((StreamRecord { value, timestamp }, total)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frames(records: &[StreamRecord<(u64, String)>]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            encode_frame(&mut out, r).unwrap();
        }
        out
    }

    #[test]
    fn records_round_trip_with_and_without_timestamps() {
        let recs = vec![
            StreamRecord::new((1, "a".to_string())),
            StreamRecord::with_timestamp((2, "bb".to_string()), -5),
        ];
        assert_eq!(decode_whole(&frames(&recs)), recs);
    }

    /// The records of `bytes`, decoded in one buffer.
    fn decode_whole<T: DeserializeOwned>(bytes: &[u8]) -> Vec<StreamRecord<T>> {
        let mut got = Vec::new();
        FrameDecoder::new()
            .decode_buffer(bytes, |r| {
                got.push(r);
                Ok(())
            })
            .unwrap();
        got
    }

    #[test]
    fn unknown_frame_tag_is_a_corrupt_stream_error() {
        let err = FrameDecoder::new()
            .decode_buffer::<u64, _>(&[9, 0, 0], |_| Ok(()))
            .unwrap_err();
        assert!(err.to_string().contains("unknown frame tag 9"));
    }

    proptest! {
        #[test]
        fn frames_split_at_any_boundaries_decode_to_the_same_records(
            values in proptest::collection::vec((any::<u64>(), ".{0,40}", proptest::option::of(any::<i64>())), 0..40),
            cuts in proptest::collection::vec(1usize..50, 1..20),
        ) {
            let recs: Vec<_> = values.into_iter().map(|(a, s, ts)| StreamRecord { value: (a, s), timestamp: ts }).collect();
            let bytes = frames(&recs);
            let mut decoder = FrameDecoder::new();
            let mut got = Vec::new();
            let mut at = 0;
            let mut i = 0;
            while at < bytes.len() {
                let end = (at + cuts[i % cuts.len()]).min(bytes.len());
                decoder.decode_buffer(&bytes[at..end], |r| { got.push(r); Ok(()) }).unwrap();
                at = end;
                i += 1;
            }
            prop_assert!(!decoder.has_pending());
            prop_assert_eq!(got, recs);
        }
    }
}
