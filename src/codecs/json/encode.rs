//! JSON's writes and rules for the shared plan-walking encoder (`codecs/encoder.rs`): compact
//! text, NaN and infinities refused, ints of any size, bytes as base64, temporal values, UUIDs
//! and Decimals as strings, and object keys that are always strings.

use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString};

use super::write::{write_f64, write_i64, write_str};
use crate::codecs::encoder::{
    push_cut, EnumValue, FieldEntry, KeyStart, RecordNames, WireWriter, KEY_INLINE,
};
use crate::errors::{Error, Result};
use crate::plan::{Field, NodeId, Plan};
use crate::py::fields::PlainDateTime;
use crate::py::{self, Obj};
use polycodec_formats::text;

/// Writes JSON into its own buffer.
pub struct JsonWriter<'k> {
    pub out: Vec<u8>,
    /// The plan `keys` was built from: records of any other plan (values under `Any`) have
    /// their keys escaped as they are written.
    plan: &'k Plan,
    keys: &'k super::Keys,
}

impl<'k> JsonWriter<'k> {
    pub fn new(out: Vec<u8>, plan: &'k Plan, keys: &'k super::Keys) -> Self {
        JsonWriter { out, plan, keys }
    }

    /// A member of a record whose plan has no precomputed keys.
    #[cold]
    #[inline(never)]
    fn unkeyed_field_name(&mut self, field: &Field, first: bool) {
        if !first {
            self.out.push(b',');
        }
        write_str(&mut self.out, &field.wire_name);
        self.out.push(b':');
    }
}

impl<'k> WireWriter for JsonWriter<'k> {
    /// JSON closes a container with a bracket and needs no count.
    type Open = ();

    #[inline(always)]
    fn none(&mut self) {
        self.out.extend_from_slice(b"null");
    }

    #[inline(always)]
    fn boolean(&mut self, value: bool) {
        self.out
            .extend_from_slice(if value { b"true" } else { b"false" });
    }

    #[inline(always)]
    fn int(&mut self, value: i64) {
        write_i64(&mut self.out, value);
    }

    /// JSON numbers have no size limit: the int's decimal text, as `int.__str__` writes it
    /// (through `int` so that a subclass's own `__str__` is not used).
    fn big_int(&mut self, value: &Obj<'_>) -> Result<()> {
        let text = big_int_text(value)?;
        crate::errors::reserve(&mut self.out, text.len(), "the encoded output")?;
        self.out.extend_from_slice(text.as_bytes());
        Ok(())
    }

    #[inline(always)]
    fn float(&mut self, value: f64) -> Result<()> {
        match write_f64(&mut self.out, value) {
            Ok(()) => Ok(()),
            Err(_) => Err(non_finite(value)),
        }
    }

    #[inline(always)]
    fn str(&mut self, text: &str) {
        write_str(&mut self.out, text);
    }

    /// A short text with nothing to escape is copied in pieces, as in `py_str`.
    #[inline(always)]
    fn ascii(&mut self, text: &str) {
        let bytes = text.as_bytes();
        if bytes.len() > py::ascii::SHORT || !py::ascii::json_string(&mut self.out, bytes) {
            write_str(&mut self.out, text);
        }
    }

    /// A short compact ASCII str with nothing to escape is copied from its buffer in pieces.
    #[inline(always)]
    fn py_str(&mut self, text: &Bound<'_, PyString>) -> Result<()> {
        if let Some(bytes) = py::ascii_bytes(text) {
            if bytes.len() <= py::ascii::SHORT && py::ascii::json_string(&mut self.out, bytes) {
                return Ok(());
            }
        }
        write_str(&mut self.out, py::str_utf8(text)?);
        Ok(())
    }

    /// The text is ASCII with nothing to escape: quoted as it is.
    #[inline]
    fn ascii_text(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        self.out.push(b'"');
        write(&mut self.out);
        self.out.push(b'"');
    }

    #[inline(always)]
    fn plain_datetime(&mut self, value: PlainDateTime<'_>) -> bool {
        match value.parts() {
            Some(parts) => {
                self.ascii_text(|out| text::temporal::write_datetime(out, &parts));
                true
            }
            None => false,
        }
    }

    /// A Decimal's text has nothing to escape.
    #[inline]
    fn decimal(&mut self, text: &str) {
        self.ascii_text(|out| out.extend_from_slice(text.as_bytes()));
    }

    /// As they are: the Raw was read from JSON, or made by its owner, who vouches for it.
    fn raw(&mut self, data: &[u8]) -> Result<()> {
        if polycodec_formats::growth::output_room(&mut self.out, data.len()) {
            self.out.extend_from_slice(data);
        }
        Ok(())
    }

    #[inline]
    fn bytes(&mut self, data: &[u8], _value: &Obj<'_>) -> Result<()> {
        self.ascii_text(|out| text::base64::encode(out, data));
        Ok(())
    }

    #[inline(always)]
    fn begin_array(&mut self, _length: impl FnOnce() -> Result<usize>) -> Result<()> {
        self.out.push(b'[');
        Ok(())
    }

    #[inline(always)]
    fn end_array(&mut self, _open: (), _count: usize) -> Result<()> {
        self.out.push(b']');
        Ok(())
    }

    #[inline(always)]
    fn begin_map(&mut self, _length: usize) {
        self.out.push(b'{');
    }

    #[inline(always)]
    fn end_map(&mut self, _open: (), _count: usize) -> Result<()> {
        self.out.push(b'}');
        Ok(())
    }

    #[inline(always)]
    fn separator(&mut self, index: usize) {
        if index > 0 {
            self.out.push(b',');
        }
    }

    #[inline(always)]
    fn room(&mut self) -> Result<()> {
        crate::errors::output_room(&mut self.out)
    }

    #[inline(always)]
    fn key_separator(&mut self) {
        self.out.push(b':');
    }

    #[inline(always)]
    fn key_start(&self) -> KeyStart {
        self.out.len()
    }

    /// JSON object keys are strings: a key written as something else (an int, an int enum's
    /// value, a float under `Any`) is quoted.
    #[inline(always)]
    fn finish_key(&mut self, start: KeyStart) -> Result<()> {
        if self.out.get(start) != Some(&b'"') {
            self.out.insert(start, b'"');
            self.out.push(b'"');
        }
        Ok(())
    }

    /// The record's precomputed members; none for a record of another plan.
    type Names = RecordNames<'k>;

    #[inline(always)]
    fn record_names(&self, plan: &Plan, id: NodeId) -> Self::Names {
        if std::ptr::eq(plan, self.plan) {
            self.keys.record(id)
        } else {
            RecordNames::NONE
        }
    }

    /// The member's precomputed `,"name":` bytes, without the comma for the first.
    #[inline(always)]
    fn field_name(&mut self, names: Self::Names, index: usize, field: &Field, first: bool) {
        match names.members.get(index) {
            Some(member) => {
                self.out
                    .extend_from_slice(if first { &member[1..] } else { member });
            }
            None => self.unkeyed_field_name(field, first),
        }
    }

    #[inline(always)]
    fn field_entries(names: &Self::Names) -> &[FieldEntry] {
        names.entries
    }

    #[inline(always)]
    fn enum_values(names: &Self::Names) -> &[EnumValue] {
        names.enum_values
    }

    #[inline(always)]
    fn written(&mut self, bytes: &[u8; KEY_INLINE], length: usize) {
        push_cut(&mut self.out, bytes, length);
    }

    /// The entry's `,"name":` bytes, copied as a whole block and cut to length (as
    /// [`push_cut`] does); the first member's comma is written over the `{` just before it,
    /// which is then put back.
    #[inline(always)]
    fn entry_name(&mut self, names: Self::Names, entry: &FieldEntry, first: bool) {
        let length = entry.key_len as usize;
        if length == 0 {
            let member = &names.members[entry.index as usize];
            self.out
                .extend_from_slice(if first { &member[1..] } else { member });
            return;
        }
        debug_assert!(!first || self.out.last() == Some(&b'{'));
        // `push_cut`'s copy, inline: cut from the `at` already known, where `push_cut` would
        // read the length again (+340 instructions per hierarchy `encode_one` in callgrind).
        let at = self.out.len() - usize::from(first);
        self.out.truncate(at);
        self.out.extend_from_slice(&entry.key);
        self.out.truncate(at + length);
        if first {
            self.out[at] = b'{';
        }
    }

    /// The tag entry's precomputed bytes.
    #[inline(always)]
    fn fixed_tag(&mut self, names: Self::Names) -> bool {
        match names.tag {
            Some(entry) => {
                self.out.extend_from_slice(entry);
                true
            }
            None => false,
        }
    }
}

/// An int's decimal text as `int.__str__` writes it (through `int`, so that a subclass's own
/// `__str__` is not used).
pub fn big_int_text(value: &Obj<'_>) -> Result<String> {
    let exact = value.py().get_type::<PyInt>().call1((value,))?;
    Ok(exact.str()?.to_str()?.to_owned())
}

#[cold]
pub fn non_finite(value: f64) -> Error {
    Error::encode(format!(
        "{value} has no JSON representation (JSON numbers are finite)"
    ))
}
