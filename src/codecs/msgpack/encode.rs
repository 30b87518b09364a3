//! MessagePack's writes and rules for the shared plan-walking encoder (`codecs/encoder.rs`),
//! with the wire mapping of msgspec's MessagePack defaults: ints limited to 64 bits, bytes as
//! bin, aware datetimes as the timestamp extension, containers headed by their counts (fixed up
//! when `omit_defaults` leaves fields out), and dict keys that keep their own type.

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::epoch;
use super::write::{
    write_bin, write_bool, write_f64, write_i64, write_nil, write_str, write_timestamp, write_u64,
    Container, Pending,
};
use crate::codecs::encoder::{
    push_cut, EnumValue, FieldEntry, NameTable, RecordNames, WireWriter, KEY_INLINE,
};
use crate::errors::{Error, Result};
use crate::plan::{Field, LiteralValue, NodeId, Plan};
use crate::py::fields::PlainDateTime;
use crate::py::{self, Obj};
use crate::shape;
use polycodec_formats::text;
use polycodec_formats::text::temporal::DateTime;

/// Writes MessagePack into its own buffer.
pub struct MessagePackWriter<'k> {
    pub out: Vec<u8>,
    /// The plan `names` was built from: records of any other plan (values under `Any`) have
    /// their names written as they come.
    plan: &'k Plan,
    names: &'k NameTable,
}

impl<'k> MessagePackWriter<'k> {
    pub fn new(out: Vec<u8>, plan: &'k Plan, names: &'k NameTable) -> Self {
        MessagePackWriter { out, plan, names }
    }

    /// Aware datetimes as the timestamp extension, naive ones as text.
    #[inline(always)]
    fn datetime_parts(&mut self, parts: &DateTime) -> Result<()> {
        if parts.offset_seconds.is_some() {
            let (seconds, nanoseconds) = epoch::to_timestamp(parts);
            if !epoch::in_python_years(seconds) {
                return Err(out_of_range());
            }
            write_timestamp(&mut self.out, seconds, nanoseconds);
        } else {
            self.ascii_text(|out| text::temporal::write_datetime(out, parts));
        }
        Ok(())
    }
}

/// Each record field's name as a MessagePack str, and each fixed tag's entry (name, then
/// value), built once per codec.
pub fn names(plan: &Plan) -> NameTable {
    NameTable::new(
        plan,
        |wire_name| {
            let mut member = Vec::with_capacity(wire_name.len() + 5);
            write_str(&mut member, wire_name);
            member
        },
        |member, tag| {
            let mut entry = member.to_vec();
            entry.extend_from_slice(&literal(tag));
            entry
        },
        literal,
    )
}

/// A literal or enum value as MessagePack bytes.
fn literal(value: &LiteralValue) -> Vec<u8> {
    let mut out = Vec::new();
    match value {
        LiteralValue::Str(text) => write_str(&mut out, text),
        LiteralValue::Int(number) => write_i64(&mut out, *number),
        LiteralValue::Bool(flag) => write_bool(&mut out, *flag),
    }
    out
}

impl<'k> WireWriter for MessagePackWriter<'k> {
    /// The header is written with the expected count and rewritten if the real count differs.
    type Open = Pending;

    #[inline(always)]
    fn none(&mut self) {
        write_nil(&mut self.out);
    }

    #[inline(always)]
    fn boolean(&mut self, value: bool) {
        write_bool(&mut self.out, value);
    }

    #[inline(always)]
    fn int(&mut self, value: i64) {
        write_i64(&mut self.out, value);
    }

    /// Unsigned 64-bit when it fits, else an error (MessagePack integers are at most 64 bits).
    #[cold]
    fn big_int(&mut self, value: &Obj<'_>) -> Result<()> {
        match value.extract::<u64>() {
            Ok(number) => {
                write_u64(&mut self.out, number);
                Ok(())
            }
            Err(_) => Err(Error::encode(
                "int out of range for MessagePack (must fit in 64 bits: -2**63 to 2**64 - 1)",
            )),
        }
    }

    #[inline(always)]
    fn float(&mut self, value: f64) -> Result<()> {
        write_f64(&mut self.out, value);
        Ok(())
    }

    #[inline(always)]
    fn str(&mut self, text: &str) {
        write_str(&mut self.out, text);
    }

    /// A compact ASCII str of a fixstr's length is copied from its buffer in pieces.
    /// A fixstr is copied in pieces, as in `py_str`.
    #[inline(always)]
    fn ascii(&mut self, text: &str) {
        let bytes = text.as_bytes();
        if bytes.len() < 32 {
            self.out.push(0xa0 | bytes.len() as u8);
            py::ascii::append(&mut self.out, bytes);
        } else {
            write_str(&mut self.out, text);
        }
    }

    #[inline(always)]
    fn py_str(&mut self, text: &Bound<'_, PyString>) -> Result<()> {
        if let Some(bytes) = py::ascii_bytes(text) {
            if bytes.len() < 32 {
                self.out.push(0xa0 | bytes.len() as u8);
                py::ascii::append(&mut self.out, bytes);
                return Ok(());
            }
        }
        write_str(&mut self.out, py::str_utf8(text)?);
        Ok(())
    }

    /// Written after a placeholder fixstr header, fixed up once the length is known: one byte
    /// (fixstr) or two (str8).
    #[inline]
    fn ascii_text(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        let out = &mut self.out;
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
    #[inline]
    fn datetime(&mut self, parts: &DateTime, _value: &Obj<'_>) -> Result<()> {
        self.datetime_parts(parts)
    }

    #[inline(always)]
    fn plain_datetime(&mut self, value: PlainDateTime<'_>) -> bool {
        match value.parts() {
            Some(parts) => self.datetime_parts(&parts).is_ok(),
            None => false,
        }
    }

    /// The hyphenated form is always 36 characters: a str8.
    #[inline]
    fn uuid(&mut self, value: &Obj<'_>) -> Result<()> {
        let bits = py::uuid_value(value)?;
        self.out.extend_from_slice(&[0xd9, 36]);
        text::uuid::write_uuid(&mut self.out, bits);
        Ok(())
    }

    #[inline(always)]
    fn decimal(&mut self, text: &str) {
        write_str(&mut self.out, text);
    }

    /// As they are: one MessagePack value, read from MessagePack or vouched for by its owner.
    fn raw(&mut self, data: &[u8]) -> Result<()> {
        if polycodec_formats::growth::output_room(&mut self.out, data.len()) {
            self.out.extend_from_slice(data);
        }
        Ok(())
    }

    fn bytes(&mut self, data: &[u8], _value: &Obj<'_>) -> Result<()> {
        if data.len() > u32::MAX as usize {
            return Err(Error::encode(
                "bytes longer than 2**32 - 1 cannot be encoded",
            ));
        }
        write_bin(&mut self.out, data);
        Ok(())
    }

    /// Bytes under `Any` are bin, a `polycodec.Ext` an extension value.
    fn any_other(&mut self, value: &Obj<'_>) -> Result<bool> {
        if let Some(bytes) = shape::bytes_like(value) {
            write_bin(&mut self.out, &bytes);
            return Ok(true);
        }
        if !value.get_type().is(super::ext_class(value.py())?) {
            return Ok(false);
        }
        let py = value.py();
        let code = value.getattr(pyo3::intern!(py, "code"))?.extract::<i8>()?;
        let payload = value.getattr(pyo3::intern!(py, "data"))?;
        let data = shape::bytes_like(&payload).ok_or_else(|| {
            Error::encode(format!(
                "expected Ext data of bytes, bytearray or memoryview, got {}",
                crate::py::type_name(&payload)
            ))
        })?;
        if data.len() > u32::MAX as usize {
            return Err(Error::encode(
                "Ext data longer than 2**32 - 1 bytes cannot be encoded",
            ));
        }
        super::write::write_ext(&mut self.out, code, &data);
        Ok(true)
    }

    #[inline(always)]
    fn begin_array(&mut self, length: impl FnOnce() -> Result<usize>) -> Result<Pending> {
        Ok(Pending::begin(&mut self.out, Container::Array, length()?))
    }

    #[inline(always)]
    fn end_array(&mut self, open: Pending, count: usize) -> Result<()> {
        open.finish(&mut self.out, count);
        Ok(())
    }

    #[inline(always)]
    fn begin_map(&mut self, length: usize) -> Pending {
        Pending::begin(&mut self.out, Container::Map, length)
    }

    #[inline(always)]
    fn end_map(&mut self, open: Pending, count: usize) -> Result<()> {
        open.finish(&mut self.out, count);
        Ok(())
    }

    /// Items follow each other with nothing between them.
    #[inline(always)]
    fn separator(&mut self, _index: usize) {}

    #[inline(always)]
    fn room(&mut self) -> Result<()> {
        crate::errors::output_room(&mut self.out)
    }

    #[inline(always)]
    fn key_separator(&mut self) {}

    type Names = RecordNames<'k>;

    #[inline(always)]
    fn record_names(&self, plan: &Plan, id: NodeId) -> Self::Names {
        if std::ptr::eq(plan, self.plan) {
            self.names.record(id)
        } else {
            RecordNames::NONE
        }
    }

    #[inline(always)]
    fn field_name(&mut self, names: Self::Names, index: usize, field: &Field, _first: bool) {
        match names.members.get(index) {
            Some(member) => self.out.extend_from_slice(member),
            None => write_str(&mut self.out, &field.wire_name),
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

    /// The entry's name str (see [`push_cut`]).
    #[inline(always)]
    fn entry_name(&mut self, names: Self::Names, entry: &FieldEntry, _first: bool) {
        let length = entry.key_len as usize;
        if length == 0 {
            self.out
                .extend_from_slice(&names.members[entry.index as usize]);
            return;
        }
        push_cut(&mut self.out, &entry.key, length);
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

#[cold]
fn out_of_range() -> Error {
    Error::encode(
        "aware datetime is outside years 1-9999 in UTC, so its timestamp could not be decoded \
         again",
    )
}
