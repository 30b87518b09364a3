//! The direct walk behind `from_builtins`: the node and the input object are looked at
//! together, so the common shapes (records from dicts, lists, tagged unions, str, int and
//! float values that are their own result) skip the shared decoder's reader protocol (a
//! pending value, cursors, one call per key and per item). Every other value is handed to the
//! shared decoder ([`WireReader::value`]) at once, which is the reference for every rule.
//!
//! The walk never reports an error itself: on anything it would refuse it gives up ([`Bail`]),
//! and `from_builtins` runs the shared decoder over the whole value instead, which raises the
//! error with its path. It runs only for plans whose decoding runs no Python code with side
//! effects (`Plan::decode_is_pure`), so reading a value twice is invisible.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString};
use smallvec::SmallVec;

use super::decode::ObjectInput;
use crate::codecs::decoder::{find_tag, set_tag, tag_field, variant, Decoder, TagRef, WireReader};
use crate::plan::constraints::{FloatBounds, IntBounds};
use crate::plan::{
    DictSpec, DirectField, DirectKind, EnumSpec, LiteralValue, Node, NodeId, RecordKind,
    RecordSpec, SequenceKind, SequenceSpec, StrSpec, TaggedUnionSpec, TzRule, Untyped,
};
use crate::py::builders::ListFill;
use crate::py::{self, temporal, Obj};
use crate::values::{check_tz, nested, Decoding, RecordBuilder, Token, MAX_DEPTH};
use polycodec_formats::text;

/// The walk gave up: the shared decoder reads the whole value again.
pub struct Bail;

/// Whether `value`, met at nesting `depth`, is already what reading it as `Any` gives: an
/// exact str, int, bool or None, a finite exact float, or an exact list or dict (of exact str
/// keys) of such values, at most [`MAX_DEPTH`] levels deep. Reading it would make an equal
/// object of the same types, so the object itself is the result (its keys are the input's
/// strs, equal to the cached ones reading makes). No Python code runs meanwhile, so the
/// containers keep their items while they are looked at.
fn is_untyped_result(value: &Bound<'_, PyAny>, depth: usize) -> bool {
    py::json_shape::is_json_value(value, depth)
}

type Out<'py> = std::result::Result<Obj<'py>, Bail>;

impl<'p, 'py> Decoder<'p, 'py, ObjectInput<'py>> {
    /// Value `value` as node `id`: first what the node expects (one type test in the common
    /// case), then by the value's type.
    pub fn direct(&mut self, id: NodeId, value: &Bound<'py, PyAny>) -> Out<'py> {
        let plan = self.ctx.plan;
        match plan.node(id) {
            Node::Str(spec) => {
                if let Ok(text) = value.cast_exact::<PyString>() {
                    if spec.is_unconstrained() || str_fits(spec, text) {
                        return Ok(value.clone());
                    }
                }
            }
            Node::Int(bounds) if value.is_exact_instance_of::<PyInt>() => {
                if let Some(number) = py::int_as_i64(value) {
                    if *bounds == IntBounds::default() || bounds.check(number).is_ok() {
                        return Ok(value.clone());
                    }
                }
            }
            Node::Float(bounds) => {
                if let Ok(float) = value.cast_exact::<PyFloat>() {
                    let number = float.value();
                    if number.is_finite()
                        && (*bounds == FloatBounds::default() || bounds.check(number).is_ok())
                    {
                        return Ok(value.clone());
                    }
                }
            }
            Node::Bool if value.is_exact_instance_of::<PyBool>() => return Ok(value.clone()),
            Node::Record(spec) if !spec.array_like && spec.kind != RecordKind::NamedTuple => {
                if let Ok(dict) = value.cast::<PyDict>() {
                    return self.level(|walk| walk.direct_record(spec, dict, None, 0));
                }
            }
            Node::TaggedUnion(spec) => {
                if let Ok(dict) = value.cast::<PyDict>() {
                    return self.level(|walk| walk.direct_tagged(spec, dict));
                }
            }
            Node::Record(spec)
                if (spec.array_like && spec.kind == RecordKind::Dataclass
                    || spec.kind == RecordKind::NamedTuple && spec.tuple_new)
                    && spec.tag.is_none()
                    && spec.class_tag().is_none() =>
            {
                if let Ok(list) = value.cast::<PyList>() {
                    return self.level(|walk| walk.direct_positional(spec, list));
                }
            }
            // Containers other than a list of records, out of line for the same reason.
            // Untyped containers first: in JSON form already, they are returned as themselves.
            Node::Sequence(_) | Node::Dict(_) if plan.untyped(id).is_some() => {
                if let Some(kind) = plan.untyped(id) {
                    return self.untyped(id, kind, value);
                }
            }
            Node::Dict(spec) => return self.dict_value(id, spec, value),
            Node::Sequence(spec) if spec.kind != SequenceKind::List => {
                return self.collection_value(id, spec, value)
            }
            Node::Tuple(items) => return self.tuple_value(id, items, value),
            Node::Time(rule) => return self.time_str(id, *rule, value),
            Node::TimeDelta => return self.timedelta_str(id, value),
            // The str forms JSON reads them from, without the shared conversion's dispatch;
            // out of line, as their locals would otherwise widen the stack frame that every
            // nesting level keeps live.
            Node::DateTime(rule) => return self.datetime_str(id, *rule, value),
            Node::Date => return self.date_str(id, value),
            Node::Enum(spec) => return self.enum_str(id, spec, value),
            Node::Uuid => return self.uuid_str(id, value),
            Node::Literal(_) | Node::Decimal(_) => return self.other_str(id, value),
            Node::Any => return self.untyped(id, Untyped::Any, value),
            _ => {}
        }
        self.by_type(id, value)
    }

    /// An untyped value (`Any`, or a `list[Any]` or `dict[str, Any]` node `id` of `kind`):
    /// the object itself when it is already what reading it gives (see [`is_untyped_result`]),
    /// as `msgspec.convert` hands it back; else by its type, which copies its containers.
    #[inline(never)]
    fn untyped(&mut self, id: NodeId, kind: Untyped, value: &Bound<'py, PyAny>) -> Out<'py> {
        let shape = py::builtin(value);
        let fits = match kind {
            Untyped::Any => true,
            Untyped::List => shape == py::Builtin::List,
            Untyped::StrDict | Untyped::AnyDict => shape == py::Builtin::Dict,
        };
        if fits && is_untyped_result(value, self.depth) {
            return Ok(value.clone());
        }
        self.by_type(id, value)
    }

    /// [`Self::direct`] for a datetime node.
    #[inline(never)]
    fn datetime_str(&mut self, id: NodeId, rule: TzRule, value: &Bound<'py, PyAny>) -> Out<'py> {
        if let Ok(text) = value.cast_exact::<PyString>() {
            return self.datetime_text(rule, text);
        }
        self.by_type(id, value)
    }

    /// A datetime from its str form.
    #[inline(never)]
    fn datetime_text(&self, rule: TzRule, text: &Bound<'py, PyString>) -> Out<'py> {
        let text = py::str_utf8(text).map_err(|_| Bail)?;
        let parts = text::temporal::parse_datetime(text.as_bytes()).map_err(|_| Bail)?;
        check_tz(rule, parts.offset_seconds.is_some(), "datetime").map_err(|_| Bail)?;
        temporal::new_datetime(self.ctx.py, &parts).map_err(|_| Bail)
    }

    /// [`Self::direct`] for a date node.
    #[inline(never)]
    fn date_str(&mut self, id: NodeId, value: &Bound<'py, PyAny>) -> Out<'py> {
        if let Ok(text) = value.cast_exact::<PyString>() {
            return self.date_text(text);
        }
        self.by_type(id, value)
    }

    /// A date from its str form.
    #[inline(never)]
    fn date_text(&self, text: &Bound<'py, PyString>) -> Out<'py> {
        let text = py::str_utf8(text).map_err(|_| Bail)?;
        let parts = text::temporal::parse_date(text.as_bytes()).map_err(|_| Bail)?;
        temporal::new_date(self.ctx.py, &parts).map_err(|_| Bail)
    }

    /// [`Self::direct`] for a time node.
    #[inline(never)]
    fn time_str(&mut self, id: NodeId, rule: TzRule, value: &Bound<'py, PyAny>) -> Out<'py> {
        if let Ok(text) = value.cast_exact::<PyString>() {
            return self.time_text(rule, text);
        }
        self.by_type(id, value)
    }

    /// A time from its str form.
    #[inline(never)]
    fn time_text(&self, rule: TzRule, text: &Bound<'py, PyString>) -> Out<'py> {
        let text = py::str_utf8(text).map_err(|_| Bail)?;
        let parts = text::temporal::parse_time(text.as_bytes()).map_err(|_| Bail)?;
        check_tz(rule, parts.offset_seconds.is_some(), "time").map_err(|_| Bail)?;
        temporal::new_time(self.ctx.py, &parts).map_err(|_| Bail)
    }

    /// [`Self::direct`] for a timedelta node.
    #[inline(never)]
    fn timedelta_str(&mut self, id: NodeId, value: &Bound<'py, PyAny>) -> Out<'py> {
        if let Ok(text) = value.cast_exact::<PyString>() {
            return self.timedelta_text(text);
        }
        self.by_type(id, value)
    }

    /// A timedelta from its str form (ISO 8601; a lax number of seconds is the shared
    /// decoder's).
    #[inline(never)]
    fn timedelta_text(&self, text: &Bound<'py, PyString>) -> Out<'py> {
        let text = py::str_utf8(text).map_err(|_| Bail)?;
        let parts = text::temporal::parse_duration(text.as_bytes()).map_err(|_| Bail)?;
        temporal::new_timedelta(self.ctx.py, &parts).map_err(|_| Bail)
    }

    /// [`Self::direct`] for a dict node: a dict whose keys are exact strs, for a node whose keys
    /// are plain strs, is read entry by entry, each key its own result (the shared decoder makes
    /// an equal str of its text); any other value or key type is the shared decoder's.
    #[inline(never)]
    fn dict_value(&mut self, id: NodeId, spec: &DictSpec, value: &Bound<'py, PyAny>) -> Out<'py> {
        let str_keys =
            matches!(self.ctx.plan.node(spec.key), Node::Str(key) if key.is_unconstrained());
        if let (Ok(dict), true) = (value.cast::<PyDict>(), str_keys) {
            return self.level(|walk| walk.direct_dict(spec, dict));
        }
        self.by_type(id, value)
    }

    /// A dict's entries as node `spec`'s keys (plain strs) and values, into a dict made at
    /// its size.
    fn direct_dict(&mut self, spec: &DictSpec, dict: &Bound<'py, PyDict>) -> Out<'py> {
        let length = dict.len();
        if spec
            .length
            .check(length, crate::plan::LengthUnit::Items)
            .is_err()
        {
            return Err(Bail);
        }
        let out = py::builders::presized_dict(self.ctx.py, length).map_err(|_| Bail)?;
        let value_node = spec.value;
        let mut position = 0;
        while let Some((key, value)) = py::next_entry_borrowed(dict, &mut position) {
            // Hashing an exact str runs no Python code; a subclass's `__hash__` might.
            if !key.is_exact_instance_of::<PyString>() {
                return Err(Bail);
            }
            let value = self.direct(value_node, &value)?;
            py::dict_set(&out, &key, &value).map_err(|_| Bail)?;
        }
        Ok(out.into_any())
    }

    /// [`Self::direct`] for a set, frozenset or variable-length tuple node: its items from a
    /// list (the form `to_builtins` writes), read as the node's items.
    #[inline(never)]
    fn collection_value(
        &mut self,
        id: NodeId,
        spec: &SequenceSpec,
        value: &Bound<'py, PyAny>,
    ) -> Out<'py> {
        if let Ok(list) = value.cast::<PyList>() {
            if spec
                .length
                .check(list.len(), crate::plan::LengthUnit::Items)
                .is_err()
            {
                return Err(Bail);
            }
            return self.level(|walk| walk.direct_collection(spec, list));
        }
        self.by_type(id, value)
    }

    /// A list's items as a collection of node `spec`.
    fn direct_collection(&mut self, spec: &SequenceSpec, list: &Bound<'py, PyList>) -> Out<'py> {
        let items = self.direct_items(spec.item, list)?;
        let py = self.ctx.py;
        match spec.kind {
            SequenceKind::VarTuple => py::new_tuple(py, items.into_iter())
                .map(Bound::into_any)
                .map_err(|_| Bail),
            // Hashing an item may be Python code (an enum member's `__hash__`), with no side
            // effect the walk could repeat.
            SequenceKind::Set => py::user_code(py, || PySet::new(py, items))
                .map(Bound::into_any)
                .map_err(|_| Bail),
            SequenceKind::FrozenSet => py::user_code(py, || PyFrozenSet::new(py, items))
                .map(Bound::into_any)
                .map_err(|_| Bail),
            SequenceKind::List => Err(Bail),
        }
    }

    /// A list's items, each read as node `item`.
    fn direct_items(
        &mut self,
        item: NodeId,
        list: &Bound<'py, PyList>,
    ) -> Result<SmallVec<[Obj<'py>; 16]>, Bail> {
        let length = list.len();
        let mut items = SmallVec::new();
        items.try_reserve(length).map_err(|_| Bail)?;
        for index in 0..length {
            // No Python code runs while the walk reads, so the list keeps its length.
            let Some(value) = py::list_item_borrowed(list, index) else {
                return Err(Bail);
            };
            items.push(self.direct(item, &value)?);
        }
        Ok(items)
    }

    /// [`Self::direct`] for a fixed-length tuple node: a list of exactly its length.
    #[inline(never)]
    fn tuple_value(&mut self, id: NodeId, nodes: &[NodeId], value: &Bound<'py, PyAny>) -> Out<'py> {
        if let Ok(list) = value.cast::<PyList>() {
            if list.len() != nodes.len() {
                return Err(Bail);
            }
            return self.level(|walk| {
                let mut items: SmallVec<[Obj<'py>; 8]> = SmallVec::new();
                for (index, &node) in nodes.iter().enumerate() {
                    let Some(value) = py::list_item_borrowed(list, index) else {
                        return Err(Bail);
                    };
                    items.push(walk.direct(node, &value)?);
                }
                py::new_tuple(walk.ctx.py, items.into_iter())
                    .map(Bound::into_any)
                    .map_err(|_| Bail)
            });
        }
        self.by_type(id, value)
    }

    /// [`Self::direct`] for an enum node.
    #[inline(never)]
    fn enum_str(&mut self, id: NodeId, spec: &EnumSpec, value: &Bound<'py, PyAny>) -> Out<'py> {
        if let Ok(text) = value.cast_exact::<PyString>() {
            return self.enum_text(spec, text);
        }
        self.by_type(id, value)
    }

    /// The member of enum `spec` whose value is the text of `text`.
    #[inline(never)]
    fn enum_text(&self, spec: &EnumSpec, text: &Bound<'py, PyString>) -> Out<'py> {
        let text = py::str_utf8(text).map_err(|_| Bail)?;
        match spec.by_str(text.as_bytes()) {
            Some(member) => Ok(member.bind(self.ctx.py).clone()),
            None => Err(Bail),
        }
    }

    /// [`Self::direct`] for a UUID node.
    #[inline(never)]
    fn uuid_str(&mut self, id: NodeId, value: &Bound<'py, PyAny>) -> Out<'py> {
        if let Ok(text) = value.cast_exact::<PyString>() {
            return self.uuid_text(text);
        }
        self.by_type(id, value)
    }

    /// A UUID from its str form.
    #[inline(never)]
    fn uuid_text(&self, text: &Bound<'py, PyString>) -> Out<'py> {
        let text = py::str_utf8(text).map_err(|_| Bail)?;
        let value = text::uuid::parse_uuid(text.as_bytes()).map_err(|_| Bail)?;
        py::new_uuid(self.ctx.py, value).map_err(|_| Bail)
    }

    /// [`Self::direct`] for a Literal or Decimal node.
    #[inline(never)]
    fn other_str(&mut self, id: NodeId, value: &Bound<'py, PyAny>) -> Out<'py> {
        if let Ok(text) = value.cast_exact::<PyString>() {
            return self.other_text(id, text);
        }
        self.by_type(id, value)
    }

    /// A Literal or Decimal (node `id`) from its str form.
    #[inline(never)]
    fn other_text(&self, id: NodeId, text: &Bound<'py, PyString>) -> Out<'py> {
        let text = py::str_utf8(text).map_err(|_| Bail)?;
        self.ctx
            .string(id, text.as_bytes(), text.is_ascii())
            .map_err(|_| Bail)
    }

    /// Value `value` as node `id`, by the value's type.
    #[inline(never)]
    fn by_type(&mut self, id: NodeId, value: &Bound<'py, PyAny>) -> Out<'py> {
        let plan = self.ctx.plan;
        // Exact str, int, float and None values are their own result where the node takes
        // them as they are (as the shared decoder returns them).
        if let Ok(text) = value.cast_exact::<PyString>() {
            let Ok(id) = self.ctx.resolve(id, Token::Str) else {
                return Err(Bail);
            };
            return match plan.node(id) {
                Node::Str(spec) if spec.is_unconstrained() => Ok(value.clone()),
                Node::Any => Ok(value.clone()),
                // Base64 and the kept types are the shared decoder's.
                Node::Bytes(_) => self.shared(id, value.clone()),
                _ => {
                    let text = py::str_utf8(text).map_err(|_| Bail)?;
                    self.ctx
                        .string(id, text.as_bytes(), text.is_ascii())
                        .map_err(|_| Bail)
                }
            };
        }
        if value.is_none() {
            let Ok(id) = self.ctx.resolve(id, Token::Null) else {
                return Err(Bail);
            };
            return match plan.node(id) {
                Node::None | Node::Any => Ok(value.clone()),
                _ => Err(Bail),
            };
        }
        if value.is_exact_instance_of::<PyBool>() {
            let Ok(id) = self.ctx.resolve(id, Token::Bool) else {
                return Err(Bail);
            };
            return match plan.node(id) {
                Node::Bool | Node::Any => Ok(value.clone()),
                _ => self.shared(id, value.clone()),
            };
        }
        if value.is_exact_instance_of::<PyInt>() {
            let Ok(id) = self.ctx.resolve(id, Token::Int) else {
                return Err(Bail);
            };
            if let Node::Int(bounds) = plan.node(id) {
                if let Some(number) = py::int_as_i64(value) {
                    if *bounds == IntBounds::default() || bounds.check(number).is_ok() {
                        return Ok(value.clone());
                    }
                }
            }
            return self.shared(id, value.clone());
        }
        if let Ok(float) = value.cast_exact::<PyFloat>() {
            let Ok(id) = self.ctx.resolve(id, Token::Float) else {
                return Err(Bail);
            };
            if let Node::Float(bounds) = plan.node(id) {
                let number = float.value();
                if number.is_finite()
                    && (*bounds == FloatBounds::default() || bounds.check(number).is_ok())
                {
                    return Ok(value.clone());
                }
            }
            return self.shared(id, value.clone());
        }
        if value.is_instance_of::<PyDict>() {
            let dict = value.cast::<PyDict>().map_err(|_| Bail)?;
            {
                let Ok(id) = self.ctx.resolve(id, Token::Object) else {
                    return Err(Bail);
                };
                return match plan.node(id) {
                    Node::Record(spec)
                        if !spec.array_like && spec.kind != RecordKind::NamedTuple =>
                    {
                        self.level(|walk| walk.direct_record(spec, dict, None, 0))
                    }
                    Node::TaggedUnion(spec) => self.level(|walk| walk.direct_tagged(spec, dict)),
                    _ => self.shared(id, value.clone()),
                };
            }
        }
        if value.is_instance_of::<PyList>() {
            let list = value.cast::<PyList>().map_err(|_| Bail)?;
            {
                let Ok(id) = self.ctx.resolve(id, Token::Array) else {
                    return Err(Bail);
                };
                return match plan.node(id) {
                    Node::Sequence(spec) if spec.kind == SequenceKind::List => {
                        if spec
                            .length
                            .check(list.len(), crate::plan::LengthUnit::Items)
                            .is_err()
                        {
                            return Err(Bail);
                        }
                        self.level(|walk| walk.direct_list(spec.item, list))
                    }
                    _ => self.shared(id, value.clone()),
                };
            }
        }
        self.shared(id, value.clone())
    }

    /// The shared decoder's reading of `value` as node `id`.
    #[inline(never)]
    fn shared(&mut self, id: NodeId, value: Obj<'py>) -> Out<'py> {
        self.reader.set_next(value);
        self.value(id).map_err(|_| Bail)
    }

    /// One more level of nesting, as the shared decoder counts them.
    #[inline(always)]
    fn level(&mut self, read: impl FnOnce(&mut Self) -> Out<'py>) -> Out<'py> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Bail);
        }
        let result = nested(self.depth - 1, || read(self));
        self.depth -= 1;
        result
    }

    /// A list's items as node `item`, into a list of the same length.
    fn direct_list(&mut self, item: NodeId, list: &Bound<'py, PyList>) -> Out<'py> {
        let length = list.len();
        let mut out = ListFill::new(self.ctx.py, length).map_err(|_| Bail)?;
        for index in 0..length {
            // No Python code runs while the walk reads, so the list keeps its length.
            let Some(value) = py::list_item_borrowed(list, index) else {
                return Err(Bail);
            };
            let value = self.direct(item, &value)?;
            out.push(value).map_err(|_| Bail)?;
        }
        out.filled().map(Bound::into_any).ok_or(Bail)
    }

    /// A dict's entries as a record's fields. With `tag`, the variant's tag (at that position
    /// in the union's tags) was read from the entry before dict position `tag_end`, which is
    /// skipped; `early` is where the entries the shared decoder reads before knowing the
    /// variant end (0 when the tag came first).
    ///
    /// Keys and values are matched through the record's [`DirectField`] table (small entries
    /// in wire order), so a field whose value is a common leaf reads neither its `Field` nor
    /// its node.
    fn direct_record(
        &mut self,
        spec: &RecordSpec,
        dict: &Bound<'py, PyDict>,
        tag: Option<(&TaggedUnionSpec, usize, isize)>,
        early: isize,
    ) -> Out<'py> {
        let py = self.ctx.py;
        let table = &*spec.direct;
        if table.len() != spec.wire_fields.len() {
            return Err(Bail);
        }
        let mut builder = RecordBuilder::new(spec);
        let mut skip = -1;
        if let Some((union, tag, tag_end)) = tag {
            start_variant(&self.ctx, spec, &union.tags[tag].0, &mut builder)?;
            skip = tag_end;
        }
        let mut hint = 0;
        let mut position = 0;
        while let Some((key, value)) = py::next_entry_borrowed(dict, &mut position) {
            if position == skip {
                continue;
            }
            // Keys `to_builtins` wrote (or literal and `json.loads` keys, often interned) are
            // the plan's own str: matched by pointer first.
            let found = match table.get(hint) {
                Some(entry) if entry.key == key.as_ptr() as usize => hint,
                _ => match find_field(spec, &key, hint, tag.map(|(union, _, _)| union), early)? {
                    Some(found) => found,
                    None => {
                        // Before the tag, the shared decoder reads a key another variant knows
                        // with that variant's node, which may refuse the value; a class tag or
                        // an alias is the shared decoder's to read.
                        if spec.forbid_unknown_fields
                            || position < early
                            || spec.class_tag().is_some()
                            || !spec.aliases().is_empty()
                        {
                            return Err(Bail);
                        }
                        continue;
                    }
                },
            };
            hint = found + 1;
            let entry = &table[found];
            let value = self.field(spec, entry, &value)?;
            builder.set(entry.index as usize, value);
        }
        finish(py, builder, spec)
    }

    /// Value `value` of the field `entry` of record `spec`: the common leaves here, by the
    /// entry's kind, the rest (and every value the kind does not take) by the field's node.
    #[inline(always)]
    fn field(
        &mut self,
        spec: &RecordSpec,
        entry: &DirectField,
        value: &Bound<'py, PyAny>,
    ) -> Out<'py> {
        let node = entry.node as NodeId;
        // The commonest kind first, without the jump on the kind.
        if entry.kind == DirectKind::Str && value.is_exact_instance_of::<PyString>() {
            return Ok(value.clone());
        }
        if entry.nullable && value.is_none() {
            return Ok(value.clone());
        }
        match entry.kind {
            DirectKind::Other => return self.direct(node, value),
            DirectKind::Str => {}
            DirectKind::StrBounded => {
                if let (Ok(text), Node::Str(spec)) =
                    (value.cast_exact::<PyString>(), self.ctx.plan.node(node))
                {
                    if str_fits(spec, text) {
                        return Ok(value.clone());
                    }
                }
            }
            DirectKind::Int => {
                if value.is_exact_instance_of::<PyInt>() && py::int_as_i64(value).is_some() {
                    return Ok(value.clone());
                }
            }
            DirectKind::IntBounded => {
                if let (true, Node::Int(bounds)) = (
                    value.is_exact_instance_of::<PyInt>(),
                    self.ctx.plan.node(node),
                ) {
                    if py::int_as_i64(value).is_some_and(|number| bounds.check(number).is_ok()) {
                        return Ok(value.clone());
                    }
                }
            }
            DirectKind::Float => {
                if let Ok(float) = value.cast_exact::<PyFloat>() {
                    if float.value().is_finite() {
                        return Ok(value.clone());
                    }
                }
            }
            DirectKind::Bool => {
                if value.is_exact_instance_of::<PyBool>() {
                    return Ok(value.clone());
                }
            }
            DirectKind::DateTime(rule) => {
                if let Ok(text) = value.cast_exact::<PyString>() {
                    return self.datetime_text(rule, text);
                }
            }
            DirectKind::Date => {
                if let Ok(text) = value.cast_exact::<PyString>() {
                    return self.date_text(text);
                }
            }
            DirectKind::Enum => {
                if let (Ok(text), Node::Enum(spec)) =
                    (value.cast_exact::<PyString>(), self.ctx.plan.node(node))
                {
                    return self.enum_text(spec, text);
                }
            }
            DirectKind::Uuid => {
                if let Ok(text) = value.cast_exact::<PyString>() {
                    return self.uuid_text(text);
                }
            }
            DirectKind::Text | DirectKind::Literal => {
                if let Ok(text) = value.cast_exact::<PyString>() {
                    return self.other_text(node, text);
                }
            }
            DirectKind::Record => {
                if let (Ok(dict), Node::Record(spec)) =
                    (value.cast::<PyDict>(), self.ctx.plan.node(node))
                {
                    return self.level(|walk| walk.direct_record(spec, dict, None, 0));
                }
            }
            DirectKind::Tagged => {
                if let (Ok(dict), Node::TaggedUnion(spec)) =
                    (value.cast::<PyDict>(), self.ctx.plan.node(node))
                {
                    return self.level(|walk| walk.direct_tagged(spec, dict));
                }
            }
            DirectKind::List => {
                if let Ok(list) = value.cast::<PyList>() {
                    return self.level(|walk| walk.direct_list(node, list));
                }
            }
        }
        self.direct(spec.fields[entry.index as usize].node, value)
    }

    /// An `array_like` record (no tag) from a list of its fields in wire order, each read
    /// through the record's [`DirectField`] table; trailing fields left out take their
    /// defaults, as the shared decoder's positional reading gives them.
    fn direct_positional(&mut self, spec: &RecordSpec, list: &Bound<'py, PyList>) -> Out<'py> {
        let table = &*spec.direct;
        let length = list.len();
        if table.len() != spec.wire_fields.len() || length > table.len() {
            return Err(Bail);
        }
        let mut builder = RecordBuilder::new(spec);
        for (index, entry) in table.iter().enumerate().take(length) {
            // No Python code runs while the walk reads, so the list keeps its length.
            let Some(value) = py::list_item_borrowed(list, index) else {
                return Err(Bail);
            };
            let value = self.field(spec, entry, &value)?;
            builder.set(entry.index as usize, value);
        }
        finish(self.ctx.py, builder, spec)
    }

    /// A tagged union's dict: its tag entry wherever it is, then the variant's fields from the
    /// other entries.
    fn direct_tagged(&mut self, spec: &TaggedUnionSpec, dict: &Bound<'py, PyDict>) -> Out<'py> {
        let plan = self.ctx.plan;
        let py = self.ctx.py;
        let Some((_, _, field)) = tag_field(plan, spec) else {
            return Err(Bail);
        };
        let tag_key = field.wire_key.bind(py);
        // The dicts of one input mostly put the tag at one position: the entry there is tried
        // first, by the pointer of its key (the plan's own str, as `to_builtins` writes it).
        // The entries before it are then checked as the record's fields are read (see
        // `find_field`): a key with the tag's text, or not an exact str, gives up.
        let hint = self.reader.tag_hint;
        let mut position = hint;
        let (tag, tag_end, first) = match py::next_entry_borrowed(dict, &mut position) {
            Some((key, value)) if key.is(tag_key) => {
                (self.direct_tag(spec, &value)?, position, hint == 0)
            }
            _ => {
                let (value, end, first) = scan_tag(spec, tag_key, dict)?;
                self.reader.tag_hint = end - 1;
                (self.direct_tag(spec, &value)?, end, first)
            }
        };
        let (_, record) = variant(plan, spec, tag);
        let early = if first { 0 } else { tag_end };
        self.direct_record(record, dict, Some((spec, tag, tag_end)), early)
    }
}

impl<'p, 'py> Decoder<'p, 'py, ObjectInput<'py>> {
    /// The position in `spec.tags` of the tag `value`: an exact str's text is looked up at
    /// once, any other value is the shared decoder's (`WireReader::tag`, which reads a str the
    /// same way).
    #[inline(always)]
    fn direct_tag(
        &mut self,
        spec: &TaggedUnionSpec,
        value: &Bound<'py, PyAny>,
    ) -> Result<usize, Bail> {
        if let Ok(text) = value.cast_exact::<PyString>() {
            let text = py::str_utf8(text).map_err(|_| Bail)?;
            return find_tag(spec, TagRef::Str(text.as_bytes())).map_err(|_| Bail);
        }
        self.reader.set_next(value.clone());
        self.tag(spec).map_err(|_| Bail)
    }
}

/// The first entry of `dict` whose key is the tag key `tag_key` (the object itself or any str
/// of its text): its value, the dict position after it, and whether it came first. Gives up
/// when there is none, or when it does not come first and a key is not an exact str.
#[inline(never)]
fn scan_tag<'py>(
    spec: &TaggedUnionSpec,
    tag_key: &Bound<'py, PyString>,
    dict: &Bound<'py, PyDict>,
) -> Result<(Obj<'py>, isize, bool), Bail> {
    let mut position = 0;
    let mut first = true;
    let (tag_value, tag_end) = loop {
        let Some((key, value)) = py::next_entry(dict, &mut position) else {
            return Err(Bail);
        };
        let is_tag = key.is(tag_key)
            || key
                .cast::<PyString>()
                .is_ok_and(|key| py::str_utf8(key).is_ok_and(|key| key == spec.tag_field));
        if is_tag {
            break (value, position);
        }
        // The shared decoder reads entries before the tag in an order of its own; that
        // order shows only when two keys name one field, which takes a str subclass.
        if !key.is_exact_instance_of::<PyString>() {
            return Err(Bail);
        }
        first = false;
    };
    if !first {
        // As above, for the entries after the tag.
        let mut rest = tag_end;
        while let Some((key, _)) = py::next_entry(dict, &mut rest) {
            if !key.is_exact_instance_of::<PyString>() {
                return Err(Bail);
            }
        }
    }
    Ok((tag_value, tag_end, first))
}

// Out of line, so that their locals stay out of the stack frame that every nesting level of
// the walk (`direct_record` calls `direct`, which calls `direct_record`) keeps live.

/// The position in `spec.wire_fields` of the field whose wire key has the text of `key`
/// (a key that is not the plan's own str), searching from `hint`.
///
/// In a tagged union's variant (`union`), a key with the tag field's text gives up (the walk
/// found the tag entry by the pointer of its key, so such a key may be the entry the shared
/// decoder takes for the tag), and so does a key that is not an exact str when the tag did not
/// come first (`early` > 0: the shared decoder's reading order shows for such keys).
#[inline(never)]
fn find_field(
    spec: &RecordSpec,
    key: &Bound<'_, PyAny>,
    hint: usize,
    union: Option<&TaggedUnionSpec>,
    early: isize,
) -> Result<Option<usize>, Bail> {
    let Ok(text) = key.cast::<PyString>() else {
        return Err(Bail);
    };
    if early > 0 && !key.is_exact_instance_of::<PyString>() {
        return Err(Bail);
    }
    let text = py::str_utf8(text).map_err(|_| Bail)?;
    if union.is_some_and(|union| union.tag_field == text) {
        return Err(Bail);
    }
    Ok(spec.find_wire_field(text.as_bytes(), hint))
}

/// Whether the exact str `text` passes the length bounds of `spec` (which has no pattern) as
/// it is: only a compact ASCII str is judged here (its length is its character count); any
/// other str, or a spec with a pattern, goes the shared way.
#[inline(always)]
fn str_fits(spec: &StrSpec, text: &Bound<'_, PyString>) -> bool {
    spec.pattern.is_none()
        && py::ascii_len(text).is_some_and(|length| {
            spec.length
                .check(length, crate::plan::LengthUnit::Characters)
                .is_ok()
        })
}

/// The record built from the fields read.
#[inline(never)]
fn finish<'py>(py: Python<'py>, builder: RecordBuilder<'py>, spec: &RecordSpec) -> Out<'py> {
    builder.finish(py, spec).map_err(|_| Bail)
}

/// Sets the tag field of a union's variant record.
#[inline(never)]
fn start_variant<'py>(
    ctx: &Decoding<'_, 'py>,
    spec: &RecordSpec,
    tag: &LiteralValue,
    builder: &mut RecordBuilder<'py>,
) -> Result<(), Bail> {
    set_tag(ctx, spec, tag, builder).map_err(|_| Bail)
}
