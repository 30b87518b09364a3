//! The MessagePack side of the shared decoder (`codecs/decoder.rs`): the value dispatch on the
//! next head, with shortcuts for the common pairs of head and node. Scalars are turned into
//! Python values by the shared rules in `crate::values`; this file adds what is MessagePack's
//! own (bin, the timestamp extension, typed map keys).

use pyo3::prelude::*;
use pyo3::types::PyBool;

use super::epoch;
use super::read::{self, Head, ReadError, Reader, ShortEntry};
use crate::codecs::decoder::{
    big_int_tag, find_tag, not_a_tag, reserve_items, Decoder, Errors, TagRef, WireReader,
};
use crate::codecs::encoder::NameTable;
use crate::errors::{Code, Error, PathSegment, Result};
use crate::plan::{
    Field, FloatBounds, IntBounds, Node, NodeId, Plan, TaggedUnionSpec, TzRule, Untyped,
};
use crate::py::{self, temporal, Obj};
use crate::values::{nested, Token, MAX_DEPTH};
use polycodec_formats::text;

/// What the MessagePack decoder reads: the input, and what the codec precomputed from the plan:
/// the name entries (each field name's whole str, a fixed tag's whole leading entry), matched
/// as bytes, the same field names as [`ShortEntry`] words, and each node's [`Plain`] shortcut.
pub struct MsgpackInput<'a, 'k> {
    reader: Reader<'a>,
    names: &'k NameTable,
    short: &'k [Box<[ShortEntry]>],
    plain: &'k [Plain],
}

impl<'a, 'k> MsgpackInput<'a, 'k> {
    pub fn new(input: &'a [u8], tables: &'k DecodeTables) -> Self {
        MsgpackInput {
            reader: Reader::new(input),
            names: &tables.names,
            short: &tables.short,
            plain: &tables.plain,
        }
    }
}

/// What the codec precomputes for decoding: the name table it shares with the encoder, each
/// record's field name entries as [`ShortEntry`] words (by node id, then field index, as the
/// table's members), and each node's [`Plain`] shortcut.
pub struct DecodeTables {
    pub names: NameTable,
    short: Box<[Box<[ShortEntry]>]>,
    plain: Box<[Plain]>,
}

impl DecodeTables {
    pub fn new(plan: &Plan, names: NameTable) -> Self {
        let short = (0..plan.nodes.len())
            .map(|id| {
                let members = names.record(id).members;
                members.iter().map(|entry| ShortEntry::new(entry)).collect()
            })
            .collect();
        DecodeTables {
            short,
            plain: plain_table(plan),
            names,
        }
    }
}

/// The scalar a node takes with nothing to check but the head's type (see
/// [`Decoder::plain`]), or `Other`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PlainKind {
    Other,
    Str,
    Int,
    Float,
    Bool,
    Null,
    /// An aware (or either) datetime: the timestamp extension.
    Timestamp,
    /// A type read out of a str with no constraint to check but a Decimal's digits and places:
    /// an enum with str values, a date, a UUID, a Decimal without bounds (its digits and places
    /// checked on the text; see [`Decoder::text`]).
    Text,
    /// `Any`: every value, read by the untyped loop ([`Decoder::any`]).
    Any,
    /// A `list[Any]` (see `Plan::untyped`): an array read by the untyped loop.
    AnyList,
    /// A `dict[str, Any]`: a map of str keys read by the untyped loop.
    StrDict,
    /// A `dict[Any, Any]`: a map read by the untyped loop.
    AnyDict,
}

/// One node's shortcut, looked up by node id: `Optional[X]` is `X`'s kind with `nullable`,
/// and `node` is `X`'s id.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Plain {
    kind: PlainKind,
    nullable: bool,
    node: NodeId,
}

/// Every node's [`Plain`] shortcut, by node id: one byte pair read per value instead of the
/// node, its union's variants and their constraints.
pub fn plain_table(plan: &Plan) -> Box<[Plain]> {
    let kind_of = |node: &Node| match node {
        Node::Str(spec) if spec.is_unconstrained() => PlainKind::Str,
        Node::Int(bounds) if *bounds == IntBounds::default() => PlainKind::Int,
        Node::Float(bounds) if *bounds == FloatBounds::default() => PlainKind::Float,
        Node::Bool => PlainKind::Bool,
        Node::None => PlainKind::Null,
        Node::DateTime(TzRule::Either | TzRule::Aware) => PlainKind::Timestamp,
        Node::Enum(spec) if spec.has_str_values() => PlainKind::Text,
        Node::Date | Node::Uuid | Node::Time(_) | Node::TimeDelta => PlainKind::Text,
        Node::Decimal(spec) if spec.bounds.is_unbounded() => PlainKind::Text,
        _ => PlainKind::Other,
    };
    let kind = |id: NodeId| match plan.untyped(id) {
        Some(Untyped::Any) => PlainKind::Any,
        Some(Untyped::List) => PlainKind::AnyList,
        Some(Untyped::StrDict) => PlainKind::StrDict,
        Some(Untyped::AnyDict) => PlainKind::AnyDict,
        None => kind_of(plan.node(id)),
    };
    plan.nodes
        .iter()
        .enumerate()
        .map(|(id, node)| match node {
            Node::Union(spec) => match spec.optional_member() {
                Some(inner) => Plain {
                    kind: kind(inner),
                    nullable: true,
                    node: inner,
                },
                None => Plain {
                    kind: PlainKind::Other,
                    nullable: false,
                    node: id,
                },
            },
            _ => Plain {
                kind: kind(id),
                nullable: false,
                node: id,
            },
        })
        .collect()
}

impl<'a> std::ops::Deref for MsgpackInput<'a, '_> {
    type Target = Reader<'a>;

    #[inline(always)]
    fn deref(&self) -> &Reader<'a> {
        &self.reader
    }
}

impl std::ops::DerefMut for MsgpackInput<'_, '_> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.reader
    }
}

#[cold]
fn malformed(err: ReadError) -> Error {
    Error::decode(
        Code::MsgpackInvalid,
        format_args!("malformed MessagePack: {err}"),
    )
}

/// A str payload checked as UTF-8; returns whether it is all ASCII.
#[inline]
fn check_utf8(bytes: &[u8]) -> Result<bool> {
    if bytes.is_ascii() {
        return Ok(true);
    }
    match std::str::from_utf8(bytes) {
        Ok(_) => Ok(false),
        Err(_) => Err(Error::decode(
            Code::MsgpackInvalid,
            "malformed MessagePack: str is not valid UTF-8",
        )),
    }
}

#[cold]
fn malformed_timestamp() -> Error {
    Error::decode(
        Code::MsgpackInvalid,
        "malformed MessagePack: invalid timestamp extension payload",
    )
}

/// A timestamp extension's payload as an aware UTC datetime.
fn timestamp_datetime<'py>(py: Python<'py>, payload: &[u8]) -> Result<Obj<'py>> {
    let (seconds, nanoseconds) = read::timestamp(payload).ok_or_else(malformed_timestamp)?;
    let parts = epoch::from_timestamp(seconds, nanoseconds).ok_or_else(|| {
        Error::validation(
            Code::DatetimeRange,
            format_args!("timestamp {seconds}s is out of range for a datetime (years 1-9999)"),
        )
    })?;
    Ok(temporal::new_datetime(py, &parts)?)
}

fn expected(code: Code, what: &str, got: &str) -> Error {
    Error::validation(code, format_args!("expected {what}, got {got}"))
}

impl<'a, 'p, 'py, E: Errors> Decoder<'p, 'py, MsgpackInput<'a, '_>, E> {
    #[inline(always)]
    fn head(&mut self, id: NodeId, head: Head<'a>) -> Result<Obj<'py>> {
        if let Some(value) = self.plain(id, &head) {
            return Ok(value);
        }
        // Untyped values take their own loop (fail-fast only: collecting, the general path
        // records a value's errors where they are).
        if !E::ALL {
            if let Some(&plain) = self.reader.plain.get(id) {
                match (plain.kind, head) {
                    (PlainKind::Any, head) => return self.any(head),
                    (PlainKind::AnyList, Head::Array(count)) => {
                        return nested(self.depth, || self.any_list(count));
                    }
                    (PlainKind::StrDict | PlainKind::AnyDict, Head::Map(count)) => {
                        let key = match self.ctx.plan.node(plain.node) {
                            Node::Dict(spec) => spec.key,
                            _ => self.ctx.plan.any,
                        };
                        let any_keys = plain.kind == PlainKind::AnyDict;
                        return nested(self.depth, || self.any_map(key, any_keys, count));
                    }
                    _ => {}
                }
            }
        }
        self.general(id, head)
    }

    /// An untyped value (`Any`) from its head: a loop of its own, which looks at no node.
    /// Every value is what the general path would make of it, with the same errors and paths.
    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.4msgpack")]
    fn any(&mut self, head: Head<'a>) -> Result<Obj<'py>> {
        let py = self.ctx.py;
        match head {
            Head::Str(bytes) => {
                let ascii = check_utf8(bytes)?;
                Ok(py::new_str(py, bytes, ascii)?)
            }
            Head::Int(value) => Ok(py::new_int(py, value)?),
            Head::Map(count) => {
                let key = self.ctx.plan.any;
                nested(self.depth, || self.any_map(key, true, count))
            }
            Head::Array(count) => nested(self.depth, || self.any_list(count)),
            Head::Float(value) => Ok(py::new_float(py, value)?),
            Head::Nil => Ok(py.None().into_bound(py)),
            Head::True => Ok(PyBool::new(py, true).to_owned().into_any()),
            Head::False => Ok(PyBool::new(py, false).to_owned().into_any()),
            Head::BigUint(value) => Ok(py::int_from_u128(py, u128::from(value))?),
            Head::Bin(data) => Ok(py::new_bytes(py, data)?.into_any()),
            Head::Ext(kind, payload) => self.ext(self.ctx.plan.any, kind, payload),
        }
    }

    /// An untyped array of `count` items (its head read) as a list: the items go onto the
    /// decoder's item stack, reserved at once (the reader has checked that `count` items fit
    /// in the input left), and the list is made at its length.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.4msgpack")]
    fn any_list(&mut self, count: usize) -> Result<Obj<'py>> {
        self.enter()?;
        let base = self.stack.len();
        reserve_items(&mut self.stack, count)?;
        for index in 0..count {
            let item = match self.reader.next().map_err(malformed) {
                Ok(head) => self.any(head),
                Err(err) => Err(err),
            };
            match item {
                // Room was reserved for every item.
                Ok(item) => self.stack.push(item),
                Err(err) => {
                    self.stack.truncate(base);
                    return Err(err.at_index(index));
                }
            }
        }
        let list = py::new_list(self.ctx.py, self.stack.drain(base..))?;
        self.depth -= 1;
        Ok(list)
    }

    /// An untyped map of `count` entries (its head read) as a dict, its keys read as node
    /// `key`: `Any` (`any_keys`) or a plain `str`. The entries go onto the item stack, reserved
    /// at once (the reader has checked that they fit in the input left), and the dict is made
    /// at its size, from a template when its keys came before ([`py::shapes`]).
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.4msgpack")]
    fn any_map(&mut self, key: NodeId, any_keys: bool, count: usize) -> Result<Obj<'py>> {
        self.enter()?;
        let base = self.stack.len();
        reserve_items(&mut self.stack, 2 * count)?;
        if let Err(err) = self.any_entries(key, any_keys, count) {
            self.stack.truncate(base);
            return Err(err);
        }
        let dict = py::shapes::dict_of_pairs(self.ctx.py, &mut self.stack, base)?;
        self.depth -= 1;
        Ok(dict)
    }

    /// Reads `count` entries of an untyped map onto the item stack (room reserved).
    #[inline(always)]
    fn any_entries(&mut self, key: NodeId, any_keys: bool, count: usize) -> Result<()> {
        let py = self.ctx.py;
        for _ in 0..count {
            let key = match self.reader.next().map_err(malformed)? {
                Head::Str(bytes) => {
                    let ascii = check_utf8(bytes)?;
                    py::dict_key_str(py, bytes, ascii)?
                }
                Head::Array(count) if any_keys => self.tuple_key(key, count)?,
                Head::Map(_) if any_keys => {
                    return Err(expected(Code::DictKeyType, "a hashable dict key", "map"));
                }
                head if any_keys => self.any(head)?,
                head => self.head(key, head)?,
            };
            let value = match self.reader.next().map_err(malformed) {
                Ok(head) => self.any(head),
                Err(err) => Err(err),
            };
            match value {
                Ok(value) => {
                    self.stack.push(key);
                    self.stack.push(value);
                }
                Err(err) => return Err(err.at_key(&crate::errors::shown_key(&key))),
            }
        }
        Ok(())
    }

    /// The common pairs of head and node, with nothing to check but the head (the node's
    /// precomputed [`Plain`]): decoded here without the general dispatch. `Optional[X]` takes
    /// the same shortcuts for `X`. Returns only a value: on any failure (invalid UTF-8, a bad
    /// timestamp, a failed allocation) `None` sends the head down the general path, which
    /// fails the same way with its own error, so the shortcut never carries an error around.
    #[inline(always)]
    fn plain(&self, id: NodeId, head: &Head<'a>) -> Option<Obj<'py>> {
        let py = self.ctx.py;
        let plain = *self.reader.plain.get(id)?;
        match (head, plain.kind) {
            (Head::Str(bytes), PlainKind::Str) => {
                let ascii = bytes.is_ascii();
                if !ascii && std::str::from_utf8(bytes).is_err() {
                    return None;
                }
                py::new_str(py, bytes, ascii).ok()
            }
            (Head::Int(value), PlainKind::Int) => py::new_int(py, *value).ok(),
            (Head::Float(value), PlainKind::Float) => py::new_float(py, *value).ok(),
            (Head::True, PlainKind::Bool) => Some(PyBool::new(py, true).to_owned().into_any()),
            (Head::False, PlainKind::Bool) => Some(PyBool::new(py, false).to_owned().into_any()),
            (Head::Nil, PlainKind::Null) => Some(py.None().into_bound(py)),
            (Head::Nil, _) if plain.nullable => Some(py.None().into_bound(py)),
            (Head::Ext(-1, payload), PlainKind::Timestamp) => timestamp_datetime(py, payload).ok(),
            (Head::Str(bytes), PlainKind::Text) => self.text(plain.node, bytes),
            _ => None,
        }
    }

    /// A [`PlainKind::Text`] node's value out of a str, or `None` for the general path (which
    /// gives the error). Kept out of line: the value dispatch stays small.
    #[inline(never)]
    fn text(&self, id: NodeId, bytes: &[u8]) -> Option<Obj<'py>> {
        let py = self.ctx.py;
        match self.ctx.plan.node(id) {
            Node::Enum(spec) => spec.by_str(bytes).map(|member| member.bind(py).clone()),
            Node::Date => {
                let parts = text::temporal::parse_date(bytes).ok()?;
                temporal::new_date(py, &parts).ok()
            }
            Node::Uuid => py::new_uuid(py, text::uuid::parse_uuid(bytes).ok()?).ok(),
            Node::Time(rule) => {
                let parts = text::temporal::parse_time(bytes).ok()?;
                crate::values::check_tz(*rule, parts.offset_seconds.is_some(), "time").ok()?;
                temporal::new_time(py, &parts).ok()
            }
            Node::TimeDelta => {
                temporal::new_timedelta(py, &text::temporal::parse_duration(bytes).ok()?).ok()
            }
            // Digits and places checked on the text; out of them, the general path words the
            // error.
            Node::Decimal(spec) if bytes.is_ascii() => {
                let value = py::new_decimal_from_bytes(py, bytes, true).ok()?;
                if spec.max_digits.is_some() || spec.decimal_places.is_some() {
                    crate::values::check_decimal_digits(spec, &value, bytes).ok()?;
                }
                Some(value)
            }
            _ => None,
        }
    }

    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.4msgpack")]
    fn general(&mut self, id: NodeId, head: Head<'a>) -> Result<Obj<'py>> {
        match head {
            Head::Str(bytes) => self.string(id, bytes),
            Head::Int(value) => self.ctx.int(id, value),
            Head::Map(count) => nested(self.depth, || self.map(id, count)),
            Head::Array(count) => nested(self.depth, || self.array(id, count)),
            Head::Float(value) => self.ctx.float(id, value, None),
            Head::Nil => self.ctx.null(id),
            Head::True => self.ctx.boolean(id, true),
            Head::False => self.ctx.boolean(id, false),
            Head::BigUint(value) => self.ctx.big_int(id, &value.to_string()),
            Head::Bin(data) => self.bin(id, data),
            Head::Ext(kind, payload) => self.ext(id, kind, payload),
        }
    }

    /// The union variant that takes str-like tokens (bin and the timestamp extension among
    /// them), or the node itself.
    fn str_slot(&self, id: NodeId, got: &str) -> Result<NodeId> {
        match self.ctx.plan.node(id) {
            Node::Union(spec) => spec.str.ok_or_else(|| {
                let names = crate::values::describe_union(self.ctx.plan, &spec.variants);
                Error::validation(
                    self.ctx.plan.union_code(&spec.variants),
                    format_args!("expected {names}, got {got}"),
                )
            }),
            _ => Ok(id),
        }
    }

    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.4msgpack")]
    fn string(&mut self, id: NodeId, bytes: &[u8]) -> Result<Obj<'py>> {
        let ascii = check_utf8(bytes)?;
        let id = self.ctx.resolve(id, Token::Str)?;
        match self.ctx.plan.node(id) {
            // A peer that writes bytes as str (old msgpack spec): its raw UTF-8 bytes.
            Node::Bytes(_) => return self.bin(id, bytes),
            // Only in lax mode: a str the union's variants may take as a number, `null` or a
            // bool before its str variant does.
            Node::Union(spec) => return self.lax_union_string(id, spec, bytes, ascii),
            _ => {}
        }
        self.ctx.string(id, bytes, ascii)
    }

    /// Lax mode: a str for a union whose str variant is no plain `str` (see
    /// [`Decoding::lax_union_text`]); the str variant reads what no other variant takes.
    #[cold]
    #[inline(never)]
    fn lax_union_string(
        &mut self,
        id: NodeId,
        spec: &crate::plan::UnionSpec,
        bytes: &[u8],
        ascii: bool,
    ) -> Result<Obj<'py>> {
        if let Some(value) = self.ctx.lax_union_text(spec, bytes)? {
            return Ok(value);
        }
        match spec.str {
            Some(variant) if matches!(self.ctx.plan.node(variant), Node::Bytes(_)) => {
                self.bin(id, bytes)
            }
            Some(variant) => self.ctx.string(variant, bytes, ascii),
            None => Err(crate::values::union_mismatch(
                self.ctx.plan,
                spec,
                Token::Str,
            )),
        }
    }

    fn bin(&mut self, id: NodeId, data: &[u8]) -> Result<Obj<'py>> {
        let id = self.str_slot(id, "bytes")?;
        let py = self.ctx.py;
        match self.ctx.plan.node(id) {
            Node::Bytes(spec) => {
                spec.length
                    .check(data.len(), crate::plan::LengthUnit::Bytes)?;
                Ok(spec.new_value(py, data)?)
            }
            Node::Any => Ok(crate::py::new_bytes(py, data)?.into_any()),
            node => Err(expected(node.type_code(), node.describe(), "bytes")),
        }
    }

    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.4msgpack")]
    fn ext(&mut self, id: NodeId, kind: i64, payload: &[u8]) -> Result<Obj<'py>> {
        if kind != -1 {
            return match self.ctx.plan.node(id) {
                Node::Any => {
                    let py = self.ctx.py;
                    let data = crate::py::new_bytes(py, payload)?;
                    Ok(super::ext_class(py)?.call1((kind, data))?)
                }
                node => Err(expected(
                    node.type_code(),
                    node.describe(),
                    &format!("ext type {kind}"),
                )),
            };
        }
        read::timestamp(payload).ok_or_else(malformed_timestamp)?;
        let id = self.str_slot(id, "timestamp")?;
        match self.ctx.plan.node(id) {
            Node::DateTime(TzRule::Naive) => Err(Error::validation(
                Code::TimezoneNaive,
                "expected a naive datetime, got a timestamp (UTC)",
            )),
            Node::DateTime(_) | Node::Any => timestamp_datetime(self.ctx.py, payload),
            node => Err(expected(node.type_code(), node.describe(), "timestamp")),
        }
    }

    /// A `Raw`: the next value's bytes, checked and kept as they are (nil is None for an
    /// `Optional[Raw]`).
    #[cold]
    #[inline(never)]
    fn raw(&mut self, nullable: bool) -> Result<Obj<'py>> {
        let start = self.reader.offset();
        if nullable && matches!(self.reader.next().map_err(malformed)?, Head::Nil) {
            return Ok(self.ctx.py.None().into_bound(self.ctx.py));
        }
        self.reader.rewind(start);
        self.reader
            .skip_value(MAX_DEPTH.saturating_sub(self.depth))
            .map_err(malformed)?;
        crate::raw::decoded(self.ctx.py, self.reader.taken_since(start))
    }

    /// A field name: a str key.
    fn field_name(&mut self) -> Result<&'a [u8]> {
        match self.reader.next().map_err(malformed)? {
            Head::Str(bytes) => {
                check_utf8(bytes)?;
                Ok(bytes)
            }
            other => Err(expected(
                Code::DictKeyType,
                "a str field name",
                other.describe(),
            )),
        }
    }

    /// Keys come in their own MessagePack type. Str keys of plain `str` or `Any` go through the
    /// key cache; under `Any` an array key becomes a tuple (lists are unhashable).
    fn dict_key(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let head = self.reader.next().map_err(malformed)?;
        let node = self.ctx.plan.node(id);
        match (head, node) {
            (Head::Str(bytes), Node::Any) => {
                let ascii = check_utf8(bytes)?;
                Ok(py::dict_key_str(self.ctx.py, bytes, ascii)?)
            }
            (Head::Str(bytes), Node::Str(spec)) if spec.is_unconstrained() => {
                let ascii = check_utf8(bytes)?;
                Ok(py::dict_key_str(self.ctx.py, bytes, ascii)?)
            }
            (Head::Array(count), Node::Any) => self.tuple_key(id, count),
            (Head::Map(_), Node::Any) => {
                Err(expected(Code::DictKeyType, "a hashable dict key", "map"))
            }
            (head, _) => self.head(id, head),
        }
    }

    /// An array read as a dict key under `Any` (node `id`), as msgspec reads one: a tuple,
    /// whose arrays are tuples too; a map anywhere in it cannot be hashed and is refused.
    fn tuple_key(&mut self, id: NodeId, count: usize) -> Result<Obj<'py>> {
        nested(self.depth, || {
            self.enter()?;
            let base = self.stack.len();
            let mut result = Ok(());
            // No path steps inside a key: the path is the value's, and the key is not in it.
            for _ in 0..count {
                let item = match self.reader.next().map_err(malformed) {
                    Ok(Head::Array(inner)) => self.tuple_key(id, inner),
                    Ok(Head::Map(_)) => Err(expected(
                        Code::DictKeyType,
                        "a hashable dict key",
                        "an array holding a map",
                    )),
                    Ok(head) => self.head(id, head),
                    Err(err) => Err(err),
                };
                result = item.and_then(|item| {
                    crate::codecs::decoder::reserve_items(&mut self.stack, 1)?;
                    self.stack.push(item);
                    Ok(())
                });
                if result.is_err() {
                    break;
                }
            }
            self.depth -= 1;
            let items = self.stack.drain(base..);
            result?;
            Ok(crate::py::new_tuple(self.ctx.py, items.into_iter())?.into_any())
        })
    }
}

impl<'p, 'py, 'k, E: Errors> WireReader<'p, 'py> for Decoder<'p, 'py, MsgpackInput<'_, 'k>, E> {
    const NAME: &'static str = "MessagePack";
    /// The array items or map entries left to read.
    type Left = usize;

    #[inline(always)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.4msgpack")]
    fn value(&mut self, id: NodeId) -> Result<Obj<'py>> {
        if let Some(input) = self.replayed(id) {
            return Ok(input);
        }
        if self.ctx.plan.reads_node_first {
            match self.ctx.plan.node(id) {
                Node::Extension(spec) => return self.extension(spec),
                Node::Raw { nullable } => return self.raw(*nullable),
                _ => {}
            }
        }
        let head = self.reader.next().map_err(malformed)?;
        self.head(id, head)
    }

    /// A tag's value: a str or an int.
    fn tag(&mut self, spec: &TaggedUnionSpec) -> Result<usize> {
        match self.reader.next().map_err(malformed)? {
            Head::Str(bytes) => {
                check_utf8(bytes)?;
                find_tag(spec, TagRef::Str(bytes))
            }
            Head::Int(value) => find_tag(spec, TagRef::Int(value)),
            Head::BigUint(value) => Err(big_int_tag(spec, &value.to_string())),
            other => Err(not_a_tag(other.describe())),
        }
    }

    /// The head has been read.
    #[inline(always)]
    fn begin_map(&mut self, _left: &mut usize) -> Result<()> {
        Ok(())
    }

    /// Each field name's whole str as the encoder writes it (the shortest header), and the
    /// same as [`ShortEntry`] words.
    type Names = (&'k [Box<[u8]>], &'k [ShortEntry]);

    #[inline(always)]
    fn record_names(&self, id: NodeId) -> Self::Names {
        (self.reader.names.record(id).members, &self.reader.short[id])
    }

    #[inline(always)]
    fn take_field(
        &mut self,
        left: &mut usize,
        names: Self::Names,
        index: usize,
        _field: &Field,
    ) -> bool {
        let (members, short) = names;
        let taken = *left > 0
            && match self.reader.take_short_entry(&short[index]) {
                Some(taken) => taken,
                None => self.reader.take_entry(&members[index]),
            };
        if taken {
            *left -= 1;
        }
        taken
    }

    const TAKE_AHEAD: bool = true;

    /// The next 16 bytes of input compared with each field's [`ShortEntry`] in turn, loaded
    /// once; fields whose names are longer are tried whole after them.
    #[inline(never)]
    fn take_ahead(
        &mut self,
        left: &mut usize,
        names: Self::Names,
        spec: &crate::plan::RecordSpec,
        from: usize,
    ) -> Option<usize> {
        let ahead = spec.wire_order.get(from..)?;
        let (members, short) = names;
        let empty = ShortEntry::default();
        let entries = ahead
            .iter()
            .map(|&(index, _)| short.get(index).unwrap_or(&empty));
        let windowed = self.reader.take_short_entries(entries);
        let found = match windowed {
            Some(Some(found)) => Some(found),
            // The entries the window could not compare: longer names, or all of them near
            // the input's end.
            _ => ahead.iter().position(|&(index, _)| {
                let compared =
                    windowed.is_some() && short.get(index).is_some_and(read::Reader::is_short);
                !compared
                    && members
                        .get(index)
                        .is_some_and(|member| self.reader.take_entry(member))
            }),
        }?;
        *left -= 1;
        Some(from + found)
    }

    #[inline(always)]
    fn map_done(&mut self, left: &usize) -> bool {
        *left == 0
    }

    /// The variants whose tag is fixed have their whole leading entry (the tag field's name and
    /// value) precomputed: the first one the input continues with names the variant at once.
    #[inline(always)]
    fn take_tag(&mut self, left: &mut usize, _id: NodeId, spec: &TaggedUnionSpec) -> Option<usize> {
        if *left == 0 {
            return None;
        }
        let names = self.reader.names;
        let position = spec.tags.iter().position(|&(_, id)| {
            names
                .record(id)
                .tag
                .is_some_and(|entry| self.reader.take_entry(entry))
        })?;
        *left -= 1;
        Some(position)
    }

    #[inline(always)]
    fn next_key(&mut self, left: &mut usize) -> Result<Option<&[u8]>> {
        if *left == 0 {
            return Ok(None);
        }
        *left -= 1;
        self.field_name().map(Some)
    }

    fn dict(
        &mut self,
        key_node: NodeId,
        value_node: NodeId,
        dict_node: NodeId,
        count: usize,
    ) -> Result<Obj<'py>> {
        // Before the entries, collecting too: the first error is the fail-fast one.
        self.ctx.check_length(dict_node, count)?;
        // The reader has checked that `count` entries fit in the input left: made at that
        // size, the dict never resizes while it fills.
        let dict = py::builders::presized_dict(self.ctx.py, count)?;
        let mark = self.errors.count();
        // Decided once per dict: whether storing an entry can run Python code.
        let builtin_entries = self.ctx.builtin_entries(key_node, value_node);
        for _ in 0..count {
            let (start, before) = (self.value_start(), self.errors.count());
            let key = match self.dict_key(key_node) {
                Ok(key) => key,
                Err(e) if E::ALL => {
                    // Recorded at the dict, the key its input; its value is skipped.
                    self.keep_going(e, before, start, None)?;
                    self.skip()?;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let (start, before) = (self.value_start(), self.errors.count());
            let value = match self.value(value_node) {
                Ok(value) => value,
                Err(e) => {
                    let shown = crate::errors::shown_key(key.as_any());
                    if E::ALL {
                        self.keep_going(e, before, start, PathSegment::key(&shown))?;
                        continue;
                    }
                    return Err(e.at_key(&shown));
                }
            };
            if builtin_entries {
                py::dict_set(&dict, &key, &value)?;
            } else {
                py::user_code(self.ctx.py, || py::dict_set(&dict, &key, &value))?;
            }
        }
        if let Some(failed) = self.failed_since(mark) {
            return Err(failed);
        }
        // Duplicate keys collapse (the last one wins), so check again what the dict holds.
        if dict.len() != count {
            self.ctx.check_length(dict_node, dict.len())?;
        }
        Ok(dict.into_any())
    }

    /// The head has been read.
    #[inline(always)]
    fn begin_array(&mut self, _left: &mut usize) -> Result<()> {
        Ok(())
    }

    #[inline(always)]
    fn next_item(&mut self, left: &mut usize) -> Result<bool> {
        if *left == 0 {
            return Ok(false);
        }
        *left -= 1;
        Ok(true)
    }

    /// The head gave the count.
    #[inline(always)]
    fn count_left(left: &usize) -> Option<usize> {
        Some(*left)
    }

    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.4msgpack")]
    fn begin_many(&mut self) -> Result<usize> {
        match self.reader.next().map_err(malformed)? {
            Head::Array(count) => Ok(count),
            other => Err(Error::validation(
                Code::ListType,
                format_args!(
                    "expected array of values for decode_many, got {}",
                    other.describe()
                ),
            )),
        }
    }

    /// Nothing may follow.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.4msgpack")]
    fn finish(&mut self) -> Result<()> {
        self.reader.finish().map_err(malformed)
    }

    fn skip(&mut self) -> Result<()> {
        self.reader
            .skip_value(MAX_DEPTH.saturating_sub(self.depth))
            .map_err(malformed)
    }

    fn offset(&self) -> usize {
        self.reader.offset()
    }

    fn rewind(&mut self, offset: usize) {
        self.reader.rewind(offset);
    }
}
