//! The JSON decoder: walks the plan and the input together, building Python objects directly
//! from the bytes in one pass.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyFrozenSet, PyList, PySet, PyTuple};
use smallvec::SmallVec;

use super::read::{Number, Reader, SyntaxError, ValueKind};
use crate::errors::{Error, Result};
use crate::plan::{
    LengthBounds, LiteralValue, Node, NodeId, Plan, RecordKind, RecordSpec, SequenceKind,
    TaggedUnionSpec,
};
use crate::py::Obj;
use crate::text;
use crate::values::{
    mismatch, nested, unknown_field, utf8, Decoding, RecordBuilder, Token, MAX_DEPTH,
};

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
                self.positional_record(spec)
            }
            Node::TaggedUnion(spec) => self.positional_tagged(spec),
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
        let py = self.ctx.py;
        let items = self.stack.drain(base..);
        Ok(match kind {
            SequenceKind::List => PyList::new(py, items)?.into_any(),
            SequenceKind::VarTuple => PyTuple::new(py, items)?.into_any(),
            SequenceKind::Set => PySet::new(py, items)?.into_any(),
            SequenceKind::FrozenSet => PyFrozenSet::new(py, items)?.into_any(),
        })
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

    /// A record written as an array of its fields in declaration order (`array_like`,
    /// NamedTuple); trailing fields with defaults may be left out.
    /// A tagged-union variant's array starts with its tag.
    fn positional_record(&mut self, spec: &RecordSpec) -> Result<Obj<'py>> {
        self.reader.begin_array().map_err(syntax)?;
        let mut builder = RecordBuilder::new(spec);
        let mut first = true;
        if let Some((index, _)) = spec.tag {
            if !self.reader.next_element(true).map_err(syntax)? {
                return Err(Error::validation(
                    "expected the tag as the array's first item",
                ));
            }
            first = false;
            let value = self
                .value(spec.fields[index].node)
                .map_err(|e| e.at_index(0))?;
            builder.set(index, value);
        }
        self.positional_fields(spec, &mut builder, first)?;
        builder.finish(self.ctx.py, spec)
    }

    /// Reads the remaining items of a positional record, through the closing bracket.
    fn positional_fields(
        &mut self,
        spec: &RecordSpec,
        builder: &mut RecordBuilder<'py>,
        mut first: bool,
    ) -> Result<()> {
        let tag_index = spec.tag.as_ref().map(|(index, _)| *index);
        let offset = usize::from(tag_index.is_some());
        let mut fields = spec
            .wire_fields
            .iter()
            .copied()
            .filter(|&index| Some(index) != tag_index);
        let mut position = offset;
        while self.reader.next_element(first).map_err(syntax)? {
            first = false;
            let Some(index) = fields.next() else {
                return Err(Error::validation(format!(
                    "expected at most {} items, got more",
                    spec.wire_fields.len()
                )));
            };
            let value = self
                .value(spec.fields[index].node)
                .map_err(|e| e.at_index(position))?;
            builder.set(index, value);
            position += 1;
        }
        Ok(())
    }

    /// An array-like tagged union: the first item is the tag.
    fn positional_tagged(&mut self, spec: &TaggedUnionSpec) -> Result<Obj<'py>> {
        self.reader.begin_array().map_err(syntax)?;
        if !self.reader.next_element(true).map_err(syntax)? {
            return Err(Error::validation(
                "expected the tag as the array's first item",
            ));
        }
        let tag = self.tag_value().map_err(|e| e.at_index(0))?;
        let record = self.variant(spec, &tag).map_err(|e| e.at_index(0))?;
        let mut builder = RecordBuilder::new(record);
        self.set_tag(record, &tag, &mut builder)
            .map_err(|e| e.at_index(0))?;
        self.positional_fields(record, &mut builder, false)?;
        builder.finish(self.ctx.py, record)
    }

    /// The variant a tag value names.
    fn variant(&self, spec: &TaggedUnionSpec, tag: &LiteralValue) -> Result<&'p RecordSpec> {
        let plan: &'p Plan = self.ctx.plan;
        match spec.find(tag).map(|id| plan.node(id)) {
            Some(Node::Record(record)) => Ok(record),
            _ => Err(Error::validation(format!(
                "invalid value {tag} for tag field `{}`: expected {}",
                spec.tag_field,
                spec.describe_tags()
            ))),
        }
    }

    fn set_tag(
        &self,
        record: &RecordSpec,
        tag: &LiteralValue,
        builder: &mut RecordBuilder<'py>,
    ) -> Result<()> {
        if let Some((index, _)) = record.tag {
            let node = record.fields[index].node;
            let value = match tag {
                LiteralValue::Str(text) => self.ctx.string(node, text.as_bytes(), text.is_ascii()),
                LiteralValue::Int(number) => self.ctx.int(node, *number),
                LiteralValue::Bool(flag) => self.ctx.boolean(node, *flag),
            };
            builder.set(index, value?);
        }
        Ok(())
    }

    fn object(&mut self, id: NodeId) -> Result<Obj<'py>> {
        let id = self.ctx.resolve(id, Token::Object)?;
        self.enter()?;
        let plan = self.ctx.plan;
        let result = match plan.node(id) {
            Node::Record(spec) if !spec.array_like && spec.kind != RecordKind::NamedTuple => {
                self.record(spec)
            }
            Node::TaggedUnion(spec) => self.tagged(spec),
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
        self.record_fields(spec, &mut builder, true)?;
        builder.finish(self.ctx.py, spec)
    }

    /// Reads an object's remaining members into a record, through the closing brace.
    fn record_fields(
        &mut self,
        spec: &RecordSpec,
        builder: &mut RecordBuilder<'py>,
        mut first: bool,
    ) -> Result<()> {
        let mut hint = 0;
        loop {
            if let Some(&index) = spec.wire_fields.get(hint) {
                let field = &spec.fields[index];
                if self.reader.take_key(first, field.json_key()) {
                    first = false;
                    hint += 1;
                    let value = self
                        .value(field.node)
                        .map_err(|e| e.at_field(&field.wire_name))?;
                    builder.set(index, value);
                    continue;
                }
            }
            let key = self.reader.next_key(first).map_err(syntax)?;
            first = false;
            let Some(key) = key else { return Ok(()) };
            match spec.find_wire_field(key.bytes, hint) {
                Some(position) => {
                    hint = position + 1;
                    let index = spec.wire_fields[position];
                    let field = &spec.fields[index];
                    let value = self
                        .value(field.node)
                        .map_err(|e| e.at_field(&field.wire_name))?;
                    builder.set(index, value);
                }
                None => {
                    unknown_field(spec, key.text())?;
                    self.skip()?;
                }
            }
        }
    }

    fn skip(&mut self) -> Result<()> {
        self.reader
            .skip_value(MAX_DEPTH.saturating_sub(self.depth))
            .map_err(syntax)
    }

    /// A tagged union in one pass wherever possible: members before the tag are decoded at
    /// once when every variant decodes them alike, and only the others are read again once
    /// the tag has named the variant.
    fn tagged(&mut self, spec: &TaggedUnionSpec) -> Result<Obj<'py>> {
        self.reader.begin_object().map_err(syntax)?;
        let mut early: SmallVec<[(usize, Obj<'py>); 8]> = SmallVec::new();
        let mut deferred: SmallVec<[(usize, usize); 4]> = SmallVec::new();
        let mut first = true;
        let (record, tag) = loop {
            let key = self.reader.next_key(first).map_err(syntax)?;
            first = false;
            let Some(key) = key else {
                return Err(Error::validation(format!(
                    "object missing required field `{}`",
                    spec.tag_field
                )));
            };
            if key.bytes == spec.tag_field.as_bytes() {
                let tag = self.tag_value().map_err(|e| e.at_field(&spec.tag_field))?;
                let record = self
                    .variant(spec, &tag)
                    .map_err(|e| e.at_field(&spec.tag_field))?;
                break (record, tag);
            }
            match spec.key_index(key.bytes) {
                Some(k) => match spec.keys[k].shared {
                    Some(node) => {
                        let value = self
                            .value(node)
                            .map_err(|e| e.at_field(&spec.keys[k].wire_name))?;
                        early.push((k, value));
                    }
                    None => {
                        deferred.push((k, self.reader.offset()));
                        self.skip()?;
                    }
                },
                None => {
                    // Unknown to every variant; all variants share the codec's options.
                    if let Some(Node::Record(record)) =
                        spec.tags.first().map(|(_, id)| self.ctx.plan.node(*id))
                    {
                        unknown_field(record, key.text())?;
                    }
                    self.skip()?;
                }
            }
        };
        let mut builder = RecordBuilder::new(record);
        for (k, value) in early {
            let name = &spec.keys[k].wire_name;
            match record.field_index(name.as_bytes()) {
                Some(index) => builder.set(index, value),
                None => unknown_field(record, name)?,
            }
        }
        self.set_tag(record, &tag, &mut builder)
            .map_err(|e| e.at_field(&spec.tag_field))?;
        self.record_fields(record, &mut builder, false)?;
        if !deferred.is_empty() {
            let end = self.reader.offset();
            for (k, offset) in deferred {
                let name = &spec.keys[k].wire_name;
                let Some(index) = record.field_index(name.as_bytes()) else {
                    unknown_field(record, name)?;
                    continue;
                };
                self.reader.rewind(offset);
                let value = self
                    .value(record.fields[index].node)
                    .map_err(|e| e.at_field(name))?;
                builder.set(index, value);
            }
            self.reader.rewind(end);
        }
        builder.finish(self.ctx.py, record)
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
