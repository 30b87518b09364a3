//! The direct walk behind `to_builtins`: each value is returned as its JSON-form object (as
//! msgspec's `to_builtins` does), with no writer state between a value and its container. It
//! covers the common shapes (dataclass records, tagged and plain unions, lists, tuples,
//! str-keyed dicts, the scalars, enums, literals, datetimes, dates, UUIDs, Decimals); any other
//! value is handed, alone, to the shared encoder with [`ObjectWriter`], which is the reference
//! for every rule.
//!
//! Every value is walked once: the walk raises the shared encoder's own errors (the same
//! messages, built by the same functions, with the same path segments added on the way out),
//! and hands the encoder only a value it has not begun reading, so that user code run for a
//! value (a field's property, an extension's `encode` hook, `__instancecheck__`) runs once,
//! whether the value succeeds or fails.

use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDate, PyDelta, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTime,
    PyTuple,
};

use super::encode::{ascii_str, ObjectWriter};
use super::Keep;
use crate::codecs::builtins_table::{Entry, Kind, Mode, Row, RowTag, Table};
use crate::codecs::encoder::{self, encode_error, mismatch, not_a_record};
use crate::codecs::json::encode::non_finite;
use crate::errors::Error;
use crate::plan::{
    FieldDefault, LiteralValue, Node, NodeId, Plain, PlainRule, Plan, RecordSpec, TaggedUnionSpec,
    Verdict,
};
use crate::py::builders::{presized_dict, ListFill};
use crate::py::cpython::{DictTemplateLayout, Filling, FillingLayout};
use crate::py::fields::Next;
use crate::py::{self, temporal, Obj};
use crate::shape;
use crate::values::{nested, nested_runs_directly, MAX_DEPTH};
use polycodec_formats::text;
use polycodec_formats::text::temporal::DATETIME_MAX_LEN;

/// A value's JSON form, or the error the shared encoder raises for it (boxed, so that the
/// result is two words, returned in registers).
pub type Out<'py> = std::result::Result<Obj<'py>, Box<Error>>;

#[cold]
#[inline(never)]
fn py_err(err: PyErr) -> Box<Error> {
    Box::new(Error::from(err))
}

#[cold]
#[inline(never)]
fn boxed(err: Error) -> Box<Error> {
    Box::new(err)
}

#[cold]
#[inline(never)]
fn not_finite(number: f64) -> Box<Error> {
    Box::new(non_finite(number))
}

#[cold]
#[inline(never)]
fn wrong_type(node: &Node, value: &Obj<'_>) -> Box<Error> {
    Box::new(mismatch(node, value))
}

#[cold]
#[inline(never)]
#[allow(clippy::boxed_local)] // Boxed where it comes from: `Out` stays two words.
fn at_field(err: Box<Error>, wire_name: &str) -> Box<Error> {
    Box::new((*err).at_field(wire_name))
}

#[cold]
#[inline(never)]
#[allow(clippy::boxed_local)] // Boxed where it comes from: `Out` stays two words.
fn at_index(err: Box<Error>, index: usize) -> Box<Error> {
    Box::new((*err).at_index(index))
}

#[cold]
#[inline(never)]
fn not_this_record(spec: &RecordSpec, value: &Obj<'_>) -> Box<Error> {
    Box::new(not_a_record(spec, value))
}

/// The key as the shared encoder's dict path shows it.
#[cold]
#[inline(never)]
#[allow(clippy::boxed_local)] // Boxed where it comes from: `Out` stays two words.
fn at_key(err: Box<Error>, key: &Obj<'_>) -> Box<Error> {
    let shown = crate::errors::shown_key(key.as_any());
    Box::new((*err).at_key(&shown))
}

/// Whether `value`, an exact float, is finite.
#[inline(always)]
fn is_finite(value: &Obj<'_>) -> bool {
    value
        .cast::<PyFloat>()
        .is_ok_and(|float| float.value().is_finite())
}

/// Where a record's entries go: a template's copy (by position) or a dict (by key).
trait RecordOut<'py> {
    fn put(&mut self, position: usize, key: &Bound<'py, PyString>, value: Obj<'py>)
        -> PyResult<()>;
    /// An entry the record does not have (a field absent from its value).
    fn skip(&mut self, position: usize, key: &Bound<'py, PyString>) -> PyResult<()>;
    fn finish(self) -> Obj<'py>;
}

/// A template's copy being filled ([`Filling`], the CPython room's).
struct TemplateOut<'py>(Filling<'py>);

impl<'py> RecordOut<'py> for TemplateOut<'py> {
    #[inline(always)]
    fn put(
        &mut self,
        position: usize,
        _key: &Bound<'py, PyString>,
        value: Obj<'py>,
    ) -> PyResult<()> {
        self.0.put(position, value);
        Ok(())
    }

    #[cold]
    fn skip(&mut self, _position: usize, key: &Bound<'py, PyString>) -> PyResult<()> {
        self.0.dict().cast::<PyDict>()?.del_item(key)
    }

    #[inline(always)]
    fn finish(self) -> Obj<'py> {
        self.0.finish()
    }
}

impl<'py> RecordOut<'py> for Bound<'py, PyDict> {
    #[inline(always)]
    fn put(
        &mut self,
        _position: usize,
        key: &Bound<'py, PyString>,
        value: Obj<'py>,
    ) -> PyResult<()> {
        py::dict_set(self, key.as_any(), &value)
    }

    #[inline(always)]
    fn skip(&mut self, _position: usize, _key: &Bound<'py, PyString>) -> PyResult<()> {
        Ok(())
    }

    #[inline(always)]
    fn finish(self) -> Obj<'py> {
        self.into_any()
    }
}

pub struct Walk<'p, 'py> {
    plan: &'p Plan,
    /// The records' compact field tables (the JSON codec's, built from `plan`).
    table: &'p Table,
    py: Python<'py>,
    keep: Keep,
    depth: usize,
}

impl<'p, 'py> Walk<'p, 'py> {
    pub fn new(plan: &'p Plan, table: &'p Table, py: Python<'py>, keep: Keep) -> Self {
        Walk {
            plan,
            table,
            py,
            keep,
            depth: 0,
        }
    }

    /// Value `value` of node `id` as its JSON-form object (the value itself for an exact str,
    /// int, float, bool or None: they are immutable).
    ///
    /// The containers (records, lists, unions) are walked from here and the values inside
    /// them come back here, so this function, [`Self::record`] and [`Self::dataclass`] keep
    /// small stack frames: every leaf conversion (texts, enums, literals, Decimals) and every
    /// error is out of line, so that a deep value does not spread the walk over many cache
    /// lines of stack.
    pub fn value(&mut self, id: NodeId, value: Obj<'py>) -> Out<'py> {
        let node = self.plan.node(id);
        match node {
            Node::Str(_) if value.is_exact_instance_of::<PyString>() => Ok(value),
            Node::Int(_) if value.is_exact_instance_of::<PyInt>() => Ok(value),
            Node::Float(_) => {
                if let Ok(float) = value.cast_exact::<PyFloat>() {
                    let number = float.value();
                    if !number.is_finite() {
                        return Err(not_finite(number));
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
            Node::Record(_) => self.record(id, &value),
            Node::Sequence(spec) => self.sequence(id, spec.item, spec.plain, &value),
            Node::Union(spec) => match shape::pick_variant(self.plan, spec, &value) {
                Some(variant) => self.value(variant, value),
                None => Err(wrong_type(node, &value)),
            },
            Node::TaggedUnion(spec) => self.tagged(node, spec, &value),
            Node::Dict(spec) if matches!(self.plan.node(spec.key), Node::Str(_) | Node::Any) => {
                match value.cast::<PyDict>() {
                    // `dict[str, Any]`: an exact dict by the untyped walk (copied whole).
                    Ok(dict)
                        if matches!(self.plan.node(spec.value), Node::Any)
                            && dict.is_exact_instance_of::<PyDict>() =>
                    {
                        self.any_dict(spec.key, dict)
                    }
                    Ok(dict) => self.dict(spec.key, spec.value, spec.plain, dict),
                    Err(_) => Err(wrong_type(node, &value)),
                }
            }
            Node::Any => self.any(value),
            _ => self.leaf(id, node, value),
        }
    }

    /// The values [`Self::value`] does not walk itself: texts, enums, literals and Decimals,
    /// and the shared encoder for the rest.
    #[inline(never)]
    fn leaf(&mut self, id: NodeId, node: &'p Node, value: Obj<'py>) -> Out<'py> {
        match node {
            Node::DateTime(_) => self.datetime(id, value),
            Node::Date => self.date(id, value),
            Node::Tuple(nodes) => self.tuple(id, nodes, value),
            Node::Time(_) => self.time(id, value),
            Node::TimeDelta => self.timedelta(id, value),
            Node::Uuid if shape::is_uuid(&value) => {
                if self.keep.uuid {
                    return Ok(value);
                }
                let bits = py::uuid_value(&value).map_err(py_err)?;
                py::ascii_str_exact(self.py, &text::uuid::format_uuid(bits)).map_err(py_err)
            }
            Node::Decimal(_) => self.decimal(id, value),
            Node::Enum(spec) => {
                let Some(index) = shape::enum_member_index(spec, &value) else {
                    return self.general(id, &value);
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
                    py::dict_key_str(self.py, text.as_bytes(), text.is_ascii()).map_err(py_err)
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
            _ => self.general(id, &value),
        }
    }

    /// An untyped value as its JSON-form object, by its exact type: a str, int, bool or None
    /// itself, a finite float itself, a list or dict walked by [`Self::any_list`] and
    /// [`Self::any_dict`] (new containers, as msgspec's `to_builtins` makes); anything else
    /// (a subclass, a tuple, a dataclass, a NaN) the shared encoder's.
    fn any(&mut self, value: Obj<'py>) -> Out<'py> {
        match py::builtin(&value) {
            py::Builtin::Str | py::Builtin::Int | py::Builtin::Bool | py::Builtin::None => {
                Ok(value)
            }
            py::Builtin::Float if is_finite(&value) => Ok(value),
            py::Builtin::List => self.any_list(&value),
            py::Builtin::Dict => match value.cast::<PyDict>() {
                Ok(dict) => self.any_dict(self.plan.any, dict),
                Err(err) => Err(py_err(err.into())),
            },
            _ => self.general(self.plan.any, &value),
        }
    }

    /// An exact list under `Any`: a new list of its items' JSON forms.
    #[inline(never)]
    fn any_list(&mut self, value: &Obj<'py>) -> Out<'py> {
        let list = value.cast::<PyList>().map_err(|err| py_err(err.into()))?;
        shape::enter_nested(&mut self.depth).map_err(boxed)?;
        let result = nested(self.depth, || {
            let mut out = ListFill::new(self.py, list.len()).map_err(py_err)?;
            let mut index = 0;
            // Owned items: the shared encoder, for one of them, may run code that changes the
            // list (its length is read again for every item).
            while let Some(item) = py::list_item(list, index) {
                let item = match py::builtin(&item) {
                    py::Builtin::Str | py::Builtin::Int | py::Builtin::Bool | py::Builtin::None => {
                        item
                    }
                    _ => self.any(item).map_err(|err| at_index(err, index))?,
                };
                out.push(item).map_err(py_err)?;
                index += 1;
            }
            Ok(out.finish().map_err(py_err)?.into_any())
        });
        self.depth -= 1;
        result
    }

    /// An exact dict of `Any` values (keys of `key_node`: `Any` or `str`): a copy of it (one
    /// allocation and a copy of its table, through the `dict_template` layout, where its keys
    /// are all exact strs) in which only the values that are not their own JSON form are
    /// replaced by position; else a new dict filled key by key.
    #[inline(never)]
    fn any_dict(&mut self, key_node: NodeId, dict: &Bound<'py, PyDict>) -> Out<'py> {
        let Some(filling) = crate::py::cpython::dict_copy_of(dict) else {
            return self.dict(key_node, self.plan.any, None, dict);
        };
        let mut filling = filling.map_err(py_err)?;
        shape::enter_nested(&mut self.depth).map_err(boxed)?;
        let result = nested(self.depth, || {
            // The copy is this walk's alone: no code run for one of its values reaches it.
            for position in 0..filling.len() {
                let (key, item) = filling.entry(position);
                match py::builtin(&item) {
                    py::Builtin::Str | py::Builtin::Int | py::Builtin::Bool | py::Builtin::None => {
                    }
                    py::Builtin::Float if is_finite(&item) => {}
                    _ => {
                        let converted = self.any(item).map_err(|err| at_key(err, &key))?;
                        filling.put(position, converted);
                    }
                }
            }
            Ok(filling.finish())
        });
        self.depth -= 1;
        result
    }

    /// [`Self::value`] for a field or item whose node has the plain rule `rule` (precomputed
    /// for record fields): a value that is its own JSON form is returned with no dispatch on
    /// the node, a datetime is written at once.
    #[inline(always)]
    fn convert(&mut self, id: NodeId, rule: Option<PlainRule>, value: Obj<'py>) -> Out<'py> {
        if let Some(rule) = rule {
            if rule.nullable && value.is_none() {
                return Ok(value);
            }
            match rule.kind {
                Plain::Str if value.is_exact_instance_of::<PyString>() => return Ok(value),
                Plain::Int if value.is_exact_instance_of::<PyInt>() => return Ok(value),
                Plain::Float => {
                    if let Ok(float) = value.cast_exact::<PyFloat>() {
                        let number = float.value();
                        if !number.is_finite() {
                            return Err(not_finite(number));
                        }
                        return Ok(value);
                    }
                    if value.is_exact_instance_of::<PyInt>() {
                        return Ok(value);
                    }
                }
                Plain::Bool if value.is_exact_instance_of::<PyBool>() => return Ok(value),
                // Of the datetime node or the `Optional` around it: the shared encoder takes
                // either for a datetime it leaves to it.
                Plain::DateTime => return self.datetime(id, value),
                _ => {}
            }
        }
        self.value(id, value)
    }

    /// A date (node `id`) as its ISO 8601 text; anything but an exact date goes to the shared
    /// encoder.
    #[inline(never)]
    fn date(&mut self, id: NodeId, value: Obj<'py>) -> Out<'py> {
        match value.cast_exact::<PyDate>() {
            Ok(_) if self.keep.date => Ok(value),
            Ok(date) => {
                let text = text::temporal::format_date(&temporal::date_parts(date));
                py::ascii_str_exact(self.py, &text).map_err(py_err)
            }
            Err(_) => self.general(id, &value),
        }
    }

    /// A time (node `id`) as its ISO 8601 text (its zone's `utcoffset` asked as the shared
    /// encoder asks it); anything else goes to the shared encoder.
    #[inline(never)]
    fn time(&mut self, id: NodeId, value: Obj<'py>) -> Out<'py> {
        match value.cast::<PyTime>() {
            Ok(_) if self.keep.time => Ok(value),
            Ok(time) => {
                let parts = temporal::time_parts(time).map_err(|err| boxed(encode_error(err)))?;
                ascii_str(self.py, |out| text::temporal::write_time(out, &parts)).map_err(py_err)
            }
            Err(_) => self.general(id, &value),
        }
    }

    /// A timedelta (node `id`) as its ISO 8601 duration; anything else goes to the shared
    /// encoder.
    #[inline(never)]
    fn timedelta(&mut self, id: NodeId, value: Obj<'py>) -> Out<'py> {
        match value.cast::<PyDelta>() {
            Ok(_) if self.keep.timedelta => Ok(value),
            Ok(delta) => {
                let parts = temporal::duration_parts(delta);
                ascii_str(self.py, |out| text::temporal::write_duration(out, &parts))
                    .map_err(py_err)
            }
            Err(_) => self.general(id, &value),
        }
    }

    /// A Decimal (node `id`) as its str; anything else goes to the shared encoder.
    #[inline(never)]
    fn decimal(&mut self, id: NodeId, value: Obj<'py>) -> Out<'py> {
        if !shape::is_decimal(&value) {
            return self.general(id, &value);
        }
        if self.keep.decimal {
            return Ok(value);
        }
        value.str().map(Bound::into_any).map_err(py_err)
    }

    /// A datetime as its RFC 3339 text, made straight into a new str; any datetime but an
    /// exact naive or fixed-offset one (and anything else) goes to the shared encoder.
    #[inline(never)]
    fn datetime(&mut self, id: NodeId, value: Obj<'py>) -> Out<'py> {
        match temporal::utc_or_naive_parts(&value) {
            Some(_) if self.keep.datetime => Ok(value),
            Some(parts) => {
                let mut buf = [0u8; DATETIME_MAX_LEN];
                let length = text::temporal::format_datetime(&mut buf, &parts);
                py::ascii_str_from(self.py, &buf, length).map_err(py_err)
            }
            None => self.general(id, &value),
        }
    }

    /// Node `id` by the shared encoder, at the walk's depth: for a value the walk has not
    /// begun reading, so nothing it runs has run before.
    #[cold]
    #[inline(never)]
    fn general(&mut self, id: NodeId, value: &Obj<'py>) -> Out<'py> {
        let mut writer = ObjectWriter::new(self.py, self.keep);
        encoder::encode_at(self.plan, id, value, &mut writer, self.depth).map_err(boxed)?;
        writer.finish().map_err(boxed)
    }

    /// A tagged union's value: the record of its class (found by pointer first, as the shared
    /// encoder does).
    #[inline(always)]
    fn tagged(&mut self, node: &Node, spec: &'p TaggedUnionSpec, value: &Obj<'py>) -> Out<'py> {
        let class = value.get_type_ptr() as usize;
        let exact = spec
            .classes
            .iter()
            .find(|(c, _)| *c == class)
            .map(|&(_, record_id)| record_id);
        match exact.or_else(|| shape::tagged_variant(self.plan, spec, value).map(|(id, _)| id)) {
            Some(record_id) => self.record(record_id, value),
            None => Err(wrong_type(node, value)),
        }
    }

    fn sequence(
        &mut self,
        id: NodeId,
        item: NodeId,
        rule: Option<PlainRule>,
        value: &Obj<'py>,
    ) -> Out<'py> {
        if let Ok(list) = value.cast_exact::<PyList>() {
            shape::enter_nested(&mut self.depth).map_err(boxed)?;
            let result = nested(self.depth, || {
                self.items(item, rule, list.len(), |index| py::list_item(list, index))
            });
            self.depth -= 1;
            return result;
        }
        if let Ok(tuple) = value.cast_exact::<PyTuple>() {
            shape::enter_nested(&mut self.depth).map_err(boxed)?;
            let result = nested(self.depth, || {
                // Borrowed by index, `None` past the end: `get_item` there would raise and
                // discard an IndexError to end every tuple.
                self.items(item, rule, tuple.len(), |index| {
                    py::tuple_item_borrowed(tuple, index).map(|element| element.to_owned())
                })
            });
            self.depth -= 1;
            return result;
        }
        if value.is_exact_instance_of::<PySet>() || value.is_exact_instance_of::<PyFrozenSet>() {
            // A set's items in its iteration order, as the shared encoder reads them.
            let mut iterator = value.try_iter().map_err(py_err)?;
            shape::enter_nested(&mut self.depth).map_err(boxed)?;
            let mut failed = None;
            let result = nested(self.depth, || {
                self.items(item, rule, value.len().unwrap_or(0), |_| {
                    match iterator.next()? {
                        Ok(element) => Some(element),
                        Err(err) => {
                            failed = Some(err);
                            None
                        }
                    }
                })
            });
            self.depth -= 1;
            return match failed {
                Some(err) => Err(py_err(err)),
                None => result,
            };
        }
        self.general(id, value)
    }

    /// A fixed-length tuple (`tuple[int, str]`): an exact tuple or list of its length, each
    /// item as its own node; anything else goes to the shared encoder.
    #[inline(never)]
    fn tuple(&mut self, id: NodeId, nodes: &'p [NodeId], value: Obj<'py>) -> Out<'py> {
        let length = match (value.cast_exact::<PyTuple>(), value.cast_exact::<PyList>()) {
            (Ok(tuple), _) => tuple.len(),
            (_, Ok(list)) => list.len(),
            _ => return self.general(id, &value),
        };
        if length != nodes.len() {
            return self.general(id, &value);
        }
        shape::enter_nested(&mut self.depth).map_err(boxed)?;
        let result = nested(self.depth, || {
            let mut items = ListFill::new(self.py, length).map_err(py_err)?;
            for (index, &node) in nodes.iter().enumerate() {
                let element = match value.cast_exact::<PyTuple>() {
                    Ok(tuple) => tuple.get_item(index).ok(),
                    Err(_) => value
                        .cast_exact::<PyList>()
                        .ok()
                        .and_then(|list| py::list_item(list, index)),
                };
                let Some(element) = element else {
                    return Err(boxed(Error::encode(
                        "tuple changed size while being encoded",
                    )));
                };
                let converted = self
                    .value(node, element)
                    .map_err(|err| at_index(err, index))?;
                items.push(converted).map_err(py_err)?;
            }
            items.finish().map(Bound::into_any).map_err(py_err)
        });
        self.depth -= 1;
        result
    }

    /// A new list of the items `next` gives (by index, until `None`), each as node `item`:
    /// records and tagged unions (the common items) without the node dispatch per item, plain
    /// items by `rule` (the sequence node's `plain`, found when the plan was built).
    #[inline(always)]
    fn items(
        &mut self,
        item: NodeId,
        rule: Option<PlainRule>,
        length: usize,
        next: impl FnMut(usize) -> Option<Obj<'py>>,
    ) -> Out<'py> {
        match self.plan.node(item) {
            node @ Node::TaggedUnion(spec) => self.fill(length, next, |walk, element| {
                walk.tagged(node, spec, &element)
            }),
            Node::Record(_) => match self.table.row(item) {
                Some(row) => self.fill(length, next, |walk, element| {
                    walk.record_row(item, row, &element)
                }),
                None => self.fill(length, next, |walk, element| walk.general(item, &element)),
            },
            _ => self.fill(length, next, |walk, element| {
                walk.convert(item, rule, element)
            }),
        }
    }

    #[inline(always)]
    fn fill(
        &mut self,
        length: usize,
        mut next: impl FnMut(usize) -> Option<Obj<'py>>,
        mut each: impl FnMut(&mut Self, Obj<'py>) -> Out<'py>,
    ) -> Out<'py> {
        let mut items = ListFill::new(self.py, length).map_err(py_err)?;
        let mut index = 0;
        while let Some(element) = next(index) {
            let converted = each(self, element).map_err(|err| at_index(err, index))?;
            items.push(converted).map_err(py_err)?;
            index += 1;
        }
        items.finish().map(Bound::into_any).map_err(py_err)
    }

    /// A dict of str keys (or keys of `Any`): exact str keys are kept as they are, any other
    /// is made the str its JSON form has by the shared encoder's key rules.
    fn dict(
        &mut self,
        key_node: NodeId,
        value_node: NodeId,
        rule: Option<PlainRule>,
        dict: &Bound<'py, PyDict>,
    ) -> Out<'py> {
        shape::enter_nested(&mut self.depth).map_err(boxed)?;
        let result = nested(self.depth, || {
            let py = self.py;
            let out = presized_dict(py, dict.len()).map_err(py_err)?;
            let mut position = 0;
            while let Some((key, item)) = py::next_entry(dict, &mut position) {
                let key_text = if key.is_exact_instance_of::<PyString>() {
                    key.clone()
                } else {
                    ObjectWriter::dict_key(py, self.keep, self.plan, key_node, &key, self.depth)
                        .map_err(boxed)?
                };
                let converted = self
                    .convert(value_node, rule, item)
                    .map_err(|err| at_key(err, &key))?;
                py::dict_set(&out, &key_text, &converted).map_err(py_err)?;
            }
            Ok(out.into_any())
        });
        self.depth -= 1;
        result
    }

    /// A record: a dataclass written as a dict of every field (tag first for a tagged-union
    /// variant); other records go to the shared encoder.
    #[inline]
    fn record(&mut self, id: NodeId, value: &Obj<'py>) -> Out<'py> {
        match self.table.row(id) {
            Some(row) => self.record_row(id, row, value),
            None => self.general(id, value),
        }
    }

    /// Record node `id`, whose table row is `row`.
    fn record_row(&mut self, id: NodeId, row: u32, value: &Obj<'py>) -> Out<'py> {
        let plan = self.plan;
        let row = &self.table.rows[row as usize];
        // What sends the record to the shared encoder is known before the value is looked at,
        // so that nothing is asked of the value twice.
        if row.mode >= Mode::General {
            return self.other_mode(id, row, value);
        }
        let Node::Record(spec) = plan.node(id) else {
            return self.general(id, value);
        };
        if !py::has_exact_type(value, row.type_addr) {
            return self.other_class(id, spec, value);
        }
        // The depth check, the stack check and their errors out of line, so that this
        // function and the dataclass's fields share one small stack frame per nesting level.
        self.depth += 1;
        let result = if self.depth <= MAX_DEPTH && nested_runs_directly(self.depth) {
            self.dataclass(spec, row, value)
        } else {
            self.dataclass_deep(spec, row, value)
        };
        self.depth -= 1;
        result
    }

    /// A record of a mode other than `Plain` and `Tagged`: a sparse dict, a list, or the
    /// shared encoder's.
    #[inline(never)]
    fn other_mode(&mut self, id: NodeId, row: &'p Row, value: &Obj<'py>) -> Out<'py> {
        let Node::Record(spec) = self.plan.node(id) else {
            return self.general(id, value);
        };
        if row.mode == Mode::General {
            return self.general(id, value);
        }
        if !py::has_exact_type(value, row.type_addr) {
            return self.other_class(id, spec, value);
        }
        let mut outer = self.depth;
        shape::enter_nested(&mut outer).map_err(boxed)?;
        self.depth += 1;
        let result = nested(self.depth, || match row.mode {
            Mode::Array => self.array(spec, row, value),
            _ => self.sparse(spec, row, value),
        });
        self.depth -= 1;
        result
    }

    /// A record whose fields may be left out (`Mode::Sparse`), as a dict filled key by key: a
    /// field that is UNSET, at its default under `omit_defaults` (by the test the plan chose
    /// for it), or a TypedDict's absent key is left out.
    fn sparse(&mut self, spec: &'p RecordSpec, row: &'p Row, value: &Obj<'py>) -> Out<'py> {
        let py = self.py;
        let entries = &self.table.entries[row.start as usize..row.end as usize];
        let out = PyDict::new(py);
        let mut reader = spec.access.reader(value);
        let tag_index = match &row.tag {
            Some(tag) => {
                py::dict_set(&out, tag.key.bind(py), tag.object.bind(py)).map_err(py_err)?;
                tag.index
            }
            None => usize::MAX,
        };
        let unset = self.plan.unset_addr();
        for entry in entries {
            let index = entry.index as usize;
            let name = entry.name.bind(py);
            if index == tag_index {
                if let Some(tag) = &row.tag {
                    self.check_tag(&mut reader, value, spec, name, tag)?;
                }
                continue;
            }
            let field = &spec.fields[index];
            let item = match reader.next(value, index, name, None, |_| false) {
                Next::Value(item) => item,
                Next::Written | Next::Missing => {
                    if matches!(field.default, FieldDefault::Required) {
                        return Err(boxed(encoder::missing_field(field)));
                    }
                    continue;
                }
                Next::Failed(err) => return Err(py_err(*err)),
            };
            if field.unset && item.as_ptr() as usize == unset {
                continue;
            }
            match field.omit.check(&item) {
                Verdict::Default => continue,
                Verdict::Ask => {
                    if shape::equals_default(&field.default, &item).map_err(boxed)? {
                        continue;
                    }
                }
                Verdict::Other => {}
            }
            let converted = self
                .entry(entry, item)
                .map_err(|err| at_field(err, &field.wire_name))?;
            py::dict_set(&out, entry.key.bind(py), &converted).map_err(py_err)?;
        }
        Ok(out.into_any())
    }

    /// A record written as an array (`Mode::Array`), as a list: the tag first for a tagged
    /// one, then each field's value in order.
    fn array(&mut self, spec: &'p RecordSpec, row: &'p Row, value: &Obj<'py>) -> Out<'py> {
        let py = self.py;
        let entries = &self.table.entries[row.start as usize..row.end as usize];
        let length = spec.wire_fields.len() + usize::from(spec.class_tag().is_some());
        let mut items = ListFill::new(py, length).map_err(py_err)?;
        let mut position = 0;
        let tag_index = match &row.tag {
            Some(tag) => {
                items.push(tag.object.bind(py).clone()).map_err(py_err)?;
                position = 1;
                tag.index
            }
            None => usize::MAX,
        };
        let mut reader = spec.access.reader(value);
        let unset = self.plan.unset_addr();
        for entry in entries {
            let index = entry.index as usize;
            if index == tag_index {
                continue;
            }
            let field = &spec.fields[index];
            let item = match reader.next(value, index, entry.name.bind(py), None, |_| false) {
                Next::Value(item) => item,
                Next::Written | Next::Missing => {
                    return Err(boxed(encoder::missing_field(field)));
                }
                Next::Failed(err) => return Err(py_err(*err)),
            };
            if field.unset && item.as_ptr() as usize == unset {
                return Err(boxed(encoder::unset_in_array(field).at_index(position)));
            }
            let converted = self
                .entry(entry, item)
                .map_err(|err| at_index(err, position))?;
            items.push(converted).map_err(py_err)?;
            position += 1;
        }
        items.finish().map(Bound::into_any).map_err(py_err)
    }

    /// A value of another class than the record's own: an instance of a subclass goes to the
    /// shared encoder, which writes it with its own fields.
    #[cold]
    #[inline(never)]
    fn other_class(&mut self, id: NodeId, spec: &RecordSpec, value: &Obj<'py>) -> Out<'py> {
        if shape::is_record(spec, value) {
            self.general(id, value)
        } else {
            Err(not_this_record(spec, value))
        }
    }

    /// [`Self::dataclass`] at a depth where the nesting limit or the stack is checked (the
    /// depth already counts this level).
    #[cold]
    #[inline(never)]
    fn dataclass_deep(&mut self, spec: &'p RecordSpec, row: &'p Row, value: &Obj<'py>) -> Out<'py> {
        let mut outer = self.depth - 1;
        shape::enter_nested(&mut outer).map_err(boxed)?;
        nested(self.depth, || self.dataclass(spec, row, value))
    }

    /// The dataclass's dict, every field read once, in the shared encoder's order, from the
    /// record's table row: a copy of the row's template filled by position, or (without a
    /// template) a dict filled key by key.
    #[inline(always)]
    fn dataclass(&mut self, spec: &'p RecordSpec, row: &'p Row, value: &Obj<'py>) -> Out<'py> {
        match &row.template {
            Some(template) => {
                let out = template.copy(self.py).map_err(py_err)?;
                self.fields(spec, row, value, TemplateOut(out))
            }
            None => self.dataclass_by_key(spec, row, value),
        }
    }

    /// [`Self::dataclass`] without a template.
    #[inline(never)]
    fn dataclass_by_key(
        &mut self,
        spec: &'p RecordSpec,
        row: &'p Row,
        value: &Obj<'py>,
    ) -> Out<'py> {
        let entries = &self.table.entries[row.start as usize..row.end as usize];
        let out = presized_dict(self.py, entries.len()).map_err(py_err)?;
        self.fields(spec, row, value, out)
    }

    /// Reads and converts the record's fields into `out`.
    #[inline(always)]
    fn fields<O: RecordOut<'py>>(
        &mut self,
        spec: &'p RecordSpec,
        row: &'p Row,
        value: &Obj<'py>,
        mut out: O,
    ) -> Out<'py> {
        let py = self.py;
        let entries = &self.table.entries[row.start as usize..row.end as usize];
        let mut reader = spec.access.reader(value);
        let mut position = 0;
        // `usize::MAX` matches no field.
        let tag_index = match &row.tag {
            Some(tag) => {
                out.put(position, tag.key.bind(py), tag.object.bind(py).clone())
                    .map_err(py_err)?;
                position += 1;
                tag.index
            }
            None => usize::MAX,
        };
        for entry in entries {
            let index = entry.index as usize;
            let name = entry.name.bind(py);
            if index == tag_index {
                if let Some(tag) = &row.tag {
                    self.check_tag(&mut reader, value, spec, name, tag)?;
                }
                continue;
            }
            let key = entry.key.bind(py);
            let item = match reader.next(value, index, name, None, |_| false) {
                Next::Value(item) => item,
                Next::Written | Next::Missing => {
                    out.skip(position, key).map_err(py_err)?;
                    position += 1;
                    continue;
                }
                Next::Failed(err) => return Err(py_err(*err)),
            };
            let converted = self
                .entry(entry, item)
                .map_err(|err| at_field(err, &spec.fields[index].wire_name))?;
            out.put(position, key, converted).map_err(py_err)?;
            position += 1;
        }
        Ok(out.finish())
    }

    /// A field's value by its table entry: the common kinds without reading the field's node
    /// (as [`Self::value`] converts them).
    #[inline(always)]
    fn entry(&mut self, entry: &'p Entry, value: Obj<'py>) -> Out<'py> {
        if entry.nullable && value.is_none() {
            return Ok(value);
        }
        let id = entry.node as NodeId;
        match entry.kind {
            Kind::Str if value.is_exact_instance_of::<PyString>() => return Ok(value),
            Kind::Int if value.is_exact_instance_of::<PyInt>() => return Ok(value),
            Kind::Float => {
                if let Ok(float) = value.cast_exact::<PyFloat>() {
                    let number = float.value();
                    if !number.is_finite() {
                        return Err(not_finite(number));
                    }
                    return Ok(value);
                }
                if value.is_exact_instance_of::<PyInt>() {
                    return Ok(value);
                }
            }
            Kind::Bool if value.is_exact_instance_of::<PyBool>() => return Ok(value),
            Kind::DateTime => return self.datetime(id, value),
            Kind::Date => return self.date(id, value),
            Kind::Decimal => return self.decimal(id, value),
            Kind::Record => return self.record_row(id, entry.child, &value),
            Kind::Enum => {
                let members = &self.table.members[entry.child as usize..];
                let addr = value.as_ptr() as usize;
                for member in members {
                    if member.addr == addr {
                        return Ok(member.value.bind(self.py).clone());
                    }
                    if member.addr == 0 {
                        break;
                    }
                }
            }
            _ => {}
        }
        self.value(id, value)
    }

    /// The tag field where the field walk meets it: read and checked (as the shared encoder's
    /// `check_tag` does), not written again. The class's own tag object passes by identity.
    #[inline(always)]
    fn check_tag(
        &self,
        reader: &mut py::fields::FieldReader<'_, 'py>,
        value: &Obj<'py>,
        spec: &'p RecordSpec,
        name: &Bound<'py, PyString>,
        tag: &'p RowTag,
    ) -> Result<(), Box<Error>> {
        match reader.next_unless(value, tag.index, name, &tag.object) {
            Next::Written | Next::Missing => Ok(()),
            Next::Value(item) => self.other_tag(spec, tag, &item),
            Next::Failed(err) => Err(py_err(*err)),
        }
    }

    /// A tag field holding another object than the class's tag: checked against the
    /// `Literal`.
    #[cold]
    #[inline(never)]
    fn other_tag(
        &self,
        spec: &RecordSpec,
        tag: &RowTag,
        item: &Obj<'py>,
    ) -> Result<(), Box<Error>> {
        let Node::Literal(literal) = self.plan.node(tag.literal) else {
            return Ok(());
        };
        if shape::find_literal(literal, item).is_none() {
            shape::allowed_literal(literal, item)
                .map_err(|err| at_field(boxed(err), &spec.fields[tag.index].wire_name))?;
        }
        Ok(())
    }
}
