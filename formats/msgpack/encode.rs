//! MessagePack's writes and rules for the shared plan-walking encoder (`formats/encoder.rs`),
//! with the wire mapping of msgspec's MessagePack defaults: ints limited to 64 bits, bytes as
//! bin, aware datetimes as the timestamp extension, containers headed by their counts (fixed up
//! when `omit_defaults` leaves fields out), and dict keys that keep their own type.

use pyo3::prelude::*;

use super::epoch;
use super::write::{
    write_bin, write_bool, write_f64, write_i64, write_nil, write_str, write_timestamp, write_u64,
    Container, Pending,
};
use super::MessagePack;
use crate::errors::{Error, Result};
use crate::formats::encoder::WireWriter;
use crate::plan::Field;
use crate::py::Obj;
use crate::shape;
use crate::text;
use crate::text::temporal::DateTime;

impl WireWriter for MessagePack {
    /// The header is written with the expected count and rewritten if the real count differs.
    type Open = Pending;

    #[inline(always)]
    fn none(out: &mut Vec<u8>) {
        write_nil(out);
    }

    #[inline(always)]
    fn boolean(out: &mut Vec<u8>, value: bool) {
        write_bool(out, value);
    }

    #[inline(always)]
    fn int(out: &mut Vec<u8>, value: i64) {
        write_i64(out, value);
    }

    /// Unsigned 64-bit when it fits, else an error (MessagePack integers are at most 64 bits).
    #[cold]
    fn big_int(out: &mut Vec<u8>, value: &Obj<'_>) -> Result<()> {
        match value.extract::<u64>() {
            Ok(number) => {
                write_u64(out, number);
                Ok(())
            }
            Err(_) => Err(Error::encode(
                "int out of range for MessagePack (must fit in 64 bits: -2**63 to 2**64 - 1)",
            )),
        }
    }

    #[inline(always)]
    fn float(out: &mut Vec<u8>, value: f64) -> Result<()> {
        write_f64(out, value);
        Ok(())
    }

    #[inline(always)]
    fn str(out: &mut Vec<u8>, text: &str) {
        write_str(out, text);
    }

    /// Written after a placeholder fixstr header, fixed up once the length is known: one byte
    /// (fixstr) or two (str8).
    #[inline]
    fn ascii_text(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
        let start = out.len();
        out.push(0xa0);
        write(out);
        let length = out.len() - start - 1;
        if length < 32 {
            out[start] = 0xa0 | length as u8;
        } else {
            out[start] = 0xd9;
            out.insert(start + 1, length as u8);
        }
    }

    /// Aware datetimes as the timestamp extension, naive ones as text.
    fn datetime(out: &mut Vec<u8>, parts: &DateTime) -> Result<()> {
        if parts.offset_seconds.is_some() {
            let (seconds, nanoseconds) = epoch::to_timestamp(parts);
            if !epoch::in_python_years(seconds) {
                return Err(Error::encode(
                    "aware datetime is outside years 1-9999 in UTC, so its \
                     timestamp could not be decoded again",
                ));
            }
            write_timestamp(out, seconds, nanoseconds);
        } else {
            Self::ascii_text(out, |out| text::temporal::write_datetime(out, parts));
        }
        Ok(())
    }

    /// The hyphenated form is always 36 characters: a str8.
    #[inline]
    fn uuid(out: &mut Vec<u8>, bits: u128) {
        out.extend_from_slice(&[0xd9, 36]);
        text::uuid::write_uuid(out, bits);
    }

    #[inline(always)]
    fn decimal(out: &mut Vec<u8>, text: &str) {
        write_str(out, text);
    }

    fn bytes(out: &mut Vec<u8>, data: &[u8]) -> Result<()> {
        if data.len() > u32::MAX as usize {
            return Err(Error::encode(
                "bytes longer than 2**32 - 1 cannot be encoded",
            ));
        }
        write_bin(out, data);
        Ok(())
    }

    /// Bytes under `Any` are bin.
    fn any_other(out: &mut Vec<u8>, value: &Obj<'_>) -> bool {
        match shape::bytes_like(value) {
            Some(bytes) => {
                write_bin(out, &bytes);
                true
            }
            None => false,
        }
    }

    #[inline(always)]
    fn begin_array(out: &mut Vec<u8>, length: impl FnOnce() -> Result<usize>) -> Result<Pending> {
        Ok(Pending::begin(out, Container::Array, length()?))
    }

    #[inline(always)]
    fn end_array(out: &mut Vec<u8>, open: Pending, count: usize) {
        open.finish(out, count);
    }

    #[inline(always)]
    fn begin_map(out: &mut Vec<u8>, length: usize) -> Pending {
        Pending::begin(out, Container::Map, length)
    }

    #[inline(always)]
    fn end_map(out: &mut Vec<u8>, open: Pending, count: usize) {
        open.finish(out, count);
    }

    /// Items follow each other with nothing between them.
    #[inline(always)]
    fn separator(_out: &mut Vec<u8>, _index: usize) {}

    #[inline(always)]
    fn key_separator(_out: &mut Vec<u8>) {}

    #[inline(always)]
    fn field_name(out: &mut Vec<u8>, field: &Field, _first: bool) {
        write_str(out, &field.wire_name);
    }
}
