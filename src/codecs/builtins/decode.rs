//! The reader behind `from_builtins`: the shared decoder's walk, reading existing Python
//! objects where the JSON codec reads tokens. A value is dispatched on its type as JSON's on its
//! token (str, int, float, bool, None, dict as object, list or tuple as array), and then goes
//! through the same conversions (`values::Decoding`), so lax mode, constraints, errors and
//! paths are JSON's. The types `builtin_types=` keeps are also accepted as themselves.

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDate, PyDateTime, PyDelta, PyDict, PyFloat, PyInt, PyList,
    PyString, PyTime, PyTuple,
};

use super::Keep;
use crate::codecs::decoder::{
    big_int_tag, find_tag, not_a_tag, Decoder, Errors, TagRef, WireReader,
};
use crate::codecs::json::decode::{base64_value, dict_key};
use crate::errors::{Code, Error, PathSegment, Result};
use crate::plan::{Field, Node, NodeId, RecordKind, RecordSpec, TaggedUnionSpec};
use crate::py::{self, temporal, Obj};
use crate::shape;
use crate::values::{check_tz, nested, Token};

/// The input: the value the decoder reads next, and what the walk keeps about it.
pub struct ObjectInput<'py> {
    /// The value `value` reads next: the root, then each item or entry value the decoder has
    /// moved to.
    next: Option<Obj<'py>>,
    /// The key `next_key` returned last (its text is borrowed from it).
    key: Option<Obj<'py>>,
    keep: Keep,
    /// Whether a record may come as any object, its fields read from its attributes.
    from_attributes: bool,
    /// Values the decoder asked the position of (`offset`), to go back to them (`rewind`).
    marks: RefCell<Vec<Option<Obj<'py>>>>,
    /// The dict position (as `PyDict_Next` counts) where the direct walk last found a tagged
    /// union's tag entry, tried first in the next tagged dict.
    pub(super) tag_hint: isize,
}

impl<'py> ObjectInput<'py> {
    pub fn new(root: Obj<'py>, keep: Keep, from_attributes: bool) -> Self {
        ObjectInput {
            next: Some(root),
            key: None,
            keep,
            from_attributes,
            marks: RefCell::new(Vec::new()),
            tag_hint: 0,
        }
    }

    /// Makes `value` the value read next.
    #[inline(always)]
    pub fn set_next(&mut self, value: Obj<'py>) {
        self.next = Some(value);
    }
}

/// Where the decoder is in a container.
pub enum Cursor<'py> {
    Dict {
        dict: Bound<'py, PyDict>,
        position: isize,
        left: usize,
    },
    List {
        list: Bound<'py, PyList>,
        index: usize,
        left: usize,
    },
    Tuple {
        tuple: Bound<'py, PyTuple>,
        index: usize,
        left: usize,
    },
}

impl<'py> Cursor<'py> {
    /// A cursor before the first entry of `dict`.
    #[inline(always)]
    fn dict(dict: Bound<'py, PyDict>) -> Self {
        let left = dict.len();
        Cursor::Dict {
            dict,
            position: 0,
            left,
        }
    }

    /// A cursor before the first item of `list`.
    #[inline(always)]
    fn list(list: Bound<'py, PyList>) -> Self {
        let left = list.len();
        Cursor::List {
            list,
            index: 0,
            left,
        }
    }

    /// A cursor before the first item of `tuple`.
    #[inline(always)]
    fn tuple(tuple: Bound<'py, PyTuple>) -> Self {
        let left = tuple.len();
        Cursor::Tuple {
            tuple,
            index: 0,
            left,
        }
    }

    fn left(&self) -> usize {
        match self {
            Cursor::Dict { left, .. } | Cursor::List { left, .. } | Cursor::Tuple { left, .. } => {
                *left
            }
        }
    }
}

#[cold]
fn not_an_object_key(key: &Obj<'_>) -> Error {
    Error::validation(
        Code::DictKeyType,
        format_args!(
            "expected a str object key, got {}",
            crate::py::type_name(key)
        ),
    )
}

/// The attribute `name` of `value` (user code: a property or `__getattr__` may run), `None`
/// when the object has none (an `AttributeError`); any other exception is the decode's error,
/// at the field (`wire_name`).
fn attribute<'py>(
    value: &Obj<'py>,
    name: &Bound<'py, PyString>,
    wire_name: &str,
) -> Result<Option<Obj<'py>>> {
    let py = value.py();
    match py::user_code(py, || value.getattr(name)) {
        Ok(found) => Ok(Some(found)),
        Err(err) if err.is_instance_of::<pyo3::exceptions::PyAttributeError>(py) => Ok(None),
        Err(err) => Err(Error::from(err).at_field(wire_name)),
    }
}

#[cold]
fn unsupported(node: &Node, value: &Obj<'_>) -> Error {
    Error::validation(
        node.type_code(),
        format_args!(
            "expected {}, got {}",
            node.describe(),
            crate::py::type_name(value)
        ),
    )
}

impl<'p, 'py, E: Errors> Decoder<'p, 'py, ObjectInput<'py>, E> {
    /// A `Raw` field's value: a Raw object is taken as itself (the builtins form has no bytes
    /// to keep), None for an `Optional[Raw]`.
    #[cold]
    #[inline(never)]
    fn raw(&mut self, nullable: bool) -> Result<Obj<'py>> {
        let value = self.take_next()?;
        if crate::raw::bytes_of(&value).is_some() || (nullable && value.is_none()) {
            return Ok(value);
        }
        Err(Error::expected(
            crate::errors::ErrorKind::Validation,
            Code::ValueError,
            "Raw",
            &crate::py::type_name(&value),
        ))
    }

    fn take_next(&mut self) -> Result<Obj<'py>> {
        self.reader.next.take().ok_or_else(|| {
            Error::decode(
                Code::DecodeError,
                "internal error: from_builtins read past a value",
            )
        })
    }

    fn string(&mut self, id: NodeId, value: Obj<'py>) -> Result<Obj<'py>> {
        let id = self.ctx.resolve(id, Token::Str)?;
        let node = self.ctx.plan.node(id);
        let text = value.cast::<PyString>().map_err(PyErr::from)?;
        match node {
            // Only in lax mode: a str the union's variants may take as a number, `null` or a
            // bool before its str variant does; that variant reads what none of them takes.
            Node::Union(spec) => {
                let bytes = py::str_utf8(text)?.as_bytes();
                if let Some(value) = self.ctx.lax_union_text(spec, bytes)? {
                    return Ok(value);
                }
                return match spec.str {
                    Some(variant) => self.string(variant, value.clone()),
                    None => Err(crate::values::union_mismatch(
                        self.ctx.plan,
                        spec,
                        Token::Str,
                    )),
                };
            }
            // The str itself, as JSON would make an equal one.
            Node::Any if text.is_exact_instance_of::<PyString>() => return Ok(value),
            Node::Str(spec)
                if spec.is_unconstrained() && text.is_exact_instance_of::<PyString>() =>
            {
                return Ok(value)
            }
            Node::Bytes(spec) => {
                let text = py::str_utf8(text)?;
                return base64_value(&self.ctx, spec, text.as_bytes());
            }
            _ => {}
        }
        let text = py::str_utf8(text)?;
        self.ctx.string(id, text.as_bytes(), text.is_ascii())
    }

    fn int(&mut self, id: NodeId, value: &Obj<'py>) -> Result<Obj<'py>> {
        match py::int_as_i64(value) {
            // An exact int is its own value (as a str is): checked, not made again.
            Some(number) if value.is_exact_instance_of::<PyInt>() => {
                let id = self.ctx.resolve(id, Token::Int)?;
                match self.ctx.plan.node(id) {
                    Node::Int(bounds) => {
                        bounds.check(number)?;
                        Ok(value.clone())
                    }
                    Node::Any => Ok(value.clone()),
                    _ => self.ctx.int(id, number),
                }
            }
            Some(number) => self.ctx.int(id, number),
            None => {
                let text = crate::codecs::json::encode::big_int_text(value)?;
                self.ctx.big_int(id, &text)
            }
        }
    }

    /// A finite float: an exact float is its own value for a float node, checked, not made
    /// again.
    #[inline]
    fn float(&mut self, id: NodeId, number: f64, value: &Obj<'py>) -> Result<Obj<'py>> {
        if value.is_exact_instance_of::<PyFloat>() {
            let id = self.ctx.resolve(id, Token::Float)?;
            match self.ctx.plan.node(id) {
                Node::Float(bounds) => {
                    bounds.check(number)?;
                    return Ok(value.clone());
                }
                Node::Any => return Ok(value.clone()),
                _ => return self.ctx.float(id, number, None),
            }
        }
        self.ctx.float(id, number, None)
    }

    /// A value of a type `builtin_types=` keeps (or not): accepted as itself where the node
    /// takes that type.
    fn kept(&mut self, id: NodeId, value: Obj<'py>) -> Result<Obj<'py>> {
        let keep = self.reader.keep;
        let py = self.ctx.py;
        if !self.ctx.strict && keep.decimal && shape::is_decimal(&value) {
            if let Some(float) = self.lax_decimal_float(id) {
                // Lax mode: a Decimal given for a float is its value, as msgspec's convert
                // reads it (NaN and the infinities too; a signalling NaN is a ValueError).
                let number: f64 = value.extract().map_err(Error::from)?;
                return self.ctx.float(float, number, None);
            }
        }
        // The JSON form of each of these is a str, so a union picks its str variant.
        let id = match self.ctx.plan.node(id) {
            Node::Union(spec) => spec.str.unwrap_or(id),
            _ => id,
        };
        let node = self.ctx.plan.node(id);
        let any = matches!(node, Node::Any);
        if let Ok(datetime) = value.cast::<PyDateTime>() {
            if keep.datetime {
                match node {
                    Node::DateTime(rule) => {
                        let parts = temporal::datetime_parts(datetime)?;
                        check_tz(*rule, parts.offset_seconds.is_some(), "datetime")?;
                        return Ok(value);
                    }
                    Node::Any => return Ok(value),
                    _ => {}
                }
            }
        } else if value.is_instance_of::<PyDate>() {
            if keep.date && (any || matches!(node, Node::Date)) {
                return Ok(value);
            }
        } else if let Ok(time) = value.cast::<PyTime>() {
            if keep.time {
                match node {
                    Node::Time(rule) => {
                        let parts = temporal::time_parts(time)?;
                        check_tz(*rule, parts.offset_seconds.is_some(), "time")?;
                        return Ok(value);
                    }
                    Node::Any => return Ok(value),
                    _ => {}
                }
            }
        } else if value.is_instance_of::<PyDelta>() {
            if keep.timedelta && (any || matches!(node, Node::TimeDelta)) {
                return Ok(value);
            }
        } else if shape::is_uuid(&value) {
            if keep.uuid && (any || matches!(node, Node::Uuid)) {
                return Ok(value);
            }
        } else if shape::is_decimal(&value) {
            if keep.decimal {
                match node {
                    // The constraints are checked on the value read again from its text.
                    Node::Decimal(spec) => {
                        let text = value.str()?;
                        return self.ctx.decimal(spec, py::str_utf8(&text)?);
                    }
                    Node::Any => return Ok(value),
                    _ => {}
                }
            }
        } else if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() {
            let kept = if value.is_instance_of::<PyBytes>() {
                keep.bytes
            } else {
                keep.bytearray
            };
            if kept {
                match node {
                    Node::Bytes(spec) => {
                        let data = shape::bytes_like(&value).unwrap_or_default();
                        spec.length
                            .check(data.len(), crate::plan::LengthUnit::Bytes)?;
                        return Ok(spec.new_value(py, &data)?);
                    }
                    Node::Any => return Ok(value),
                    _ => {}
                }
            }
        }
        let node = self.ctx.plan.node(id);
        if shape::accepts(self.ctx.plan, node, &value) {
            // The right type, not taken as itself: a hint rather than "expected date, got date".
            return Err(Error::validation(
                node.type_code(),
                format_args!(
                "expected {} as its JSON form, got a {} object (builtin_types takes it as itself)",
                node.describe(),
                crate::py::type_name(&value)
            ),
            ));
        }
        Err(unsupported(node, &value))
    }

    /// Lax mode: the float node a Decimal given for node `id` is read as, when `id` takes a
    /// float and no Decimal (a float, or a union with a float variant and no Decimal one).
    fn lax_decimal_float(&self, id: NodeId) -> Option<NodeId> {
        let plan = self.ctx.plan;
        match plan.node(id) {
            Node::Float(_) => Some(id),
            Node::Union(spec)
                if !spec
                    .variants
                    .iter()
                    .any(|&variant| matches!(plan.node(variant), Node::Decimal(_))) =>
            {
                spec.float
            }
            _ => None,
        }
    }

    /// `from_attributes`: an object given for a record (or a tagged union of records), as the
    /// dict of its fields read from its attributes, keyed by wire name, which the decoder then
    /// reads as it reads a dict; `None` for any other node. Each field is the attribute of its
    /// name, else (when `rename` or `Meta(name=)` gave it another) of its wire name; one the
    /// object lacks (an `AttributeError`) is left out, for its default or the missing-field
    /// error.
    fn attributes(&mut self, id: NodeId, value: &Obj<'py>) -> Result<Option<Bound<'py, PyDict>>> {
        let plan = self.ctx.plan;
        let Ok(target) = self.ctx.resolve(id, Token::Object) else {
            return Ok(None);
        };
        let records: Vec<&RecordSpec> = match plan.node(target) {
            Node::Record(spec) if spec.kind == RecordKind::Dataclass && !spec.array_like => {
                vec![spec]
            }
            Node::TaggedUnion(spec) if spec.tags.first().is_some_and(|(_, variant)| {
                matches!(plan.node(*variant), Node::Record(record) if !record.array_like)
            }) =>
            {
                spec.tags
                    .iter()
                    .filter_map(|(_, variant)| match plan.node(*variant) {
                        Node::Record(record) => Some(record),
                        _ => None,
                    })
                    .collect()
            }
            _ => return Ok(None),
        };
        let py = self.ctx.py;
        let fields = PyDict::new(py);
        for record in records {
            for &index in &record.wire_fields {
                let field = &record.fields[index];
                let wire_key = field.wire_key.bind(py);
                if fields.contains(wire_key)? {
                    continue;
                }
                let name = field.name.bind(py);
                let found = match attribute(value, name, &field.wire_name)? {
                    Some(found) => Some(found),
                    None if field.wire_name != name.to_str()? => {
                        attribute(value, wire_key, &field.wire_name)?
                    }
                    None => None,
                };
                // A field that holds UNSET is left out, as `to_builtins` leaves it out of the
                // dict: it is then UNSET again (its default), not a value to validate.
                let unset = |found: &Obj<'py>| {
                    field.unset && plan.unset.as_ref().is_some_and(|unset| found.is(unset))
                };
                if let Some(found) = found.filter(|found| !unset(found)) {
                    fields.set_item(wire_key, found)?;
                }
            }
        }
        Ok(Some(fields))
    }

    /// A dict as a `Dict` or `Any` node: keys are str (read as JSON reads object keys) or, as
    /// only Python input can give, values of the key type.
    fn read_dict(
        &mut self,
        key_node: NodeId,
        value_node: NodeId,
        dict_node: NodeId,
        entries: Cursor<'py>,
    ) -> Result<Obj<'py>> {
        let Cursor::Dict { dict: input, .. } = entries else {
            return Err(Error::decode(
                Code::DecodeError,
                "internal error: from_builtins read a dict as a list",
            ));
        };
        let py = self.ctx.py;
        let dict = PyDict::new(py);
        let mark = self.errors.count();
        let mut position = 0;
        while let Some((key, value)) = py::next_entry(&input, &mut position) {
            let read = match key.cast::<PyString>() {
                Ok(text) => {
                    let text = py::str_utf8(text)?;
                    dict_key(&self.ctx, key_node, text.as_bytes(), text.is_ascii())
                        .map_err(|e| e.at_key(text))
                }
                Err(_) => {
                    let shown = crate::errors::shown_key(key.as_any());
                    self.reader.next = Some(key.clone());
                    self.value(key_node).map_err(|e| e.at_key(&shown))
                }
            };
            let key_object = match read {
                Ok(key_object) => key_object,
                Err(mut e) if E::ALL && e.is_recorded(py) => {
                    // Recorded at the key, the key its input; its value is not read.
                    e.set_input(key.unbind());
                    self.record_error(e)?;
                    continue;
                }
                Err(e) => return Err(e),
            };
            self.reader.next = Some(value);
            let (start, before) = (self.value_start(), self.errors.count());
            let value = match self.value(value_node) {
                Ok(value) => value,
                Err(e) => {
                    let shown = crate::errors::shown_key(key_object.as_any());
                    if E::ALL {
                        self.keep_going(e, before, start, PathSegment::key(&shown))?;
                        continue;
                    }
                    return Err(e.at_key(&shown));
                }
            };
            dict.set_item(key_object, value)?;
        }
        if let Some(failed) = self.failed_since(mark) {
            return Err(failed);
        }
        self.ctx.check_length(dict_node, dict.len())?;
        Ok(dict.into_any())
    }
}

impl<'p, 'py, E: Errors> WireReader<'p, 'py> for Decoder<'p, 'py, ObjectInput<'py>, E> {
    const NAME: &'static str = "input";
    type Left = Cursor<'py>;

    fn value(&mut self, id: NodeId) -> Result<Obj<'py>> {
        if self.ctx.plan.reads_node_first {
            match self.ctx.plan.node(id) {
                Node::Extension(spec) => return self.extension(spec),
                Node::Raw { nullable } => return self.raw(*nullable),
                _ => {}
            }
        }
        let value = self.take_next()?;
        if value.is_instance_of::<PyString>() {
            return self.string(id, value);
        }
        if value.is_none() {
            return self.ctx.null(id);
        }
        if let Ok(flag) = value.cast::<PyBool>() {
            return self.ctx.boolean(id, flag.is_true());
        }
        if value.is_instance_of::<PyInt>() {
            return self.int(id, &value);
        }
        let value = match value.cast_into::<PyDict>() {
            Ok(dict) => return nested(self.depth, || self.map(id, Cursor::dict(dict))),
            Err(err) => err.into_inner(),
        };
        let value = match value.cast_into::<PyList>() {
            Ok(list) => return nested(self.depth, || self.array(id, Cursor::list(list))),
            Err(err) => err.into_inner(),
        };
        // After dict and list (both one flag test each): a float check that fails calls
        // PyType_IsSubtype.
        if let Ok(float) = value.cast::<PyFloat>() {
            let number = float.value();
            // Lax mode takes NaN and the infinities as its text "nan" and "inf" (and as
            // msgspec's convert takes these objects); strict mode reads what JSON holds.
            if !number.is_finite() && self.ctx.strict {
                return Err(Error::validation(
                    Code::FiniteNumber,
                    format_args!(
                        "expected a finite number, got {number} (JSON numbers are finite)"
                    ),
                ));
            }
            return self.float(id, number, &value);
        }
        let value = match value.cast_into::<PyTuple>() {
            Ok(tuple) => return nested(self.depth, || self.array(id, Cursor::tuple(tuple))),
            Err(err) => err.into_inner(),
        };
        if self.reader.from_attributes {
            if let Some(fields) = self.attributes(id, &value)? {
                return nested(self.depth, || self.map(id, Cursor::dict(fields)));
            }
        }
        self.kept(id, value)
    }

    fn tag(&mut self, spec: &TaggedUnionSpec) -> Result<usize> {
        let value = self.take_next()?;
        if let Ok(text) = value.cast::<PyString>() {
            return find_tag(spec, TagRef::Str(py::str_utf8(text)?.as_bytes()));
        }
        if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
            if let Some(number) = py::int_as_i64(&value) {
                return find_tag(spec, TagRef::Int(number));
            }
            let digits = crate::codecs::json::encode::big_int_text(&value)?;
            return Err(big_int_tag(spec, &digits));
        }
        // What the JSON form of the value would be called, as the JSON decoder says it.
        let found = if value.is_none() {
            "null".to_owned()
        } else if value.is_instance_of::<PyBool>() {
            "bool".to_owned()
        } else if value.is_instance_of::<PyFloat>() {
            "float".to_owned()
        } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
            "array".to_owned()
        } else if value.is_instance_of::<PyDict>() {
            "object".to_owned()
        } else {
            crate::py::type_name(&value)
        };
        Err(not_a_tag(&found))
    }

    #[inline]
    fn begin_map(&mut self, _entries: &mut Cursor<'py>) -> Result<()> {
        Ok(())
    }

    type Names = ();

    #[inline(always)]
    fn record_names(&self, _id: NodeId) {}

    #[inline]
    fn take_field(
        &mut self,
        entries: &mut Cursor<'py>,
        _names: (),
        _index: usize,
        field: &Field,
    ) -> bool {
        let Cursor::Dict {
            dict,
            position,
            left,
        } = entries
        else {
            return false;
        };
        // The key `to_builtins` writes is the plan's own str: matched by pointer first.
        let wire_key = field.wire_key.bind(self.ctx.py);
        match py::entry_named(dict, position, wire_key, &field.wire_name) {
            Some(value) => {
                *left = left.saturating_sub(1);
                self.reader.next = Some(value);
                true
            }
            None => false,
        }
    }

    fn next_key(&mut self, entries: &mut Cursor<'py>) -> Result<Option<&[u8]>> {
        let Cursor::Dict {
            dict,
            position,
            left,
        } = entries
        else {
            return Ok(None);
        };
        let Some((key, value)) = py::next_entry(dict, position) else {
            return Ok(None);
        };
        *left = left.saturating_sub(1);
        if !key.is_instance_of::<PyString>() {
            return Err(not_an_object_key(&key));
        }
        self.reader.next = Some(value);
        let key = self.reader.key.insert(key);
        let text = key.cast::<PyString>().map_err(PyErr::from)?;
        Ok(Some(py::str_utf8(text)?.as_bytes()))
    }

    fn dict(
        &mut self,
        key_node: NodeId,
        value_node: NodeId,
        dict_node: NodeId,
        entries: Cursor<'py>,
    ) -> Result<Obj<'py>> {
        self.read_dict(key_node, value_node, dict_node, entries)
    }

    #[inline]
    fn begin_array(&mut self, _items: &mut Cursor<'py>) -> Result<()> {
        Ok(())
    }

    #[inline]
    fn next_item(&mut self, items: &mut Cursor<'py>) -> Result<bool> {
        let (item, index, left) = match items {
            Cursor::List { list, index, left } => (py::list_item(list, *index), index, left),
            // Past the end is `None`, not an IndexError raised and discarded.
            Cursor::Tuple { tuple, index, left } => (
                py::tuple_item_borrowed(tuple, *index).map(|item| item.to_owned()),
                index,
                left,
            ),
            Cursor::Dict { .. } => return Ok(false),
        };
        *index += 1;
        *left = left.saturating_sub(1);
        match item {
            Some(item) => {
                self.reader.next = Some(item);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    #[inline]
    fn count_left(left: &Cursor<'py>) -> Option<usize> {
        Some(left.left())
    }

    /// `from_builtins` fails where and as decoding the equivalent JSON fails.
    const TUPLE_LENGTH_FIRST: bool = false;

    fn begin_many(&mut self) -> Result<Cursor<'py>> {
        let value = self.take_next()?;
        match value.cast_into::<PyList>() {
            Ok(list) => Ok(Cursor::list(list)),
            Err(_) => Err(Error::validation(
                Code::ListType,
                "expected a list of values",
            )),
        }
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }

    fn skip(&mut self) -> Result<()> {
        self.reader.next = None;
        Ok(())
    }

    /// A mark for the value to be read next, to come back to it with `rewind`.
    fn offset(&self) -> usize {
        let mut marks = self.reader.marks.borrow_mut();
        // No room: a mark that finds nothing (the failed value's input is then None).
        if marks.try_reserve(1).is_err() {
            return usize::MAX;
        }
        marks.push(self.reader.next.clone());
        marks.len() - 1
    }

    fn rewind(&mut self, offset: usize) {
        self.reader.next = self.reader.marks.borrow().get(offset).cloned().flatten();
    }

    const READS_OBJECTS: bool = true;

    /// The object itself (read as `Any`, an object of a kept type or one read by its
    /// attributes would be refused): nothing is left to move past.
    fn failed_value(&mut self, start: usize, _any: NodeId) -> Result<Obj<'py>> {
        self.reader.next = None;
        let marked = self.reader.marks.borrow().get(start).cloned().flatten();
        Ok(marked.unwrap_or_else(|| self.ctx.py.None().into_bound(self.ctx.py)))
    }

    fn location(&self) -> String {
        String::new()
    }
}
