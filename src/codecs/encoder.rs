//! The plan-walking encoder JSON and MessagePack share. [`Encoder`] walks the plan and the
//! Python value together: type checks, union variant choice, record field access (with the
//! borrowed-field fast path of `py::fields`), `Any` dispatch, enums, literals, tuples, dicts,
//! the error paths and the depth guard. Every value it has checked goes to the format's
//! [`WireWriter`], which writes it and applies the format's own rules (JSON refuses NaN and
//! quotes non-str keys; MessagePack counts container items and limits ints to 64 bits).
//!
//! `Encoder` is generic over the writer, so each format gets its own monomorphised copy with the
//! writes inlined: the hot paths compile as if written for that format alone.

use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDate, PyDateTime, PyDelta, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet,
    PyString, PyTime, PyTuple,
};

use crate::errors::{Code, Error, ErrorKind, Result};
use crate::plan::{
    EnumSpec, Field, FieldDefault, LiteralValue, Node, NodeId, PlainRule, Plan, RecordKind,
    RecordLayout, RecordSpec, Verdict,
};
use crate::py::fields::{plain_of, FieldReader, Next, Plain, PlainDateTime, PlainValue};
use crate::py::{self, temporal, Obj};
use crate::shape::{self, Shape};
use crate::values::{nested, nested_runs_directly};
use polycodec_formats::text;
use polycodec_formats::text::temporal::{DateTime, TimeOfDay};

/// How one format writes the values [`Encoder`] has checked, and the format's own rules where
/// they differ. A writer holds its own output (bytes for JSON and MessagePack, Python objects
/// for `to_builtins`), so any format is one more writer for the same walk.
///
/// Containers: an array or map is opened with `begin_array`/`begin_map` (given the item count
/// the encoder expects), each item or dict entry is preceded by `separator` (a record field by
/// `field_name`), and `end_array`/`end_map` close it with the count actually written (which
/// differs from the expected one when `omit_defaults` leaves fields out, or user code resizes
/// a list). A dict entry is its key, written as a value, then `key_separator`, then its value.
///
/// The methods that take the checked Python `value` as well (`py_str`, the temporal values,
/// UUIDs, Decimals, bytes) let a writer that produces objects keep the value itself.
pub trait WireWriter {
    /// What a format keeps about an open container until it is closed.
    type Open;

    fn none(&mut self);
    fn boolean(&mut self, value: bool);
    fn int(&mut self, value: i64);
    /// An int outside i64 (checked to be an int, not a bool).
    fn big_int(&mut self, value: &Obj<'_>) -> Result<()>;
    fn float(&mut self, value: f64) -> Result<()>;
    fn str(&mut self, text: &str);

    /// An int that fits i64, with its object (an int, maybe of a subclass): a writer that makes
    /// objects may keep an exact int itself.
    #[inline(always)]
    fn int_object(&mut self, number: i64, _value: &Obj<'_>) {
        self.int(number)
    }

    /// An exact float, with its object: a writer that makes objects may keep it itself.
    #[inline(always)]
    fn float_object(&mut self, value: &Bound<'_, PyFloat>) -> Result<()> {
        self.float(value.value())
    }

    /// A literal or enum value, with a Python object of it (the `Literal`'s own value, the
    /// enum member's `.value`): a writer that makes objects may return that object itself.
    #[inline(always)]
    fn literal_object(&mut self, literal: &LiteralValue, _object: &Obj<'_>) {
        match literal {
            LiteralValue::Str(text) => self.str(text),
            LiteralValue::Int(number) => self.int(*number),
            LiteralValue::Bool(flag) => self.boolean(*flag),
        }
    }

    /// A str value (an instance of str, maybe of a subclass).
    #[inline(always)]
    fn py_str(&mut self, text: &Bound<'_, PyString>) -> Result<()> {
        self.str(py::str_utf8(text)?);
        Ok(())
    }

    /// A plain field value taken straight from an instance dict (see `py::fields`); false when
    /// the format cannot write it, so the general path raises the error. Always inlined: out
    /// of line, its dispatch on the value's kind is one indirect jump for every field,
    /// mispredicted as the kinds alternate.
    #[inline(always)]
    fn plain(&mut self, value: PlainValue<'_>) -> bool {
        match value {
            PlainValue::None => self.none(),
            PlainValue::Bool(flag) => self.boolean(flag),
            PlainValue::Int(number) => self.int(number),
            PlainValue::Float(number) => return self.float(number).is_ok(),
            PlainValue::Ascii(text) => self.ascii(text),
            PlainValue::DateTime(value) => return self.plain_datetime(value),
        }
        true
    }

    /// An ASCII str's text, borrowed from a plain value (a field, a list item, a dict key or
    /// value): a byte writer copies a short one in pieces, as it does a short `py_str`.
    #[inline(always)]
    fn ascii(&mut self, text: &str) {
        self.str(text)
    }

    /// A datetime field's value taken straight from the instance, as [`WireWriter::plain`]
    /// takes other plain values: false leaves it to the general path (a format that keeps
    /// datetime objects, a value that is not an exact naive or fixed-offset datetime, one the
    /// format cannot write).
    #[inline(always)]
    fn plain_datetime(&mut self, _value: PlainDateTime<'_>) -> bool {
        false
    }

    /// A str whose ASCII text `write` produces, shorter than 256 bytes (the date, time and
    /// duration forms of `polycodec_formats::text`).
    fn ascii_text(&mut self, write: impl FnOnce(&mut Vec<u8>));

    #[inline]
    fn datetime(&mut self, parts: &DateTime, _value: &Obj<'_>) -> Result<()> {
        self.ascii_text(|out| text::temporal::write_datetime(out, parts));
        Ok(())
    }

    /// A date, time or timedelta `value` whose text `write` produces.
    #[inline(always)]
    fn temporal(
        &mut self,
        _kind: Temporal,
        _value: &Obj<'_>,
        write: impl FnOnce(&mut Vec<u8>),
    ) -> Result<()> {
        self.ascii_text(write);
        Ok(())
    }

    /// A UUID `value` (checked to be one).
    #[inline]
    fn uuid(&mut self, value: &Obj<'_>) -> Result<()> {
        let bits = py::uuid_value(value)?;
        self.ascii_text(|out| text::uuid::write_uuid(out, bits));
        Ok(())
    }

    /// A Decimal `value` (checked to be one), by default written as its text.
    #[inline]
    fn decimal_value(&mut self, value: &Obj<'_>) -> Result<()> {
        let text = value.str()?;
        self.decimal(py::str_utf8(&text)?);
        Ok(())
    }

    /// A Decimal's text: digits, sign, point, exponent or NaN/Infinity, of any length.
    fn decimal(&mut self, text: &str);
    /// A `Raw` value's bytes, written as they are.
    fn raw(&mut self, data: &[u8]) -> Result<()>;
    /// The bytes `data` of `value` (bytes, bytearray or memoryview).
    fn bytes(&mut self, data: &[u8], value: &Obj<'_>) -> Result<()>;

    /// A value under `Any` that is none of the plain types, arrays or dicts, before the encoder
    /// looks for a plan for its class: true when the format has its own form for it.
    #[inline]
    fn any_other(&mut self, _value: &Obj<'_>) -> Result<bool> {
        Ok(false)
    }

    /// Opens an array; `length` gives the item count, for a format that writes it up front.
    fn begin_array(&mut self, length: impl FnOnce() -> Result<usize>) -> Result<Self::Open>;
    fn end_array(&mut self, open: Self::Open, count: usize) -> Result<()>;
    /// Opens a map of `length` entries.
    fn begin_map(&mut self, length: usize) -> Self::Open;
    fn end_map(&mut self, open: Self::Open, count: usize) -> Result<()>;
    /// Before the array item or map entry at `index`.
    fn separator(&mut self, index: usize);

    /// Makes room for the small writes of the next item or field (`errors::output_room`),
    /// asked before each; a writer whose output is not one byte buffer needs none.
    #[inline(always)]
    fn room(&mut self) -> Result<()> {
        Ok(())
    }
    /// Between a dict key and its value.
    fn key_separator(&mut self);
    /// Where a dict key that may need `finish_key` is about to be written.
    #[inline(always)]
    fn key_start(&self) -> KeyStart {
        0
    }
    /// A dict key the value path has written from `start` on, made into a valid key (JSON
    /// quotes what is not a string).
    #[inline(always)]
    fn finish_key(&mut self, _start: KeyStart) -> Result<()> {
        Ok(())
    }
    /// What the format precomputed from the plan for one record's field names (JSON: each
    /// field's escaped key bytes), looked up once per record written and passed to every
    /// `field_name` of that record.
    type Names: Copy;
    /// The names of record node `id` of `plan` (the codec's own plan, or the plan of a value
    /// under `Any`, for which the format has precomputed nothing).
    fn record_names(&self, plan: &Plan, id: NodeId) -> Self::Names;
    /// A record field's name, with what goes before it (`first`: no entry before it) and
    /// between it and the value; `index` is the field's position in `RecordSpec::fields`.
    fn field_name(&mut self, names: Self::Names, index: usize, field: &Field, first: bool);

    /// The record's wire fields among its `names`, in wire order, for the common record walk
    /// (`Encoder::dataclass_fields`); empty when the format has none for the record (the walk
    /// then reads the plan's fields and writes names with `field_name`).
    #[inline(always)]
    fn field_entries(_names: &Self::Names) -> &[FieldEntry] {
        &[]
    }

    /// The table's enum values (see [`EntryKind::Enum`]) among a record's `names`.
    #[inline(always)]
    fn enum_values(_names: &Self::Names) -> &[EnumValue] {
        &[]
    }

    /// Bytes the format's table holds already written (an enum value, see [`EnumValue`]):
    /// `bytes[..length]`. Only called for a writer whose `field_entries` gives some.
    fn written(&mut self, _bytes: &[u8; KEY_INLINE], _length: usize) {}

    /// A record field's name from its entry (one of `field_entries(&names)`), as `field_name`
    /// writes it; `first` is only set right after `begin_map`. Only called for a writer whose
    /// `field_entries` gives some.
    fn entry_name(&mut self, _names: Self::Names, _entry: &FieldEntry, _first: bool) {}

    /// A tagged record's first entry, its tag, when the format has it precomputed among the
    /// record's `names` (only for `RecordSpec::fixed_tag`); false when the format writes it
    /// the general way (name, then the tag's value).
    #[inline(always)]
    fn fixed_tag(&mut self, _names: Self::Names) -> bool {
        false
    }
}

/// A byte format's precomputed record names, built once per codec from the plan (which holds
/// no format's bytes): for every record node, each field's name entry as the format writes it,
/// and the whole leading tag entry of a variant whose tag is fixed (`RecordSpec::fixed_tag`),
/// so that writing either is one copy; and each record's [`FieldEntry`] row, which the common
/// record walk (`Encoder::dataclass_fields`) reads instead of the plan's fields.
pub struct NameTable {
    records: Vec<RecordBytes>,
    entries: Vec<FieldEntry>,
    enum_values: Vec<EnumValue>,
}

/// How [`Encoder::dataclass_fields`] writes a field value the reader hands back (one that is
/// not a plain value, see `py::fields`) without reading its node first; any value it does not
/// expect goes to the general path, which words every error.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EntryKind {
    /// The general path, by the field's node.
    Other,
    /// An exact `date`.
    Date,
    /// An exact `Decimal`.
    Decimal,
    /// An enum member, found by identity among [`FieldEntry::enum_start`]'s values.
    Enum,
    /// A record, written as [`FieldEntry::target`] without the dispatch on the field's node
    /// (the `Optional` around it, say).
    Record,
    /// A UUID.
    Uuid,
    /// An exact naive `time`.
    Time,
    /// An exact `timedelta`.
    TimeDelta,
    /// An exact list of plain items (`SequenceSpec::plain`), written by `plain_list` without
    /// the dispatch on the field's node.
    List,
}

/// An enum member's value as the format writes it, for [`EntryKind::Enum`].
pub struct EnumValue {
    /// The member's address (members are compared by identity); 0 ends an enum's values.
    pub addr: usize,
    pub bytes: [u8; KEY_INLINE],
    pub len: u8,
}

#[derive(Default)]
struct RecordBytes {
    members: Box<[Box<[u8]>]>,
    tag: Option<Box<[u8]>>,
    /// Its entries: `entries[start..end]`.
    start: u32,
    end: u32,
}

/// The longest name entry a [`FieldEntry`] holds itself.
pub const KEY_INLINE: usize = 24;

/// Appends `block[..length]` to `out` by copying the whole block and cutting it to length: a
/// fixed-size copy, with no call to `memcpy` and no branch on the length (a name entry or an
/// enum value of a byte writer's table).
#[inline(always)]
pub fn push_cut(out: &mut Vec<u8>, block: &[u8; KEY_INLINE], length: usize) {
    let at = out.len();
    out.extend_from_slice(block);
    out.truncate(at + length);
}

/// One wire field of a record, in wire order, as the common record walk reads it: the plan's
/// `Field` is 72 bytes and the name entry another allocation, so a record's fields spread over
/// a dozen or more cache lines, which a deep value's output displaces from the first-level
/// data cache between two calls (issue 10, the hierarchy's `encode_many`). A record's entries
/// are 48 bytes each, next to each other.
pub struct FieldEntry {
    /// The name entry as the format writes it (JSON: `,"name":`), when it is at most
    /// [`KEY_INLINE`] bytes, padded with zeros.
    pub key: [u8; KEY_INLINE],
    /// The attribute name (the plan's interned str).
    pub name: Py<PyString>,
    /// The field's node.
    pub node: u32,
    /// The field's index in `RecordSpec::fields`.
    pub index: u32,
    /// The node of the value's kind: the field's node, or `X` of an `Optional[X]`.
    pub target: u32,
    /// For [`EntryKind::Enum`], where the enum's values start in the table's enum values.
    pub enum_start: u32,
    /// The length of `key`; 0 when the entry is longer (the record's `members` hold it).
    pub key_len: u8,
    /// `Field::plain`.
    pub plain: Option<PlainRule>,
    /// How a value the reader hands back is written (of `X`, for an `Optional[X]`).
    pub kind: EntryKind,
    /// `Optional[X]` for a kind other than [`EntryKind::Other`]: None is written as null.
    pub nullable: bool,
}

/// One record's entry of a [`NameTable`], looked up once per record written.
#[derive(Clone, Copy)]
pub struct RecordNames<'k> {
    /// Each field's name entry, by its index in `RecordSpec::fields`.
    pub members: &'k [Box<[u8]>],
    /// The fixed tag entry, name and value.
    pub tag: Option<&'k [u8]>,
    /// The record's wire fields, in wire order (empty for a record the table was not built
    /// for).
    pub entries: &'k [FieldEntry],
    /// The table's enum values (see [`EntryKind::Enum`]).
    pub enum_values: &'k [EnumValue],
}

impl RecordNames<'static> {
    /// The names of a record the table was not built for (a value under `Any` with a plan of
    /// its own): the writer writes them the general way.
    pub const NONE: RecordNames<'static> = RecordNames {
        members: &[],
        tag: None,
        entries: &[],
        enum_values: &[],
    };
}

impl NameTable {
    /// `member` gives a field's name entry from its wire name; `tag_entry` a fixed tag's whole
    /// entry from its field's name entry and the tag; `literal` a literal or enum value as the
    /// format writes it.
    pub fn new(
        plan: &Plan,
        member: impl Fn(&str) -> Vec<u8>,
        tag_entry: impl Fn(&[u8], &LiteralValue) -> Vec<u8>,
        literal: impl Fn(&LiteralValue) -> Vec<u8>,
    ) -> NameTable {
        let mut entries = Vec::new();
        let mut enum_values = Vec::new();
        let records = Python::attach(|py| {
            plan.nodes
                .iter()
                .map(|node| match node {
                    Node::Record(spec) => {
                        // Each field's entry by its index; a class tag's after them.
                        let members: Box<[Box<[u8]>]> = spec
                            .fields
                            .iter()
                            .chain(spec.class_tag().map(|tag| &tag.field))
                            .map(|field| member(&field.wire_name).into_boxed_slice())
                            .collect();
                        let tag = match (&spec.tag, spec.class_tag()) {
                            (Some((index, tag)), _) if spec.fixed_tag => {
                                Some(tag_entry(&members[*index], tag).into_boxed_slice())
                            }
                            (None, Some(tag)) => Some(
                                tag_entry(&members[spec.fields.len()], &tag.value)
                                    .into_boxed_slice(),
                            ),
                            _ => None,
                        };
                        let start = entries.len() as u32;
                        for &index in &spec.wire_fields {
                            let field = &spec.fields[index];
                            let bytes = &members[index];
                            let mut key = [0; KEY_INLINE];
                            let key_len = if bytes.len() <= KEY_INLINE {
                                key[..bytes.len()].copy_from_slice(bytes);
                                bytes.len() as u8
                            } else {
                                0
                            };
                            let (mut kind, nullable, target) = entry_kind(plan, field.node);
                            let mut enum_start = u32::MAX;
                            if let (EntryKind::Enum, Node::Enum(spec)) = (kind, plan.node(target)) {
                                match enum_entry_values(py, spec, &literal) {
                                    Some(values) => {
                                        enum_start = enum_values.len() as u32;
                                        enum_values.extend(values);
                                    }
                                    None => kind = EntryKind::Other,
                                }
                            }
                            entries.push(FieldEntry {
                                key,
                                name: field.name.clone_ref(py),
                                node: field.node as u32,
                                index: index as u32,
                                target: target as u32,
                                enum_start,
                                key_len,
                                plain: field.plain,
                                kind,
                                nullable: nullable && kind != EntryKind::Other,
                            });
                        }
                        RecordBytes {
                            members,
                            tag,
                            start,
                            end: entries.len() as u32,
                        }
                    }
                    _ => RecordBytes::default(),
                })
                .collect()
        });
        NameTable {
            records,
            entries,
            enum_values,
        }
    }

    /// The names of record node `id` (none for any other node).
    #[inline(always)]
    pub fn record(&self, id: NodeId) -> RecordNames<'_> {
        let record = &self.records[id];
        RecordNames {
            members: &record.members,
            tag: record.tag.as_deref(),
            entries: &self.entries[record.start as usize..record.end as usize],
            enum_values: &self.enum_values,
        }
    }
}

/// The [`EntryKind`] of a field of node `id`, whether it is `Optional[...]` of that kind, and
/// the node of that kind.
fn entry_kind(plan: &Plan, id: NodeId) -> (EntryKind, bool, NodeId) {
    fn kind(node: &Node) -> EntryKind {
        match node {
            Node::Date => EntryKind::Date,
            Node::Decimal(_) => EntryKind::Decimal,
            Node::Enum(_) => EntryKind::Enum,
            Node::Record(_) => EntryKind::Record,
            Node::Uuid => EntryKind::Uuid,
            Node::Time(_) => EntryKind::Time,
            Node::TimeDelta => EntryKind::TimeDelta,
            Node::Sequence(spec) if spec.plain.is_some() => EntryKind::List,
            _ => EntryKind::Other,
        }
    }
    if let Node::Union(spec) = plan.node(id) {
        if let Some(other) = spec.optional_member() {
            return (kind(plan.node(other)), true, other);
        }
        return (EntryKind::Other, false, id);
    }
    (kind(plan.node(id)), false, id)
}

/// Each member of `spec` with its value as the format writes it (`literal`), then the end;
/// `None` when some value is longer than an [`EnumValue`] holds.
fn enum_entry_values(
    py: Python<'_>,
    spec: &EnumSpec,
    literal: &impl Fn(&LiteralValue) -> Vec<u8>,
) -> Option<Vec<EnumValue>> {
    let mut values = Vec::with_capacity(spec.members.len() + 1);
    for member in &spec.members {
        let written = literal(&member.value);
        if written.len() > KEY_INLINE {
            return None;
        }
        let mut bytes = [0; KEY_INLINE];
        bytes[..written.len()].copy_from_slice(&written);
        values.push(EnumValue {
            addr: member.member.bind(py).as_ptr() as usize,
            bytes,
            len: written.len() as u8,
        });
    }
    values.push(EnumValue {
        addr: 0,
        bytes: [0; KEY_INLINE],
        len: 0,
    });
    Some(values)
}

/// Where a dict key starts in a byte writer's output.
pub type KeyStart = usize;

/// The temporal types written as text by [`WireWriter::temporal`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Temporal {
    Date,
    Time,
    TimeDelta,
}

/// Encodes `value` as the plan's root type with `writer`.
pub fn encode_one<W: WireWriter>(plan: &Plan, value: &Obj<'_>, writer: &mut W) -> Result<()> {
    Encoder::new(plan, writer, 0).value(plan.root, value)
}

/// Encodes `value` as node `id` at nesting `depth`: for a walk of its own (`to_builtins`'s)
/// that hands a value it does not cover over to this one.
pub fn encode_at<W: WireWriter>(
    plan: &Plan,
    id: NodeId,
    value: &Obj<'_>,
    writer: &mut W,
    depth: usize,
) -> Result<()> {
    Encoder::new(plan, writer, depth).value(id, value)
}

/// Writes the dict key `key` as node `key_node`, as a dict's entries are written (into a map
/// the writer has open): for `to_builtins`'s walk, which hands over the keys it does not cover.
pub fn encode_key<W: WireWriter>(
    plan: &Plan,
    key_node: NodeId,
    key: &Obj<'_>,
    writer: &mut W,
    depth: usize,
) -> Result<()> {
    Encoder::new(plan, writer, depth).key(key_node, key)
}

/// Encodes a sequence of root-type values as one array, calling `between` with the writer after
/// each value (where a byte writer may hand its output so far over, see `py::output`).
pub fn encode_many<W: WireWriter>(
    plan: &Plan,
    values: &Obj<'_>,
    writer: &mut W,
    between: impl FnMut(&mut W) -> Result<()>,
) -> Result<()> {
    let open = writer.begin_array(|| Ok(values.len().unwrap_or(0)))?;
    let count = encode_items(plan, values, writer, between)?;
    writer.end_array(open, count)
}

/// The values of [`encode_many`]'s array, without its opening and closing: returns how many
/// were written.
pub fn encode_items<W: WireWriter>(
    plan: &Plan,
    values: &Obj<'_>,
    writer: &mut W,
    mut between: impl FnMut(&mut W) -> Result<()>,
) -> Result<usize> {
    let mut encoder = Encoder::new(plan, writer, 0);
    let mut index = 0;
    if let Node::Record(spec) = plan.node(plan.root) {
        // The common batch, a sequence of records: each written as a record at once (at the
        // top level, where `nested` runs it directly), without the dispatch on the root node.
        shape::for_each_item(values, |element| {
            encoder.w.room()?;
            encoder.w.separator(index);
            encoder
                .record(plan.root, spec, element)
                .map_err(|e| e.at_index(index))?;
            index += 1;
            between(encoder.w)
        })?;
        return Ok(index);
    }
    shape::for_each_item(values, |element| {
        encoder.w.room()?;
        encoder.w.separator(index);
        encoder
            .value(plan.root, element)
            .map_err(|e| e.at_index(index))?;
        index += 1;
        between(encoder.w)
    })?;
    Ok(index)
}

/// One walk of a plan and a value, writing with `W`.
pub struct Encoder<'p, 'w, W> {
    plan: &'p Plan,
    w: &'w mut W,
    depth: usize,
}

/// The error for a value of the wrong type for `node`.
pub fn mismatch(node: &Node, value: &Obj<'_>) -> Error {
    Error::expected(
        ErrorKind::Encode,
        Code::EncodeError,
        node.describe(),
        &crate::py::type_name(value),
    )
}

/// The error for a field whose value is UNSET in a record written as an array, where nothing
/// can stand for a field left out (as msgspec refuses it).
#[cold]
pub(crate) fn unset_in_array(field: &Field) -> Error {
    Error::encode(format!(
        "field `{}` is UNSET, which an array_like record cannot leave out",
        field.name
    ))
}

/// The error for a record field without a value (a TypedDict's required key, a NamedTuple
/// shorter than its fields).
#[cold]
pub(crate) fn missing_field(field: &Field) -> Error {
    Error::encode(format!("missing required field `{}`", field.name))
}

/// The error for a value that is not an instance of the record's class.
#[cold]
pub fn not_a_record(spec: &RecordSpec, value: &Obj<'_>) -> Error {
    Error::encode(format!(
        "expected {}, got {}",
        spec.qualname,
        crate::py::type_name(value)
    ))
}

pub(crate) fn encode_error(err: PyErr) -> Error {
    Error::encode(err.to_string())
}

impl<'p, 'w, W: WireWriter> Encoder<'p, 'w, W> {
    fn new(plan: &'p Plan, w: &'w mut W, depth: usize) -> Self {
        Encoder { plan, w, depth }
    }

    fn value(&mut self, id: NodeId, value: &Obj<'_>) -> Result<()> {
        let node = self.plan.node(id);
        match node {
            Node::Str(_) => match value.cast::<PyString>() {
                Ok(text) => self.w.py_str(text),
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Int(_) => self.int(node, value),
            Node::Float(_) => {
                if let Ok(float) = value.cast_exact::<PyFloat>() {
                    self.w.float_object(float)
                } else if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
                    self.int(node, value)
                } else if let Ok(float) = value.cast::<PyFloat>() {
                    self.w.float(float.value())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Bool => match value.cast::<PyBool>() {
                Ok(flag) => {
                    self.w.boolean(flag.is_true());
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::None => {
                if value.is_none() {
                    self.w.none();
                    Ok(())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Record(spec) => nested(self.depth, || self.record(id, spec, value)),
            Node::Sequence(spec) => match (spec.plain, value.cast_exact::<PyList>()) {
                (Some(rule), Ok(list)) => {
                    nested(self.depth, || self.plain_list(spec.item, rule, list))
                }
                (Some(rule), Err(_)) => nested(self.depth, || {
                    self.plain_other(node, spec.item, rule, value)
                }),
                (None, _) => nested(self.depth, || self.sequence(node, spec.item, value)),
            },
            Node::Union(spec) => {
                let variant = shape::pick_variant(self.plan, spec, value)
                    .ok_or_else(|| mismatch(node, value))?;
                self.value(variant, value)
            }
            Node::TaggedUnion(spec) => {
                // The variant of the value's own class, found by pointer without a call.
                let class = value.get_type_ptr() as usize;
                let exact = match spec.classes.iter().find(|(addr, _)| *addr == class) {
                    Some(&(_, record_id)) => match self.plan.node(record_id) {
                        Node::Record(record) => Some((record_id, record)),
                        _ => None,
                    },
                    None => None,
                };
                match exact.or_else(|| shape::tagged_variant(self.plan, spec, value)) {
                    Some((record_id, record)) => {
                        nested(self.depth, || self.record(record_id, record, value))
                    }
                    None => Err(mismatch(node, value)),
                }
            }
            Node::Any => self.any(value),
            Node::DateTime(_) => match temporal::utc_or_naive_parts(value) {
                Some(parts) => self.w.datetime(&parts, value),
                None => self.datetime(node, value),
            },
            Node::Date => match value.cast_exact::<PyDate>() {
                Ok(date) => {
                    let parts = temporal::date_parts(date);
                    self.w.temporal(Temporal::Date, value, |out| {
                        text::temporal::write_date(out, &parts)
                    })
                }
                Err(_) => self.date_subclass(node, value),
            },
            Node::Time(_) => match value.cast::<PyTime>() {
                Ok(time) => {
                    let parts = temporal::time_parts(time).map_err(encode_error)?;
                    self.w.temporal(Temporal::Time, value, |out| {
                        text::temporal::write_time(out, &parts)
                    })
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::TimeDelta => match value.cast::<PyDelta>() {
                Ok(delta) => {
                    let parts = temporal::duration_parts(delta);
                    self.w.temporal(Temporal::TimeDelta, value, |out| {
                        text::temporal::write_duration(out, &parts)
                    })
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Uuid => {
                if shape::is_uuid(value) {
                    self.w.uuid(value)
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Decimal(_) => {
                if shape::is_decimal(value) {
                    self.w.decimal_value(value)
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Bytes(_) => {
                let data = shape::bytes_like(value).ok_or_else(|| mismatch(node, value))?;
                self.w.bytes(&data, value)
            }
            Node::Enum(spec) => self.enum_value(spec, value),
            Node::Literal(spec) => match shape::find_literal(spec, value) {
                Some(literal) => {
                    self.literal(literal);
                    Ok(())
                }
                None => {
                    let literal = shape::allowed_literal(spec, value)?;
                    self.literal(&literal);
                    Ok(())
                }
            },
            Node::Tuple(items) => nested(self.depth, || self.tuple(node, items, value)),
            Node::Dict(spec) => match value.cast::<PyDict>() {
                Ok(dict) if spec.str_keys && !matches!(self.plan.node(spec.value), Node::Any) => {
                    nested(self.depth, || {
                        self.str_key_dict(spec.key, spec.value, spec.plain, dict)
                    })
                }
                // `dict[str, Any]` (or `dict[Any, Any]`): an exact dict by the untyped loop,
                // which writes the same entries without a node dispatch per value.
                Ok(dict)
                    if matches!(self.plan.node(spec.value), Node::Any)
                        && matches!(self.plan.node(spec.key), Node::Str(_) | Node::Any)
                        && dict.is_exact_instance_of::<PyDict>() =>
                {
                    nested(self.depth, || self.any_dict(spec.key, dict))
                }
                Ok(dict) => nested(self.depth, || self.dict(spec.key, spec.value, dict)),
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Extension(spec) => self.value(spec.wire, &spec.encode_value(value)?),
            Node::Raw { nullable } => self.raw(*nullable, value),
            // Not in these formats' plans (a record leaves out a field whose value is UNSET).
            Node::Unset => Err(mismatch(node, value)),
        }
    }

    /// A `Raw` (None too for an `Optional[Raw]`).
    #[inline(never)]
    fn raw(&mut self, nullable: bool, value: &Obj<'_>) -> Result<()> {
        if nullable && value.is_none() {
            self.w.none();
            return Ok(());
        }
        match crate::raw::bytes_of(value) {
            Some(data) => self.w.raw(data),
            None => Err(Error::expected(
                ErrorKind::Encode,
                Code::EncodeError,
                "Raw",
                &crate::py::type_name(value),
            )),
        }
    }

    /// A date given as an instance of a date subclass; a datetime (itself a date subclass)
    /// would lose its time, so it is refused.
    #[cold]
    fn date_subclass(&mut self, node: &Node, value: &Obj<'_>) -> Result<()> {
        match value.cast::<PyDate>() {
            Ok(date) if !value.is_instance_of::<PyDateTime>() => {
                let parts = temporal::date_parts(date);
                self.w.temporal(Temporal::Date, value, |out| {
                    text::temporal::write_date(out, &parts)
                })
            }
            _ => Err(mismatch(node, value)),
        }
    }

    /// A datetime other than an exact naive or UTC one: its zone's `utcoffset` is asked.
    #[inline(never)]
    fn datetime(&mut self, node: &Node, value: &Obj<'_>) -> Result<()> {
        match value
            .cast_exact::<PyDateTime>()
            .or_else(|_| value.cast::<PyDateTime>())
        {
            Ok(datetime) => {
                let parts = temporal::datetime_parts(datetime).map_err(encode_error)?;
                self.w.datetime(&parts, value)
            }
            Err(_) => Err(mismatch(node, value)),
        }
    }

    fn int(&mut self, node: &Node, value: &Obj<'_>) -> Result<()> {
        if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
            return Err(mismatch(node, value));
        }
        match py::int_as_i64(value) {
            Some(number) => {
                self.w.int_object(number, value);
                Ok(())
            }
            None => self.w.big_int(value),
        }
    }

    fn literal(&mut self, literal: &LiteralValue) {
        match literal {
            LiteralValue::Str(text) => self.w.str(text),
            LiteralValue::Int(number) => self.w.int(*number),
            LiteralValue::Bool(flag) => self.w.boolean(*flag),
        }
    }

    fn enum_value(&mut self, spec: &EnumSpec, value: &Obj<'_>) -> Result<()> {
        let Some(index) = shape::enum_member_index(spec, value) else {
            let (literal, object) = shape::flag_value(spec, value)?;
            self.w.literal_object(&literal, &object);
            return Ok(());
        };
        let member = &spec.members[index];
        self.w
            .literal_object(&member.value, member.value_object.bind(value.py()));
        Ok(())
    }

    fn enter(&mut self) -> Result<()> {
        shape::enter_nested(&mut self.depth)
    }

    fn sequence(&mut self, node: &Node, item: NodeId, value: &Obj<'_>) -> Result<()> {
        if !shape::is_array_like(value) {
            return Err(mismatch(node, value));
        }
        self.enter()?;
        self.array(
            value,
            || match value.cast::<PyList>() {
                Ok(list) => Ok(list.len()),
                Err(_) => Ok(value.len()?),
            },
            |_| Some(item),
        )?;
        self.depth -= 1;
        Ok(())
    }

    fn tuple(&mut self, node: &Node, items: &[NodeId], value: &Obj<'_>) -> Result<()> {
        let length = match value.cast::<PyTuple>() {
            Ok(tuple) => tuple.len(),
            Err(_) => match value.cast::<PyList>() {
                Ok(list) => list.len(),
                Err(_) => return Err(mismatch(node, value)),
            },
        };
        if length != items.len() {
            return Err(Error::encode(format!(
                "expected a tuple of length {}, got length {length}",
                items.len()
            )));
        }
        self.enter()?;
        self.array(value, || Ok(length), |index| items.get(index).copied())?;
        self.depth -= 1;
        Ok(())
    }

    /// The items of `values` as an array of (up to) `length()` items, the one at `index`
    /// encoded as node `item_node(index)`; `None` there means a list given for a tuple grew
    /// while its items were encoded.
    fn array(
        &mut self,
        values: &Obj<'_>,
        length: impl FnOnce() -> Result<usize>,
        item_node: impl Fn(usize) -> Option<NodeId>,
    ) -> Result<()> {
        let open = self.w.begin_array(length)?;
        let mut index = 0;
        shape::for_each_item(values, |element| {
            let Some(item) = item_node(index) else {
                return Err(Error::encode("tuple changed size while being encoded"));
            };
            self.w.room()?;
            self.w.separator(index);
            let result = self.value(item, element).map_err(|e| e.at_index(index));
            index += 1;
            result
        })?;
        self.w.end_array(open, index)?;
        Ok(())
    }

    /// A list of a plain scalar node (`list[int]`, `list[str]`, ...): each item of the
    /// node's exact type is written straight from the list, with no dispatch on the node and
    /// no reference taken; any other item goes to the general path. The common rules get a
    /// loop each, with the rule a constant in it, so an item costs one type check and its
    /// write, not two dispatches on the rule and on the value's kind (callgrind, `lists`
    /// JSON encode of 50 records: see benches/callgrind_features.py).
    fn plain_list(
        &mut self,
        item: NodeId,
        rule: PlainRule,
        list: &Bound<'_, PyList>,
    ) -> Result<()> {
        const fn plain(kind: Plain) -> PlainRule {
            PlainRule {
                kind,
                nullable: false,
            }
        }
        self.enter()?;
        let open = self.w.begin_array(|| Ok(list.len()))?;
        let count = match rule {
            PlainRule {
                kind: Plain::Int,
                nullable: false,
            } => self.plain_items(item, plain(Plain::Int), list)?,
            PlainRule {
                kind: Plain::Str,
                nullable: false,
            } => self.plain_items(item, plain(Plain::Str), list)?,
            PlainRule {
                kind: Plain::Float,
                nullable: false,
            } => self.plain_items(item, plain(Plain::Float), list)?,
            _ => self.plain_items(item, rule, list)?,
        };
        self.w.end_array(open, count)?;
        self.depth -= 1;
        Ok(())
    }

    /// The items of [`Self::plain_list`]'s list, each written by `rule` or by the general path;
    /// returns how many were written. Always inlined, so a constant `rule` folds into the loop.
    #[inline(always)]
    fn plain_items(
        &mut self,
        item: NodeId,
        rule: PlainRule,
        list: &Bound<'_, PyList>,
    ) -> Result<usize> {
        let mut index = 0;
        while let Some(element) = py::list_item_borrowed(list, index) {
            self.w.room()?;
            self.w.separator(index);
            let written = match plain_of(&element, rule) {
                Some(plain) => self.w.plain(plain),
                None => false,
            };
            if !written {
                let element = element.to_owned();
                self.value(item, &element).map_err(|e| e.at_index(index))?;
            }
            index += 1;
        }
        Ok(index)
    }

    /// A sequence of a plain scalar node given as an exact tuple, set or frozenset
    /// (`tuple[float, ...]`, `set[str]`, `frozenset[int]`): each plain item written straight
    /// from the container as [`Self::plain_list`] writes a list's, a tuple's borrowed, a set's
    /// in its iteration order (as the general path reads it); anything else goes to
    /// [`Self::sequence`].
    #[inline(never)]
    fn plain_other(
        &mut self,
        node: &Node,
        item: NodeId,
        rule: PlainRule,
        value: &Obj<'_>,
    ) -> Result<()> {
        if let Ok(tuple) = value.cast_exact::<PyTuple>() {
            self.enter()?;
            let open = self.w.begin_array(|| Ok(tuple.len()))?;
            let mut index = 0;
            while let Some(element) = py::tuple_item_borrowed(tuple, index) {
                self.plain_item(item, rule, &element, index)?;
                index += 1;
            }
            self.w.end_array(open, index)?;
            self.depth -= 1;
            return Ok(());
        }
        if value.is_exact_instance_of::<PySet>() || value.is_exact_instance_of::<PyFrozenSet>() {
            self.enter()?;
            let open = self.w.begin_array(|| Ok(value.len()?))?;
            let mut index = 0;
            for element in value.try_iter()? {
                self.plain_item(item, rule, &element?, index)?;
                index += 1;
            }
            self.w.end_array(open, index)?;
            self.depth -= 1;
            return Ok(());
        }
        self.sequence(node, item, value)
    }

    /// One item of a plain-item sequence (at `index`): written by `rule` when it is a plain
    /// value the writer takes, else by the general path.
    #[inline(always)]
    fn plain_item(
        &mut self,
        item: NodeId,
        rule: PlainRule,
        element: &Bound<'_, PyAny>,
        index: usize,
    ) -> Result<()> {
        self.w.room()?;
        self.w.separator(index);
        let written = match plain_of(element, rule) {
            Some(plain) => self.w.plain(plain),
            None => false,
        };
        if !written {
            let element = element.clone();
            self.value(item, &element).map_err(|e| e.at_index(index))?;
        }
        Ok(())
    }

    /// A dict with str keys and values of a typed node (not `Any`): an exact ASCII str key is
    /// written from its own bytes and a plain value (`rule`) straight from the dict, with no
    /// references taken; anything else goes to the general key and value paths.
    fn str_key_dict(
        &mut self,
        key_node: NodeId,
        value_node: NodeId,
        rule: Option<PlainRule>,
        dict: &Bound<'_, PyDict>,
    ) -> Result<()> {
        self.enter()?;
        let open = self.w.begin_map(dict.len());
        // As in `plain_list`: the common value rules get a loop each, the rule a constant.
        let count = match rule {
            Some(PlainRule {
                kind: Plain::Int,
                nullable: false,
            }) => self.str_key_entries(
                key_node,
                value_node,
                Some(PlainRule {
                    kind: Plain::Int,
                    nullable: false,
                }),
                dict,
            )?,
            Some(PlainRule {
                kind: Plain::Str,
                nullable: false,
            }) => self.str_key_entries(
                key_node,
                value_node,
                Some(PlainRule {
                    kind: Plain::Str,
                    nullable: false,
                }),
                dict,
            )?,
            _ => self.str_key_entries(key_node, value_node, rule, dict)?,
        };
        self.w.end_map(open, count)?;
        self.depth -= 1;
        Ok(())
    }

    /// The entries of [`Self::str_key_dict`]'s dict; returns how many were written. Always
    /// inlined, so a constant `rule` folds into the loop.
    #[inline(always)]
    fn str_key_entries(
        &mut self,
        key_node: NodeId,
        value_node: NodeId,
        rule: Option<PlainRule>,
        dict: &Bound<'_, PyDict>,
    ) -> Result<usize> {
        const KEY: PlainRule = PlainRule {
            kind: Plain::Str,
            nullable: false,
        };
        let mut count = 0;
        let mut position = 0;
        while let Some((key, item)) = py::next_entry_borrowed(dict, &mut position) {
            self.w.room()?;
            self.w.separator(count);
            let key_written = match plain_of(&key, KEY) {
                Some(plain) => self.w.plain(plain),
                None => false,
            };
            let value_plain = if key_written {
                rule.and_then(|rule| plain_of(&item, rule))
            } else {
                None
            };
            if let Some(plain) = value_plain {
                self.w.key_separator();
                if self.w.plain(plain) {
                    count += 1;
                    continue;
                }
            }
            // The general paths may run Python code: the entry is held from here on.
            let (key, item) = (key.to_owned(), item.to_owned());
            if !key_written {
                self.key(key_node, &key)?;
            }
            if value_plain.is_none() {
                self.w.key_separator();
            }
            if let Err(err) = self.value(value_node, &item) {
                let shown = crate::errors::shown_key(key.as_any());
                return Err(err.at_key(&shown));
            }
            count += 1;
        }
        Ok(count)
    }

    fn dict(
        &mut self,
        key_node: NodeId,
        value_node: NodeId,
        dict: &Bound<'_, PyDict>,
    ) -> Result<()> {
        self.enter()?;
        let open = self.w.begin_map(dict.len());
        let mut count = 0;
        let mut position = 0;
        while let Some((key, item)) = py::next_entry(dict, &mut position) {
            self.w.room()?;
            self.w.separator(count);
            self.key(key_node, &key)?;
            self.w.key_separator();
            if let Err(err) = self.value(value_node, &item) {
                let shown = crate::errors::shown_key(key.as_any());
                return Err(err.at_key(&shown));
            }
            count += 1;
        }
        self.w.end_map(open, count)?;
        self.depth -= 1;
        Ok(())
    }

    /// A dict key is written as its value would be, then made a valid key by the format; the
    /// value encoders check the key's type.
    fn key(&mut self, id: NodeId, key: &Obj<'_>) -> Result<()> {
        let node = self.plan.node(id);
        match node {
            // The common case, without the general path's dispatch and key fix-up.
            Node::Str(_) | Node::Any if key.is_exact_instance_of::<PyString>() => {
                self.w.py_str(key.cast::<PyString>().map_err(PyErr::from)?)
            }
            Node::Str(_)
            | Node::Int(_)
            | Node::Enum(_)
            | Node::Literal(_)
            | Node::Uuid
            | Node::Any => {
                let start = self.w.key_start();
                self.value(id, key)?;
                self.w.finish_key(start)
            }
            _ => Err(Error::encode(format!(
                "expected a {} dict key, got {}",
                node.describe(),
                crate::py::type_name(key)
            ))),
        }
    }

    #[inline(never)]
    fn record(&mut self, id: NodeId, spec: &RecordSpec, value: &Obj<'_>) -> Result<()> {
        if !shape::is_record(spec, value) {
            return Err(not_a_record(spec, value));
        }
        if let Some(own) = shape::subclass_plan(self.plan, spec, value)? {
            return self.with_plan(&own, value);
        }
        self.enter()?;
        let names = self.w.record_names(self.plan, id);
        if spec.common_map {
            self.dataclass_fields::<false>(spec, names, value)?;
            self.depth -= 1;
            return Ok(());
        }
        if spec.class_map {
            self.dataclass_fields::<true>(spec, names, value)?;
            self.depth -= 1;
            return Ok(());
        }
        self.other_layout(spec, names, value)?;
        self.depth -= 1;
        Ok(())
    }

    /// A record of a layout other than a full map: out of line, so that the common record's
    /// code stays as compact as it was.
    #[inline(never)]
    fn other_layout(&mut self, spec: &RecordSpec, names: W::Names, value: &Obj<'_>) -> Result<()> {
        if W::field_entries(&names).len() == spec.wire_fields.len() {
            match spec.layout {
                RecordLayout::Sparse => return self.sparse_fields(spec, names, value),
                RecordLayout::Array => return self.array_fields(spec, names, value),
                RecordLayout::Full | RecordLayout::General => {}
            }
        }
        self.general_record(spec, names, value)
    }

    /// A map whose fields may be left out (`RecordLayout::Sparse`), from the record's entries
    /// in the writer's table: a field that is UNSET, or at its default under `omit_defaults`
    /// (by the test the plan chose for it, see `py::defaults`), or a TypedDict's absent key, is
    /// left out before its name is written; plain values are written straight from the
    /// instance, as in [`Self::dataclass_fields`].
    fn sparse_fields(&mut self, spec: &RecordSpec, names: W::Names, value: &Obj<'_>) -> Result<()> {
        let entries = W::field_entries(&names);
        let class_tag = spec.class_tag().is_some();
        let open = self.w.begin_map(entries.len() + usize::from(class_tag));
        let py = value.py();
        let mut reader = spec.access.reader(value);
        // A tagged-union variant leads with its tag; `usize::MAX` matches no field.
        let (tag_index, tag_object) = match &spec.tag {
            Some((index, _)) => {
                self.leading_tag(spec, names, *index, value)?;
                (*index, self.tag_object(&spec.fields[*index]))
            }
            None => (usize::MAX, None),
        };
        if class_tag {
            self.class_tag(spec, names, value)?;
        }
        let mut count = usize::from(tag_index != usize::MAX) + usize::from(class_tag);
        let unset = self.plan.unset_addr();
        for entry in entries {
            self.w.room()?;
            let index = entry.index as usize;
            if index == tag_index {
                self.entry_tag(&mut reader, index, tag_object, spec, value)?;
                continue;
            }
            let field = &spec.fields[index];
            let first = count == 0;
            let w = &mut *self.w;
            // Whether `take` ran (the access read a borrowed value): it then left the value
            // out, wrote it, or wrote its name and handed it on, unless the general comparison
            // with its default must decide (`ask`).
            let (mut took, mut ask) = (false, false);
            let next = reader.next_item(value, index, entry.name.bind(py), |item| {
                took = true;
                if field.unset && item.addr() == unset {
                    return Next::Missing;
                }
                match item.default_verdict(&field.omit) {
                    Verdict::Default => return Next::Missing,
                    Verdict::Ask => {
                        ask = true;
                        return Next::Value(item.owned(py));
                    }
                    Verdict::Other => {}
                }
                w.entry_name(names, entry, first);
                if let Some(plain) = entry.plain.and_then(|rule| item.plain(rule)) {
                    if w.plain(plain) {
                        return Next::Written;
                    }
                }
                Next::Value(item.owned(py))
            });
            let item = match next {
                Next::Written => {
                    count += 1;
                    continue;
                }
                Next::Value(item) => item,
                // Left out by `take`, or a TypedDict without the key.
                Next::Missing => {
                    if !took && matches!(field.default, FieldDefault::Required) {
                        return Err(missing_field(field));
                    }
                    continue;
                }
                Next::Failed(err) => return Err(Error::from(*err)),
            };
            if !took || ask {
                if !took {
                    if field.unset && item.as_ptr() as usize == unset {
                        continue;
                    }
                    ask = match field.omit.check(&item) {
                        Verdict::Default => continue,
                        Verdict::Ask => true,
                        Verdict::Other => false,
                    };
                }
                if ask && shape::equals_default(&field.default, &item)? {
                    continue;
                }
                self.w.entry_name(names, entry, first);
            }
            count += 1;
            self.entry_value(entry, names, &item)
                .map_err(|e| e.at_field(&field.wire_name))?;
        }
        self.w.end_map(open, count)
    }

    /// A record written as an array (`RecordLayout::Array`: `array_like`, a NamedTuple), from
    /// the record's entries in the writer's table: the tag first for a tagged variant, then
    /// each field's value in order, plain values straight from the instance.
    fn array_fields(&mut self, spec: &RecordSpec, names: W::Names, value: &Obj<'_>) -> Result<()> {
        let entries = W::field_entries(&names);
        let length = spec.wire_fields.len() + usize::from(spec.class_tag().is_some());
        let open = self.w.begin_array(|| Ok(length))?;
        // Variants of a tagged union lead with the tag, in place of the tag field.
        let (lead, tag_index) = match (&spec.tag, spec.class_tag()) {
            (Some((index, tag)), _) => (Some(tag), *index),
            (None, Some(class_tag)) => (Some(&class_tag.value), usize::MAX),
            (None, None) => (None, usize::MAX),
        };
        let mut count = 0;
        if let Some(tag) = lead {
            self.literal(tag);
            count = 1;
        }
        let py = value.py();
        let mut reader = spec.access.reader(value);
        let unset = self.plan.unset_addr();
        for entry in entries {
            let index = entry.index as usize;
            if index == tag_index {
                continue;
            }
            self.w.room()?;
            self.w.separator(count);
            let w = &mut *self.w;
            // The reader of the common record: a plain value is written as it is read (UNSET,
            // never a plain value, comes back with the others).
            let name = entry.name.bind(py);
            match reader.next(value, index, name, entry.plain, |plain| w.plain(plain)) {
                Next::Written => {}
                Next::Value(item) => {
                    let field = &spec.fields[index];
                    if field.unset && item.as_ptr() as usize == unset {
                        return Err(unset_in_array(field).at_index(count));
                    }
                    self.entry_value(entry, names, &item)
                        .map_err(|e| e.at_index(count))?;
                }
                Next::Missing => return Err(missing_field(&spec.fields[index])),
                Next::Failed(err) => return Err(Error::from(*err)),
            }
            count += 1;
        }
        self.w.end_array(open, count)
    }

    /// The general record walk: any record, from the plan's fields (a record of another plan,
    /// a writer without entries, an `array_like` TypedDict).
    #[inline(never)]
    fn general_record(
        &mut self,
        spec: &RecordSpec,
        names: W::Names,
        value: &Obj<'_>,
    ) -> Result<()> {
        let positional = spec.array_like || spec.kind == RecordKind::NamedTuple;
        let length = spec.wire_fields.len() + usize::from(spec.class_tag().is_some());
        let open = if positional {
            self.w.begin_array(|| Ok(length))?
        } else {
            self.w.begin_map(length)
        };
        let mut count = 0;
        let mut source = spec.access.reader(value);
        // Variants of a tagged union lead with the tag, so a decoder knows the variant before it
        // reads anything else; so do classes with a tag of their own.
        let leading_tag = match (&spec.tag, spec.class_tag()) {
            (Some((index, tag)), _) if positional => {
                self.literal(tag);
                count += 1;
                Some(*index)
            }
            (None, Some(class_tag)) if positional => {
                self.literal(&class_tag.value);
                count += 1;
                None
            }
            _ => None,
        };
        let lead = count;
        // Object-form variants lead with the tag too; the tag field is then only checked where
        // the walk meets it.
        let tag_first = match (&spec.tag, spec.class_tag()) {
            (Some((index, _)), _) if !positional => {
                self.leading_tag(spec, names, *index, value)?;
                count += 1;
                Some(*index)
            }
            (None, Some(_)) if !positional => {
                self.class_tag(spec, names, value)?;
                count += 1;
                None
            }
            _ => None,
        };
        let fields = spec
            .wire_fields
            .iter()
            .filter(|&&index| Some(index) != leading_tag);
        // The first optional TypedDict key an array-like record left out: its array ends there.
        let mut left_out: Option<&str> = None;
        for (position, &index) in fields.enumerate() {
            self.w.room()?;
            let position = position + lead;
            let field = &spec.fields[index];
            if Some(index) == tag_first {
                if let Some(item) = source.get(value, index, field.name.bind(value.py()))? {
                    self.check_tag(field, &item)?;
                }
                continue;
            }
            let Some(item) = source.get(value, index, field.name.bind(value.py()))? else {
                if positional && matches!(field.default, FieldDefault::Absent) {
                    // A shorter array, which decodes back to the keys before it.
                    left_out.get_or_insert(&field.wire_name);
                    continue;
                }
                if positional || matches!(field.default, FieldDefault::Required) {
                    return Err(missing_field(field));
                }
                continue;
            };
            if field.unset && self.plan.is_unset(&item) {
                if positional {
                    return Err(unset_in_array(field).at_index(position));
                }
                continue;
            }
            if let Some(absent) = left_out {
                return Err(Error::encode(format!(
                    "key `{absent}` is left out but `{}` after it is not: an array_like record \
                     can leave out only its last keys",
                    field.wire_name
                )));
            }
            if spec.omit_defaults
                && !positional
                && spec.tag.as_ref().map(|(i, _)| *i) != Some(index)
                && shape::equals_default(&field.default, &item)?
            {
                continue;
            }
            if positional {
                self.w.separator(count);
            } else {
                self.w.field_name(names, index, field, count == 0);
            }
            count += 1;
            self.value(field.node, &item).map_err(|e| {
                if positional {
                    e.at_index(position)
                } else {
                    e.at_field(&field.wire_name)
                }
            })?;
        }
        if positional {
            self.w.end_array(open, count)
        } else {
            self.w.end_map(open, count)
        }
    }

    /// A tagged-union variant's tag, written as its map's first entry (as msgspec writes the tag
    /// of its tagged Structs): the class's tag when the tag field's `Literal` allows one value,
    /// else the instance's value, checked.
    #[inline(always)]
    fn leading_tag(
        &mut self,
        spec: &RecordSpec,
        names: W::Names,
        index: usize,
        value: &Obj<'_>,
    ) -> Result<()> {
        if spec.fixed_tag && self.w.fixed_tag(names) {
            return Ok(());
        }
        self.written_tag(spec, names, index, value)
    }

    /// A class's own tag (`RecordSpec::class_tag`), written as its map's first entry.
    #[inline(never)]
    fn class_tag(&mut self, spec: &RecordSpec, names: W::Names, value: &Obj<'_>) -> Result<()> {
        if self.w.fixed_tag(names) {
            return Ok(());
        }
        let Some(tag) = spec.class_tag() else {
            return Ok(());
        };
        self.w
            .field_name(names, spec.fields.len(), &tag.field, true);
        match self.plan.node(tag.field.node) {
            Node::Literal(literal) if literal.values.len() == 1 => {
                let (tag, object) = &literal.values[0];
                self.w.literal_object(tag, object.bind(value.py()));
            }
            _ => self.literal(&tag.value),
        }
        Ok(())
    }

    /// [`Self::leading_tag`] written the general way: the field's name, then the tag's value.
    #[inline(never)]
    fn written_tag(
        &mut self,
        spec: &RecordSpec,
        names: W::Names,
        index: usize,
        value: &Obj<'_>,
    ) -> Result<()> {
        let field = &spec.fields[index];
        self.w.field_name(names, index, field, true);
        if let Node::Literal(literal) = self.plan.node(field.node) {
            if let [(tag, object)] = literal.values.as_slice() {
                self.w.literal_object(tag, object.bind(value.py()));
                return Ok(());
            }
        }
        let name = field.name.bind(value.py());
        let item = match spec.kind {
            RecordKind::TypedDict => value
                .cast::<PyDict>()
                .map_err(PyErr::from)?
                .get_item(name)?
                .ok_or_else(|| Error::encode(format!("missing required field `{}`", field.name)))?,
            _ => value.getattr(name)?,
        };
        self.value(field.node, &item)
            .map_err(|e| e.at_field(&field.wire_name))
    }

    /// The tag field's value where the walk meets it, after [`Self::leading_tag`] has written
    /// the tag: it must be one its `Literal` allows (the class's own tag when there is one).
    #[inline(never)]
    fn check_tag(&self, field: &Field, item: &Obj<'_>) -> Result<()> {
        if let Node::Literal(literal) = self.plan.node(field.node) {
            if shape::find_literal(literal, item).is_none() {
                shape::allowed_literal(literal, item).map_err(|e| e.at_field(&field.wire_name))?;
            }
        }
        Ok(())
    }

    /// The object of a tag field's `Literal` when it allows one value (the class's own tag).
    #[inline(always)]
    fn tag_object(&self, field: &Field) -> Option<&'p Py<PyAny>> {
        match self.plan.node(field.node) {
            Node::Literal(literal) if literal.values.len() == 1 => Some(&literal.values[0].1),
            _ => None,
        }
    }

    /// The tag field where the field walk meets it: read (so a dict cursor stays in step) and
    /// checked, not written again. The common value, the class's own tag object, is accepted
    /// by identity. Cold and out of line, so that the plain record walk is laid out as before.
    #[cold]
    #[inline(never)]
    fn skip_tag<'py>(
        &mut self,
        reader: &mut FieldReader<'_, 'py>,
        index: usize,
        field: &Field,
        value: &Obj<'py>,
    ) -> Result<()> {
        let name = field.name.bind(value.py());
        let next = match self.plan.node(field.node) {
            Node::Literal(literal) if literal.values.len() == 1 => {
                reader.next_unless(value, index, name, &literal.values[0].1)
            }
            _ => reader.next(value, index, name, None, |_| false),
        };
        match next {
            Next::Written | Next::Missing => Ok(()),
            Next::Value(item) => self.check_tag(field, &item),
            Next::Failed(err) => Err(Error::from(*err)),
        }
    }

    /// The tag field where the entry walk of [`Self::dataclass_fields`] meets it.
    #[inline(always)]
    fn entry_tag<'py>(
        &mut self,
        reader: &mut FieldReader<'_, 'py>,
        index: usize,
        tag_object: Option<&Py<PyAny>>,
        spec: &RecordSpec,
        value: &Obj<'py>,
    ) -> Result<()> {
        let field = &spec.fields[index];
        if let Some(expected) = tag_object {
            let name = field.name.bind(value.py());
            return match reader.next_unless(value, index, name, expected) {
                Next::Written | Next::Missing => Ok(()),
                Next::Value(item) => self.check_tag(field, &item),
                Next::Failed(err) => Err(Error::from(*err)),
            };
        }
        self.skip_tag(reader, index, field, value)
    }

    /// The common record: a dataclass written as a map with every field, from the record's
    /// entries in the writer's table (see [`FieldEntry`]). Plain field values are written
    /// straight from the instance (see `py::fields`). `CLASS_TAG`: the class's own tag goes
    /// first (a copy of the walk of its own, so that the common one is laid out as before).
    fn dataclass_fields<const CLASS_TAG: bool>(
        &mut self,
        spec: &RecordSpec,
        names: W::Names,
        value: &Obj<'_>,
    ) -> Result<()> {
        let length = spec.wire_fields.len();
        let entries_written = length + usize::from(CLASS_TAG);
        let open = self.w.begin_map(entries_written);
        let py = value.py();
        let mut reader = spec.access.reader(value);
        // A tagged-union variant leads with its tag; `usize::MAX` matches no field.
        let (tag_index, tag_object) = match &spec.tag {
            Some((index, _)) => {
                self.leading_tag(spec, names, *index, value)?;
                (*index, self.tag_object(&spec.fields[*index]))
            }
            None => (usize::MAX, None),
        };
        if CLASS_TAG {
            self.class_tag(spec, names, value)?;
        }
        let mut first = tag_index == usize::MAX && !CLASS_TAG;
        let entries = W::field_entries(&names);
        if entries.len() != length {
            self.plan_fields(
                spec,
                names,
                value,
                &mut reader,
                tag_index,
                tag_object,
                first,
            )?;
            return self.w.end_map(open, entries_written);
        }
        for entry in entries {
            self.w.room()?;
            let index = entry.index as usize;
            if index == tag_index {
                self.entry_tag(&mut reader, index, tag_object, spec, value)?;
                continue;
            }
            self.w.entry_name(names, entry, first);
            first = false;
            let name = entry.name.bind(py);
            let w = &mut *self.w;
            let item = match reader.next(value, index, name, entry.plain, |plain| w.plain(plain)) {
                // A dataclass reader never misses a field (that is for TypedDicts).
                Next::Written | Next::Missing => continue,
                Next::Value(item) => item,
                Next::Failed(err) => return Err(Error::from(*err)),
            };
            self.entry_value(entry, names, &item)
                .map_err(|e| e.at_field(&spec.fields[index].wire_name))?;
        }
        self.w.end_map(open, entries_written)
    }

    /// A field value the reader handed back, by its entry's kind: the common kinds without
    /// reading the field's node; anything else (and every error) by the general path.
    #[inline(always)]
    fn entry_value(&mut self, entry: &FieldEntry, names: W::Names, item: &Obj<'_>) -> Result<()> {
        match entry.kind {
            EntryKind::Other => {}
            _ if entry.nullable && item.is_none() => {
                self.w.none();
                return Ok(());
            }
            EntryKind::Date => {
                if let Ok(date) = item.cast_exact::<PyDate>() {
                    let parts = temporal::date_parts(date);
                    return self.w.temporal(Temporal::Date, item, |out| {
                        text::temporal::write_date(out, &parts)
                    });
                }
            }
            EntryKind::Decimal => {
                if shape::is_decimal(item) {
                    return self.w.decimal_value(item);
                }
            }
            EntryKind::Record => {
                let id = entry.target as NodeId;
                if let Node::Record(spec) = self.plan.node(id) {
                    return nested(self.depth, || self.record(id, spec, item));
                }
            }
            EntryKind::Uuid => {
                if shape::is_uuid(item) {
                    return self.w.uuid(item);
                }
            }
            EntryKind::Time | EntryKind::TimeDelta | EntryKind::List => {
                return self.entry_value_more(entry, item);
            }
            EntryKind::Enum => {
                let values = W::enum_values(&names);
                let addr = item.as_ptr() as usize;
                for value in values.get(entry.enum_start as usize..).unwrap_or_default() {
                    if value.addr == addr {
                        self.w.written(&value.bytes, value.len as usize);
                        return Ok(());
                    }
                    if value.addr == 0 {
                        break;
                    }
                }
            }
        }
        self.value(entry.node as NodeId, item)
    }

    /// [`Self::entry_value`] for the kinds it keeps out of line (so that the common kinds' code
    /// stays as compact as it was): a time, a timedelta, a list of plain items.
    #[inline(never)]
    fn entry_value_more(&mut self, entry: &FieldEntry, item: &Obj<'_>) -> Result<()> {
        match entry.kind {
            EntryKind::Time => {
                if let Some(time) = temporal::naive_time_parts(item) {
                    let parts = TimeOfDay {
                        time,
                        offset_seconds: None,
                    };
                    return self.w.temporal(Temporal::Time, item, |out| {
                        text::temporal::write_time(out, &parts)
                    });
                }
            }
            EntryKind::TimeDelta => {
                if let Some(parts) = temporal::exact_duration_parts(item) {
                    return self.w.temporal(Temporal::TimeDelta, item, |out| {
                        text::temporal::write_duration(out, &parts)
                    });
                }
            }
            EntryKind::List => {
                if let Node::Sequence(spec) = self.plan.node(entry.target as NodeId) {
                    if let (Some(rule), Ok(list)) = (spec.plain, item.cast_exact::<PyList>()) {
                        // A list of plain items nests no record: only the stack check of
                        // every sixteenth level sends it the general way.
                        if nested_runs_directly(self.depth) {
                            return self.plain_list(spec.item, rule, list);
                        }
                    }
                }
            }
            _ => {}
        }
        self.value(entry.node as NodeId, item)
    }

    /// [`Self::dataclass_fields`]'s fields read from the plan, for a writer without entries
    /// for the record (`to_builtins`'s, or a record of another plan under `Any`).
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn plan_fields<'py>(
        &mut self,
        spec: &RecordSpec,
        names: W::Names,
        value: &Obj<'py>,
        reader: &mut FieldReader<'_, 'py>,
        tag_index: usize,
        tag_object: Option<&Py<PyAny>>,
        mut first: bool,
    ) -> Result<()> {
        let py = value.py();
        for &index in &spec.wire_fields {
            self.w.room()?;
            let field = &spec.fields[index];
            if index == tag_index {
                self.entry_tag(reader, index, tag_object, spec, value)?;
                continue;
            }
            self.w.field_name(names, index, field, first);
            first = false;
            let name = field.name.bind(py);
            let w = &mut *self.w;
            let item = match reader.next(value, index, name, field.plain, |plain| w.plain(plain)) {
                // A dataclass reader never misses a field (that is for TypedDicts).
                Next::Written | Next::Missing => continue,
                Next::Value(item) => item,
                Next::Failed(err) => return Err(Error::from(*err)),
            };
            self.value(field.node, &item)
                .map_err(|e| e.at_field(&field.wire_name))?;
        }
        Ok(())
    }

    /// `value` written by another plan's root (its own class's: a value under `Any`, a
    /// subclass instance), one level deeper.
    #[cold]
    #[inline(never)]
    fn with_plan(&mut self, plan: &Plan, value: &Obj<'_>) -> Result<()> {
        self.enter()?;
        let result = Encoder::new(plan, &mut *self.w, self.depth).value(plan.root, value);
        self.depth -= 1;
        result
    }

    /// `typing.Any`: the value's own type decides.
    /// `Any`'s value: its exact builtin type picked by pointer (str, int, float, bool, None,
    /// then dicts and lists, walked by loops of their own); anything else, subclasses
    /// included, by [`Self::any_other`].
    fn any(&mut self, value: &Obj<'_>) -> Result<()> {
        if self.any_scalar(value)? {
            return Ok(());
        }
        match py::builtin(value) {
            py::Builtin::Dict => {
                let dict = value.cast::<PyDict>().map_err(PyErr::from)?;
                nested(self.depth, || self.any_dict(self.plan.any, dict))
            }
            py::Builtin::List => {
                let list = value.cast::<PyList>().map_err(PyErr::from)?;
                nested(self.depth, || self.any_list(list))
            }
            _ => self.any_other(value),
        }
    }

    /// Writes `value` when it is an exact str, int, float, bool or None (whose writing runs no
    /// Python code, so a value borrowed from a container needs no reference of its own), and
    /// says whether it was one.
    #[inline(always)]
    fn any_scalar(&mut self, value: &Obj<'_>) -> Result<bool> {
        match py::builtin(value) {
            py::Builtin::Str => {
                let text = value.cast::<PyString>().map_err(PyErr::from)?;
                self.w.py_str(text)?;
            }
            py::Builtin::Int => match py::int_as_i64(value) {
                Some(number) => self.w.int_object(number, value),
                None => self.w.big_int(value)?,
            },
            py::Builtin::Float => {
                let number = value.cast::<PyFloat>().map_err(PyErr::from)?.value();
                self.w.float(number)?;
            }
            py::Builtin::Bool => {
                let flag = value.cast::<PyBool>().map_err(PyErr::from)?;
                self.w.boolean(flag.is_true());
            }
            py::Builtin::None => self.w.none(),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// An exact list under `Any`: its items read in place, borrowed (an item that is not a
    /// scalar is held while it is written, since writing it may run Python code that changes
    /// the list; the length is read again before every item).
    fn any_list(&mut self, list: &Bound<'_, PyList>) -> Result<()> {
        self.enter()?;
        let open = self.w.begin_array(|| Ok(list.len()))?;
        let mut index = 0;
        while let Some(item) = py::list_item_borrowed(list, index) {
            self.w.room()?;
            self.w.separator(index);
            let written = match self.any_scalar(&item) {
                Ok(true) => Ok(()),
                Ok(false) => self.any(&item.to_owned()),
                Err(err) => Err(err),
            };
            written.map_err(|e| e.at_index(index))?;
            index += 1;
        }
        self.w.end_array(open, index)?;
        self.depth -= 1;
        Ok(())
    }

    /// An exact dict of `Any` values (under `Any`, `key_node` is `Any` too): its entries read
    /// in place (see [`Self::any_list`]); a key that is not an exact str goes the way of every
    /// dict key of `key_node` ([`Self::key`]).
    fn any_dict(&mut self, key_node: NodeId, dict: &Bound<'_, PyDict>) -> Result<()> {
        self.enter()?;
        let open = self.w.begin_map(dict.len());
        let mut count = 0;
        let mut position = 0;
        while let Some((key, value)) = py::next_entry_borrowed(dict, &mut position) {
            self.w.room()?;
            self.w.separator(count);
            let key = key.to_owned();
            if key.is_exact_instance_of::<PyString>() {
                self.w
                    .py_str(key.cast::<PyString>().map_err(PyErr::from)?)?;
            } else {
                // Writing the key may run Python code: the value is held first.
                let value = value.to_owned();
                self.key(key_node, &key)?;
                self.w.key_separator();
                self.any_entry_value(&key, &value)?;
                count += 1;
                continue;
            }
            self.w.key_separator();
            match self.any_scalar(&value) {
                Ok(true) => {}
                Ok(false) => self.any_entry_value(&key, &value.to_owned())?,
                Err(err) => return Err(err.at_key(&crate::errors::shown_key(key.as_any()))),
            }
            count += 1;
        }
        self.w.end_map(open, count)?;
        self.depth -= 1;
        Ok(())
    }

    /// A dict entry's value under `Any`, its error at the entry's key.
    fn any_entry_value(&mut self, key: &Obj<'_>, value: &Obj<'_>) -> Result<()> {
        self.any(value)
            .map_err(|e| e.at_key(&crate::errors::shown_key(key.as_any())))
    }

    /// A value under `Any` that is no exact str, int, float, bool, None, dict or list: a
    /// tuple, set or subclass of a builtin by its kind, else the format's own form or the
    /// plan of its class.
    #[inline(never)]
    fn any_other(&mut self, value: &Obj<'_>) -> Result<()> {
        match shape::classify(value) {
            Shape::None => {
                self.w.none();
                Ok(())
            }
            Shape::Bool(flag) => {
                self.w.boolean(flag);
                Ok(())
            }
            Shape::Int => self.int(&Node::Int(Default::default()), value),
            Shape::Float(number) => self.w.float(number),
            Shape::Str => self
                .w
                .py_str(value.cast::<PyString>().map_err(PyErr::from)?),
            Shape::Array => nested(self.depth, || {
                self.sequence(&Node::Any, self.plan.any, value)
            }),
            Shape::Dict => {
                let dict = value.cast::<PyDict>().map_err(PyErr::from)?;
                nested(self.depth, || self.dict(self.plan.any, self.plan.any, dict))
            }
            Shape::Other => {
                if self.w.any_other(value)? {
                    return Ok(());
                }
                if let Some(plan) = shape::plan_for_value(value)? {
                    self.with_plan(&plan, value)
                } else {
                    Err(Error::encode(format!(
                        "{} values are not supported",
                        crate::py::type_name(value)
                    )))
                }
            }
        }
    }
}
