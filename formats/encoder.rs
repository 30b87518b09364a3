//! The plan-walking encoder JSON and MessagePack share. [`Encoder`] walks the plan and the
//! Python value together: type checks, union variant choice, record field access (with the
//! borrowed-field fast path of `py::fields`), `Any` dispatch, enums, literals, tuples, dicts,
//! the error paths and the depth guard. Every value it has checked goes to the format's
//! [`WireWriter`], which writes it and applies the format's own rules (JSON refuses NaN and
//! quotes non-str keys; MessagePack counts container items and limits ints to 64 bits).
//!
//! `Encoder` is generic over the writer, so each format gets its own monomorphised copy with the
//! writes inlined: the hot paths compile as if written for that format alone.

use std::marker::PhantomData;

use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDate, PyDateTime, PyDelta, PyDict, PyFloat, PyInt, PyList, PyString, PyTime, PyTuple,
};

use crate::errors::{Error, ErrorKind, Result};
use crate::plan::{
    EnumSpec, Field, FieldDefault, LiteralValue, Node, NodeId, Plan, RecordKind, RecordSpec,
};
use crate::py::fields::{FieldCursor, Next, PlainValue};
use crate::py::{self, temporal, Obj};
use crate::shape::{self, Shape};
use crate::text;
use crate::text::temporal::DateTime;
use crate::values::nested;

/// How one format writes the values [`Encoder`] has checked, and the format's own rules where
/// they differ. All functions append to `out`.
///
/// Containers: an array or map is opened with `begin_array`/`begin_map` (given the item count
/// the encoder expects), each item or dict entry is preceded by `separator` (a record field by
/// `field_name`), and `end_array`/`end_map` close it with the count actually written (which
/// differs from the expected one when `omit_defaults` leaves fields out, or user code resizes
/// a list).
pub trait WireWriter {
    /// What a format keeps about an open container until it is closed.
    type Open;

    fn none(out: &mut Vec<u8>);
    fn boolean(out: &mut Vec<u8>, value: bool);
    fn int(out: &mut Vec<u8>, value: i64);
    /// An int outside i64 (checked to be an int, not a bool).
    fn big_int(out: &mut Vec<u8>, value: &Obj<'_>) -> Result<()>;
    fn float(out: &mut Vec<u8>, value: f64) -> Result<()>;
    fn str(out: &mut Vec<u8>, text: &str);

    /// A plain field value taken straight from an instance dict (see `py::fields`); false when
    /// the format cannot write it, so the general path raises the error.
    #[inline]
    fn plain(out: &mut Vec<u8>, value: PlainValue<'_>) -> bool {
        match value {
            PlainValue::None => Self::none(out),
            PlainValue::Bool(flag) => Self::boolean(out, flag),
            PlainValue::Int(number) => Self::int(out, number),
            PlainValue::Float(number) => return Self::float(out, number).is_ok(),
            PlainValue::Ascii(text) => Self::str(out, text),
        }
        true
    }

    /// A str whose ASCII text `write` produces, shorter than 256 bytes (the date, time and
    /// duration forms of `src/text`).
    fn ascii_text(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>));

    #[inline]
    fn datetime(out: &mut Vec<u8>, parts: &DateTime) -> Result<()> {
        Self::ascii_text(out, |out| text::temporal::write_datetime(out, parts));
        Ok(())
    }

    #[inline]
    fn uuid(out: &mut Vec<u8>, bits: u128) {
        Self::ascii_text(out, |out| text::uuid::write_uuid(out, bits));
    }

    /// A Decimal's text: digits, sign, point, exponent or NaN/Infinity, of any length.
    fn decimal(out: &mut Vec<u8>, text: &str);
    fn bytes(out: &mut Vec<u8>, data: &[u8]) -> Result<()>;

    /// A value under `Any` that is none of the plain types, arrays or dicts, before the encoder
    /// looks for a plan for its class: true when the format has its own form for it.
    #[inline]
    fn any_other(_out: &mut Vec<u8>, _value: &Obj<'_>) -> bool {
        false
    }

    /// Opens an array; `length` gives the item count, for a format that writes it up front.
    fn begin_array(out: &mut Vec<u8>, length: impl FnOnce() -> Result<usize>)
        -> Result<Self::Open>;
    fn end_array(out: &mut Vec<u8>, open: Self::Open, count: usize);
    /// Opens a map of `length` entries.
    fn begin_map(out: &mut Vec<u8>, length: usize) -> Self::Open;
    fn end_map(out: &mut Vec<u8>, open: Self::Open, count: usize);
    /// Before the array item or map entry at `index`.
    fn separator(out: &mut Vec<u8>, index: usize);
    /// Between a dict key and its value.
    fn key_separator(out: &mut Vec<u8>);
    /// A dict key the value path has written from `start` on, made into a valid key.
    #[inline]
    fn finish_key(_out: &mut Vec<u8>, _start: usize) {}
    /// A record field's name, with what goes before it (`first`: no entry before it) and
    /// between it and the value.
    fn field_name(out: &mut Vec<u8>, field: &Field, first: bool);
}

/// Encodes `value` as the plan's root type, appending to `out`.
pub fn encode_one<W: WireWriter>(plan: &Plan, value: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
    Encoder::<W>::new(plan, out, 0).value(plan.root, value)
}

/// Encodes a sequence of root-type values as one array.
pub fn encode_many<W: WireWriter>(plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
    Encoder::<W>::new(plan, out, 0).array(
        values,
        || Ok(values.len().unwrap_or(0)),
        |_| Some(plan.root),
    )
}

/// One walk of a plan and a value, writing with `W`.
pub struct Encoder<'p, 'o, W> {
    plan: &'p Plan,
    out: &'o mut Vec<u8>,
    depth: usize,
    wire: PhantomData<W>,
}

fn mismatch(node: &Node, value: &Obj<'_>) -> Error {
    Error::expected(ErrorKind::Encode, node.describe(), &shape::type_name(value))
}

fn encode_error(err: PyErr) -> Error {
    Error::encode(err.to_string())
}

impl<'p, 'o, W: WireWriter> Encoder<'p, 'o, W> {
    fn new(plan: &'p Plan, out: &'o mut Vec<u8>, depth: usize) -> Self {
        Encoder {
            plan,
            out,
            depth,
            wire: PhantomData,
        }
    }

    fn value(&mut self, id: NodeId, value: &Obj<'_>) -> Result<()> {
        let node = self.plan.node(id);
        match node {
            Node::Str(_) => match value.cast::<PyString>() {
                Ok(text) => {
                    W::str(self.out, py::str_utf8(text)?);
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Int(_) => self.int(node, value),
            Node::Float(_) => {
                if let Ok(float) = value.cast_exact::<PyFloat>() {
                    W::float(self.out, float.value())
                } else if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
                    self.int(node, value)
                } else if let Ok(float) = value.cast::<PyFloat>() {
                    W::float(self.out, float.value())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Bool => match value.cast::<PyBool>() {
                Ok(flag) => {
                    W::boolean(self.out, flag.is_true());
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::None => {
                if value.is_none() {
                    W::none(self.out);
                    Ok(())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Record(spec) => nested(self.depth, || self.record(spec, value)),
            Node::Sequence(spec) => nested(self.depth, || self.sequence(node, spec.item, value)),
            Node::Union(spec) => {
                let variant = shape::pick_variant(self.plan, spec, value)
                    .ok_or_else(|| mismatch(node, value))?;
                self.value(variant, value)
            }
            Node::TaggedUnion(spec) => match shape::tagged_variant(self.plan, spec, value) {
                Some(record) => nested(self.depth, || self.record(record, value)),
                None => Err(mismatch(node, value)),
            },
            Node::Any => self.any(value),
            Node::DateTime(_) => match value
                .cast_exact::<PyDateTime>()
                .or_else(|_| value.cast::<PyDateTime>())
            {
                Ok(datetime) => {
                    let parts = temporal::datetime_parts(datetime).map_err(encode_error)?;
                    W::datetime(self.out, &parts)
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Date => match value.cast_exact::<PyDate>() {
                Ok(date) => {
                    let parts = temporal::date_parts(date);
                    W::ascii_text(self.out, |out| text::temporal::write_date(out, &parts));
                    Ok(())
                }
                Err(_) => self.date_subclass(node, value),
            },
            Node::Time(_) => match value.cast::<PyTime>() {
                Ok(time) => {
                    let parts = temporal::time_parts(time).map_err(encode_error)?;
                    W::ascii_text(self.out, |out| text::temporal::write_time(out, &parts));
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::TimeDelta => match value.cast::<PyDelta>() {
                Ok(delta) => {
                    let parts = temporal::duration_parts(delta);
                    W::ascii_text(self.out, |out| text::temporal::write_duration(out, &parts));
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Uuid => {
                if shape::is_uuid(value) {
                    W::uuid(self.out, py::uuid_value(value)?);
                    Ok(())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Decimal(_) => {
                if shape::is_decimal(value) {
                    let text = value.str()?;
                    W::decimal(self.out, py::str_utf8(&text)?);
                    Ok(())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Bytes(_) => {
                let data = shape::bytes_like(value).ok_or_else(|| mismatch(node, value))?;
                W::bytes(self.out, &data)
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
                Ok(dict) => nested(self.depth, || self.dict(spec.key, spec.value, dict)),
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Extension(spec) => self.value(spec.wire, &spec.encode_value(value)?),
        }
    }

    /// A date given as an instance of a date subclass; a datetime (itself a date subclass)
    /// would lose its time, so it is refused.
    #[cold]
    fn date_subclass(&mut self, node: &Node, value: &Obj<'_>) -> Result<()> {
        match value.cast::<PyDate>() {
            Ok(date) if !value.is_instance_of::<PyDateTime>() => {
                let parts = temporal::date_parts(date);
                W::ascii_text(self.out, |out| text::temporal::write_date(out, &parts));
                Ok(())
            }
            _ => Err(mismatch(node, value)),
        }
    }

    fn int(&mut self, node: &Node, value: &Obj<'_>) -> Result<()> {
        if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
            return Err(mismatch(node, value));
        }
        match py::int_as_i64(value) {
            Some(number) => {
                W::int(self.out, number);
                Ok(())
            }
            None => W::big_int(self.out, value),
        }
    }

    fn literal(&mut self, literal: &LiteralValue) {
        match literal {
            LiteralValue::Str(text) => W::str(self.out, text),
            LiteralValue::Int(number) => W::int(self.out, *number),
            LiteralValue::Bool(flag) => W::boolean(self.out, *flag),
        }
    }

    fn enum_value(&mut self, spec: &EnumSpec, value: &Obj<'_>) -> Result<()> {
        let index = shape::enum_member_index(spec, value)
            .ok_or_else(|| shape::not_a_member(spec, value))?;
        self.literal(&spec.members[index].value);
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
        let open = W::begin_array(self.out, length)?;
        let mut index = 0;
        shape::for_each_item(values, |element| {
            let Some(item) = item_node(index) else {
                return Err(Error::encode("tuple changed size while being encoded"));
            };
            W::separator(self.out, index);
            let result = self.value(item, element).map_err(|e| e.at_index(index));
            index += 1;
            result
        })?;
        W::end_array(self.out, open, index);
        Ok(())
    }

    fn dict(
        &mut self,
        key_node: NodeId,
        value_node: NodeId,
        dict: &Bound<'_, PyDict>,
    ) -> Result<()> {
        self.enter()?;
        let open = W::begin_map(self.out, dict.len());
        let mut count = 0;
        let mut position = 0;
        while let Some((key, item)) = py::next_entry(dict, &mut position) {
            W::separator(self.out, count);
            self.key(key_node, &key)?;
            W::key_separator(self.out);
            if let Err(err) = self.value(value_node, &item) {
                let shown = key.str().map(|s| s.to_string()).unwrap_or_default();
                return Err(err.at_key(&shown));
            }
            count += 1;
        }
        W::end_map(self.out, open, count);
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
                W::str(
                    self.out,
                    py::str_utf8(key.cast::<PyString>().map_err(PyErr::from)?)?,
                );
                Ok(())
            }
            Node::Str(_)
            | Node::Int(_)
            | Node::Enum(_)
            | Node::Literal(_)
            | Node::Uuid
            | Node::Any => {
                let start = self.out.len();
                self.value(id, key)?;
                W::finish_key(self.out, start);
                Ok(())
            }
            _ => Err(Error::encode(format!(
                "expected a {} dict key, got {}",
                node.describe(),
                shape::type_name(key)
            ))),
        }
    }

    fn record(&mut self, spec: &RecordSpec, value: &Obj<'_>) -> Result<()> {
        if !shape::is_record(spec, value) {
            return Err(Error::encode(format!(
                "expected {}, got {}",
                spec.qualname,
                shape::type_name(value)
            )));
        }
        self.enter()?;
        let positional = spec.array_like || spec.kind == RecordKind::NamedTuple;
        if !positional && !spec.omit_defaults && spec.kind == RecordKind::Dataclass && !spec.slots {
            if let Some(dict) = py::instance_dict(value) {
                self.dataclass_fields(spec, value, dict)?;
                self.depth -= 1;
                return Ok(());
            }
        }
        let length = spec.wire_fields.len();
        let open = if positional {
            W::begin_array(self.out, || Ok(length))?
        } else {
            W::begin_map(self.out, length)
        };
        let mut count = 0;
        let mut source = shape::FieldSource::new(spec, value)?;
        // Variants of a tagged union lead with the tag, so a decoder knows the variant before it
        // reads anything else.
        let leading_tag = match &spec.tag {
            Some((index, tag)) if positional => {
                self.literal(tag);
                count += 1;
                Some(*index)
            }
            _ => None,
        };
        // Object-form variants lead with the tag too; the tag field is then only checked where
        // the walk meets it.
        let tag_first = match &spec.tag {
            Some((index, _)) if !positional => {
                self.leading_tag(spec, *index, value)?;
                count += 1;
                Some(*index)
            }
            _ => None,
        };
        let fields = spec
            .wire_fields
            .iter()
            .filter(|&&index| Some(index) != leading_tag);
        for (position, &index) in fields.enumerate() {
            let position = position + usize::from(leading_tag.is_some());
            let field = &spec.fields[index];
            if Some(index) == tag_first {
                if let Some(item) = source.get(spec, index, value)? {
                    self.check_tag(field, &item)?;
                }
                continue;
            }
            let Some(item) = source.get(spec, index, value)? else {
                if positional || matches!(field.default, FieldDefault::Required) {
                    return Err(Error::encode(format!(
                        "missing required field `{}`",
                        field.name
                    )));
                }
                continue;
            };
            if spec.omit_defaults
                && !positional
                && spec.tag.as_ref().map(|(i, _)| *i) != Some(index)
                && shape::equals_default(&field.default, &item)?
            {
                continue;
            }
            if positional {
                W::separator(self.out, count);
            } else {
                W::field_name(self.out, field, count == 0);
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
            W::end_array(self.out, open, count);
        } else {
            W::end_map(self.out, open, count);
        }
        self.depth -= 1;
        Ok(())
    }

    /// A tagged-union variant's tag, written as its map's first entry (as msgspec writes the tag
    /// of its tagged Structs): the class's tag when the tag field's `Literal` allows one value,
    /// else the instance's value, checked.
    fn leading_tag(&mut self, spec: &RecordSpec, index: usize, value: &Obj<'_>) -> Result<()> {
        let field = &spec.fields[index];
        W::field_name(self.out, field, true);
        if let Node::Literal(literal) = self.plan.node(field.node) {
            if let [(tag, _)] = literal.values.as_slice() {
                self.literal(tag);
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

    /// The tag field where the dict walk meets it: read (so the cursor stays in step) and
    /// checked, not written again. The common value, the class's own tag object, is accepted
    /// by identity. Cold and out of line, so that the plain record walk is laid out as before.
    #[cold]
    #[inline(never)]
    fn skip_tag<'py>(
        &mut self,
        cursor: &mut FieldCursor<'py>,
        field: &Field,
        value: &Obj<'py>,
    ) -> Result<()> {
        let name = field.name.bind(value.py());
        let item = match cursor.next(name, None, |_| false) {
            Next::Value(item) => item,
            _ => match cursor.dict().get_item(name)? {
                Some(item) => item,
                None => value.getattr(name)?,
            },
        };
        if let Node::Literal(literal) = self.plan.node(field.node) {
            if let [(_, object)] = literal.values.as_slice() {
                if object.is(&item) {
                    return Ok(());
                }
            }
        }
        self.check_tag(field, &item)
    }

    /// The common record: a dataclass with an instance dict, written as a map with every field.
    /// Plain field values are written straight from the dict (see `py::fields`).
    fn dataclass_fields(
        &mut self,
        spec: &RecordSpec,
        value: &Obj<'_>,
        dict: Bound<'_, PyDict>,
    ) -> Result<()> {
        let length = spec.wire_fields.len();
        let open = W::begin_map(self.out, length);
        let py = value.py();
        let mut cursor = FieldCursor::new(dict);
        // A tagged-union variant leads with its tag; `usize::MAX` matches no field.
        let tag_index = match &spec.tag {
            Some((index, _)) => {
                self.leading_tag(spec, *index, value)?;
                *index
            }
            None => usize::MAX,
        };
        let mut first = tag_index == usize::MAX;
        for &index in &spec.wire_fields {
            let field = &spec.fields[index];
            let name = field.name.bind(py);
            if index == tag_index {
                self.skip_tag(&mut cursor, field, value)?;
                continue;
            }
            W::field_name(self.out, field, first);
            first = false;
            let out = &mut *self.out;
            let item = match cursor.next(name, field.plain, |plain| W::plain(out, plain)) {
                Next::Written => continue,
                Next::Value(item) => item,
                // Not next in the dict: set out of order, or a class attribute or property.
                Next::Elsewhere => match cursor.dict().get_item(name)? {
                    Some(item) => item,
                    None => value.getattr(name)?,
                },
            };
            self.value(field.node, &item)
                .map_err(|e| e.at_field(&field.wire_name))?;
        }
        W::end_map(self.out, open, length);
        Ok(())
    }

    /// `typing.Any`: the value's own type decides.
    fn any(&mut self, value: &Obj<'_>) -> Result<()> {
        match shape::classify(value) {
            Shape::None => {
                W::none(self.out);
                Ok(())
            }
            Shape::Bool(flag) => {
                W::boolean(self.out, flag);
                Ok(())
            }
            Shape::Int => self.int(&Node::Int(Default::default()), value),
            Shape::Float(number) => W::float(self.out, number),
            Shape::Str => {
                W::str(
                    self.out,
                    py::str_utf8(value.cast::<PyString>().map_err(PyErr::from)?)?,
                );
                Ok(())
            }
            Shape::Array => nested(self.depth, || {
                self.sequence(&Node::Any, self.plan.any, value)
            }),
            Shape::Dict => {
                let dict = value.cast::<PyDict>().map_err(PyErr::from)?;
                nested(self.depth, || self.dict(self.plan.any, self.plan.any, dict))
            }
            Shape::Other => {
                if W::any_other(self.out, value) {
                    return Ok(());
                }
                if let Some(plan) = shape::plan_for_value(value)? {
                    self.enter()?;
                    let result =
                        Encoder::<W>::new(&plan, self.out, self.depth).value(plan.root, value);
                    self.depth -= 1;
                    result
                } else {
                    Err(Error::encode(format!(
                        "{} values are not supported",
                        shape::type_name(value)
                    )))
                }
            }
        }
    }
}
