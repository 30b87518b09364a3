//! The JSON side of the shared decoder (`codecs/decoder.rs`): the value dispatch on the next
//! token, strings (base64 for bytes), numbers, object keys matched against each field's
//! precomputed `"name":` bytes (the codec's [`Keys`]), and dict keys read out of strings.

use pyo3::prelude::*;

use super::read::{Number, Reader, SyntaxError, ValueKind};
use super::{Keys, TagEntries};
use crate::codecs::decoder::{find_tag, Decoder, TagRef, WireReader};
use crate::errors::{Error, Result};
use crate::plan::{Field, LiteralValue, Node, NodeId, TaggedUnionSpec};
use crate::py::temporal;
use crate::py::Obj;
use crate::values::{check_tz, nested, utf8, Decoding, Token, MAX_DEPTH};
use polycodec_formats::text;

/// What the JSON decoder reads: the input, and the codec's precomputed field keys and tag
/// entries.
pub struct JsonInput<'a, 'k> {
    reader: Reader<'a>,
    keys: &'k Keys,
    tags: &'k TagEntries,
}

impl<'a, 'k> JsonInput<'a, 'k> {
    pub fn new(input: &'a [u8], keys: &'k Keys, tags: &'k TagEntries) -> Self {
        JsonInput {
            reader: Reader::new(input),
            keys,
            tags,
        }
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
    Error::decode(format!("malformed JSON: {err}"))
}

/// [`text::temporal::canonical_utc`] as one function in the JSON decoder's hot section, which
/// both of [`Decoder::datetime`]'s tries call (the inlined copy was an out-of-section shim).
#[inline(never)]
#[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
fn canonical_utc(s: &[u8]) -> Option<text::temporal::DateTime> {
    text::temporal::canonical_utc(s)
}

impl<'p, 'py> Decoder<'p, 'py, JsonInput<'_, '_>> {
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn string(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let id = self.ctx.resolve(id, Token::Str)?;
        if let Node::Bytes(spec) = self.ctx.plan.node(id) {
            return self.base64_bytes(spec);
        }
        let text = self.reader.read_str().map_err(syntax)?;
        self.ctx.string(id, text.bytes, text.ascii)
    }

    /// The general path of a value starting with `byte`: the token's own reading, which words
    /// every error (kept out of `value`, whose direct paths then need a smaller frame).
    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
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

    /// A datetime node's string (the next byte is its quote).
    #[inline(never)]
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn datetime(&mut self, rule: crate::plan::TzRule) -> Result<Obj<'py>> {
        // The UTC forms polycodec and msgspec write are matched in place, unscanned (their
        // templates admit digits and `-T:.Z` only).
        let canonical = canonical_utc;
        let parts = match self.reader.take_str_of(27, canonical) {
            Some(parts) => parts,
            None => match self.reader.take_str_of(20, canonical) {
                Some(parts) => parts,
                None => {
                    let text = self.reader.read_str().map_err(syntax)?;
                    text::temporal::parse_datetime(text.bytes)
                        .map_err(|e| Error::validation(e.message()))?
                }
            },
        };
        check_tz(rule, parts.offset_seconds.is_some(), "datetime")?;
        Ok(temporal::new_datetime(self.ctx.py, &parts)?)
    }

    /// Bytes, written in JSON as base64 text (kept out of `string`, the str hot path).
    #[inline(never)]
    fn base64_bytes(&mut self, spec: &crate::plan::BytesSpec) -> Result<Obj<'py>> {
        let text = self.reader.read_str().map_err(syntax)?;
        let mut data = Vec::new();
        crate::errors::reserve(
            &mut data,
            text.bytes.len() / 4 * 3 + 3,
            "base64-decoded bytes",
        )?;
        text::base64::decode(text.bytes, &mut data).map_err(|e| Error::validation(e.message()))?;
        spec.length.check(data.len(), "bytes")?;
        let py = self.ctx.py;
        Ok(if spec.bytearray {
            crate::py::new_bytearray(py, &data)?
        } else {
            crate::py::new_bytes(py, &data)?.into_any()
        })
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
            Number::Float { value, text } if value.is_infinite() => {
                Err(Error::validation(format!(
                    "number {} is out of range for a float",
                    crate::errors::cut(utf8(text))
                )))
            }
            Number::Float { value, text } => self.ctx.float(id, value, Some(text)),
        }
    }
}

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
        Err(Error::validation(format!(
            "expected an integer key, got {}",
            crate::errors::quote(text)
        )))
    })
}

impl<'p, 'py, 'k> WireReader<'p, 'py> for Decoder<'p, 'py, JsonInput<'_, 'k>> {
    const NAME: &'static str = "JSON";
    /// Whether the first item or member is next.
    type Left = bool;

    /// The next value as node `id`. The node and the value's first byte are looked at once:
    /// the common pairs (a plain str, a datetime, an int, an optional's null, a union's variant
    /// for the token) are decoded here directly; every other pair takes the general path of the
    /// token, which words any error.
    #[cfg_attr(target_os = "linux", link_section = ".text.hot.polycodec.2json")]
    fn value(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let plan = self.ctx.plan;
        let byte = self.reader.peek_byte();
        let py = self.ctx.py;
        match plan.node(id) {
            Node::DateTime(rule) if byte == Some(b'"') => return self.datetime(*rule),
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
                // or a lax str read as a number) takes the general path, which resolves it.
                Some(first @ (b'"' | b'{' | b'[')) => {
                    let variant = match first {
                        b'"' => spec.str,
                        b'{' => spec.object,
                        _ => spec.array,
                    };
                    if let Some(variant) = variant {
                        if !matches!(plan.node(variant), Node::Union(_) | Node::Extension(_)) {
                            return self.value(variant);
                        }
                    }
                }
                _ => {}
            },
            Node::Extension(spec) => return self.extension(spec),
            Node::Bytes(_) => {}
            // A str for any other node (the general path would resolve the node to itself and
            // read the same str): one copy of the inlined string reader for all of them.
            node => {
                if byte == Some(b'"') {
                    let text = self.reader.read_str().map_err(syntax)?;
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

    /// A tag's value: a str or an int.
    fn tag(&mut self, spec: &TaggedUnionSpec) -> Result<usize> {
        match self.reader.peek_kind().map_err(syntax)? {
            ValueKind::String => {
                let text = self.reader.read_str().map_err(syntax)?;
                find_tag(spec, TagRef::Str(text.bytes))
            }
            ValueKind::Number => match self.reader.read_number().map_err(syntax)? {
                Number::Int(value) => find_tag(spec, TagRef::Int(value)),
                _ => Err(Error::validation("expected a str or int tag, got float")),
            },
            _ => Err(Error::validation("expected a str or int tag")),
        }
    }

    #[inline(always)]
    fn begin_map(&mut self, _first: &mut bool) -> Result<()> {
        self.reader.begin_object().map_err(syntax)
    }

    /// The record's precomputed `,"name":` members.
    type Names = &'k [Box<[u8]>];

    #[inline(always)]
    fn record_names(&self, id: NodeId) -> Self::Names {
        self.reader.keys.record(id).members
    }

    #[inline(always)]
    fn take_field(
        &mut self,
        first: &mut bool,
        names: Self::Names,
        index: usize,
        _field: &Field,
    ) -> bool {
        let taken = self.reader.take_member(*first, &names[index]);
        if taken {
            *first = false;
        }
        taken
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
        let mut first = true;
        loop {
            let key = self.reader.next_key(first).map_err(syntax)?;
            first = false;
            let Some(key) = key else { break };
            let key_object = dict_key(&self.ctx, key_node, key.bytes, key.ascii)
                .map_err(|e| e.at_key(key.text()))?;
            let value = self.value(value_node).map_err(|e| {
                let shown = key_object.str().map(|s| s.to_string()).unwrap_or_default();
                e.at_key(&shown)
            })?;
            self.ctx
                .store_entry(&dict, key_node, value_node, key_object, value)?;
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
}
