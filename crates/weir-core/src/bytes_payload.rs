//! Values that serialize as one byte string (a SQL row: its own compact encoding,
//! handed to serde as *bytes*) travel in a record frame as those bytes alone, without
//! the codec's u64 length in front: the frame's own length already bounds them.
//!
//! [`write_bytes_payload`] serializes a value with [`BytesOnly`], a serializer that
//! accepts exactly one top-level `serialize_bytes` call and refuses everything else
//! before writing anything; the caller then falls back to the general codec.
//! [`read_bytes_payload`] deserializes such a payload from the borrowed bytes, which a
//! value's `Deserialize` receives as `visit_borrowed_bytes` whatever it asks for (a
//! value that does not take bytes fails with serde's type error, never a panic).

use serde::de::value::{BorrowedBytesDeserializer, Error as BytesError};
use serde::de::DeserializeOwned;
use serde::ser::{self, Impossible, Serialize};
use std::fmt;

/// Why a value is not a byte string.
#[derive(Debug)]
pub struct NotBytes;

impl fmt::Display for NotBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the value does not serialize as one byte string")
    }
}

impl std::error::Error for NotBytes {}

impl ser::Error for NotBytes {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        NotBytes
    }
}

/// Appends the bytes of `value` to `out` if it serializes as one byte string; `false`
/// (and `out` unchanged) otherwise.
#[inline]
pub fn write_bytes_payload<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> bool {
    let len = out.len();
    if value.serialize(BytesOnly { out: &mut *out }).is_ok() {
        return true;
    }
    out.truncate(len);
    false
}

/// The value whose [`write_bytes_payload`] bytes are `bytes`.
#[inline]
pub fn read_bytes_payload<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    T::deserialize(BorrowedBytesDeserializer::<BytesError>::new(bytes)).map_err(|e| e.to_string())
}

/// A serializer taking one byte string into `out` and refusing anything else.
pub struct BytesOnly<'a> {
    out: &'a mut Vec<u8>,
}

macro_rules! refuse {
    ($($method:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(
            #[inline]
            fn $method(self, $(_: $arg),*) -> Result<$ok, NotBytes> {
                Err(NotBytes)
            }
        )*
    };
}

impl ser::Serializer for BytesOnly<'_> {
    type Ok = ();
    type Error = NotBytes;
    type SerializeSeq = Impossible<(), NotBytes>;
    type SerializeTuple = Impossible<(), NotBytes>;
    type SerializeTupleStruct = Impossible<(), NotBytes>;
    type SerializeTupleVariant = Impossible<(), NotBytes>;
    type SerializeMap = Impossible<(), NotBytes>;
    type SerializeStruct = Impossible<(), NotBytes>;
    type SerializeStructVariant = Impossible<(), NotBytes>;

    #[inline]
    fn serialize_bytes(self, v: &[u8]) -> Result<(), NotBytes> {
        self.out.extend_from_slice(v);
        Ok(())
    }

    refuse! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_i128(i128) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_u128(u128) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_str(&str) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), NotBytes> {
        Err(NotBytes)
    }

    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, _value: &T) -> Result<(), NotBytes> {
        Err(NotBytes)
    }

    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), NotBytes> {
        Err(NotBytes)
    }
}

/// A value serialized as one byte string, as a SQL row is (for tests).
#[cfg(test)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Blob(pub(crate) Vec<u8>);

#[cfg(test)]
impl Serialize for Blob {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

#[cfg(test)]
impl<'de> serde::Deserialize<'de> for Blob {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Blob;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Blob, E> {
                Ok(Blob(v.to_vec()))
            }
        }
        d.deserialize_bytes(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_string_value_is_written_as_its_bytes_alone_and_read_back() {
        let mut out = vec![9];
        assert!(write_bytes_payload(&mut out, &Blob(vec![1, 2, 3])));
        assert_eq!(out, [9, 1, 2, 3]);
        assert_eq!(read_bytes_payload::<Blob>(&out[1..]).unwrap(), Blob(vec![1, 2, 3]));
    }

    #[test]
    fn other_values_are_refused_without_writing_anything() {
        let mut out = vec![9];
        assert!(!write_bytes_payload(&mut out, &7u64));
        assert!(!write_bytes_payload(&mut out, &(1u8, "a".to_string())));
        assert!(!write_bytes_payload(&mut out, &Some(Blob(vec![1]))));
        assert!(!write_bytes_payload(&mut out, "text"));
        assert_eq!(out, [9]);
    }

    #[test]
    fn bytes_read_as_a_value_that_takes_no_bytes_are_an_error() {
        let err = read_bytes_payload::<(u64, String)>(&[1, 2, 3]).unwrap_err();
        assert!(err.contains("invalid type: byte array"), "{err}");
        assert!(read_bytes_payload::<u64>(&[]).is_err());
    }
}
