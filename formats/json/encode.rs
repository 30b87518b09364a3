//! JSON's writes and rules for the shared plan-walking encoder (`formats/encoder.rs`): compact
//! text, NaN and infinities refused, ints of any size, bytes as base64, temporal values, UUIDs
//! and Decimals as strings, and object keys that are always strings.

use pyo3::prelude::*;
use pyo3::types::PyInt;

use super::write::{write_f64, write_i64, write_str};
use super::Json;
use crate::errors::{Error, Result};
use crate::formats::encoder::WireWriter;
use crate::plan::Field;
use crate::py::Obj;
use crate::text;

impl WireWriter for Json {
    /// JSON closes a container with a bracket and needs no count.
    type Open = ();

    #[inline(always)]
    fn none(out: &mut Vec<u8>) {
        out.extend_from_slice(b"null");
    }

    #[inline(always)]
    fn boolean(out: &mut Vec<u8>, value: bool) {
        out.extend_from_slice(if value { b"true" } else { b"false" });
    }

    #[inline(always)]
    fn int(out: &mut Vec<u8>, value: i64) {
        write_i64(out, value);
    }

    /// JSON numbers have no size limit: the int's decimal text, as `int.__str__` writes it
    /// (through `int` so that a subclass's own `__str__` is not used).
    fn big_int(out: &mut Vec<u8>, value: &Obj<'_>) -> Result<()> {
        let exact = value.py().get_type::<PyInt>().call1((value,))?;
        out.extend_from_slice(exact.str()?.to_str()?.as_bytes());
        Ok(())
    }

    #[inline(always)]
    fn float(out: &mut Vec<u8>, value: f64) -> Result<()> {
        match write_f64(out, value) {
            Ok(()) => Ok(()),
            Err(_) => Err(non_finite(value)),
        }
    }

    #[inline(always)]
    fn str(out: &mut Vec<u8>, text: &str) {
        write_str(out, text);
    }

    /// The text is ASCII with nothing to escape: quoted as it is.
    #[inline]
    fn ascii_text(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
        out.push(b'"');
        write(out);
        out.push(b'"');
    }

    /// A Decimal's text has nothing to escape.
    #[inline]
    fn decimal(out: &mut Vec<u8>, text: &str) {
        Self::ascii_text(out, |out| out.extend_from_slice(text.as_bytes()));
    }

    #[inline]
    fn bytes(out: &mut Vec<u8>, data: &[u8]) -> Result<()> {
        Self::ascii_text(out, |out| text::base64::encode(out, data));
        Ok(())
    }

    #[inline(always)]
    fn begin_array(out: &mut Vec<u8>, _length: impl FnOnce() -> Result<usize>) -> Result<()> {
        out.push(b'[');
        Ok(())
    }

    #[inline(always)]
    fn end_array(out: &mut Vec<u8>, _open: (), _count: usize) {
        out.push(b']');
    }

    #[inline(always)]
    fn begin_map(out: &mut Vec<u8>, _length: usize) {
        out.push(b'{');
    }

    #[inline(always)]
    fn end_map(out: &mut Vec<u8>, _open: (), _count: usize) {
        out.push(b'}');
    }

    #[inline(always)]
    fn separator(out: &mut Vec<u8>, index: usize) {
        if index > 0 {
            out.push(b',');
        }
    }

    #[inline(always)]
    fn key_separator(out: &mut Vec<u8>) {
        out.push(b':');
    }

    /// JSON object keys are strings: a key written as something else (an int, an int enum's
    /// value, a float under `Any`) is quoted.
    #[inline(always)]
    fn finish_key(out: &mut Vec<u8>, start: usize) {
        if out.get(start) != Some(&b'"') {
            out.insert(start, b'"');
            out.push(b'"');
        }
    }

    /// The member's precomputed `,"name":` bytes, without the comma for the first.
    #[inline(always)]
    fn field_name(out: &mut Vec<u8>, field: &Field, first: bool) {
        out.extend_from_slice(if first {
            field.json_key()
        } else {
            &field.json_member
        });
    }
}

#[cold]
fn non_finite(value: f64) -> Error {
    Error::encode(format!(
        "{value} has no JSON representation (JSON numbers are finite)"
    ))
}
