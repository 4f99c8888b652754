//! The compact binary encoding of a [`Row`] between tasks (network buffers, blocking
//! partitions, channel state): Flink's `BinaryRow` idea without its fixed layout.
//!
//! A row is one byte string, handed to the record codec as serde *bytes* (so bincode
//! frames it with its length and the reader decodes it from the borrowed buffer, with
//! no per-field serde visitor); it is encoded on the stack when it fits in
//! `STACK_ROW_BYTES`:
//!
//! ```text
//! kind: u8 | field count: varint | per field: tag u8 [payload]
//! ```
//!
//! Payloads: integers, dates, times, timestamps and intervals as zigzag LEB128 varints,
//! doubles as their 8 IEEE bytes (so NaN payloads and -0.0 survive), decimals as the
//! zigzag varint of the unscaled `i128` then the scale byte, strings as a varint length
//! then their UTF-8 bytes; NULL and the two booleans are tags without payload.
//!
//! Invariant: decoding an encoding gives back an identical row (same kind, same values
//! of the same variants, bit-identical doubles); any other byte string is an error,
//! never a panic.

use crate::stack_bytes::StackBytes;
use crate::value::{Row, RowKind, Value};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cell::RefCell;
use std::fmt;

/// A field's tag byte: its variant (and, for booleans, its value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Tag {
    Null,
    False,
    True,
    Int,
    Double,
    Decimal,
    Str,
    Date,
    Time,
    Timestamp,
    Interval,
}

/// The tags by their byte.
const TAGS: [Tag; 11] = [
    Tag::Null,
    Tag::False,
    Tag::True,
    Tag::Int,
    Tag::Double,
    Tag::Decimal,
    Tag::Str,
    Tag::Date,
    Tag::Time,
    Tag::Timestamp,
    Tag::Interval,
];

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(256));
}

/// Why a byte string is not an encoded row.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RowCodecError {
    /// The bytes end inside a field.
    #[error("encoded row truncated at byte {0}")]
    Truncated(usize),
    /// An unknown row kind or field tag.
    #[error("encoded row: unknown {what} {value} at byte {at}")]
    UnknownTag {
        /// `row kind` or `field tag`.
        what: &'static str,
        /// The byte read.
        value: u8,
        /// Its offset.
        at: usize,
    },
    /// A varint longer than its type.
    #[error("encoded row: varint too long at byte {0}")]
    VarintOverflow(usize),
    /// A string field that is not UTF-8.
    #[error("encoded row: string field at byte {0} is not valid UTF-8")]
    InvalidUtf8(usize),
    /// Bytes left after the last field.
    #[error("encoded row: {0} bytes after the last field")]
    TrailingBytes(usize),
}

/// Where an encoding is written: a vector, or a fixed buffer on the stack.
trait ByteSink {
    fn push(&mut self, byte: u8);
    fn extend_from_slice(&mut self, bytes: &[u8]);
}

impl ByteSink for Vec<u8> {
    #[inline]
    fn push(&mut self, byte: u8) {
        Vec::push(self, byte);
    }
    #[inline]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        Vec::extend_from_slice(self, bytes);
    }
}

/// Rows whose encoding fits in this many bytes are encoded on the stack.
const STACK_ROW_BYTES: usize = 128;

impl<const N: usize> ByteSink for StackBytes<N> {
    #[inline]
    fn push(&mut self, byte: u8) {
        StackBytes::push(self, byte);
    }
    #[inline]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        StackBytes::extend_from_slice(self, bytes);
    }
}

fn put_varint(out: &mut impl ByteSink, mut v: u128) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i128) -> u128 {
    ((v << 1) ^ (v >> 127)) as u128
}

fn unzigzag(v: u128) -> i128 {
    ((v >> 1) as i128) ^ -((v & 1) as i128)
}

#[inline]
fn put_int(out: &mut impl ByteSink, tag: Tag, v: i64) {
    out.push(tag as u8);
    // The zigzag of an `i64` in 64 bits: the same bytes as `zigzag(v as i128)`.
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// Appends the encoding of `row` to `out`.
pub fn encode_row(out: &mut Vec<u8>, row: &Row) {
    encode_into(out, row);
}

#[inline]
fn encode_into(out: &mut impl ByteSink, row: &Row) {
    out.push(match row.kind {
        RowKind::Insert => 0,
        RowKind::UpdateBefore => 1,
        RowKind::UpdateAfter => 2,
        RowKind::Delete => 3,
    });
    put_varint(out, row.values.len() as u128);
    for v in &row.values {
        match v {
            Value::Null => out.push(Tag::Null as u8),
            Value::Bool(false) => out.push(Tag::False as u8),
            Value::Bool(true) => out.push(Tag::True as u8),
            Value::Int(i) => put_int(out, Tag::Int, *i),
            Value::Double(d) => {
                out.push(Tag::Double as u8);
                out.extend_from_slice(&d.to_bits().to_le_bytes());
            }
            Value::Decimal(u, s) => {
                out.push(Tag::Decimal as u8);
                put_varint(out, zigzag(*u));
                out.push(*s);
            }
            Value::Str(s) => {
                out.push(Tag::Str as u8);
                put_varint(out, s.len() as u128);
                out.extend_from_slice(s.as_bytes());
            }
            Value::Date(d) => put_int(out, Tag::Date, i64::from(*d)),
            Value::Time(t) => put_int(out, Tag::Time, i64::from(*t)),
            Value::Timestamp(ms) => put_int(out, Tag::Timestamp, *ms),
            Value::Interval(ms) => put_int(out, Tag::Interval, *ms),
        }
    }
}

/// A cursor over an encoded row.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, RowCodecError> {
        let b = *self.bytes.get(self.at).ok_or(RowCodecError::Truncated(self.at))?;
        self.at += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], RowCodecError> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let end = end.ok_or(RowCodecError::Truncated(self.bytes.len()))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// A LEB128 varint of at most `max_bits` significant bits.
    fn varint(&mut self, max_bits: u32) -> Result<u128, RowCodecError> {
        let start = self.at;
        let mut v: u128 = 0;
        let mut shift = 0u32;
        loop {
            let b = self.byte()?;
            let chunk = u128::from(b & 0x7f);
            if shift >= max_bits || (chunk << shift) >> shift != chunk {
                return Err(RowCodecError::VarintOverflow(start));
            }
            v |= chunk << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        if max_bits < 128 && v >> max_bits != 0 {
            return Err(RowCodecError::VarintOverflow(start));
        }
        Ok(v)
    }

    /// A LEB128 varint of at most `max_bits` (at most 64) significant bits: what
    /// [`Reader::varint`] reads, in 64-bit arithmetic. A byte past `max_bits` is an
    /// overflow at once; bits beyond `max_bits` in the last bytes are one once the
    /// varint has ended (as in `varint`, so a truncated varint is reported truncated).
    #[inline]
    fn varint64(&mut self, max_bits: u32) -> Result<u64, RowCodecError> {
        let start = self.at;
        // One byte holds seven bits, two hold fourteen, within every `max_bits` used
        // (32 or 64).
        match self.bytes.get(start..) {
            Some(&[b, ..]) if b < 0x80 && max_bits >= 7 => {
                self.at += 1;
                return Ok(u64::from(b));
            }
            Some(&[b0, b1, ..]) if b1 < 0x80 && max_bits >= 14 => {
                self.at += 2;
                return Ok(u64::from(b0 & 0x7f) | u64::from(b1) << 7);
            }
            _ => {}
        }
        let mut v: u64 = 0;
        let mut shift = 0u32;
        let mut excess = false;
        loop {
            let b = self.byte()?;
            if shift >= max_bits {
                return Err(RowCodecError::VarintOverflow(start));
            }
            let chunk = u64::from(b & 0x7f);
            excess |= shift + 7 > max_bits && chunk >> (max_bits - shift) != 0;
            v |= chunk << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        if excess {
            return Err(RowCodecError::VarintOverflow(start));
        }
        Ok(v)
    }

    /// A zigzag varint of a signed integer of at most 64 `bits` (so it fits in them).
    #[inline]
    fn signed64(&mut self, bits: u32) -> Result<i64, RowCodecError> {
        let v = self.varint64(bits)?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// A zigzag varint of a signed integer of `bits` bits (so it fits in them).
    fn signed(&mut self, bits: u32) -> Result<i128, RowCodecError> {
        Ok(unzigzag(self.varint(bits)?))
    }

    /// Reads one field and appends its value to `out` (built in place, not moved).
    fn value_into(&mut self, out: &mut Vec<Value>) -> Result<(), RowCodecError> {
        let at = self.at;
        let byte = self.byte()?;
        let tag = *TAGS.get(usize::from(byte)).ok_or(RowCodecError::UnknownTag {
            what: "field tag",
            value: byte,
            at,
        })?;
        out.push(match tag {
            Tag::Null => Value::Null,
            Tag::False => Value::Bool(false),
            Tag::True => Value::Bool(true),
            Tag::Int => Value::Int(self.signed64(64)?),
            Tag::Double => {
                let b = self.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Value::Double(f64::from_bits(u64::from_le_bytes(a)))
            }
            Tag::Decimal => {
                let u = self.signed(128)?;
                Value::Decimal(u, self.byte()?)
            }
            Tag::Str => {
                let len = usize::try_from(self.varint(64)?).map_err(|_| RowCodecError::Truncated(self.bytes.len()))?;
                let at = self.at;
                let b = self.take(len)?;
                Value::Str(String::from(
                    std::str::from_utf8(b).map_err(|_| RowCodecError::InvalidUtf8(at))?,
                ))
            }
            Tag::Date => Value::Date(self.signed64(32)? as i32),
            Tag::Time => Value::Time(self.signed64(32)? as i32),
            Tag::Timestamp => Value::Timestamp(self.signed64(64)?),
            Tag::Interval => Value::Interval(self.signed64(64)?),
        });
        Ok(())
    }
}

/// Decodes a row encoded by [`encode_row`] from exactly `bytes`.
pub fn decode_row(bytes: &[u8]) -> Result<Row, RowCodecError> {
    let mut r = Reader { bytes, at: 0 };
    let kind = match r.byte()? {
        0 => RowKind::Insert,
        1 => RowKind::UpdateBefore,
        2 => RowKind::UpdateAfter,
        3 => RowKind::Delete,
        value => {
            return Err(RowCodecError::UnknownTag {
                what: "row kind",
                value,
                at: 0,
            })
        }
    };
    let n = r.varint64(32)? as usize;
    // Every field takes at least its tag byte: a count beyond the bytes left is corrupt
    // and must not size the allocation.
    if n > bytes.len() - r.at {
        return Err(RowCodecError::Truncated(bytes.len()));
    }
    let mut values = Vec::with_capacity(n);
    for _ in 0..n {
        r.value_into(&mut values)?;
    }
    if r.at != bytes.len() {
        return Err(RowCodecError::TrailingBytes(bytes.len() - r.at));
    }
    Ok(Row { kind, values })
}

impl Serialize for Row {
    /// The row as serde bytes holding its [`encode_row`] encoding.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize(self, serializer)
    }
}

impl<'de> Deserialize<'de> for Row {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Row, D::Error> {
        deserializer.deserialize_bytes(RowVisitor)
    }
}

fn serialize<S: Serializer>(row: &Row, serializer: S) -> Result<S::Ok, S::Error> {
    let mut stack = StackBytes::<STACK_ROW_BYTES>::new();
    encode_into(&mut stack, row);
    if let Some(bytes) = stack.bytes() {
        return serializer.serialize_bytes(bytes);
    }
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut buf) => {
            buf.clear();
            encode_row(&mut buf, row);
            serializer.serialize_bytes(&buf)
        }
        // A row serialized while another is (a serializer calling back into rows):
        // encode into a buffer of its own.
        Err(_) => {
            let mut buf = Vec::new();
            encode_row(&mut buf, row);
            serializer.serialize_bytes(&buf)
        }
    })
}

struct RowVisitor;

impl<'de> Visitor<'de> for RowVisitor {
    type Value = Row;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the bytes of an encoded row")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Row, E> {
        decode_row(v).map_err(E::custom)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Row, A::Error> {
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(b) = seq.next_element::<u8>()? {
            bytes.push(b);
        }
        decode_row(&bytes).map_err(de::Error::custom)
    }
}

/// One value of every kind, with the extremes of each (for tests).
#[cfg(test)]
pub(crate) fn every_kind_of_value() -> Vec<Value> {
    vec![
        Value::Null,
        Value::Bool(true),
        Value::Bool(false),
        Value::Int(0),
        Value::Int(i64::MIN),
        Value::Int(i64::MAX),
        Value::Int(-7919),
        Value::Double(-0.0),
        Value::Double(f64::NAN),
        Value::Double(0.07),
        Value::Double(f64::INFINITY),
        Value::Decimal(i128::MIN, 38),
        Value::Decimal(i128::MAX, 0),
        Value::Decimal(-5, 2),
        Value::Str(String::new()),
        Value::Str("a,\"b\" ünï".into()),
        Value::Date(-719_162),
        Value::Time(86_399_999),
        Value::Timestamp(1_699_999_980_001),
        Value::Timestamp(i64::MIN),
        Value::Interval(-60_000),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same variant and, for doubles, the same bits (`==` on values compares numbers).
    fn identical(a: &Row, b: &Row) -> bool {
        a.kind == b.kind
            && a.values.len() == b.values.len()
            && a.values.iter().zip(&b.values).all(|(x, y)| match (x, y) {
                (Value::Double(p), Value::Double(q)) => p.to_bits() == q.to_bits(),
                (Value::Int(_), Value::Int(_))
                | (Value::Decimal(..), Value::Decimal(..))
                | (Value::Null, Value::Null)
                | (Value::Bool(_), Value::Bool(_))
                | (Value::Str(_), Value::Str(_))
                | (Value::Date(_), Value::Date(_))
                | (Value::Time(_), Value::Time(_))
                | (Value::Timestamp(_), Value::Timestamp(_))
                | (Value::Interval(_), Value::Interval(_)) => x == y,
                _ => false,
            })
    }

    #[test]
    fn every_value_and_row_kind_survives_the_record_codec_identically() {
        for kind in [
            RowKind::Insert,
            RowKind::UpdateBefore,
            RowKind::UpdateAfter,
            RowKind::Delete,
        ] {
            let row = Row {
                kind,
                values: every_kind_of_value(),
            };
            let bytes = weir_core::codec::encode(&row).unwrap();
            let back: Row = weir_core::codec::decode(&bytes).unwrap();
            assert!(identical(&row, &back), "{row:?} came back as {back:?}");
        }
        let empty = Row::insert(Vec::new());
        let back: Row = weir_core::codec::decode(&weir_core::codec::encode(&empty).unwrap()).unwrap();
        assert!(identical(&empty, &back));
    }

    #[test]
    fn a_row_of_small_numbers_encodes_in_a_few_bytes() {
        let row = Row::insert(vec![
            Value::Timestamp(1_699_999_980_001),
            Value::Int(7919),
            Value::Double(0.07),
        ]);
        let mut out = Vec::new();
        encode_row(&mut out, &row);
        // kind, count, then 1+6, 1+2 and 1+8 bytes of fields.
        assert_eq!(out.len(), 2 + 7 + 3 + 9);
    }

    #[test]
    fn rows_too_long_for_the_stack_encode_as_short_ones_do() {
        for len in [0, STACK_ROW_BYTES - 4, STACK_ROW_BYTES - 3, STACK_ROW_BYTES - 2, 1000] {
            let row = Row::insert(vec![Value::Int(1), Value::Str("x".repeat(len))]);
            let mut direct = Vec::new();
            encode_row(&mut direct, &row);
            let mut framed = (direct.len() as u64).to_le_bytes().to_vec();
            framed.extend_from_slice(&direct);
            assert_eq!(weir_core::codec::encode(&row).unwrap(), framed, "{len}");
            let back: Row = weir_core::codec::decode(&framed).unwrap();
            assert!(identical(&row, &back), "{len}");
        }
    }

    #[test]
    fn corrupt_encodings_are_errors_not_panics() {
        let mut good = Vec::new();
        encode_row(&mut good, &Row::insert(every_kind_of_value()));
        for cut in 0..good.len() {
            assert!(decode_row(&good[..cut]).is_err(), "a row cut at {cut} decoded");
        }
        let mut trailing = good.clone();
        trailing.push(0);
        assert_eq!(decode_row(&trailing), Err(RowCodecError::TrailingBytes(1)));
        assert!(matches!(
            decode_row(&[9, 0]),
            Err(RowCodecError::UnknownTag { what: "row kind", .. })
        ));
        assert!(matches!(
            decode_row(&[0, 1, 99]),
            Err(RowCodecError::UnknownTag { what: "field tag", .. })
        ));
        assert_eq!(
            decode_row(&[0, 1, Tag::Str as u8, 1, 0xff]),
            Err(RowCodecError::InvalidUtf8(4))
        );
        let huge_int = [
            0,
            1,
            Tag::Int as u8,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0xff,
            0x7f,
        ];
        assert!(matches!(decode_row(&huge_int), Err(RowCodecError::VarintOverflow(_))));
        assert_eq!(decode_row(&[0, 0x7f]), Err(RowCodecError::Truncated(2)));
    }

    #[test]
    fn sixty_four_bit_varints_read_what_the_general_reader_reads() {
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for v in [
            0u128,
            1,
            127,
            128,
            300,
            u32::MAX as u128,
            1 << 32,
            u64::MAX as u128,
            1 << 64,
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            cases.push(out);
        }
        cases.extend([
            vec![0x80],
            vec![0xff; 9],
            vec![0xff; 10],
            vec![0xff, 0xff, 0xff, 0xff, 0x1f],
            vec![0xff, 0xff, 0xff, 0xff, 0x10],
            vec![0xff, 0xff, 0xff, 0xff, 0x0f],
            vec![0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02],
            vec![0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
            vec![0x80, 0x80, 0x80, 0x80, 0x90],
        ]);
        for bytes in &cases {
            for bits in [32, 64] {
                let general = Reader { bytes, at: 0 }.varint(bits).map(|v| v as u64);
                let fast = Reader { bytes, at: 0 }.varint64(bits);
                assert_eq!(fast, general, "{bytes:?} as {bits} bits");
                let general = Reader { bytes, at: 0 }.signed(bits).map(|v| v as i64);
                assert_eq!(Reader { bytes, at: 0 }.signed64(bits), general, "{bytes:?}");
            }
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX, -7919, 1_699_999_980_001] {
            let mut fast = Vec::new();
            put_int(&mut fast, Tag::Int, v);
            let mut general = vec![Tag::Int as u8];
            put_varint(&mut general, zigzag(v as i128));
            assert_eq!(fast, general, "{v}");
        }
    }
}
