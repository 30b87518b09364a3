//! The MessagePack side of the shared decoder (`codecs/decoder.rs`): the value dispatch on the
//! next head, with shortcuts for the common pairs of head and node. Scalars are turned into
//! Python values by the shared rules in `crate::values`; this file adds what is MessagePack's
//! own (bin, the timestamp extension, typed map keys).

use pyo3::prelude::*;
use pyo3::types::PyBool;

use super::epoch;
use super::read::{self, Head, ReadError, Reader};
use crate::codecs::decoder::{find_tag, Decoder, TagRef, WireReader};
use crate::errors::{Error, Result};
use crate::plan::{Field, FloatBounds, IntBounds, Node, NodeId, TaggedUnionSpec, TzRule};
use crate::py::{self, temporal, Obj};
use crate::values::{nested, Token, MAX_DEPTH};

#[cold]
fn malformed(err: ReadError) -> Error {
    Error::decode(format!("malformed MessagePack: {err}"))
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
            "malformed MessagePack: str is not valid UTF-8",
        )),
    }
}

#[cold]
fn malformed_timestamp() -> Error {
    Error::decode("malformed MessagePack: invalid timestamp extension payload")
}

/// A timestamp extension's payload as an aware UTC datetime.
fn timestamp_datetime<'py>(py: Python<'py>, payload: &[u8]) -> Result<Obj<'py>> {
    let (seconds, nanoseconds) = read::timestamp(payload).ok_or_else(malformed_timestamp)?;
    let parts = epoch::from_timestamp(seconds, nanoseconds).ok_or_else(|| {
        Error::validation(format!(
            "timestamp {seconds}s is out of range for a datetime (years 1-9999)"
        ))
    })?;
    Ok(temporal::new_datetime(py, &parts)?)
}

fn expected(what: &str, got: &str) -> Error {
    Error::validation(format!("expected {what}, got {got}"))
}

impl<'a, 'p, 'py> Decoder<'p, 'py, Reader<'a>> {
    #[inline(always)]
    fn head(&mut self, id: NodeId, head: Head<'a>) -> Result<Obj<'py>> {
        if let Some(value) = self.plain(id, &head) {
            return value;
        }
        self.general(id, head)
    }

    /// The common pairs of token and node, with nothing to check but the token: decoded here
    /// without the general dispatch. `Optional[X]` takes the same shortcuts for `X`.
    #[inline(always)]
    fn plain(&self, id: NodeId, head: &Head<'a>) -> Option<Result<Obj<'py>>> {
        let py = self.ctx.py;
        let plan = self.ctx.plan;
        let mut node = plan.node(id);
        if let Node::Union(spec) = node {
            let (Some(none), &[a, b]) = (spec.none, spec.variants.as_slice()) else {
                return None;
            };
            if let Head::Nil = head {
                return Some(Ok(py.None().into_bound(py)));
            }
            node = plan.node(if a == none { b } else { a });
        }
        Some(match (head, node) {
            (Head::Str(bytes), Node::Str(spec)) if spec.is_unconstrained() => check_utf8(bytes)
                .and_then(|ascii| py::new_str(py, bytes, ascii).map_err(Error::from)),
            (Head::Int(value), Node::Int(bounds)) if *bounds == IntBounds::default() => {
                py::new_int(py, *value).map_err(Error::from)
            }
            (Head::Float(value), Node::Float(bounds)) if *bounds == FloatBounds::default() => {
                py::new_float(py, *value).map_err(Error::from)
            }
            (Head::True, Node::Bool) => Ok(PyBool::new(py, true).to_owned().into_any()),
            (Head::False, Node::Bool) => Ok(PyBool::new(py, false).to_owned().into_any()),
            (Head::Nil, Node::None) => Ok(py.None().into_bound(py)),
            (Head::Ext(-1, payload), Node::DateTime(TzRule::Either | TzRule::Aware)) => {
                timestamp_datetime(py, payload)
            }
            _ => return None,
        })
    }

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
                let names: Vec<&str> = spec
                    .variants
                    .iter()
                    .map(|&v| self.ctx.plan.node(v).describe())
                    .collect();
                expected(&names.join(" | "), got)
            }),
            _ => Ok(id),
        }
    }

    fn string(&mut self, id: NodeId, bytes: &[u8]) -> Result<Obj<'py>> {
        let ascii = check_utf8(bytes)?;
        let id = self.ctx.resolve(id, Token::Str)?;
        if let Node::Bytes(_) = self.ctx.plan.node(id) {
            // A peer that writes bytes as str (old msgpack spec): its raw UTF-8 bytes.
            return self.bin(id, bytes);
        }
        self.ctx.string(id, bytes, ascii)
    }

    fn bin(&mut self, id: NodeId, data: &[u8]) -> Result<Obj<'py>> {
        let id = self.str_slot(id, "bytes")?;
        let py = self.ctx.py;
        match self.ctx.plan.node(id) {
            Node::Bytes(spec) => {
                spec.length.check(data.len(), "bytes")?;
                Ok(if spec.bytearray {
                    crate::py::new_bytearray(py, data)?
                } else {
                    crate::py::new_bytes(py, data)?.into_any()
                })
            }
            Node::Any => Ok(crate::py::new_bytes(py, data)?.into_any()),
            node => Err(expected(node.describe(), "bytes")),
        }
    }

    fn ext(&mut self, id: NodeId, kind: i64, payload: &[u8]) -> Result<Obj<'py>> {
        if kind != -1 {
            return match self.ctx.plan.node(id) {
                Node::Any => Err(Error::decode(format!(
                    "unsupported MessagePack extension type {kind}"
                ))),
                node => Err(expected(node.describe(), &format!("ext type {kind}"))),
            };
        }
        read::timestamp(payload).ok_or_else(malformed_timestamp)?;
        let id = self.str_slot(id, "timestamp")?;
        match self.ctx.plan.node(id) {
            Node::DateTime(TzRule::Naive) => Err(Error::validation(
                "expected a naive datetime, got a timestamp (UTC)",
            )),
            Node::DateTime(_) | Node::Any => timestamp_datetime(self.ctx.py, payload),
            node => Err(expected(node.describe(), "timestamp")),
        }
    }

    /// A field name: a str key.
    fn field_name(&mut self) -> Result<&'a [u8]> {
        match self.reader.next().map_err(malformed)? {
            Head::Str(bytes) => {
                check_utf8(bytes)?;
                Ok(bytes)
            }
            other => Err(expected("a str field name", other.describe())),
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
            (Head::Array(count), Node::Any) => nested(self.depth, || {
                self.enter()?;
                let base = self.items_onto_stack(id, count);
                let result = base.and_then(|base| {
                    let items = self.stack.drain(base..);
                    Ok(crate::py::new_tuple(self.ctx.py, items.into_iter())?.into_any())
                });
                self.depth -= 1;
                let key = result?;
                // A tuple key must hash: one holding a dict or list cannot.
                key.hash().map_err(|_| {
                    Error::validation(
                        "expected a hashable dict key, got an array of non-hashable items",
                    )
                })?;
                Ok(key)
            }),
            (Head::Map(_), Node::Any) => Err(expected("a hashable dict key", "map")),
            (head, _) => self.head(id, head),
        }
    }
}

impl<'p, 'py> WireReader<'p, 'py> for Decoder<'p, 'py, Reader<'_>> {
    const NAME: &'static str = "MessagePack";
    /// The array items or map entries left to read.
    type Left = usize;

    #[inline(always)]
    fn value(&mut self, id: NodeId) -> Result<Obj<'py>> {
        if self.ctx.plan.has_extensions {
            if let Node::Extension(spec) = self.ctx.plan.node(id) {
                return self.extension(spec);
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
            other => Err(expected("a str or int tag", other.describe())),
        }
    }

    /// The head has been read.
    #[inline(always)]
    fn begin_map(&mut self, _left: &mut usize) -> Result<()> {
        Ok(())
    }

    /// MessagePack matches a key against the field's wire name itself.
    type Names = ();

    #[inline(always)]
    fn record_names(&self, _id: NodeId) {}

    #[inline(always)]
    fn take_field(&mut self, left: &mut usize, _names: (), _index: usize, field: &Field) -> bool {
        let taken = *left > 0 && self.reader.take_str_if(field.wire_name.as_bytes());
        if taken {
            *left -= 1;
        }
        taken
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
        self.ctx.check_length(dict_node, count)?;
        let dict = py::new_dict(self.ctx.py)?;
        for _ in 0..count {
            let key = self.dict_key(key_node)?;
            let value = self.value(value_node).map_err(|e| {
                let shown = key.str().map(|s| s.to_string()).unwrap_or_default();
                e.at_key(&shown)
            })?;
            self.ctx
                .store_entry(&dict, key_node, value_node, key, value)?;
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

    fn begin_many(&mut self) -> Result<usize> {
        match self.reader.next().map_err(malformed)? {
            Head::Array(count) => Ok(count),
            other => Err(Error::validation(format!(
                "expected array of values for decode_many, got {}",
                other.describe()
            ))),
        }
    }

    /// Nothing may follow.
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
