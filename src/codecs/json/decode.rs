//! The JSON side of the shared decoder (`codecs/decoder.rs`): the value dispatch on the next
//! token (through each node's precomputed [`Plain`] shortcut first), strings (base64 for
//! bytes), numbers, object keys matched against each field's precomputed `"name":` bytes
//! (packed in the [`PlainTable`]), and dict keys read out of strings.

use pyo3::prelude::*;

use super::read::{MemberWord, Number, Reader, SyntaxError, ValueKind};
use super::TagEntries;
use crate::codecs::decoder::{find_tag, reserve_items, Decoder, Errors, TagRef, WireReader};
use crate::errors::{Code, Error, PathSegment, Result};
use crate::plan::{
    Field, FloatBounds, IntBounds, LiteralValue, Node, NodeId, Plan, TaggedUnionSpec, TzRule,
    Untyped,
};
use crate::py::{self, temporal, Obj};
use crate::values::{check_tz, nested, utf8, Decoding, Token, MAX_DEPTH};
use polycodec_formats::text;
use polycodec_formats::text::lax::{self, LaxNumber};

/// What the JSON decoder reads: the input, and the codec's precomputed tag entries and
/// per-node [`Plain`] shortcuts (with the records' field keys).
pub struct JsonInput<'a, 'k> {
    reader: Reader<'a>,
    tags: &'k TagEntries,
    plain: &'k PlainTable,
}

impl<'a, 'k> JsonInput<'a, 'k> {
    pub fn new(input: &'a [u8], tags: &'k TagEntries, plain: &'k PlainTable) -> Self {
        JsonInput {
            reader: Reader::new(input),
            tags,
            plain,
        }
    }
}

/// What a node takes from its value's first byte with nothing to check but the token (see
/// [`Plain`]), or `Other`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PlainKind {
    /// A union or an extension type: the node's own path (`value_node`) takes every value.
    Node,
    /// Any other node: an object or array is read as the node's map or array at once, the
    /// rest by the node's own path.
    Other,
    /// An unconstrained str.
    Str,
    /// An int without bounds.
    Int,
    /// A float without bounds.
    Float,
    Bool,
    Null,
    DateTime(TzRule),
    Date,
    /// An unconstrained Decimal.
    Decimal,
    /// A Decimal whose constraints are `max_digits` or `decimal_places` only (no bounds):
    /// checked on the text read.
    DecimalDigits,
    Time(TzRule),
    TimeDelta,
    /// A record read from an object (not array-like, not a NamedTuple).
    Record,
    /// An enum with str values: `aux` is where its values start in [`PlainTable::enum_values`].
    Enum,
    /// A record read from an array (`array_like`, a NamedTuple).
    Positional,
    /// `Any`: every value, read by the untyped loop ([`Decoder::any`]).
    Any,
    /// A `list[Any]` (see `Plan::untyped`): an array read by the untyped loop.
    AnyList,
    /// A `dict[str, Any]` or `dict[Any, Any]`: an object read by the untyped loop.
    AnyDict,
}

/// One node's shortcut for the value dispatch, looked up by node id in a table of 8-byte
/// entries instead of reading the node (224 bytes, its union's variants, their constraints):
/// `Optional[X]` is `X`'s kind with `nullable`, and `node` is `X`'s id.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Plain {
    kind: PlainKind,
    nullable: bool,
    node: u32,
    /// What the kind keeps besides (an enum's values).
    aux: u32,
}

/// Every node's [`Plain`] shortcut, by node id, and what they refer to.
pub struct PlainTable {
    nodes: Box<[Plain]>,
    /// The str values of every enum node, packed (one scan of a few adjacent bytes instead of
    /// one heap string per member): at an enum's `aux`, the index of its first member in
    /// `enum_members` (4 bytes, little-endian) and the value count (1 byte), then each value's
    /// length (1 byte) and bytes.
    enum_values: Box<[u8]>,
    /// The members of those values, in the same order.
    enum_members: Box<[Py<PyAny>]>,
    /// Every record node's field members `,"wire_name":` (see [`super::member`]), packed: from
    /// the record's `aux` on, field `i`'s member is the span `record_spans[aux + i]` of
    /// `record_bytes`. A record's keys then sit in a few adjacent cache lines, found from the
    /// entry the value dispatch has just read.
    record_spans: Box<[(u32, u32)]>,
    record_bytes: Box<[u8]>,
    /// The same members as [`MemberWord`]s, indexed as `record_spans`.
    record_words: Box<[MemberWord]>,
}

/// One record's packed field members (see [`PlainTable::record_spans`]).
#[derive(Clone, Copy)]
pub struct RecordMembers<'k> {
    spans: &'k [(u32, u32)],
    bytes: &'k [u8],
    words: &'k [MemberWord],
}

impl<'k> RecordMembers<'k> {
    /// Field `index`'s member (empty for a record the table could not pack).
    #[inline(always)]
    fn member(self, index: usize) -> &'k [u8] {
        match self.spans.get(index) {
            Some(&(start, end)) => self.bytes.get(start as usize..end as usize).unwrap_or(&[]),
            None => &[],
        }
    }

    /// Field `index`'s member as one word (length 0 when it has none).
    #[inline(always)]
    fn word(self, index: usize) -> Option<&'k MemberWord> {
        self.words.get(index)
    }
}

impl PlainTable {
    /// The member of enum values at `aux` whose value is `text`.
    #[inline]
    fn enum_member(&self, aux: u32, text: &[u8]) -> Option<&Py<PyAny>> {
        let values = self.enum_values.get(aux as usize..)?;
        let (head, mut rest) = values.split_at_checked(5)?;
        let base = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        for position in 0..usize::from(head[4]) {
            let (&len, tail) = rest.split_first()?;
            let (value, tail) = tail.split_at_checked(usize::from(len))?;
            if value == text {
                return self.enum_members.get(base + position);
            }
            rest = tail;
        }
        None
    }
}

/// The codec's [`PlainTable`] for `plan`.
pub fn plain_table(py: Python<'_>, plan: &Plan) -> PlainTable {
    let mut record_spans = Vec::new();
    let mut record_bytes = Vec::new();
    // Each record node's members packed once (`aux`), when they fit the packing.
    let record_aux: Vec<Option<u32>> = plan
        .nodes
        .iter()
        .map(|node| {
            let Node::Record(spec) = node else {
                return None;
            };
            let aux = u32::try_from(record_spans.len()).ok()?;
            let mut spans = Vec::new();
            let mut bytes = Vec::new();
            // A class tag's member after the fields' (`RecordSpec::tag_field`).
            for field in spec
                .fields
                .iter()
                .chain(spec.class_tag().map(|tag| &tag.field))
            {
                let start = u32::try_from(record_bytes.len() + bytes.len()).ok()?;
                bytes.extend_from_slice(&super::member(&field.wire_name));
                let end = u32::try_from(record_bytes.len() + bytes.len()).ok()?;
                spans.push((start, end));
            }
            record_spans.extend_from_slice(&spans);
            record_bytes.extend_from_slice(&bytes);
            Some(aux)
        })
        .collect();
    let mut enum_values = Vec::new();
    let mut enum_members = Vec::new();
    // Each enum node with str values packed once (`aux`), when its values fit the packing.
    let enum_aux: Vec<Option<u32>> = plan
        .nodes
        .iter()
        .map(|node| {
            let Node::Enum(spec) = node else { return None };
            let values: Vec<(&[u8], &Py<PyAny>)> = spec
                .members
                .iter()
                .filter_map(|m| match &m.value {
                    LiteralValue::Str(text) => Some((text.as_bytes(), &m.member)),
                    _ => None,
                })
                .collect();
            let count = u8::try_from(values.len()).ok()?;
            if count == 0 || values.iter().any(|(v, _)| v.len() > usize::from(u8::MAX)) {
                return None;
            }
            let aux = u32::try_from(enum_values.len()).ok()?;
            let base = u32::try_from(enum_members.len()).ok()?;
            enum_values.extend_from_slice(&base.to_le_bytes());
            enum_values.push(count);
            for (value, member) in values {
                enum_values.push(value.len() as u8);
                enum_values.extend_from_slice(value);
                enum_members.push(member.clone_ref(py));
            }
            Some(aux)
        })
        .collect();
    let kind_of = |node: &Node| match node {
        Node::Str(spec) if spec.is_unconstrained() => PlainKind::Str,
        Node::Int(bounds) if *bounds == IntBounds::default() => PlainKind::Int,
        Node::Float(bounds) if *bounds == FloatBounds::default() => PlainKind::Float,
        Node::Bool => PlainKind::Bool,
        Node::None => PlainKind::Null,
        Node::DateTime(rule) => PlainKind::DateTime(*rule),
        Node::Date => PlainKind::Date,
        Node::Time(rule) => PlainKind::Time(*rule),
        Node::TimeDelta => PlainKind::TimeDelta,
        Node::Decimal(spec) if !spec.is_constrained() => PlainKind::Decimal,
        Node::Decimal(spec) if spec.bounds.is_unbounded() => PlainKind::DecimalDigits,
        Node::Record(spec)
            if !spec.array_like && spec.kind != crate::plan::RecordKind::NamedTuple =>
        {
            PlainKind::Record
        }
        Node::Record(_) => PlainKind::Positional,
        Node::Enum(_) => PlainKind::Enum,
        Node::Union(_) | Node::Extension(_) | Node::Raw { .. } => PlainKind::Node,
        _ => PlainKind::Other,
    };
    let kind = |id: NodeId| match (plan.untyped(id), plan.node(id)) {
        (Some(Untyped::Any), _) => PlainKind::Any,
        (Some(Untyped::List), _) => PlainKind::AnyList,
        (Some(Untyped::StrDict | Untyped::AnyDict), _) => PlainKind::AnyDict,
        (None, node) => kind_of(node),
    };
    let entry = |kind: PlainKind, nullable: bool, node: NodeId| {
        // A node's own `aux` (an enum's values, a record's members, for every record: the
        // tagged-union and array paths take its members too).
        let aux = match plan.node(node) {
            Node::Enum(_) if kind == PlainKind::Enum => enum_aux[node],
            Node::Record(_) => record_aux[node],
            _ => Some(0),
        };
        match (u32::try_from(node), aux) {
            (Ok(node), Some(aux)) => Plain {
                kind,
                nullable,
                node,
                aux,
            },
            // Unpacked: no shortcut, and no members (`record_names` finds none).
            _ => Plain {
                kind: PlainKind::Node,
                nullable: false,
                node: 0,
                aux: u32::MAX,
            },
        }
    };
    let nodes = plan
        .nodes
        .iter()
        .enumerate()
        .map(|(id, node)| match node {
            Node::Union(spec) => match spec.optional_member() {
                Some(inner) => entry(kind(inner), true, inner),
                None => entry(PlainKind::Node, false, id),
            },
            _ => entry(kind(id), false, id),
        })
        .collect();
    let record_words = record_spans
        .iter()
        .map(|&(start, end)| {
            MemberWord::new(
                record_bytes
                    .get(start as usize..end as usize)
                    .unwrap_or(&[]),
            )
        })
        .collect();
    PlainTable {
        nodes,
        enum_values: enum_values.into_boxed_slice(),
        enum_members: enum_members.into_boxed_slice(),
        record_words,
        record_spans: record_spans.into_boxed_slice(),
        record_bytes: record_bytes.into_boxed_slice(),
    }
}

impl<'a> std::ops::Deref for JsonInput<'a, '_> {
    type Target = Reader<'a>;

    #[inline(always)]
    fn deref(&self) -> &Reader<'a> {
        &self.reader
    }
}

impl std::ops::DerefMut for JsonInput<'_, '_> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.reader
    }
}

#[cold]
fn syntax(err: SyntaxError) -> Error {
    if err.message == super::read::OUT_OF_MEMORY {
        return crate::errors::out_of_memory("an unescaped JSON string");
    }
    Error::decode(Code::JsonInvalid, format_args!("malformed JSON: {err}"))
}

/// [`text::temporal::canonical_utc`] as one function in the JSON decoder's hot section, which
/// both of [`Decoder::datetime`]'s tries call (the inlined copy was an out-of-section shim).
#[inline(never)]
#[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
fn canonical_utc(s: &[u8]) -> Option<text::temporal::DateTime> {
    text::temporal::canonical_utc(s)
}

impl<'p, 'py, E: Errors> Decoder<'p, 'py, JsonInput<'_, '_>, E> {
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn string(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let id = self.ctx.resolve(id, Token::Str)?;
        match self.ctx.plan.node(id) {
            Node::Bytes(spec) => return self.base64_bytes(spec),
            // Only in lax mode: a str the union's variants may take as a number, `null` or a
            // bool before its str variant does.
            Node::Union(spec) => return self.lax_union_string(spec),
            _ => {}
        }
        let text = self.reader.read_str().map_err(syntax)?;
        self.ctx.string(id, text.bytes, text.ascii)
    }

    /// Lax mode: a str for a union whose str variant is no plain `str` (see
    /// [`Decoding::lax_union_text`]); the str variant reads what no other variant takes.
    #[cold]
    #[inline(never)]
    fn lax_union_string(&mut self, spec: &crate::plan::UnionSpec) -> Result<Obj<'py>> {
        let text = self.reader.read_str().map_err(syntax)?;
        if let Some(value) = self.ctx.lax_union_text(spec, text.bytes)? {
            return Ok(value);
        }
        match spec
            .str
            .map(|variant| (variant, self.ctx.plan.node(variant)))
        {
            Some((_, Node::Bytes(bytes))) => base64_value(&self.ctx, bytes, text.bytes),
            Some((variant, _)) => self.ctx.string(variant, text.bytes, text.ascii),
            None => Err(crate::values::union_mismatch(
                self.ctx.plan,
                spec,
                Token::Str,
            )),
        }
    }

    /// The general path of a value starting with `byte`: the token's own reading, which words
    /// every error (kept out of `value`, whose direct paths then need a smaller frame).
    #[inline(never)]
    fn general(&mut self, id: NodeId, byte: Option<u8>) -> Result<Obj<'py>> {
        match byte {
            Some(b'"') => self.string(id),
            Some(b'-' | b'0'..=b'9') => self.number(id),
            Some(b'{') => nested(self.depth, || self.map(id, true)),
            Some(b'[') => nested(self.depth, || self.array(id, true)),
            Some(b't') => {
                self.reader.read_true().map_err(syntax)?;
                self.ctx.boolean(id, true)
            }
            Some(b'f') => {
                self.reader.read_false().map_err(syntax)?;
                self.ctx.boolean(id, false)
            }
            Some(b'n') => {
                self.reader.read_null().map_err(syntax)?;
                self.ctx.null(id)
            }
            _ => Err(syntax(self.reader.expected_value())),
        }
    }

    /// The next value as node `id` by the node itself, `byte` its first byte: the pairs the
    /// node's [`Plain`] shortcut does not take (kept out of line, so the shortcut's dispatch
    /// stays a few cache lines). The common remaining pairs (a constrained str or number, a
    /// union's variant for the token) are decoded here directly; every other pair takes the
    /// general path of the token, which words any error.
    /// Outside the hot section with [`Self::general`]: the shortcut takes the common values.
    #[inline(never)]
    fn value_node(&mut self, id: NodeId, byte: Option<u8>) -> Result<Obj<'py>> {
        let plan = self.ctx.plan;
        let py = self.ctx.py;
        match plan.node(id) {
            Node::DateTime(rule) if byte == Some(b'"') => return self.datetime(id, *rule),
            // One number read for both numeric nodes (one copy of the inlined reader).
            node @ (Node::Int(_) | Node::Float(_)) if matches!(byte, Some(b'-' | b'0'..=b'9')) => {
                let number = self.reader.read_number_peeked().map_err(syntax)?;
                let value = match (node, number) {
                    (Node::Int(bounds), Number::Int(value)) => {
                        bounds.check(value)?;
                        return Ok(crate::py::new_int(py, value)?);
                    }
                    (Node::Float(_), Number::Int(value)) => value as f64,
                    (Node::Float(_), Number::Float { value, .. }) if value.is_finite() => value,
                    (_, number) => return self.number_read(id, number),
                };
                if let Node::Float(bounds) = node {
                    bounds.check(value)?;
                }
                return Ok(crate::py::new_float(py, value)?);
            }
            Node::Bool => match byte {
                Some(b't') => {
                    self.reader.read_true().map_err(syntax)?;
                    return Ok(pyo3::types::PyBool::new(py, true).to_owned().into_any());
                }
                Some(b'f') => {
                    self.reader.read_false().map_err(syntax)?;
                    return Ok(pyo3::types::PyBool::new(py, false).to_owned().into_any());
                }
                _ => {}
            },
            Node::Union(spec) => match byte {
                Some(b'n') => {
                    if let Some(Node::None) = spec.none.map(|none| plan.node(none)) {
                        self.reader.read_null().map_err(syntax)?;
                        return Ok(py.None().into_bound(py));
                    }
                }
                // The variant for a str, object or array (chosen before the value is read, as
                // the general path does), decoded as that node. A union without one (an error,
                // or a lax str read as a number) takes the general path, which resolves it; so
                // does, in lax mode, a str whose variant is not a plain `str` (the text may
                // hold a number, `null` or a bool for another variant).
                Some(first @ (b'"' | b'{' | b'[')) => {
                    let variant = match first {
                        b'"' => spec.str,
                        b'{' => spec.object,
                        _ => spec.array,
                    };
                    if let Some(variant) = variant {
                        let node = plan.node(variant);
                        let lax_text = first == b'"' && !self.ctx.strict;
                        if !matches!(node, Node::Union(_) | Node::Extension(_))
                            && (!lax_text || matches!(node, Node::Str(_)))
                        {
                            return self.value(variant);
                        }
                    }
                }
                _ => {}
            },
            Node::Extension(spec) => return self.extension(spec),
            Node::Raw { nullable } => return self.raw(*nullable, byte),
            Node::Bytes(_) => {}
            // A str for any other node (the general path would resolve the node to itself and
            // read the same str): one copy of the inlined string reader for all of them.
            node => {
                if byte == Some(b'"') {
                    let text = self.reader.read_str_peeked().map_err(syntax)?;
                    if let Node::Str(spec) = node {
                        if spec.is_unconstrained() {
                            return Ok(crate::py::new_str(py, text.bytes, text.ascii)?);
                        }
                    }
                    return self.ctx.string(id, text.bytes, text.ascii);
                }
            }
        }
        self.general(id, byte)
    }

    /// An untyped value (`Any`), `byte` its first byte (the whitespace before it skipped): a
    /// loop of its own, which looks at no node. Every value is what the general path would
    /// make of it, with the same errors and paths.
    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn any(&mut self, byte: Option<u8>) -> Result<Obj<'py>> {
        let py = self.ctx.py;
        match byte {
            Some(b'"') => {
                let text = self.reader.read_str().map_err(syntax)?;
                Ok(crate::py::new_str(py, text.bytes, text.ascii)?)
            }
            Some(b'{') => nested(self.depth, || self.any_object()),
            Some(b'[') => nested(self.depth, || self.any_array()),
            Some(b'-' | b'0'..=b'9') => match self.reader.read_number_peeked().map_err(syntax)? {
                Number::Int(value) => Ok(crate::py::new_int(py, value)?),
                Number::Float { value, .. } if value.is_finite() => {
                    Ok(crate::py::new_float(py, value)?)
                }
                // A big int, or a float out of range (an error).
                number => self.number_read(self.ctx.plan.any, number),
            },
            Some(b't') => {
                self.reader.read_true().map_err(syntax)?;
                Ok(pyo3::types::PyBool::new(py, true).to_owned().into_any())
            }
            Some(b'f') => {
                self.reader.read_false().map_err(syntax)?;
                Ok(pyo3::types::PyBool::new(py, false).to_owned().into_any())
            }
            Some(b'n') => {
                self.reader.read_null().map_err(syntax)?;
                Ok(py.None().into_bound(py))
            }
            _ => Err(syntax(self.reader.expected_value())),
        }
    }

    /// An untyped array (its `[` next) as a list: the items go onto the decoder's item stack
    /// and the list is made once at its length.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn any_array(&mut self) -> Result<Obj<'py>> {
        self.enter()?;
        self.reader.begin_array().map_err(syntax)?;
        let base = self.stack.len();
        let mut first = true;
        loop {
            match self.reader.next_element(first) {
                Ok(true) => {}
                Ok(false) => break,
                Err(err) => {
                    self.stack.truncate(base);
                    return Err(syntax(err));
                }
            }
            first = false;
            let byte = self.reader.peek_byte();
            let item = match self.any(byte) {
                Ok(item) => item,
                Err(err) => {
                    let index = self.stack.len() - base;
                    self.stack.truncate(base);
                    return Err(err.at_index(index));
                }
            };
            if let Err(err) = reserve_items(&mut self.stack, 1) {
                self.stack.truncate(base);
                return Err(err);
            }
            self.stack.push(item);
        }
        let list = crate::py::new_list(self.ctx.py, self.stack.drain(base..))?;
        self.depth -= 1;
        Ok(list)
    }

    /// An untyped object (its `{` next) as a dict of str keys: keys and values go onto the
    /// item stack, and the dict is made once at its size (no resizes as it fills), from a
    /// template when its keys came before ([`crate::py::shapes`]).
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn any_object(&mut self) -> Result<Obj<'py>> {
        self.enter()?;
        self.reader.begin_object().map_err(syntax)?;
        let py = self.ctx.py;
        let base = self.stack.len();
        let mut first = true;
        loop {
            let key = match self.reader.next_key(first) {
                Ok(Some(key)) => crate::py::dict_key_str(py, key.bytes, key.ascii),
                Ok(None) => break,
                Err(err) => {
                    self.stack.truncate(base);
                    return Err(syntax(err));
                }
            };
            first = false;
            let key = match key {
                Ok(key) => key,
                Err(err) => {
                    self.stack.truncate(base);
                    return Err(err.into());
                }
            };
            let byte = self.reader.peek_byte();
            let value = match self.any(byte) {
                Ok(value) => value,
                Err(err) => {
                    self.stack.truncate(base);
                    return Err(err.at_key(&crate::errors::shown_key(&key)));
                }
            };
            if let Err(err) = reserve_items(&mut self.stack, 2) {
                self.stack.truncate(base);
                return Err(err);
            }
            self.stack.push(key);
            self.stack.push(value);
        }
        let dict = crate::py::shapes::dict_of_pairs(py, &mut self.stack, base)?;
        self.depth -= 1;
        Ok(dict)
    }

    /// A `Raw`: the next value's text, checked and kept as it is (`null` is None for an
    /// `Optional[Raw]`); `byte` is its first byte, the whitespace before it skipped.
    #[cold]
    #[inline(never)]
    fn raw(&mut self, nullable: bool, byte: Option<u8>) -> Result<Obj<'py>> {
        if nullable && byte == Some(b'n') {
            self.reader.read_null().map_err(syntax)?;
            return Ok(self.ctx.py.None().into_bound(self.ctx.py));
        }
        let start = self.reader.offset();
        self.reader
            .skip_value(MAX_DEPTH.saturating_sub(self.depth))
            .map_err(syntax)?;
        crate::raw::decoded(self.ctx.py, self.reader.taken_since(start))
    }

    /// A datetime node's string (the next byte is its quote).
    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn datetime(&mut self, id: NodeId, rule: crate::plan::TzRule) -> Result<Obj<'py>> {
        // The UTC forms polycodec and msgspec write are matched in place, unscanned (their
        // templates admit digits and `-T:.Z` only).
        let canonical = canonical_utc;
        let parts = match self.reader.take_str_of(27, canonical) {
            Some(parts) => parts,
            None => match self.reader.take_str_of(20, canonical) {
                Some(parts) => parts,
                None => {
                    let text = self.reader.read_str_peeked().map_err(syntax)?;
                    match text::temporal::parse_datetime(text.bytes) {
                        Ok(parts) => parts,
                        Err(error) => {
                            return lax_text(&self.ctx, id, text.bytes, text.ascii, error)
                        }
                    }
                }
            },
        };
        check_tz(rule, parts.offset_seconds.is_some(), "datetime")?;
        Ok(temporal::new_datetime(self.ctx.py, &parts)?)
    }

    /// A date node's string (the next byte is its quote), as [`Decoding::string`] reads it.
    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn date(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let text = self.reader.read_str_peeked().map_err(syntax)?;
        let parts = match text::temporal::parse_date(text.bytes) {
            Ok(parts) => parts,
            Err(error) => return lax_text(&self.ctx, id, text.bytes, text.ascii, error),
        };
        Ok(temporal::new_date(self.ctx.py, &parts)?)
    }

    /// A time node's string (the next byte is its quote), as [`Decoding::string`] reads it.
    #[inline(never)]
    fn time(&mut self, id: NodeId, rule: TzRule) -> Result<Obj<'py>> {
        let text = self.reader.read_str_peeked().map_err(syntax)?;
        let parts = match text::temporal::parse_time(text.bytes) {
            Ok(parts) => parts,
            Err(error) => return lax_text(&self.ctx, id, text.bytes, text.ascii, error),
        };
        check_tz(rule, parts.offset_seconds.is_some(), "time")?;
        Ok(temporal::new_time(self.ctx.py, &parts)?)
    }

    /// A timedelta node's string (the next byte is its quote), as [`Decoding::string`] reads
    /// it.
    #[inline(never)]
    fn timedelta(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let text = self.reader.read_str_peeked().map_err(syntax)?;
        match text::temporal::parse_duration(text.bytes) {
            Ok(parts) => Ok(temporal::new_timedelta(self.ctx.py, &parts)?),
            Err(error) => lax_text(&self.ctx, id, text.bytes, text.ascii, error),
        }
    }

    /// An unconstrained Decimal node's string (the next byte is its quote), as
    /// [`Decoding::string`] reads it.
    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn decimal(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let text = self.reader.read_str_peeked().map_err(syntax)?;
        match crate::py::new_decimal_from_bytes(self.ctx.py, text.bytes, text.ascii) {
            Ok(value) => Ok(value),
            // In lax mode an `Optional`'s reading may take `null`.
            Err(_) if !self.ctx.strict => self.ctx.string(id, text.bytes, text.ascii),
            Err(_) => Err(Error::validation(
                Code::DecimalParsing,
                format_args!(
                    "invalid decimal {}",
                    crate::errors::Quoted(utf8(text.bytes))
                ),
            )),
        }
    }

    /// A [`PlainKind::DecimalDigits`] node's string (`node`, reached from `id`; the next byte
    /// is its quote): read as [`Self::decimal`] reads it, then its digits and places checked on
    /// the text read, as [`Decoding::string`] checks them.
    #[inline(never)]
    fn decimal_digits(&mut self, id: NodeId, node: NodeId) -> Result<Obj<'py>> {
        let text = self.reader.read_str_peeked().map_err(syntax)?;
        let (Ok(value), Node::Decimal(spec)) = (
            crate::py::new_decimal_from_bytes(self.ctx.py, text.bytes, text.ascii),
            self.ctx.plan.node(node),
        ) else {
            // Not a decimal: the error (or, in lax mode, an `Optional`'s `null`) is the
            // general reading's.
            return self.ctx.string(id, text.bytes, text.ascii);
        };
        crate::values::check_decimal_digits(spec, &value, text.bytes)?;
        Ok(value)
    }

    /// Bytes, written in JSON as base64 text (kept out of `string`, the str hot path).
    #[inline(never)]
    fn base64_bytes(&mut self, spec: &crate::plan::BytesSpec) -> Result<Obj<'py>> {
        let text = self.reader.read_str().map_err(syntax)?;
        base64_value(&self.ctx, spec, text.bytes)
    }

    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn number(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let number = self.reader.read_number().map_err(syntax)?;
        self.number_read(id, number)
    }

    /// The number read, as node `id` asks.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn number_read(&mut self, id: NodeId, number: Number<'_>) -> Result<Obj<'py>> {
        match number {
            Number::Int(value) => self.ctx.int(id, value),
            Number::BigInt(text) => self.ctx.big_int(id, text),
            // JSON has no infinities: a literal too large for a float is out of range, not inf.
            Number::Float { text, value } if value.is_infinite() => {
                self.ctx.huge_float(id, utf8(text))
            }
            Number::Float { value, text } => self.ctx.float(id, value, Some(text)),
        }
    }
}

/// A str a shortcut could not read as its node (`id`, perhaps an `Optional`): in lax mode the
/// node's (or union's) own reading, which may take it as a number or `null`; the shortcut's
/// `error` in strict mode.
#[cold]
#[inline(never)]
fn lax_text<'py>(
    ctx: &Decoding<'_, 'py>,
    id: NodeId,
    bytes: &[u8],
    ascii: bool,
    error: text::temporal::TextError,
) -> Result<Obj<'py>> {
    if ctx.strict {
        return Err(Error::text(error));
    }
    ctx.string(id, bytes, ascii)
}

/// A bytes node's value from its base64 text (JSON's, and from_builtins' str).
pub(crate) fn base64_value<'py>(
    ctx: &Decoding<'_, 'py>,
    spec: &crate::plan::BytesSpec,
    text: &[u8],
) -> Result<Obj<'py>> {
    // Short values (a digest, a small blob) are decoded on the stack: no allocation, and one
    // copy, into the Python object.
    let mut small = [0u8; SMALL_BASE64];
    let mut large = Vec::new();
    let data = if text::base64::decoded_len_hint(text) <= SMALL_BASE64 {
        let length = text::base64::decode_to_slice(text, &mut small).map_err(Error::text)?;
        &small[..length]
    } else {
        crate::errors::reserve(&mut large, text.len() / 4 * 3 + 3, "base64-decoded bytes")?;
        text::base64::decode(text, &mut large).map_err(Error::text)?;
        &large[..]
    };
    spec.length
        .check(data.len(), crate::plan::LengthUnit::Bytes)?;
    Ok(spec.new_value(ctx.py, data)?)
}

/// The decoded length up to which [`base64_value`] decodes into a stack buffer.
const SMALL_BASE64: usize = 192;

/// JSON keys are strings: int-like key types read the number out of the text.
pub fn dict_key<'py>(
    ctx: &Decoding<'_, 'py>,
    id: NodeId,
    bytes: &[u8],
    ascii: bool,
) -> Result<Obj<'py>> {
    let wants_int = match ctx.plan.node(id) {
        Node::Int(_) => true,
        Node::Enum(spec) => spec.has_int_values() && !spec.has_str_values(),
        Node::Literal(spec) => spec
            .values
            .iter()
            .all(|(v, _)| matches!(v, LiteralValue::Int(_))),
        _ => false,
    };
    if !wants_int {
        return ctx.key_string(id, bytes, ascii);
    }
    let text = utf8(bytes);
    ctx.integer_text(id, text).unwrap_or_else(|| {
        // Lax mode: an integral float's text too ("1.0", "1e3"), as msgspec reads an int key.
        if let (false, Node::Int(_)) = (ctx.strict, ctx.plan.node(id)) {
            if let Some(LaxNumber::Float { value, .. }) = lax::number(bytes) {
                if lax::integral_float(value) {
                    return ctx.float(id, value, Some(bytes));
                }
            }
        }
        Err(Error::validation(
            Code::IntParsing,
            format_args!(
                "expected an integer key, got {}",
                crate::errors::Quoted(text)
            ),
        ))
    })
}

impl<'p, 'py, 'k, E: Errors> WireReader<'p, 'py> for Decoder<'p, 'py, JsonInput<'_, 'k>, E> {
    const NAME: &'static str = "JSON";
    /// Whether the first item or member is next.
    type Left = bool;

    /// The next value as node `id`. The node and the value's first byte are looked at once:
    /// the common pairs (a plain str, a datetime, an int, an optional's null, a union's variant
    /// for the token) are decoded here directly; every other pair takes the general path of the
    /// token, which words any error.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn value(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let byte = self.reader.peek_byte();
        if let Some(input) = self.replayed(id) {
            return Ok(input);
        }
        let py = self.ctx.py;
        // The node's shortcut first (an 8-byte entry): the common pairs of kind and first byte
        // are decoded without reading the node. Every other pair, and every error but the
        // token's own syntax, takes the node's path (`value_node`) with `id` itself.
        if let Some(&plain) = self.reader.plain.nodes.get(id) {
            let node = plain.node as NodeId;
            match (plain.kind, byte) {
                // Untyped values take their own loop (fail-fast only: collecting, the general
                // path records a value's errors where they are).
                (PlainKind::Any, _) if !E::ALL => return self.any(byte),
                (PlainKind::AnyDict, Some(b'{')) if !E::ALL => {
                    return nested(self.depth, || self.any_object());
                }
                (PlainKind::AnyList, Some(b'[')) if !E::ALL => {
                    return nested(self.depth, || self.any_array());
                }
                (PlainKind::Str | PlainKind::Enum, Some(b'"')) => {
                    let table: &PlainTable = self.reader.plain;
                    let text = self.reader.read_str_peeked().map_err(syntax)?;
                    if plain.kind == PlainKind::Str {
                        return Ok(crate::py::new_str(py, text.bytes, text.ascii)?);
                    }
                    if let Some(member) = table.enum_member(plain.aux, text.bytes) {
                        return Ok(member.bind(py).clone());
                    }
                    // Not one of the enum's values: the node's own reading words the error
                    // (in lax mode, an `Optional`'s reading, which may take `null`).
                    let node = if self.ctx.strict { node } else { id };
                    return self.ctx.string(node, text.bytes, text.ascii);
                }
                // One number read for both numeric kinds (one copy of the inlined reader).
                (PlainKind::Int | PlainKind::Float, Some(b'-' | b'0'..=b'9')) => {
                    let number = self.reader.read_number_peeked().map_err(syntax)?;
                    let value = match (plain.kind, number) {
                        (PlainKind::Int, Number::Int(value)) => {
                            return Ok(crate::py::new_int(py, value)?);
                        }
                        (PlainKind::Float, Number::Int(value)) => value as f64,
                        (PlainKind::Float, Number::Float { value, .. }) if value.is_finite() => {
                            value
                        }
                        (_, number) => return self.number_read(id, number),
                    };
                    return Ok(crate::py::new_float(py, value)?);
                }
                (PlainKind::Bool, Some(first @ (b't' | b'f'))) => {
                    let flag = first == b't';
                    if flag {
                        self.reader.read_true().map_err(syntax)?;
                    } else {
                        self.reader.read_false().map_err(syntax)?;
                    }
                    return Ok(pyo3::types::PyBool::new(py, flag).to_owned().into_any());
                }
                (PlainKind::DateTime(rule), Some(b'"')) => return self.datetime(id, rule),
                (PlainKind::Date, Some(b'"')) => return self.date(id),
                (PlainKind::Time(rule), Some(b'"')) => return self.time(id, rule),
                (PlainKind::TimeDelta, Some(b'"')) => return self.timedelta(id),
                (PlainKind::Decimal, Some(b'"')) => return self.decimal(id),
                (PlainKind::DecimalDigits, Some(b'"')) => return self.decimal_digits(id, node),
                (PlainKind::Record, Some(b'{')) => {
                    return nested(self.depth, || self.map(node, true));
                }
                (PlainKind::Positional, Some(b'[')) => {
                    return nested(self.depth, || self.positional(node, true));
                }
                // As the general path reads them (the map or array of `id`, which picks a
                // union's variant), without the node's own dispatch first.
                (PlainKind::Other | PlainKind::Any | PlainKind::AnyDict, Some(b'{')) => {
                    return nested(self.depth, || self.map(id, true));
                }
                (PlainKind::Other | PlainKind::Any | PlainKind::AnyList, Some(b'[')) => {
                    return nested(self.depth, || self.array(id, true));
                }
                (kind, Some(b'n')) if plain.nullable || kind == PlainKind::Null => {
                    self.reader.read_null().map_err(syntax)?;
                    return Ok(py.None().into_bound(py));
                }
                _ => {}
            }
        }
        self.value_node(id, byte)
    }

    /// A tag's value: a str or an int.
    fn tag(&mut self, spec: &TaggedUnionSpec) -> Result<usize> {
        match self.reader.peek_kind().map_err(syntax)? {
            ValueKind::String => {
                let text = self.reader.read_str().map_err(syntax)?;
                find_tag(spec, TagRef::Str(text.bytes))
            }
            ValueKind::Number => match self.reader.read_number().map_err(syntax)? {
                Number::Int(value) => find_tag(spec, TagRef::Int(value)),
                Number::BigInt(digits) => Err(crate::codecs::decoder::big_int_tag(spec, digits)),
                Number::Float { .. } => Err(crate::codecs::decoder::not_a_tag("float")),
            },
            ValueKind::True | ValueKind::False => Err(crate::codecs::decoder::not_a_tag("bool")),
            ValueKind::Null => Err(crate::codecs::decoder::not_a_tag("null")),
            ValueKind::Array => Err(crate::codecs::decoder::not_a_tag("array")),
            ValueKind::Object => Err(crate::codecs::decoder::not_a_tag("object")),
        }
    }

    #[inline(always)]
    fn begin_map(&mut self, _first: &mut bool) -> Result<()> {
        self.reader.begin_object().map_err(syntax)
    }

    /// The record's precomputed `,"name":` members, packed (see
    /// [`PlainTable::record_spans`]).
    type Names = RecordMembers<'k>;

    #[inline(always)]
    fn record_names(&self, id: NodeId) -> Self::Names {
        let plain: &'k PlainTable = self.reader.plain;
        let aux = plain
            .nodes
            .get(id)
            .map_or(usize::MAX, |entry| entry.aux as usize);
        RecordMembers {
            spans: plain.record_spans.get(aux..).unwrap_or(&[]),
            bytes: &plain.record_bytes,
            words: plain.record_words.get(aux..).unwrap_or(&[]),
        }
    }

    #[inline(always)]
    fn take_field(
        &mut self,
        first: &mut bool,
        names: Self::Names,
        index: usize,
        _field: &Field,
    ) -> bool {
        if let Some(word) = names.word(index) {
            if let Some(taken) = self.reader.take_member_word(*first, word) {
                if taken {
                    *first = false;
                }
                return taken;
            }
        }
        let member = names.member(index);
        if member.is_empty() {
            return false;
        }
        let taken = self.reader.take_member(*first, member);
        if taken {
            *first = false;
        }
        taken
    }

    const TAKE_AHEAD: bool = true;

    /// The next 16 bytes of input compared with each field's member word in turn, loaded
    /// once (a field whose member is longer, or none matching, leaves the key to the caller).
    #[inline(never)]
    fn take_ahead(
        &mut self,
        first: &mut bool,
        names: Self::Names,
        spec: &crate::plan::RecordSpec,
        from: usize,
    ) -> Option<usize> {
        let ahead = spec.wire_order.get(from..)?;
        let words = ahead
            .iter()
            .map(|&(index, _)| names.word(index).copied().unwrap_or_default());
        let step = self.reader.take_member_words(*first, words)?;
        *first = false;
        Some(from + step)
    }

    /// The object's closing brace is next.
    #[inline(always)]
    fn map_done(&mut self, _first: &bool) -> bool {
        self.reader.peek_byte() == Some(b'}')
    }

    /// The whole `"tag_field":"tag"` entry of one of the union's str tags, compared as bytes.
    #[inline(always)]
    fn take_tag(&mut self, first: &mut bool, id: NodeId, _spec: &TaggedUnionSpec) -> Option<usize> {
        let entries = self.reader.tags.get(id)?;
        for (position, entry) in entries.iter().enumerate() {
            if let Some(entry) = entry {
                if self.reader.take_member(*first, entry) {
                    *first = false;
                    return Some(position);
                }
            }
        }
        None
    }

    #[inline(always)]
    fn next_key(&mut self, first: &mut bool) -> Result<Option<&[u8]>> {
        // The object's end, the common case here (the fields came in order), without a call.
        if self.reader.take_byte(b'}') {
            *first = false;
            return Ok(None);
        }
        let key = self.reader.next_key(*first).map_err(syntax)?;
        *first = false;
        Ok(key.map(|key| key.bytes))
    }

    fn dict(
        &mut self,
        key_node: NodeId,
        value_node: NodeId,
        dict_node: NodeId,
        _first: bool,
    ) -> Result<Obj<'py>> {
        self.reader.begin_object().map_err(syntax)?;
        let py = self.ctx.py;
        let dict = crate::py::new_dict(py)?;
        let mark = self.errors.count();
        // Decided once per dict, not per entry: whether a key is a plain str (from the key
        // cache) and whether storing an entry can run Python code.
        let plain_keys = crate::values::plain_str_key(self.ctx.plan, key_node);
        let builtin_entries = self.ctx.builtin_entries(key_node, value_node);
        let mut first = true;
        loop {
            let key = self.reader.next_key(first).map_err(syntax)?;
            first = false;
            let Some(key) = key else { break };
            let key_object = match if plain_keys {
                crate::py::dict_key_str(py, key.bytes, key.ascii).map_err(Error::from)
            } else {
                dict_key(&self.ctx, key_node, key.bytes, key.ascii)
            } {
                Ok(key_object) => key_object,
                Err(e) if E::ALL => {
                    // Recorded at the key, the key its input; its value is skipped.
                    let mut e = e.at_key(key.text());
                    e.set_input(crate::py::new_str(py, key.bytes, key.ascii)?.unbind());
                    self.record_error(e)?;
                    self.skip()?;
                    continue;
                }
                Err(e) => return Err(e.at_key(key.text())),
            };
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
            if builtin_entries {
                crate::py::dict_set(&dict, &key_object, &value)?;
            } else {
                py::user_code(py, || crate::py::dict_set(&dict, &key_object, &value))?;
            }
        }
        if let Some(failed) = self.failed_since(mark) {
            return Err(failed);
        }
        self.ctx.check_length(dict_node, dict.len())?;
        Ok(dict.into_any())
    }

    #[inline(always)]
    fn begin_array(&mut self, _first: &mut bool) -> Result<()> {
        self.reader.begin_array().map_err(syntax)
    }

    #[inline(always)]
    fn next_item(&mut self, first: &mut bool) -> Result<bool> {
        let more = self.reader.next_element(*first).map_err(syntax)?;
        *first = false;
        Ok(more)
    }

    /// JSON learns a container's length only at its closing bracket or brace.
    #[inline(always)]
    fn count_left(_first: &bool) -> Option<usize> {
        None
    }

    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn begin_many(&mut self) -> Result<bool> {
        if self.reader.peek_kind().map_err(syntax)? != ValueKind::Array {
            return Err(Error::validation(
                Code::ListType,
                "expected array of values for decode_many, got another JSON value",
            ));
        }
        self.reader.begin_array().map_err(syntax)?;
        Ok(true)
    }

    /// Only whitespace may follow.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn finish(&mut self) -> Result<()> {
        self.reader.finish().map_err(syntax)
    }

    fn skip(&mut self) -> Result<()> {
        self.reader
            .skip_value(MAX_DEPTH.saturating_sub(self.depth))
            .map_err(syntax)
    }

    fn offset(&self) -> usize {
        self.reader.offset()
    }

    fn rewind(&mut self, offset: usize) {
        self.reader.rewind(offset);
    }

    fn value_offset(&mut self) -> usize {
        self.reader.peek_byte();
        self.reader.offset()
    }
}
