//! Encoding and decoding of the data protocol's handshake and frames (layout in the
//! [module docs of `remote`](super)).
//!
//! Decoding treats its input as untrusted: every length is checked before anything is
//! allocated or read ([`MAX_FRAME_LENGTH`] for any frame, [`MAX_CONTROL_FRAME_LENGTH`]
//! for frames other than BufferResponse), every field is range-checked, and a frame
//! must be consumed exactly; violations are [`WireError`]s, never panics.

use super::PartitionId;
use std::io::{self, ErrorKind, Read, Write};
use thiserror::Error;

/// First four bytes of every handshake: `"WEIR"`.
pub const MAGIC: u32 = 0x5745_4952;

/// The version of the data protocol this build speaks; peers must speak the same.
/// Version 2: events carry a checkpoint barrier's alignment and aligned-checkpoint
/// timeout (unaligned checkpoints). Version 3: priority events (BufferResponse kind 2,
/// unaligned checkpoint barriers that overtake in-flight data).
pub const PROTOCOL_VERSION: u16 = 3;

/// Largest frame accepted (length field), 64 MiB.
pub const MAX_FRAME_LENGTH: usize = 64 << 20;

/// Largest frame other than a BufferResponse accepted, 1 MiB.
pub const MAX_CONTROL_FRAME_LENGTH: usize = 1 << 20;

/// Bytes of a handshake hello.
pub(crate) const HELLO_LEN: usize = 8;

/// Channel id of an ErrorResponse about the whole connection.
pub(crate) const CONNECTION_WIDE: u64 = u64::MAX;

const PARTITION_REQUEST: u8 = 1;
const ADD_CREDIT: u8 = 2;
const CANCEL_PARTITION_REQUEST: u8 = 3;
const PARTITION_REQUEST_ACCEPTED: u8 = 4;
const BUFFER_RESPONSE: u8 = 5;
const BACKLOG_ANNOUNCEMENT: u8 = 6;
const ERROR_RESPONSE: u8 = 7;

/// Bytes of a BufferResponse body before the payload.
const BUFFER_HEADER_LEN: usize = 8 + 8 + 4 + 1 + 4;

/// Payload kind of a BufferResponse: a data buffer.
pub(crate) const KIND_DATA: u8 = 0;
/// Payload kind of a BufferResponse: an event in weir_core's codec.
pub(crate) const KIND_EVENT: u8 = 1;
/// Payload kind of a BufferResponse: a priority event in weir_core's codec; the
/// receiver queues it ahead of the buffers it received before it.
pub(crate) const KIND_PRIORITY_EVENT: u8 = 2;

/// Why an ErrorResponse was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorCode {
    /// The partition is not registered (yet): retry.
    PartitionNotFound,
    /// The producer went away before EndOfPartition.
    ProducerFailed,
    /// The partition was released (its job ended or restarts).
    PartitionReleased,
    /// The subpartition is read by another consumer already.
    AlreadyConsumed,
    /// The request names no valid subpartition.
    InvalidRequest,
    /// The peers speak different protocol versions.
    VersionMismatch,
    /// The partition was registered and is gone (a blocking partition released once
    /// its consumers finished): its producer must run again. The message says why.
    PartitionGone,
    /// The partition's stored data cannot be read (a blocking partition's spill file is
    /// unreadable or truncated); the message names the file and the cause.
    PartitionFailed,
    /// A code this build does not know.
    Unknown(u8),
}

impl ErrorCode {
    fn to_u8(self) -> u8 {
        match self {
            ErrorCode::PartitionNotFound => 1,
            ErrorCode::ProducerFailed => 2,
            ErrorCode::PartitionReleased => 3,
            ErrorCode::AlreadyConsumed => 4,
            ErrorCode::InvalidRequest => 5,
            ErrorCode::VersionMismatch => 6,
            ErrorCode::PartitionGone => 7,
            ErrorCode::PartitionFailed => 8,
            ErrorCode::Unknown(c) => c,
        }
    }

    fn from_u8(c: u8) -> Self {
        match c {
            1 => ErrorCode::PartitionNotFound,
            2 => ErrorCode::ProducerFailed,
            3 => ErrorCode::PartitionReleased,
            4 => ErrorCode::AlreadyConsumed,
            5 => ErrorCode::InvalidRequest,
            6 => ErrorCode::VersionMismatch,
            7 => ErrorCode::PartitionGone,
            8 => ErrorCode::PartitionFailed,
            other => ErrorCode::Unknown(other),
        }
    }
}

/// Every frame except the payload-carrying BufferResponse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ControlFrame {
    /// Client → server: read `subpartition` of `partition` on `channel`.
    PartitionRequest {
        channel: u64,
        partition: PartitionId,
        subpartition: u32,
        credit: u32,
        event_credit: u32,
    },
    /// Client → server: more credit for `channel`.
    AddCredit {
        channel: u64,
        credit: u32,
        event_credit: u32,
    },
    /// Client → server: the consumer of `channel` went away.
    CancelPartitionRequest { channel: u64 },
    /// Server → client: `channel` is being served.
    PartitionRequestAccepted { channel: u64 },
    /// Server → client: the sender of `channel` has no credit but this backlog.
    BacklogAnnouncement { channel: u64, backlog: u32 },
    /// Server → client: `channel` (or, with `None`, the connection) failed.
    ErrorResponse {
        channel: Option<u64>,
        code: ErrorCode,
        message: String,
    },
}

/// The fixed part of a BufferResponse; `size` payload bytes follow on the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BufferHeader {
    pub(crate) channel: u64,
    pub(crate) sequence: u64,
    pub(crate) backlog: u32,
    pub(crate) kind: u8,
    pub(crate) size: usize,
}

/// A decoded frame.
#[derive(Debug)]
pub(crate) enum Frame {
    /// A control frame, read completely.
    Control(ControlFrame),
    /// A BufferResponse whose payload is still to be read (exactly `size` bytes).
    Buffer(BufferHeader),
}

/// Why a byte stream is not a valid frame sequence.
#[derive(Debug, Error)]
pub(crate) enum WireError {
    /// Reading failed.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// The stream ended inside a frame.
    #[error("truncated frame: the stream ended inside {0}")]
    Truncated(&'static str),
    /// The bytes do not follow the protocol.
    #[error("malformed frame: {0}")]
    Malformed(String),
}

/// The 8-byte hello of this build.
pub(crate) fn hello() -> [u8; HELLO_LEN] {
    let mut out = [0u8; HELLO_LEN];
    out[..4].copy_from_slice(&MAGIC.to_be_bytes());
    out[4..6].copy_from_slice(&PROTOCOL_VERSION.to_be_bytes());
    out
}

/// Splits a hello into `(magic, version)`.
pub(crate) fn parse_hello(bytes: &[u8; HELLO_LEN]) -> (u32, u16) {
    let magic = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let version = u16::from_be_bytes([bytes[4], bytes[5]]);
    (magic, version)
}

fn frame_with(ty: u8, body: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&[0; 4]);
    out.push(ty);
    body(&mut out);
    let len = (out.len() - 4) as u32;
    out[..4].copy_from_slice(&len.to_be_bytes());
    out
}

/// The bytes of a control frame.
pub(crate) fn encode_control(frame: &ControlFrame) -> Vec<u8> {
    match frame {
        ControlFrame::PartitionRequest {
            channel,
            partition,
            subpartition,
            credit,
            event_credit,
        } => frame_with(PARTITION_REQUEST, |b| {
            b.extend_from_slice(&channel.to_be_bytes());
            b.extend_from_slice(&subpartition.to_be_bytes());
            b.extend_from_slice(&credit.to_be_bytes());
            b.extend_from_slice(&event_credit.to_be_bytes());
            b.extend_from_slice(&partition.job_edge.to_be_bytes());
            b.extend_from_slice(&partition.producer_subtask.to_be_bytes());
            b.extend_from_slice(&partition.attempt.to_be_bytes());
            // Job ids are 32 hex characters; anything longer is cut at 64 KiB.
            let job = partition.job_id.as_bytes();
            let job = &job[..job.len().min(u16::MAX as usize)];
            b.extend_from_slice(&(job.len() as u16).to_be_bytes());
            b.extend_from_slice(job);
        }),
        ControlFrame::AddCredit {
            channel,
            credit,
            event_credit,
        } => frame_with(ADD_CREDIT, |b| {
            b.extend_from_slice(&channel.to_be_bytes());
            b.extend_from_slice(&credit.to_be_bytes());
            b.extend_from_slice(&event_credit.to_be_bytes());
        }),
        ControlFrame::CancelPartitionRequest { channel } => frame_with(CANCEL_PARTITION_REQUEST, |b| {
            b.extend_from_slice(&channel.to_be_bytes());
        }),
        ControlFrame::PartitionRequestAccepted { channel } => frame_with(PARTITION_REQUEST_ACCEPTED, |b| {
            b.extend_from_slice(&channel.to_be_bytes());
        }),
        ControlFrame::BacklogAnnouncement { channel, backlog } => frame_with(BACKLOG_ANNOUNCEMENT, |b| {
            b.extend_from_slice(&channel.to_be_bytes());
            b.extend_from_slice(&backlog.to_be_bytes());
        }),
        ControlFrame::ErrorResponse { channel, code, message } => frame_with(ERROR_RESPONSE, |b| {
            b.extend_from_slice(&channel.unwrap_or(CONNECTION_WIDE).to_be_bytes());
            b.push(code.to_u8());
            // Keep the frame well below the control frame limit.
            let mut end = message.len().min(MAX_CONTROL_FRAME_LENGTH / 2);
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            b.extend_from_slice(&(end as u32).to_be_bytes());
            b.extend_from_slice(&message.as_bytes()[..end]);
        }),
    }
}

/// Writes a control frame.
pub(crate) fn write_control<W: Write>(out: &mut W, frame: &ControlFrame) -> io::Result<()> {
    out.write_all(&encode_control(frame))
}

/// Writes a BufferResponse carrying `payload`.
pub(crate) fn write_buffer<W: Write>(
    out: &mut W,
    channel: u64,
    sequence: u64,
    backlog: usize,
    kind: u8,
    payload: &[u8],
) -> io::Result<()> {
    let size = u32::try_from(payload.len())
        .ok()
        .filter(|&s| (s as usize) + BUFFER_HEADER_LEN < MAX_FRAME_LENGTH)
        .ok_or_else(|| io::Error::new(ErrorKind::InvalidInput, "buffer too large for a frame"))?;
    let mut head = [0u8; 5 + BUFFER_HEADER_LEN];
    let len = (1 + BUFFER_HEADER_LEN) as u32 + size;
    head[..4].copy_from_slice(&len.to_be_bytes());
    head[4] = BUFFER_RESPONSE;
    head[5..13].copy_from_slice(&channel.to_be_bytes());
    head[13..21].copy_from_slice(&sequence.to_be_bytes());
    let backlog = u32::try_from(backlog).unwrap_or(u32::MAX);
    head[21..25].copy_from_slice(&backlog.to_be_bytes());
    head[25] = kind;
    head[26..30].copy_from_slice(&size.to_be_bytes());
    out.write_all(&head)?;
    out.write_all(payload)
}

/// Fills `buf` completely; `Ok(false)` when the stream ended before its first byte.
fn read_exact_or_eof<R: Read>(input: &mut R, buf: &mut [u8], what: &'static str) -> Result<bool, WireError> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => return Err(WireError::Truncated(what)),
            Ok(n) => filled += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(WireError::Io(e)),
        }
    }
    Ok(true)
}

fn read_exact<R: Read>(input: &mut R, buf: &mut [u8], what: &'static str) -> Result<(), WireError> {
    match input.read_exact(buf) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => Err(WireError::Truncated(what)),
        Err(e) => Err(WireError::Io(e)),
    }
}

/// Reads the next frame. `Ok(None)` is a clean end of the stream (between frames). The
/// payload of a [`Frame::Buffer`] is left on the stream for the caller.
pub(crate) fn read_frame<R: Read>(input: &mut R, scratch: &mut Vec<u8>) -> Result<Option<Frame>, WireError> {
    let mut head = [0u8; 5];
    if !read_exact_or_eof(input, &mut head, "a frame header")? {
        return Ok(None);
    }
    let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
    let ty = head[4];
    if len == 0 {
        return Err(WireError::Malformed("frame length 0".into()));
    }
    if len > MAX_FRAME_LENGTH {
        return Err(WireError::Malformed(format!(
            "frame length {len} exceeds the maximum of {MAX_FRAME_LENGTH} bytes"
        )));
    }
    let body_len = len - 1;
    if ty == BUFFER_RESPONSE {
        if body_len < BUFFER_HEADER_LEN {
            return Err(WireError::Malformed(format!("BufferResponse of {body_len} bytes")));
        }
        let mut b = [0u8; BUFFER_HEADER_LEN];
        read_exact(input, &mut b, "a BufferResponse header")?;
        let mut c = Cursor::new(&b);
        let header = BufferHeader {
            channel: c.u64()?,
            sequence: c.u64()?,
            backlog: c.u32()?,
            kind: c.u8()?,
            size: c.u32()? as usize,
        };
        if header.size != body_len - BUFFER_HEADER_LEN {
            return Err(WireError::Malformed(format!(
                "BufferResponse says {} payload bytes, frame holds {}",
                header.size,
                body_len - BUFFER_HEADER_LEN
            )));
        }
        if !matches!(header.kind, KIND_DATA | KIND_EVENT | KIND_PRIORITY_EVENT) {
            return Err(WireError::Malformed(format!("unknown buffer kind {}", header.kind)));
        }
        return Ok(Some(Frame::Buffer(header)));
    }
    if !(PARTITION_REQUEST..=ERROR_RESPONSE).contains(&ty) {
        return Err(WireError::Malformed(format!("unknown frame type {ty}")));
    }
    if body_len > MAX_CONTROL_FRAME_LENGTH {
        return Err(WireError::Malformed(format!(
            "control frame of type {ty} with {body_len} bytes exceeds {MAX_CONTROL_FRAME_LENGTH}"
        )));
    }
    scratch.clear();
    scratch.resize(body_len, 0);
    read_exact(input, scratch, "a frame body")?;
    let mut c = Cursor::new(scratch);
    let frame = match ty {
        PARTITION_REQUEST => {
            let channel = c.u64()?;
            let subpartition = c.u32()?;
            let credit = c.u32()?;
            let event_credit = c.u32()?;
            let job_edge = c.u32()?;
            let producer_subtask = c.u32()?;
            let attempt = c.u32()?;
            let job_len = c.u16()? as usize;
            let job_id = std::str::from_utf8(c.bytes(job_len)?)
                .map_err(|_| WireError::Malformed("job id is not UTF-8".into()))?
                .to_owned();
            ControlFrame::PartitionRequest {
                channel,
                partition: PartitionId {
                    job_id,
                    job_edge,
                    producer_subtask,
                    attempt,
                },
                subpartition,
                credit,
                event_credit,
            }
        }
        ADD_CREDIT => ControlFrame::AddCredit {
            channel: c.u64()?,
            credit: c.u32()?,
            event_credit: c.u32()?,
        },
        CANCEL_PARTITION_REQUEST => ControlFrame::CancelPartitionRequest { channel: c.u64()? },
        PARTITION_REQUEST_ACCEPTED => ControlFrame::PartitionRequestAccepted { channel: c.u64()? },
        BACKLOG_ANNOUNCEMENT => ControlFrame::BacklogAnnouncement {
            channel: c.u64()?,
            backlog: c.u32()?,
        },
        _ => {
            let channel = c.u64()?;
            let code = ErrorCode::from_u8(c.u8()?);
            let len = c.u32()? as usize;
            let message = String::from_utf8_lossy(c.bytes(len)?).into_owned();
            ControlFrame::ErrorResponse {
                channel: (channel != CONNECTION_WIDE).then_some(channel),
                code,
                message,
            }
        }
    };
    c.finish(ty)?;
    Ok(Some(Frame::Control(frame)))
}

/// Reads big-endian fields from a frame body, checking bounds.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, at: 0 }
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| WireError::Malformed("frame body shorter than its fields".into()))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    fn finish(&self, ty: u8) -> Result<(), WireError> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(WireError::Malformed(format!(
                "{} trailing bytes in a frame of type {ty}",
                self.bytes.len() - self.at
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid() -> PartitionId {
        PartitionId {
            job_id: "0123456789abcdef0123456789abcdef".into(),
            job_edge: 3,
            producer_subtask: 7,
            attempt: 2,
        }
    }

    #[test]
    fn control_frames_round_trip() {
        let frames = vec![
            ControlFrame::PartitionRequest {
                channel: 5,
                partition: pid(),
                subpartition: 9,
                credit: 2,
                event_credit: 256,
            },
            ControlFrame::AddCredit {
                channel: u64::MAX - 1,
                credit: 3,
                event_credit: 1,
            },
            ControlFrame::CancelPartitionRequest { channel: 1 },
            ControlFrame::PartitionRequestAccepted { channel: 1 },
            ControlFrame::BacklogAnnouncement {
                channel: 4,
                backlog: 17,
            },
            ControlFrame::ErrorResponse {
                channel: Some(4),
                code: ErrorCode::PartitionNotFound,
                message: "no partition ü".into(),
            },
            ControlFrame::ErrorResponse {
                channel: None,
                code: ErrorCode::Unknown(99),
                message: String::new(),
            },
        ];
        let mut bytes = Vec::new();
        for f in &frames {
            write_control(&mut bytes, f).unwrap();
        }
        let mut input = &bytes[..];
        let mut scratch = Vec::new();
        for f in &frames {
            match read_frame(&mut input, &mut scratch).unwrap() {
                Some(Frame::Control(got)) => assert_eq!(&got, f),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(read_frame(&mut input, &mut scratch).unwrap().is_none());
    }

    #[test]
    fn buffer_responses_leave_their_payload_on_the_stream() {
        let mut bytes = Vec::new();
        write_buffer(&mut bytes, 7, 42, 3, KIND_DATA, b"hello").unwrap();
        let mut input = &bytes[..];
        let mut scratch = Vec::new();
        let Some(Frame::Buffer(h)) = read_frame(&mut input, &mut scratch).unwrap() else {
            panic!("not a buffer");
        };
        assert_eq!(
            h,
            BufferHeader {
                channel: 7,
                sequence: 42,
                backlog: 3,
                kind: KIND_DATA,
                size: 5
            }
        );
        assert_eq!(input, b"hello");
    }

    #[test]
    fn priority_events_have_their_own_buffer_kind_and_unknown_kinds_are_refused() {
        let mut bytes = Vec::new();
        write_buffer(&mut bytes, 1, 0, 0, KIND_PRIORITY_EVENT, b"ev").unwrap();
        let mut scratch = Vec::new();
        match read_frame(&mut &bytes[..], &mut scratch).unwrap() {
            Some(Frame::Buffer(h)) => assert_eq!(h.kind, KIND_PRIORITY_EVENT),
            other => panic!("unexpected {other:?}"),
        }
        let mut bad = Vec::new();
        write_buffer(&mut bad, 1, 0, 0, 3, b"ev").unwrap();
        assert!(matches!(
            read_frame(&mut &bad[..], &mut scratch),
            Err(WireError::Malformed(m)) if m.contains("unknown buffer kind 3")
        ));
    }

    #[test]
    fn garbage_is_an_error_never_a_panic() {
        let mut scratch = Vec::new();
        let unknown = [0, 0, 0, 1, 99];
        assert!(matches!(
            read_frame(&mut &unknown[..], &mut scratch),
            Err(WireError::Malformed(m)) if m.contains("unknown frame type 99")
        ));
        let huge = [0xff, 0xff, 0xff, 0xff, 1];
        assert!(matches!(
            read_frame(&mut &huge[..], &mut scratch),
            Err(WireError::Malformed(m)) if m.contains("exceeds the maximum")
        ));
        let mut truncated = encode_control(&ControlFrame::AddCredit {
            channel: 1,
            credit: 1,
            event_credit: 0,
        });
        truncated.truncate(truncated.len() - 2);
        assert!(matches!(
            read_frame(&mut &truncated[..], &mut scratch),
            Err(WireError::Truncated(_))
        ));
        // A body that is too short for its fields, and one with trailing bytes.
        let short = [0, 0, 0, 3, ADD_CREDIT, 0, 0];
        assert!(matches!(
            read_frame(&mut &short[..], &mut scratch),
            Err(WireError::Malformed(_))
        ));
        let mut long = encode_control(&ControlFrame::CancelPartitionRequest { channel: 1 });
        long.push(0);
        long[3] += 1;
        assert!(matches!(
            read_frame(&mut &long[..], &mut scratch),
            Err(WireError::Malformed(m)) if m.contains("trailing")
        ));
        // Fuzz: arbitrary bytes never panic.
        let mut seed = 1u64;
        for _ in 0..2000 {
            let mut bytes = Vec::new();
            for _ in 0..(seed % 64) {
                seed = weir_core::ids::splitmix64(seed);
                bytes.push(seed as u8);
            }
            // Keep lengths small so the fuzz does not read megabytes.
            if bytes.len() > 4 {
                bytes[0] = 0;
                bytes[1] = 0;
            }
            let mut input = &bytes[..];
            while let Ok(Some(Frame::Control(_))) = read_frame(&mut input, &mut scratch) {}
        }
    }

    #[test]
    fn the_hello_carries_magic_and_version() {
        assert_eq!(parse_hello(&hello()), (MAGIC, PROTOCOL_VERSION));
        assert_eq!(&hello()[..4], b"WEIR");
    }
}
