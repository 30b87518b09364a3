//! The JSON encoder: walks the plan and the Python object together, writing straight into one
//! output buffer. The plan says what each value should be, so most checks are one type identity
//! comparison; anything else gets a precise EncodeError.

use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDate, PyDateTime, PyDelta, PyDict, PyFloat, PyInt, PyList, PyString, PyTime, PyTuple,
};

use super::write::{write_f64, write_i64, write_str};
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

/// Encodes a sequence of root-type values as one JSON array.
pub fn encode_many(plan: &Plan, values: &Obj<'_>, out: &mut Vec<u8>) -> Result<()> {
    let mut encoder = Encoder {
        plan,
        out,
        depth: 0,
    };
    encoder.out.push(b'[');
    let mut first = true;
    let mut index = 0;
    shape::for_each_item(values, |item| {
        if !first {
            encoder.out.push(b',');
        }
        first = false;
        let result = encoder
            .value(plan.root, item)
            .map_err(|e| e.at_index(index));
        index += 1;
        result
    })?;
    encoder.out.push(b']');
    Ok(())
}

/// Writes a plain field value taken straight from an instance dict; false for a non-finite
/// float, which the general path turns into an EncodeError.
fn write_plain(out: &mut Vec<u8>, value: PlainValue<'_>) -> bool {
    match value {
        PlainValue::None => out.extend_from_slice(b"null"),
        PlainValue::Bool(flag) => out.extend_from_slice(if flag { b"true" } else { b"false" }),
        PlainValue::Int(number) => write_i64(out, number),
        PlainValue::Float(number) => return write_f64(out, number).is_ok(),
        PlainValue::Ascii(text) => write_str(out, text),
    }
    true
}

struct Encoder<'p, 'o> {
    plan: &'p Plan,
    out: &'o mut Vec<u8>,
    depth: usize,
}

fn mismatch(node: &Node, value: &Obj<'_>) -> Error {
    Error::expected(ErrorKind::Encode, node.describe(), &shape::type_name(value))
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
                    self.float(float.value())
                } else if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
                    self.int(node, value)
                } else if let Ok(float) = value.cast::<PyFloat>() {
                    self.float(float.value())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Bool => match value.cast::<PyBool>() {
                Ok(flag) => {
                    self.out
                        .extend_from_slice(if flag.is_true() { b"true" } else { b"false" });
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::None => {
                if value.is_none() {
                    self.out.extend_from_slice(b"null");
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
                    self.quoted(|out| text::temporal::write_datetime(out, &parts));
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Date => match value.cast_exact::<PyDate>() {
                Ok(date) => {
                    let parts = temporal::date_parts(date);
                    self.quoted(|out| text::temporal::write_date(out, &parts));
                    Ok(())
                }
                Err(_) => self.date_subclass(node, value),
            },
            Node::Time(_) => match value.cast::<PyTime>() {
                Ok(time) => {
                    let parts = temporal::time_parts(time).map_err(encode_error)?;
                    self.quoted(|out| text::temporal::write_time(out, &parts));
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::TimeDelta => match value.cast::<PyDelta>() {
                Ok(delta) => {
                    let parts = temporal::duration_parts(delta);
                    self.quoted(|out| text::temporal::write_duration(out, &parts));
                    Ok(())
                }
                Err(_) => Err(mismatch(node, value)),
            },
            Node::Uuid => {
                if shape::is_uuid(value) {
                    let bits = py::uuid_value(value)?;
                    self.quoted(|out| text::uuid::write_uuid(out, bits));
                    Ok(())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Decimal(_) => {
                if shape::is_decimal(value) {
                    // A Decimal's text is digits, sign, point, exponent or NaN/Infinity:
                    // nothing to escape.
                    let text = value.str()?;
                    let text = py::str_utf8(&text)?;
                    self.quoted(|out| out.extend_from_slice(text.as_bytes()));
                    Ok(())
                } else {
                    Err(mismatch(node, value))
                }
            }
            Node::Bytes(_) => {
                let data = shape::bytes_like(value).ok_or_else(|| mismatch(node, value))?;
                self.quoted(|out| text::base64::encode(out, &data));
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
                self.quoted(|out| text::temporal::write_date(out, &parts));
                Ok(())
            }
            _ => Err(mismatch(node, value)),
        }
    }

    fn quoted(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        self.out.push(b'"');
        write(self.out);
        self.out.push(b'"');
    }

    fn float(&mut self, value: f64) -> Result<()> {
        write_f64(self.out, value).map_err(|_| {
            Error::encode(format!(
                "{value} has no JSON representation (JSON numbers are finite)"
            ))
        })
    }

    fn int(&mut self, node: &Node, value: &Obj<'_>) -> Result<()> {
        if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
            return Err(mismatch(node, value));
        }
        match py::int_as_i64(value) {
            Some(number) => write_i64(self.out, number),
            None => {
                let exact = value.py().get_type::<PyInt>().call1((value,))?;
                self.out
                    .extend_from_slice(exact.str()?.to_str()?.as_bytes());
            }
        }
        Ok(())
    }

    fn literal(&mut self, literal: &LiteralValue) {
        match literal {
            LiteralValue::Str(text) => write_str(self.out, text),
            LiteralValue::Int(number) => write_i64(self.out, *number),
            LiteralValue::Bool(flag) => {
                self.out
                    .extend_from_slice(if *flag { b"true" } else { b"false" })
            }
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
        self.out.push(b'[');
        let mut index = 0;
        shape::for_each_item(value, |element| {
            if index > 0 {
                self.out.push(b',');
            }
            let result = self.value(item, element).map_err(|e| e.at_index(index));
            index += 1;
            result
        })?;
        self.out.push(b']');
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
        self.out.push(b'[');
        let mut index = 0;
        shape::for_each_item(value, |element| {
            if index > 0 {
                self.out.push(b',');
            }
            let result = self
                .value(items[index], element)
                .map_err(|e| e.at_index(index));
            index += 1;
            result
        })?;
        self.out.push(b']');
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
        self.out.push(b'{');
        let mut first = true;
        let mut position = 0;
        while let Some((key, item)) = py::next_entry(dict, &mut position) {
            if !first {
                self.out.push(b',');
            }
            first = false;
            self.key(key_node, &key)?;
            self.out.push(b':');
            if let Err(err) = self.value(value_node, &item) {
                let shown = key.str().map(|s| s.to_string()).unwrap_or_default();
                return Err(err.at_key(&shown));
            }
        }
        self.out.push(b'}');
        self.depth -= 1;
        Ok(())
    }

    /// JSON object keys are strings: a key is written as its value would be, and quoted when
    /// that is not already a JSON string (ints, int enum values, a float under `Any`). The
    /// value encoders check the key's type.
    fn key(&mut self, id: NodeId, key: &Obj<'_>) -> Result<()> {
        let node = self.plan.node(id);
        match node {
            // The common case, without the general path's dispatch and quote check.
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
            | Node::Any => {
                let start = self.out.len();
                self.value(id, key)?;
                if self.out.get(start) != Some(&b'"') {
                    self.out.insert(start, b'"');
                    self.out.push(b'"');
                }
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
        self.out.push(if positional { b'[' } else { b'{' });
        let mut source = shape::FieldSource::new(spec, value)?;
        let mut first = true;
        // Positional variants of a tagged union lead with the tag, so a decoder knows the
        // variant before it reads anything else.
        let leading_tag = match &spec.tag {
            Some((index, tag)) if positional => {
                self.literal(tag);
                first = false;
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
                let member = if first {
                    field.json_key()
                } else {
                    &field.json_member
                };
                self.out.extend_from_slice(member);
            } else if !first {
                self.out.push(b',');
            }
            first = false;
            self.value(field.node, &item).map_err(|e| {
                if positional {
                    e.at_index(position)
                } else {
                    e.at_field(&field.wire_name)
                }
            })?;
        }
        self.out.push(if positional { b']' } else { b'}' });
        self.depth -= 1;
        Ok(())
    }

    /// The common record: a dataclass with an instance dict, written as an object with every
    /// field. Plain field values are written straight from the dict (see `py::fields`).
    fn dataclass_fields(
        &mut self,
        spec: &RecordSpec,
        value: &Obj<'_>,
        dict: Bound<'_, PyDict>,
    ) -> Result<()> {
        self.out.push(b'{');
        let py = value.py();
        let mut cursor = FieldCursor::new(dict);
        for (position, &index) in spec.wire_fields.iter().enumerate() {
            let field = &spec.fields[index];
            self.out.extend_from_slice(if position == 0 {
                field.json_key()
            } else {
                &field.json_member
            });
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
        self.out.push(b'}');
        Ok(())
    }

    /// `typing.Any`: the value's own type decides.
    fn any(&mut self, value: &Obj<'_>) -> Result<()> {
        match shape::classify(value) {
            Shape::None => {
                self.out.extend_from_slice(b"null");
                Ok(())
            }
            Shape::Bool(flag) => {
                self.out
                    .extend_from_slice(if flag { b"true" } else { b"false" });
                Ok(())
            }
            Shape::Int => self.int(&Node::Int(Default::default()), value),
            Shape::Float(number) => self.float(number),
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

fn encode_error(err: PyErr) -> Error {
    Error::encode(err.to_string())
}
