//! The MessagePack encoder: walks the plan and the Python object together, writing straight
//! into one output buffer, with the wire mapping of msgspec's MessagePack defaults.

use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDate, PyDateTime, PyDelta, PyDict, PyFloat, PyInt, PyList, PyString, PyTime, PyTuple,
};

use super::epoch;
use super::write::{
    write_bin, write_bool, write_container, write_f64, write_i64, write_nil, write_str,
    write_timestamp, write_u64, Container, Pending,
};
use crate::errors::{Error, ErrorKind, Result};
use crate::plan::{
    EnumSpec, FieldDefault, LiteralValue, Node, NodeId, Plan, RecordKind, RecordSpec,
};
use crate::py::fields::{FieldCursor, Next, PlainRule, PlainValue};
use crate::py::{self, temporal, Obj};
use crate::shape::{self, Shape};
use crate::text;
use crate::values::{nested, MAX_DEPTH};

/// Encodes `value` as the plan's root type, appending to `out`.
pub fn encode_one(plan: &Plan, value: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
    Encoder {
        plan,
        out,
        depth: 0,
    }
    .value(plan.root, value)
}

/// Encodes a sequence of root-type values as one MessagePack array.
pub fn encode_many(plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
    let mut encoder = Encoder {
        plan,
        out,
        depth: 0,
    };
    let expected = values.len().unwrap_or(0);
    let header = Pending::begin(encoder.out, Container::Array, expected);
    let mut index = 0;
    shape::for_each_item(values, |item| {
        let result = encoder
            .value(plan.root, item)
            .map_err(|e| e.at_index(index));
        index += 1;
        result
    })?;
    header.finish(encoder.out, index);
    Ok(())
}

struct Encoder<'p, 'o> {
    plan: &'p Plan,
    out: &'o mut Vec<u8>,
    depth: usize,
}

fn mismatch(node: &Node, value: &Obj<'_>) -> Error {
    Error::expected(ErrorKind::Encode, node.describe(), &shape::type_name(value))
}

/// The plain values a node lets the dict fast path write: str, int, float, bool, and those
/// made Optional.
/// Writes a plain field value taken straight from an instance dict (see `py::fields`).
fn write_plain(out: &mut Vec<u8>, value: PlainValue<'_>) -> bool {
    match value {
        PlainValue::None => write_nil(out),
        PlainValue::Bool(flag) => write_bool(out, flag),
        PlainValue::Int(number) => write_i64(out, number),
        PlainValue::Float(number) => write_f64(out, number),
        PlainValue::Ascii(text) => write_str(out, text),
    }
    true
}

fn encode_error(err: PyErr) -> Error {
    Error::encode(err.to_string())
}

impl Encoder<'_, '_> {
    fn value(&mut self, id: NodeId, value: &Obj<'_>) -> Result<()> {
        let node = self.plan.node(id);
        match node {
            Node::Str(_) => match value.cast::<PyString>() {
                Ok(text) => {
                    write_str(self.out, py::str_utf8(text)?);
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Int(_) => self.int(node, value),
            Node::Float(_) => {
                if let Ok(float) = value.cast_exact::<PyFloat>() {
                    write_f64(self.out, float.value());
                    Ok(())
                } else if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
                    self.int(node, value)
                } else if let Ok(float) = value.cast::<PyFloat>() {
                    write_f64(self.out, float.value());
                    Ok(())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Bool => match value.cast::<PyBool>() {
                Ok(flag) => {
                    write_bool(self.out, flag.is_true());
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::None => {
                if value.is_none() {
                    write_nil(self.out);
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
            Node::TaggedUnion(spec) => {
                for (_, record_id) in &spec.tags {
                    if let Node::Record(record) = self.plan.node(*record_id) {
                        if shape::is_record(record, value) {
                            return nested(self.depth, || self.record(record, value));
                        }
                    }
                }
                Err(mismatch(node, value))
            }
            Node::Any => self.any(value),
            Node::DateTime(_) => match value
                .cast_exact::<PyDateTime>()
                .or_else(|_| value.cast::<PyDateTime>())
            {
                Ok(datetime) => {
                    let parts = temporal::datetime_parts(datetime).map_err(encode_error)?;
                    if parts.offset_seconds.is_some() {
                        let (seconds, nanoseconds) = epoch::to_timestamp(&parts);
                        if !epoch::in_python_years(seconds) {
                            return Err(Error::encode(
                                "aware datetime is outside years 1-9999 in UTC, so its \
                                 timestamp could not be decoded again",
                            ));
                        }
                        write_timestamp(self.out, seconds, nanoseconds);
                    } else {
                        self.text(|out| text::temporal::write_datetime(out, &parts));
                    }
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Date => match value.cast_exact::<PyDate>() {
                Ok(date) => {
                    let parts = temporal::date_parts(date);
                    self.text(|out| text::temporal::write_date(out, &parts));
                    Ok(())
                }
                Err(_) => self.date_subclass(node, value),
            },
            Node::Time(_) => match value.cast::<PyTime>() {
                Ok(time) => {
                    let parts = temporal::time_parts(time).map_err(encode_error)?;
                    self.text(|out| text::temporal::write_time(out, &parts));
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::TimeDelta => match value.cast::<PyDelta>() {
                Ok(delta) => {
                    let parts = temporal::duration_parts(delta);
                    self.text(|out| text::temporal::write_duration(out, &parts));
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Uuid => {
                if shape::is_uuid(value) {
                    let bits = py::uuid_value(value)?;
                    // The hyphenated form is always 36 characters: a str8.
                    self.out.extend_from_slice(&[0xd9, 36]);
                    text::uuid::write_uuid(self.out, bits);
                    Ok(())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Decimal(_) => {
                if shape::is_decimal(value) {
                    let text = value.str()?;
                    write_str(self.out, py::str_utf8(&text)?);
                    Ok(())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Bytes(_) => {
                let data = shape::bytes_like(value).ok_or_else(|| mismatch(node, value))?;
                if data.len() > u32::MAX as usize {
                    return Err(Error::encode(
                        "bytes longer than 2**32 - 1 cannot be encoded",
                    ));
                }
                write_bin(self.out, &data);
                Ok(())
            }
            Node::Enum(spec) => self.enum_value(spec, value),
            Node::Literal(spec) => {
                let literal = shape::literal_of(value)
                    .filter(|v| spec.find(v).is_some())
                    .ok_or_else(|| {
                        Error::encode(format!(
                            "expected {}, got {}",
                            spec.describe_values(),
                            value.repr().map(|r| r.to_string()).unwrap_or_default()
                        ))
                    })?;
                self.literal(&literal);
                Ok(())
            }
            Node::Tuple(items) => nested(self.depth, || self.tuple(node, items, value)),
            Node::Dict(spec) => match value.cast::<PyDict>() {
                Ok(dict) => nested(self.depth, || self.dict(spec.key, spec.value, dict)),
                Err(_) => Err(mismatch(node, value)),
            },
        }
    }

    /// A date given as an instance of a date subclass; a datetime (itself a date subclass)
    /// would lose its time, so it is refused.
    #[cold]
    fn date_subclass(&mut self, node: &Node, value: &Obj<'_>) -> Result<()> {
        match value.cast::<PyDate>() {
            Ok(date) if !value.is_instance_of::<PyDateTime>() => {
                let parts = temporal::date_parts(date);
                self.text(|out| text::temporal::write_date(out, &parts));
                Ok(())
            }
            _ => Err(mismatch(node, value)),
        }
    }

    /// A str whose ASCII text `write` produces (the temporal and UUID forms): written after a
    /// placeholder fixstr header, fixed up once the length is known. These texts are all
    /// shorter than 256 bytes, so the header is one byte (fixstr) or two (str8).
    fn text(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        let start = self.out.len();
        self.out.push(0xa0);
        write(self.out);
        let length = self.out.len() - start - 1;
        if length < 32 {
            self.out[start] = 0xa0 | length as u8;
        } else {
            self.out[start] = 0xd9;
            self.out.insert(start + 1, length as u8);
        }
    }

    fn int(&mut self, node: &Node, value: &Obj<'_>) -> Result<()> {
        if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
            return Err(mismatch(node, value));
        }
        match py::int_as_i64(value) {
            Some(number) => write_i64(self.out, number),
            None => self.big_int(value)?,
        }
        Ok(())
    }

    /// An int outside i64: unsigned 64-bit when it fits, else an error (MessagePack integers
    /// are at most 64 bits).
    #[cold]
    fn big_int(&mut self, value: &Obj<'_>) -> Result<()> {
        match value.extract::<u64>() {
            Ok(number) => {
                write_u64(self.out, number);
                Ok(())
            }
            Err(_) => Err(Error::encode(
                "int out of range for MessagePack (must fit in 64 bits: -2**63 to 2**64 - 1)",
            )),
        }
    }

    fn literal(&mut self, literal: &LiteralValue) {
        match literal {
            LiteralValue::Str(text) => write_str(self.out, text),
            LiteralValue::Int(number) => write_i64(self.out, *number),
            LiteralValue::Bool(flag) => write_bool(self.out, *flag),
        }
    }

    fn enum_value(&mut self, spec: &EnumSpec, value: &Obj<'_>) -> Result<()> {
        let py = value.py();
        match spec.members.iter().find(|m| m.member.bind(py).is(value)) {
            Some(member) => {
                self.literal(&member.value);
                Ok(())
            }
            None => Err(Error::encode(format!(
                "expected a member of {}, got {}",
                spec.name,
                value.repr().map(|r| r.to_string()).unwrap_or_default()
            ))),
        }
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Error::encode(format!(
                "value nested deeper than {MAX_DEPTH} levels (a reference cycle?)"
            )));
        }
        Ok(())
    }

    fn sequence(&mut self, node: &Node, item: NodeId, value: &Obj<'_>) -> Result<()> {
        if !shape::is_array_like(value) {
            return Err(mismatch(node, value));
        }
        self.enter()?;
        let expected = match value.cast::<PyList>() {
            Ok(list) => list.len(),
            Err(_) => value.len()?,
        };
        let header = Pending::begin(self.out, Container::Array, expected);
        let mut index = 0;
        shape::for_each_item(value, |element| {
            let result = self.value(item, element).map_err(|e| e.at_index(index));
            index += 1;
            result
        })?;
        header.finish(self.out, index);
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
        let header = Pending::begin(self.out, Container::Array, length);
        let mut index = 0;
        shape::for_each_item(value, |element| {
            let Some(&item) = items.get(index) else {
                return Err(Error::encode("tuple changed size while being encoded"));
            };
            let result = self.value(item, element).map_err(|e| e.at_index(index));
            index += 1;
            result
        })?;
        header.finish(self.out, index);
        self.depth -= 1;
        Ok(())
    }

    fn dict(
        &mut self,
        key_node: NodeId,
        value_node: NodeId,
        dict: &Bound<'_, PyDict>,
    ) -> Result<()> {
        self.enter()?;
        let header = Pending::begin(self.out, Container::Map, dict.len());
        let mut count = 0;
        let mut position = 0;
        while let Some((key, item)) = py::next_entry(dict, &mut position) {
            self.key(key_node, &key)?;
            if let Err(err) = self.value(value_node, &item) {
                let shown = key.str().map(|s| s.to_string()).unwrap_or_default();
                return Err(err.at_key(&shown));
            }
            count += 1;
        }
        header.finish(self.out, count);
        self.depth -= 1;
        Ok(())
    }

    /// Keys keep their own MessagePack type: str keys as str, int keys as int, enums by value.
    fn key(&mut self, id: NodeId, key: &Obj<'_>) -> Result<()> {
        let node = self.plan.node(id);
        match node {
            Node::Str(_) | Node::Any if key.is_exact_instance_of::<PyString>() => {
                write_str(
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
            | Node::Any => self.value(id, key),
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
        let header = Pending::begin(
            self.out,
            if positional {
                Container::Array
            } else {
                Container::Map
            },
            spec.wire_fields.len(),
        );
        let mut count = 0;
        let mut source = shape::FieldSource::new(spec, value)?;
        // Positional variants of a tagged union lead with the tag, so a decoder knows the
        // variant before it reads anything else.
        let leading_tag = match &spec.tag {
            Some((index, tag)) if positional => {
                self.literal(tag);
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
            if !positional {
                write_str(self.out, &field.wire_name);
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
        header.finish(self.out, count);
        self.depth -= 1;
        Ok(())
    }

    /// The common record: a dataclass with an instance dict, written as a map with every field.
    /// Plain field values are written straight from the dict (see `py::fields`).
    fn dataclass_fields(
        &mut self,
        spec: &RecordSpec,
        value: &Obj<'_>,
        dict: Bound<'_, PyDict>,
    ) -> Result<()> {
        write_container(self.out, Container::Map, spec.wire_fields.len());
        let py = value.py();
        let mut cursor = FieldCursor::new(dict);
        for &index in &spec.wire_fields {
            let field = &spec.fields[index];
            write_str(self.out, &field.wire_name);
            let name = field.name.bind(py);
            let rule = PlainRule::for_node(self.plan, field.node);
            let out = &mut *self.out;
            let item = match cursor.next(name, rule, |plain| write_plain(out, plain)) {
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
        Ok(())
    }

    /// `typing.Any`: the value's own type decides.
    fn any(&mut self, value: &Obj<'_>) -> Result<()> {
        match shape::classify(value) {
            Shape::None => {
                write_nil(self.out);
                Ok(())
            }
            Shape::Bool(flag) => {
                write_bool(self.out, flag);
                Ok(())
            }
            Shape::Int => self.int(&Node::Int(Default::default()), value),
            Shape::Float(number) => {
                write_f64(self.out, number);
                Ok(())
            }
            Shape::Str => {
                write_str(
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
                if let Some(bytes) = shape::bytes_like(value) {
                    write_bin(self.out, &bytes);
                    return Ok(());
                }
                if let Some(plan) = shape::plan_for_value(value)? {
                    self.enter()?;
                    let result = Encoder {
                        plan: &plan,
                        out: self.out,
                        depth: self.depth,
                    }
                    .value(plan.root, value);
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
