//! The direct walk behind `to_builtins`: each value is returned as its JSON-form object (as
//! msgspec's `to_builtins` does), with no writer state between a value and its container. It
//! covers the common shapes (dataclass records, tagged and plain unions, lists, str-keyed dicts,
//! the scalars, enums, literals, datetimes, dates, UUIDs, Decimals); any other node is handed to
//! the shared encoder with [`ObjectWriter`], which is the reference for every rule.
//!
//! The walk never reports an error itself: on anything it would refuse it gives up ([`Bail`]),
//! and `to_builtins` runs the shared encoder over the whole value instead, which raises the
//! error with its path. Until then the walk runs no user code but what reading a field runs.

use std::cell::Cell;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDate, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use super::encode::ObjectWriter;
use super::Keep;
use crate::codecs::encoder;
use crate::plan::{LiteralValue, Node, NodeId, Plan, RecordKind, RecordSpec};
use crate::py::builders::{presized_dict, ListFill};
use crate::py::fields::Next;
use crate::py::{self, temporal, Obj};
use crate::shape;
use crate::values::{nested, MAX_DEPTH};
use polycodec_formats::text;

/// The walk gave up: the shared encoder does the whole value again.
pub struct Bail;

type Out<'py> = std::result::Result<Obj<'py>, Bail>;

thread_local! {
    /// The text buffer of the last walk, reused so that a call allocates none.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

pub struct Walk<'p, 'py> {
    plan: &'p Plan,
    py: Python<'py>,
    keep: Keep,
    depth: usize,
    /// Text written by the shared text forms (dates, UUIDs) before it becomes a str.
    scratch: Vec<u8>,
}

impl Drop for Walk<'_, '_> {
    fn drop(&mut self) {
        let scratch = std::mem::take(&mut self.scratch);
        SCRATCH.with(|cell| cell.set(scratch));
    }
}

impl<'p, 'py> Walk<'p, 'py> {
    pub fn new(plan: &'p Plan, py: Python<'py>, keep: Keep) -> Self {
        Walk {
            plan,
            py,
            keep,
            depth: 0,
            scratch: SCRATCH.with(Cell::take),
        }
    }

    /// Value `value` of node `id` as its JSON-form object (the value itself for an exact str,
    /// int, float, bool or None: they are immutable).
    pub fn value(&mut self, id: NodeId, value: Obj<'py>) -> Out<'py> {
        let node = self.plan.node(id);
        match node {
            Node::Str(_) if value.is_exact_instance_of::<PyString>() => Ok(value),
            Node::Int(_) if value.is_exact_instance_of::<PyInt>() => Ok(value),
            Node::Float(_) => {
                if let Ok(float) = value.cast_exact::<PyFloat>() {
                    if !float.value().is_finite() {
                        return Err(Bail);
                    }
                    return Ok(value);
                }
                if value.is_exact_instance_of::<PyInt>() {
                    return Ok(value);
                }
                self.general(id, &value)
            }
            Node::Bool if value.is_exact_instance_of::<PyBool>() => Ok(value),
            Node::None if value.is_none() => Ok(value),
            Node::Record(spec) => self.record(id, spec, &value),
            Node::Sequence(spec) => self.sequence(id, spec.item, &value),
            Node::Union(spec) => {
                // `Optional[X]` without the search (as `pick_variant` does it).
                let variant = match (spec.none, spec.variants.as_slice()) {
                    (Some(none), [_, _]) if value.is_none() => Some(none),
                    (Some(none), [a, b]) => Some(if *a == none { *b } else { *a }),
                    _ => shape::pick_variant(self.plan, spec, &value),
                };
                match variant {
                    Some(variant) => self.value(variant, value),
                    None => Err(Bail),
                }
            }
            Node::TaggedUnion(spec) => {
                // The value's exact class first, by pointer (as `tagged_variant` does it).
                let class = value.get_type_ptr() as usize;
                if let Some(&(_, record_id)) = spec.classes.iter().find(|(c, _)| *c == class) {
                    if let Node::Record(record) = self.plan.node(record_id) {
                        return self.record(record_id, record, &value);
                    }
                }
                match shape::tagged_variant(self.plan, spec, &value) {
                    Some((record_id, record)) => self.record(record_id, record, &value),
                    None => Err(Bail),
                }
            }
            Node::DateTime(_) => match temporal::utc_or_naive_parts(&value) {
                Some(_) if self.keep.datetime => Ok(value),
                Some(parts) => self.text(|out| text::temporal::write_datetime(out, &parts)),
                None => self.general(id, &value),
            },
            Node::Date => match value.cast_exact::<PyDate>() {
                Ok(_) if self.keep.date => Ok(value),
                Ok(date) => {
                    let parts = temporal::date_parts(date);
                    self.text(|out| text::temporal::write_date(out, &parts))
                }
                Err(_) => self.general(id, &value),
            },
            Node::Uuid if shape::is_uuid(&value) => {
                if self.keep.uuid {
                    return Ok(value);
                }
                let bits = py::uuid_value(&value).map_err(|_| Bail)?;
                self.text(|out| text::uuid::write_uuid(out, bits))
            }
            Node::Decimal(_) if shape::is_decimal(&value) => {
                if self.keep.decimal {
                    return Ok(value);
                }
                value.str().map(Bound::into_any).map_err(|_| Bail)
            }
            Node::Enum(spec) => {
                let Some(index) = shape::enum_member_index(spec, &value) else {
                    return Err(Bail);
                };
                let member = &spec.members[index];
                let object = member.value_object.bind(self.py);
                match member.value {
                    LiteralValue::Str(_) if object.is_exact_instance_of::<PyString>() => {
                        Ok(object.clone())
                    }
                    LiteralValue::Int(_) if object.is_exact_instance_of::<PyInt>() => {
                        Ok(object.clone())
                    }
                    _ => self.general(id, &value),
                }
            }
            Node::Literal(spec) => match shape::find_literal(spec, &value) {
                Some(LiteralValue::Str(text)) => {
                    py::dict_key_str(self.py, text.as_bytes(), text.is_ascii()).map_err(|_| Bail)
                }
                Some(LiteralValue::Int(number)) => {
                    let Ok(number) = number.into_pyobject(self.py);
                    Ok(number.into_any())
                }
                Some(LiteralValue::Bool(flag)) => {
                    Ok(PyBool::new(self.py, *flag).to_owned().into_any())
                }
                None => self.general(id, &value),
            },
            Node::Dict(spec) if matches!(self.plan.node(spec.key), Node::Str(_) | Node::Any) => {
                match value.cast::<PyDict>() {
                    Ok(dict) => self.dict(id, spec.value, dict),
                    Err(_) => Err(Bail),
                }
            }
            Node::Any => {
                if value.is_exact_instance_of::<PyString>()
                    || value.is_exact_instance_of::<PyInt>()
                    || value.is_exact_instance_of::<PyBool>()
                    || value.is_none()
                {
                    return Ok(value);
                }
                self.general(id, &value)
            }
            _ => self.general(id, &value),
        }
    }

    /// Whether `value` is its own JSON form as node `id` (an exact str, int, bool or None, a
    /// finite float, where the node takes it; `Optional` of those): the common field and item,
    /// checked here without a call of [`Self::value`].
    #[inline(always)]
    fn is_own_form(&self, id: NodeId, value: &Obj<'py>) -> bool {
        let own = |node: &Node| match node {
            Node::Str(_) => value.is_exact_instance_of::<PyString>(),
            Node::Int(_) => value.is_exact_instance_of::<PyInt>(),
            Node::Bool => value.is_exact_instance_of::<PyBool>(),
            Node::Float(_) => value
                .cast_exact::<PyFloat>()
                .is_ok_and(|float| float.value().is_finite()),
            _ => false,
        };
        match self.plan.node(id) {
            Node::Union(spec) => match (spec.none, spec.variants.as_slice()) {
                (Some(_), [_, _]) if value.is_none() => true,
                (Some(none), [a, b]) => own(self.plan.node(if *a == none { *b } else { *a })),
                _ => false,
            },
            node => own(node),
        }
    }

    /// Node `id` by the shared encoder, at the walk's depth.
    #[inline(never)]
    fn general(&mut self, id: NodeId, value: &Obj<'py>) -> Out<'py> {
        let mut writer = ObjectWriter::new(self.py, self.keep);
        encoder::encode_at(self.plan, id, value, &mut writer, self.depth).map_err(|_| Bail)?;
        writer.finish().map_err(|_| Bail)
    }

    /// ASCII text from the shared text forms as a str.
    fn text(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> Out<'py> {
        self.scratch.clear();
        write(&mut self.scratch);
        py::new_str(self.py, &self.scratch, true).map_err(|_| Bail)
    }

    /// One more level of nesting: past the encoder's limit the shared encoder reports it.
    #[inline(always)]
    fn enter(&mut self) -> std::result::Result<(), Bail> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Bail);
        }
        Ok(())
    }

    fn sequence(&mut self, id: NodeId, item: NodeId, value: &Obj<'py>) -> Out<'py> {
        if let Ok(list) = value.cast_exact::<PyList>() {
            self.enter()?;
            let depth = self.depth;
            let result = nested(depth, || {
                let mut items = ListFill::new(self.py, list.len()).map_err(|_| Bail)?;
                let mut index = 0;
                while let Some(element) = py::list_item(list, index) {
                    let converted = if self.is_own_form(item, &element) {
                        element
                    } else {
                        self.value(item, element)?
                    };
                    items.push(converted).map_err(|_| Bail)?;
                    index += 1;
                }
                items.finish().map(Bound::into_any).map_err(|_| Bail)
            });
            self.depth -= 1;
            return result;
        }
        if let Ok(tuple) = value.cast_exact::<PyTuple>() {
            self.enter()?;
            let depth = self.depth;
            let result = nested(depth, || {
                let mut items = ListFill::new(self.py, tuple.len()).map_err(|_| Bail)?;
                for element in tuple.iter() {
                    let converted = if self.is_own_form(item, &element) {
                        element
                    } else {
                        self.value(item, element)?
                    };
                    items.push(converted).map_err(|_| Bail)?;
                }
                items.finish().map(Bound::into_any).map_err(|_| Bail)
            });
            self.depth -= 1;
            return result;
        }
        self.general(id, value)
    }

    /// A dict whose keys are all exact strs (kept as they are); any other key, and the whole
    /// dict goes to the shared encoder.
    fn dict(&mut self, id: NodeId, value_node: NodeId, dict: &Bound<'py, PyDict>) -> Out<'py> {
        self.enter()?;
        let depth = self.depth;
        let result = nested(depth, || {
            let out = presized_dict(self.py, dict.len()).map_err(|_| Bail)?;
            let mut position = 0;
            while let Some((key, item)) = py::next_entry(dict, &mut position) {
                if !key.is_exact_instance_of::<PyString>() {
                    return Ok(None);
                }
                let converted = self.value(value_node, item)?;
                py::dict_set(&out, &key, &converted).map_err(|_| Bail)?;
            }
            Ok(Some(out.into_any()))
        });
        self.depth -= 1;
        match result? {
            Some(out) => Ok(out),
            None => self.general(id, dict.as_any()),
        }
    }

    /// A dataclass written with every field as a dict (tag first for a tagged-union variant);
    /// other records go to the shared encoder.
    fn record(&mut self, id: NodeId, spec: &'p RecordSpec, value: &Obj<'py>) -> Out<'py> {
        if !shape::is_record(spec, value) {
            return Err(Bail);
        }
        if spec.array_like || spec.omit_defaults || spec.kind != RecordKind::Dataclass {
            return self.general(id, value);
        }
        self.enter()?;
        let depth = self.depth;
        let result = nested(depth, || self.dataclass(spec, value));
        self.depth -= 1;
        match result? {
            Some(out) => Ok(out),
            None => self.general(id, value),
        }
    }

    /// The dataclass's dict; `None` for a tag this walk does not check (the shared encoder
    /// does the record).
    #[inline(always)]
    fn dataclass(
        &mut self,
        spec: &'p RecordSpec,
        value: &Obj<'py>,
    ) -> std::result::Result<Option<Obj<'py>>, Bail> {
        let py = self.py;
        let out = presized_dict(py, spec.wire_fields.len()).map_err(|_| Bail)?;
        let mut reader = spec.access.reader(value);
        // `usize::MAX` matches no field.
        let mut tag_index = usize::MAX;
        let mut tag = None;
        if let Some((index, _)) = &spec.tag {
            let field = &spec.fields[*index];
            let Node::Literal(literal) = self.plan.node(field.node) else {
                return Ok(None);
            };
            let [(_, object)] = literal.values.as_slice() else {
                return Ok(None);
            };
            let object = object.bind(py);
            if !(object.is_exact_instance_of::<PyString>()
                || (object.is_exact_instance_of::<PyInt>()
                    && !object.is_exact_instance_of::<PyBool>()))
            {
                return Ok(None);
            }
            py::dict_set(&out, field.wire_key.bind(py).as_any(), object).map_err(|_| Bail)?;
            tag = Some((literal, object));
            tag_index = *index;
        }
        for &index in &spec.wire_fields {
            let field = &spec.fields[index];
            let name = field.name.bind(py);
            if index == tag_index {
                let Some((literal, object)) = tag else {
                    return Err(Bail);
                };
                match reader.next_unless(value, index, name, object.as_unbound()) {
                    Next::Written | Next::Missing => {}
                    Next::Value(item) if shape::find_literal(literal, &item).is_some() => {}
                    Next::Value(_) => return Ok(None),
                    Next::Failed(_) => return Err(Bail),
                }
                continue;
            }
            let item = match reader.next(value, index, name, None, |_| false) {
                Next::Value(item) => item,
                Next::Written | Next::Missing => continue,
                Next::Failed(_) => return Err(Bail),
            };
            let converted = if self.is_own_form(field.node, &item) {
                item
            } else {
                self.value(field.node, item)?
            };
            py::dict_set(&out, field.wire_key.bind(py).as_any(), &converted).map_err(|_| Bail)?;
        }
        Ok(Some(out.into_any()))
    }
}
