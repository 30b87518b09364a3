//! The JSON decoder: walks the plan and the input together, building Python objects directly
//! from the bytes in one pass.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyTuple};

use super::read::{Number, Reader, SyntaxError, ValueKind};
use crate::errors::{Error, Result};
use crate::formats::decoder::{self, WireReader};
use crate::plan::{
    Field, LengthBounds, LiteralValue, Node, NodeId, Plan, RecordKind, RecordSpec, SequenceKind,
};
use crate::py::Obj;
use crate::text;
use crate::values::{mismatch, nested, utf8, Decoding, RecordBuilder, Token, MAX_DEPTH};

/// Decodes one value of the plan's root type; only whitespace may follow it.
pub fn decode_one<'py>(
    py: Python<'py>,
    plan: &Plan,
    strict: bool,
    input: &[u8],
) -> Result<Obj<'py>> {
    let mut decoder = Decoder::new(py, plan, strict, input);
    let value = decoder.value(plan.root)?;
    decoder.reader.finish().map_err(syntax)?;
    Ok(value)
}

/// Decodes a JSON array of the plan's root type into a list.
pub fn decode_many<'py>(
    py: Python<'py>,
    plan: &Plan,
    strict: bool,
    input: &[u8],
) -> Result<Obj<'py>> {
    let mut decoder = Decoder::new(py, plan, strict, input);
    if decoder.reader.peek_kind().map_err(syntax)? != ValueKind::Array {
        return Err(Error::validation(
            "expected array of values for decode_many, got another JSON value",
        ));
    }
    decoder.reader.begin_array().map_err(syntax)?;
    let mut items = Vec::new();
    let mut first = true;
    while decoder.reader.next_element(first).map_err(syntax)? {
        first = false;
        let index = items.len();
        items.push(decoder.value(plan.root).map_err(|e| e.at_index(index))?);
    }
    decoder.reader.finish().map_err(syntax)?;
    Ok(PyList::new(py, items)?.into_any())
}

#[cold]
fn syntax(err: SyntaxError) -> Error {
    Error::decode(format!("malformed JSON: {err}"))
}

struct Decoder<'a, 'p, 'py> {
    reader: Reader<'a>,
    ctx: Decoding<'p, 'py>,
    depth: usize,
    /// Items of the arrays being read, innermost last: one buffer for the whole call instead
    /// of one allocation per array.
    stack: Vec<Obj<'py>>,
}

impl<'a, 'p, 'py> Decoder<'a, 'p, 'py> {
    fn new(py: Python<'py>, plan: &'p Plan, strict: bool, input: &'a [u8]) -> Self {
        Decoder {
            reader: Reader::new(input),
            ctx: Decoding { py, plan, strict },
            depth: 0,
            stack: Vec::new(),
        }
    }

    fn value(&mut self, id: NodeId) -> Result<Obj<'py>> {
        match self.reader.peek_kind().map_err(syntax)? {
            ValueKind::String => self.string(id),
            ValueKind::Number => self.number(id),
            ValueKind::Object => nested(self.depth, || self.object(id)),
            ValueKind::Array => nested(self.depth, || self.array(id)),
            ValueKind::True => {
                self.reader.read_true().map_err(syntax)?;
                self.ctx.boolean(id, true)
            }
            ValueKind::False => {
                self.reader.read_false().map_err(syntax)?;
                self.ctx.boolean(id, false)
            }
            ValueKind::Null => {
                self.reader.read_null().map_err(syntax)?;
                self.ctx.null(id)
            }
        }
    }

    fn string(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let id = self.ctx.resolve(id, Token::Str)?;
        if let Node::Bytes(spec) = self.ctx.plan.node(id) {
            let text = self.reader.read_str().map_err(syntax)?;
            let mut data = Vec::with_capacity(text.bytes.len() / 4 * 3);
            text::base64::decode(text.bytes, &mut data)
                .map_err(|e| Error::validation(e.message()))?;
            spec.length.check(data.len(), "bytes")?;
            let py = self.ctx.py;
            return Ok(if spec.bytearray {
                PyByteArray::new(py, &data).into_any()
            } else {
                PyBytes::new(py, &data).into_any()
            });
        }
        let text = self.reader.read_str().map_err(syntax)?;
        self.ctx.string(id, text.bytes, text.ascii)
    }

    fn number(&mut self, id: NodeId) -> Result<Obj<'py>> {
        match self.reader.read_number().map_err(syntax)? {
            Number::Int(value) => self.ctx.int(id, value),
            Number::BigInt(text) => self.ctx.big_int(id, text),
            // JSON has no infinities: a literal too large for a float is out of range, not inf.
            Number::Float { value, text } if value.is_infinite() => Err(Error::validation(
                format!("number {text} is out of range for a float"),
            )),
            Number::Float { value, text } => self.ctx.float(id, value, Some(text)),
        }
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Error::decode(format!(
                "JSON nested deeper than {MAX_DEPTH} levels at byte {}",
                self.reader.offset()
            )));
        }
        Ok(())
    }

    fn array(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let id = self.ctx.resolve(id, Token::Array)?;
        self.enter()?;
        let plan = self.ctx.plan;
        let result = match plan.node(id) {
            Node::Sequence(spec) => {
                let base = self.items(spec.item)?;
                let result = self.collect_items(spec.kind, base, &spec.length);
                self.stack.truncate(base);
                result
            }
            Node::Any => {
                let base = self.items(id)?;
                let result = PyList::new(self.ctx.py, self.stack.drain(base..));
                Ok(result?.into_any())
            }
            Node::Tuple(item_nodes) => {
                let items = self.fixed_items(item_nodes)?;
                Ok(PyTuple::new(self.ctx.py, items)?.into_any())
            }
            Node::Record(spec) if spec.array_like || spec.kind == RecordKind::NamedTuple => {
                self.reader.begin_array().map_err(syntax)?;
                decoder::positional_record(self, spec, true)
            }
            Node::TaggedUnion(spec) => {
                self.reader.begin_array().map_err(syntax)?;
                decoder::positional_tagged(self, spec, true)
            }
            node => Err(mismatch(node, Token::Array)),
        };
        self.depth -= 1;
        result
    }

    /// Reads an array's items onto the stack; returns where they start.
    fn items(&mut self, item: NodeId) -> Result<usize> {
        self.reader.begin_array().map_err(syntax)?;
        let base = self.stack.len();
        let mut first = true;
        while self.reader.next_element(first).map_err(syntax)? {
            first = false;
            let index = self.stack.len() - base;
            match self.value(item) {
                Ok(value) => self.stack.push(value),
                Err(err) => {
                    self.stack.truncate(base);
                    return Err(err.at_index(index));
                }
            }
        }
        Ok(base)
    }

    /// Builds the collection from the items on the stack above `base`.
    fn collect_items(
        &mut self,
        kind: SequenceKind,
        base: usize,
        length: &LengthBounds,
    ) -> Result<Obj<'py>> {
        length.check(self.stack.len() - base, "items")?;
        decoder::sequence(self.ctx.py, kind, self.stack.drain(base..))
    }

    fn fixed_items(&mut self, item_nodes: &[NodeId]) -> Result<Vec<Obj<'py>>> {
        self.reader.begin_array().map_err(syntax)?;
        let mut items = Vec::with_capacity(item_nodes.len());
        let mut first = true;
        while self.reader.next_element(first).map_err(syntax)? {
            first = false;
            let index = items.len();
            let Some(&node) = item_nodes.get(index) else {
                return Err(Error::validation(format!(
                    "expected array of length {}, got more items",
                    item_nodes.len()
                )));
            };
            items.push(self.value(node).map_err(|e| e.at_index(index))?);
        }
        if items.len() != item_nodes.len() {
            return Err(Error::validation(format!(
                "expected array of length {}, got {}",
                item_nodes.len(),
                items.len()
            )));
        }
        Ok(items)
    }

    fn object(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let id = self.ctx.resolve(id, Token::Object)?;
        self.enter()?;
        let plan = self.ctx.plan;
        let result = match plan.node(id) {
            Node::Record(spec) if !spec.array_like && spec.kind != RecordKind::NamedTuple => {
                self.record(spec)
            }
            Node::TaggedUnion(spec) => {
                self.reader.begin_object().map_err(syntax)?;
                decoder::tagged(self, spec, true)
            }
            Node::Dict(spec) => self.dict(spec.key, spec.value, id),
            Node::Any => self.dict(id, id, id),
            node => Err(mismatch(node, Token::Object)),
        };
        self.depth -= 1;
        result
    }

    fn record(&mut self, spec: &RecordSpec) -> Result<Obj<'py>> {
        self.reader.begin_object().map_err(syntax)?;
        let mut builder = RecordBuilder::new(spec);
        decoder::record_fields(self, spec, &mut builder, true)?;
        builder.finish(self.ctx.py, spec)
    }

    fn skip(&mut self) -> Result<()> {
        self.reader
            .skip_value(MAX_DEPTH.saturating_sub(self.depth))
            .map_err(syntax)
    }

    /// A tag's value: a str or an int.
    fn tag_value(&mut self) -> Result<LiteralValue> {
        match self.reader.peek_kind().map_err(syntax)? {
            ValueKind::String => {
                let text = self.reader.read_str().map_err(syntax)?;
                Ok(LiteralValue::Str(text.text().to_owned()))
            }
            ValueKind::Number => match self.reader.read_number().map_err(syntax)? {
                Number::Int(value) => Ok(LiteralValue::Int(value)),
                _ => Err(Error::validation("expected a str or int tag, got float")),
            },
            _ => Err(Error::validation("expected a str or int tag")),
        }
    }

    fn dict(
        &mut self,
        key_node: NodeId,
        value_node: NodeId,
        dict_node: NodeId,
    ) -> Result<Obj<'py>> {
        self.reader.begin_object().map_err(syntax)?;
        let py = self.ctx.py;
        let dict = PyDict::new(py);
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
            dict.set_item(key_object, value)?;
        }
        self.ctx.check_length(dict_node, dict.len())?;
        Ok(dict.into_any())
    }
}

/// JSON keys are strings: int-like key types read the number out of the text.
fn dict_key<'py>(
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
            "expected an integer key, got {text:?}"
        )))
    })
}

impl<'p, 'py> WireReader<'p, 'py> for Decoder<'_, 'p, 'py> {
    /// Whether the first member is next.
    type Entries = bool;
    /// Whether the first item is next.
    type Items = bool;

    #[inline(always)]
    fn ctx(&self) -> &Decoding<'p, 'py> {
        &self.ctx
    }

    #[inline(always)]
    fn value(&mut self, id: NodeId) -> Result<Obj<'py>> {
        Decoder::value(self, id)
    }

    fn tag_value(&mut self) -> Result<LiteralValue> {
        Decoder::tag_value(self)
    }

    #[inline(always)]
    fn take_field(&mut self, first: &mut bool, field: &Field) -> bool {
        let taken = self.reader.take_key(*first, field.json_key());
        if taken {
            *first = false;
        }
        taken
    }

    #[inline(always)]
    fn next_key(&mut self, first: &mut bool) -> Result<Option<&[u8]>> {
        let key = self.reader.next_key(*first).map_err(syntax)?;
        *first = false;
        Ok(key.map(|key| key.bytes))
    }

    #[inline(always)]
    fn next_item(&mut self, first: &mut bool) -> Result<bool> {
        let more = self.reader.next_element(*first).map_err(syntax)?;
        *first = false;
        Ok(more)
    }

    /// JSON learns an array's length only at its closing bracket.
    #[inline(always)]
    fn check_at_most(_first: &bool, _read: usize, _limit: usize) -> Result<()> {
        Ok(())
    }

    fn skip(&mut self) -> Result<()> {
        Decoder::skip(self)
    }

    fn offset(&self) -> usize {
        self.reader.offset()
    }

    fn rewind(&mut self, offset: usize) {
        self.reader.rewind(offset);
    }
}
