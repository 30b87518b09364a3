//! Avro schemas: parsed once from their JSON text into an arena of nodes, validated against the
//! specification, with the Parsing Canonical Form and the CRC-64-AVRO (Rabin) fingerprint.
//!
//! The parse is one pass over the text with the strict JSON pull reader, linear in the text's
//! size: a named type is one node, and every reference to it (by name, or back to an enclosing
//! record) is that node's index, so a union of hundreds of records that refer to each other
//! costs a node per definition and an index per use. Names are resolved when the text has been
//! read, since a JSON object may give a record's `namespace` after its `fields`. The depth of
//! schema elements (unions, arrays, maps, record fields) is bounded by [`MAX_DEPTH`], so
//! nothing that walks a schema recursively can run out of stack.

use std::collections::HashMap;
use std::fmt;

use crate::json::read::{Number, Reader, ValueKind};

/// How deeply schema elements may nest (records in records, unions, arrays, maps).
pub const MAX_DEPTH: usize = 128;

/// The largest `fixed` size, as the reference implementation reads it (a Java int).
pub const MAX_FIXED_SIZE: u64 = i32::MAX as u64;

/// How deeply a value the parser does not interpret (an unknown attribute, a default) may nest.
const MAX_JSON_DEPTH: usize = 512;

pub type NodeId = u32;

/// An invalid schema, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError(pub String);

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SchemaError {}

type Result<T> = std::result::Result<T, SchemaError>;

fn fail<T>(message: impl Into<String>) -> Result<T> {
    Err(SchemaError(message.into()))
}

/// A logical type that applies to its node (an invalid or unknown one is dropped when parsed,
/// as the specification asks: the node is then read as its underlying type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logical {
    None,
    Decimal { precision: u32, scale: u32 },
    Uuid,
    Date,
    TimeMillis,
    TimeMicros,
    TimestampMillis,
    TimestampMicros,
    LocalTimestampMillis,
    LocalTimestampMicros,
    Duration,
}

impl Logical {
    /// The name the schema gives it (`""` for none).
    pub fn name(self) -> &'static str {
        match self {
            Logical::None => "",
            Logical::Decimal { .. } => "decimal",
            Logical::Uuid => "uuid",
            Logical::Date => "date",
            Logical::TimeMillis => "time-millis",
            Logical::TimeMicros => "time-micros",
            Logical::TimestampMillis => "timestamp-millis",
            Logical::TimestampMicros => "timestamp-micros",
            Logical::LocalTimestampMillis => "local-timestamp-millis",
            Logical::LocalTimestampMicros => "local-timestamp-micros",
            Logical::Duration => "duration",
        }
    }
}

/// A record field.
#[derive(Debug)]
pub struct Field {
    pub name: String,
    pub aliases: Vec<String>,
    pub schema: NodeId,
    /// The field's `default`, as JSON.
    pub default: Option<serde_json::Value>,
}

/// What a node is.
#[derive(Debug)]
pub enum Kind {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Fixed {
        size: usize,
    },
    /// `default`: the index of the default symbol.
    Enum {
        symbols: Vec<String>,
        default: Option<u32>,
    },
    Array {
        items: NodeId,
    },
    Map {
        values: NodeId,
    },
    Union {
        branches: Vec<NodeId>,
    },
    Record {
        fields: Vec<Field>,
    },
    /// A reference by name while the text is read; none is left in a parsed schema.
    Reference(u32),
}

/// The name of a named type (record, enum, fixed).
#[derive(Debug)]
pub struct Named {
    pub fullname: String,
    /// Full names.
    pub aliases: Vec<String>,
}

#[derive(Debug)]
pub struct Node {
    pub kind: Kind,
    pub logical: Logical,
    pub named: Option<Box<Named>>,
}

impl Node {
    fn plain(kind: Kind) -> Self {
        Node {
            kind,
            logical: Logical::None,
            named: None,
        }
    }

    /// The type's name in the schema: `record`, `long`, ...
    pub fn type_name(&self) -> &'static str {
        match &self.kind {
            Kind::Null => "null",
            Kind::Boolean => "boolean",
            Kind::Int => "int",
            Kind::Long => "long",
            Kind::Float => "float",
            Kind::Double => "double",
            Kind::Bytes => "bytes",
            Kind::String => "string",
            Kind::Fixed { .. } => "fixed",
            Kind::Enum { .. } => "enum",
            Kind::Array { .. } => "array",
            Kind::Map { .. } => "map",
            Kind::Union { .. } => "union",
            Kind::Record { .. } => "record",
            Kind::Reference(_) => "reference",
        }
    }

    /// The full name of a named type.
    pub fn fullname(&self) -> Option<&str> {
        self.named.as_ref().map(|named| named.fullname.as_str())
    }

    /// `record com.x.R`, `long (timestamp-millis)`, `string`: for messages.
    pub fn describe(&self) -> String {
        match (self.fullname(), self.logical) {
            (Some(name), _) => format!("{} {name}", self.type_name()),
            (None, Logical::None) => self.type_name().to_string(),
            (None, logical) => format!("{} ({})", self.type_name(), logical.name()),
        }
    }
}

/// A parsed schema: an arena of nodes and the root's index. Every index in a node points into
/// the arena; named types are cycles of indices where they refer to themselves.
#[derive(Debug)]
pub struct Schema {
    pub nodes: Vec<Node>,
    pub root: NodeId,
}

impl Schema {
    #[inline]
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// Parses and validates a schema from its JSON text.
    pub fn parse(text: &[u8]) -> Result<Schema> {
        let mut parser = Parser::new(text);
        let root = parser.schema(None)?;
        parser
            .reader
            .finish()
            .map_err(|err| SchemaError(format!("the schema is not valid JSON: {err}")))?;
        parser.finish(root)
    }

    /// The specification's Parsing Canonical Form.
    pub fn canonical_form(&self) -> String {
        let mut out = String::new();
        let mut seen = vec![false; self.nodes.len()];
        self.write_canonical(self.root, &mut seen, &mut out);
        out
    }

    fn write_canonical(&self, id: NodeId, seen: &mut [bool], out: &mut String) {
        let node = self.node(id);
        if let Some(named) = &node.named {
            if seen[id as usize] {
                push_json_str(out, &named.fullname);
                return;
            }
            seen[id as usize] = true;
            out.push_str("{\"name\":");
            push_json_str(out, &named.fullname);
            out.push_str(",\"type\":");
            match &node.kind {
                Kind::Record { fields } => {
                    out.push_str("\"record\",\"fields\":[");
                    for (i, field) in fields.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str("{\"name\":");
                        push_json_str(out, &field.name);
                        out.push_str(",\"type\":");
                        self.write_canonical(field.schema, seen, out);
                        out.push('}');
                    }
                    out.push_str("]}");
                }
                Kind::Enum { symbols, .. } => {
                    out.push_str("\"enum\",\"symbols\":[");
                    for (i, symbol) in symbols.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        push_json_str(out, symbol);
                    }
                    out.push_str("]}");
                }
                Kind::Fixed { size } => {
                    out.push_str("\"fixed\",\"size\":");
                    out.push_str(&size.to_string());
                    out.push('}');
                }
                _ => out.push_str("null}"),
            }
            return;
        }
        match &node.kind {
            Kind::Array { items } => {
                out.push_str("{\"type\":\"array\",\"items\":");
                self.write_canonical(*items, seen, out);
                out.push('}');
            }
            Kind::Map { values } => {
                out.push_str("{\"type\":\"map\",\"values\":");
                self.write_canonical(*values, seen, out);
                out.push('}');
            }
            Kind::Union { branches } => {
                out.push('[');
                for (i, branch) in branches.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    self.write_canonical(*branch, seen, out);
                }
                out.push(']');
            }
            _ => {
                out.push('"');
                out.push_str(node.type_name());
                out.push('"');
            }
        }
    }

    /// The CRC-64-AVRO fingerprint of the canonical form.
    pub fn fingerprint(&self) -> u64 {
        rabin(self.canonical_form().as_bytes())
    }
}

/// Names, symbols and field names are validated Avro names (ASCII letters, digits, `_`, `.`),
/// so no escape is ever needed; this writes any other text escaped all the same.
fn push_json_str(out: &mut String, text: &str) {
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ch if (ch as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", ch as u32)),
            ch => out.push(ch),
        }
    }
    out.push('"');
}

const RABIN_EMPTY: u64 = 0xc15d_213a_a4d7_a795;

const RABIN_TABLE: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut fp = i as u64;
        let mut bit = 0;
        while bit < 8 {
            fp = (fp >> 1) ^ (RABIN_EMPTY & (fp & 1).wrapping_neg());
            bit += 1;
        }
        table[i] = fp;
        i += 1;
    }
    table
};

/// The CRC-64-AVRO ("Rabin") fingerprint of `data`, as the specification defines it.
pub fn rabin(data: &[u8]) -> u64 {
    let mut fp = RABIN_EMPTY;
    for &byte in data {
        fp = (fp >> 8) ^ RABIN_TABLE[((fp ^ u64::from(byte)) & 0xff) as usize];
    }
    fp
}

const PRIMITIVES: [&str; 8] = [
    "null", "boolean", "int", "long", "float", "double", "bytes", "string",
];

fn primitive(name: &[u8]) -> Option<Kind> {
    Some(match name {
        b"null" => Kind::Null,
        b"boolean" => Kind::Boolean,
        b"int" => Kind::Int,
        b"long" => Kind::Long,
        b"float" => Kind::Float,
        b"double" => Kind::Double,
        b"bytes" => Kind::Bytes,
        b"string" => Kind::String,
        _ => return None,
    })
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
pub fn valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'A'..=b'Z' | b'a'..=b'z' | b'_'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Dotted names, each part a valid name.
fn valid_fullname(name: &str) -> bool {
    name.split('.').all(valid_name)
}

/// The namespace of a full name (`""` for none).
fn namespace_of(fullname: &str) -> &str {
    fullname.rsplit_once('.').map_or("", |(ns, _)| ns)
}

fn join(namespace: &str, name: &str) -> String {
    if name.contains('.') || namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}.{name}")
    }
}

/// What the `type` attribute of an object said.
enum TypeAttr {
    /// `record`, `enum`, `fixed`, `array`, `map`, or a primitive.
    Keyword(&'static str),
    /// A nested schema (`{"type": {...}}`, `{"type": [...]}`) or a name (`{"type": "R"}`).
    Schema(NodeId),
}

/// A named type waiting for its full name: the name and namespace as written, and the record
/// whose namespace it inherits.
struct PendingName {
    node: NodeId,
    name: String,
    namespace: Option<String>,
    aliases: Vec<String>,
    scope: Option<NodeId>,
    /// When the definition began (a reference must come after it).
    order: u32,
}

/// A name used as a type, waiting to be resolved.
struct PendingReference {
    name: String,
    scope: Option<NodeId>,
    order: u32,
}

/// The attributes of one schema object, as read (in any order).
#[derive(Default)]
struct Attributes {
    name: Option<String>,
    namespace: Option<String>,
    aliases: Vec<String>,
    logical: Option<String>,
    precision: Option<Number<'static>>,
    scale: Option<Number<'static>>,
    size: Option<Number<'static>>,
    default: Option<String>,
    /// Offsets of `fields`, `symbols`, `items` and `values` met before `type`.
    deferred: Vec<(&'static str, usize)>,
}

struct Parser<'a> {
    reader: Reader<'a>,
    nodes: Vec<Node>,
    names: Vec<PendingName>,
    references: Vec<PendingReference>,
    order: u32,
    depth: usize,
    /// The node of each primitive type, shared by every plain use of it.
    primitives: [Option<NodeId>; 8],
}

/// The attribute names the parser reads, as static strs (`""` for any other).
fn known_key(key: &[u8]) -> &'static str {
    match key {
        b"type" => "type",
        b"name" => "name",
        b"namespace" => "namespace",
        b"aliases" => "aliases",
        b"fields" => "fields",
        b"symbols" => "symbols",
        b"items" => "items",
        b"values" => "values",
        b"size" => "size",
        b"logicalType" => "logicalType",
        b"precision" => "precision",
        b"scale" => "scale",
        b"default" => "default",
        _ => "",
    }
}

fn json<T>(result: std::result::Result<T, crate::json::read::SyntaxError>) -> Result<T> {
    result.map_err(|err| SchemaError(format!("the schema is not valid JSON: {err}")))
}

fn number_owned(number: Number<'_>) -> Number<'static> {
    match number {
        Number::Int(value) => Number::Int(value),
        Number::BigInt(_) => Number::BigInt(""),
        Number::Float { value, .. } => Number::Float { value, text: b"" },
    }
}

impl<'a> Parser<'a> {
    fn new(text: &'a [u8]) -> Self {
        Parser {
            reader: Reader::new(text),
            nodes: Vec::new(),
            names: Vec::new(),
            references: Vec::new(),
            order: 0,
            depth: 0,
            primitives: [None; 8],
        }
    }

    fn add(&mut self, node: Node) -> Result<NodeId> {
        let id = NodeId::try_from(self.nodes.len())
            .map_err(|_| SchemaError("the schema has too many types".into()))?;
        self.nodes.push(node);
        Ok(id)
    }

    fn next_order(&mut self) -> u32 {
        self.order = self.order.saturating_add(1);
        self.order
    }

    fn primitive_node(&mut self, name: &[u8]) -> Result<Option<NodeId>> {
        let Some(index) = PRIMITIVES.iter().position(|p| p.as_bytes() == name) else {
            return Ok(None);
        };
        if let Some(id) = self.primitives[index] {
            return Ok(Some(id));
        }
        let kind = primitive(name).unwrap_or(Kind::Null);
        let id = self.add(Node::plain(kind))?;
        self.primitives[index] = Some(id);
        Ok(Some(id))
    }

    fn string(&mut self, what: &str) -> Result<String> {
        match json(self.reader.peek_kind())? {
            ValueKind::String => {}
            _ => return fail(format!("{what} must be a string")),
        }
        let text = json(self.reader.read_str())?;
        Ok(text.text().to_string())
    }

    fn strings(&mut self, what: &str) -> Result<Vec<String>> {
        if json(self.reader.peek_kind())? != ValueKind::Array {
            return fail(format!("{what} must be an array of strings"));
        }
        json(self.reader.begin_array())?;
        let mut out = Vec::new();
        let mut first = true;
        while json(self.reader.next_element(first))? {
            first = false;
            out.push(self.string(what)?);
        }
        Ok(out)
    }

    fn number(&mut self, what: &str) -> Result<Number<'static>> {
        if json(self.reader.peek_kind())? != ValueKind::Number {
            return fail(format!("{what} must be a number"));
        }
        let number = json(self.reader.read_number())?;
        Ok(number_owned(number))
    }

    fn skip(&mut self) -> Result<()> {
        let result = self.reader.skip_value(MAX_JSON_DEPTH);
        json(result)
    }

    /// The JSON text of the next value, skipped.
    fn raw(&mut self) -> Result<String> {
        json(self.reader.peek_kind())?;
        let start = self.reader.offset();
        self.skip()?;
        let bytes = self.reader.taken_since(start);
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }

    /// One schema element, in the namespace scope of record `scope` (`None`: the null namespace).
    fn schema(&mut self, scope: Option<NodeId>) -> Result<NodeId> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return fail(format!(
                "the Avro schema nests deeper than {MAX_DEPTH} levels"
            ));
        }
        let result = self.element(scope);
        self.depth -= 1;
        result
    }

    fn element(&mut self, scope: Option<NodeId>) -> Result<NodeId> {
        match json(self.reader.peek_kind())? {
            ValueKind::String => {
                let name = json(self.reader.read_str())?.text().to_string();
                self.named_reference(name, scope)
            }
            ValueKind::Array => {
                json(self.reader.begin_array())?;
                let mut branches = Vec::new();
                let mut first = true;
                while json(self.reader.next_element(first))? {
                    first = false;
                    let branch = self.schema(scope)?;
                    if matches!(self.nodes[branch as usize].kind, Kind::Union { .. }) {
                        return fail("a union may not contain another union directly");
                    }
                    branches.push(branch);
                }
                self.add(Node::plain(Kind::Union { branches }))
            }
            ValueKind::Object => self.object(scope),
            _ => fail("a schema must be a type name, an object or an array (a union)"),
        }
    }

    fn named_reference(&mut self, name: String, scope: Option<NodeId>) -> Result<NodeId> {
        if let Some(id) = self.primitive_node(name.as_bytes())? {
            return Ok(id);
        }
        match name.as_str() {
            "record" | "error" | "enum" | "fixed" | "array" | "map" => {
                return fail(format!(
                    "\"{name}\" is a complex type: it needs an object with its attributes"
                ))
            }
            _ => {}
        }
        if !valid_fullname(&name) {
            return fail(format!("{name:?} is not a valid Avro type name"));
        }
        let order = self.next_order();
        let index = u32::try_from(self.references.len())
            .map_err(|_| SchemaError("the schema has too many references".into()))?;
        self.references
            .push(PendingReference { name, scope, order });
        self.add(Node::plain(Kind::Reference(index)))
    }

    fn object(&mut self, scope: Option<NodeId>) -> Result<NodeId> {
        json(self.reader.begin_object())?;
        let mut attrs = Attributes::default();
        let mut type_attr: Option<TypeAttr> = None;
        // A record's node exists as soon as its type is known, so that its fields' named
        // types take their namespace from it.
        let mut record: Option<(NodeId, u32)> = None;
        let mut fields: Option<Vec<Field>> = None;
        let mut symbols: Option<Vec<String>> = None;
        let mut items: Option<NodeId> = None;
        let mut values: Option<NodeId> = None;
        let mut first = true;
        while let Some(key) = json(self.reader.next_key(first))?.map(|key| known_key(key.bytes)) {
            first = false;
            match key {
                "type" => {
                    if type_attr.is_some() {
                        return fail("a schema object has two \"type\" attributes");
                    }
                    let found = self.type_attr(scope)?;
                    if let TypeAttr::Keyword("record") = found {
                        record = Some(self.new_record()?);
                    }
                    type_attr = Some(found);
                }
                "fields" | "symbols" | "items" | "values" => match &type_attr {
                    None => {
                        attrs.deferred.push((key, self.reader.offset()));
                        self.skip()?;
                    }
                    Some(found) => self.body(
                        key,
                        found,
                        scope,
                        record,
                        &mut fields,
                        &mut symbols,
                        &mut items,
                        &mut values,
                    )?,
                },
                "name" => attrs.name = Some(self.string("a name")?),
                "namespace" => {
                    attrs.namespace = match json(self.reader.peek_kind())? {
                        ValueKind::Null => {
                            json(self.reader.read_null())?;
                            Some(String::new())
                        }
                        _ => Some(self.string("a namespace")?),
                    }
                }
                "aliases" => attrs.aliases = self.strings("aliases")?,
                "logicalType" => {
                    attrs.logical = match json(self.reader.peek_kind())? {
                        ValueKind::String => Some(self.string("logicalType")?),
                        _ => {
                            self.skip()?;
                            None
                        }
                    }
                }
                "precision" | "scale" | "size" => {
                    let number = if json(self.reader.peek_kind())? == ValueKind::Number {
                        Some(self.number(key)?)
                    } else if key == "size" {
                        return fail("a fixed's size must be a non-negative integer");
                    } else {
                        self.skip()?;
                        None
                    };
                    match key {
                        "precision" => attrs.precision = number,
                        "scale" => attrs.scale = number,
                        _ => attrs.size = number,
                    }
                }
                "default" => attrs.default = Some(self.raw()?),
                _ => self.skip()?,
            }
        }
        let Some(found) = type_attr else {
            return fail("a schema object needs a \"type\" attribute");
        };
        if !attrs.deferred.is_empty() {
            let end = self.reader.offset();
            for (key, offset) in std::mem::take(&mut attrs.deferred) {
                self.reader.rewind(offset);
                self.body(
                    key,
                    &found,
                    scope,
                    record,
                    &mut fields,
                    &mut symbols,
                    &mut items,
                    &mut values,
                )?;
            }
            self.reader.rewind(end);
        }
        match found {
            TypeAttr::Schema(id) => Ok(id),
            TypeAttr::Keyword(keyword) => self.build(
                keyword, attrs, scope, record, fields, symbols, items, values,
            ),
        }
    }

    fn new_record(&mut self) -> Result<(NodeId, u32)> {
        let order = self.next_order();
        let id = self.add(Node::plain(Kind::Record { fields: Vec::new() }))?;
        Ok((id, order))
    }

    fn type_attr(&mut self, scope: Option<NodeId>) -> Result<TypeAttr> {
        if json(self.reader.peek_kind())? != ValueKind::String {
            return Ok(TypeAttr::Schema(self.schema(scope)?));
        }
        let name = json(self.reader.read_str())?.text().to_string();
        let keyword = match name.as_str() {
            "record" => "record",
            "enum" => "enum",
            "fixed" => "fixed",
            "array" => "array",
            "map" => "map",
            "error" => {
                return fail(
                    "\"type\": \"error\" is a protocol's type, not a schema's (use \"record\")",
                )
            }
            other => match PRIMITIVES.iter().find(|p| **p == other) {
                Some(p) => p,
                None => {
                    self.depth += 1;
                    if self.depth > MAX_DEPTH {
                        return fail(format!(
                            "the Avro schema nests deeper than {MAX_DEPTH} levels"
                        ));
                    }
                    let reference = self.named_reference(name, scope);
                    self.depth -= 1;
                    return Ok(TypeAttr::Schema(reference?));
                }
            },
        };
        Ok(TypeAttr::Keyword(keyword))
    }

    /// Reads the value of `fields`, `symbols`, `items` or `values` once the type is known; an
    /// attribute that does not belong to the type is skipped, as any unknown attribute is.
    #[allow(clippy::too_many_arguments)]
    fn body(
        &mut self,
        key: &'static str,
        found: &TypeAttr,
        scope: Option<NodeId>,
        record: Option<(NodeId, u32)>,
        fields: &mut Option<Vec<Field>>,
        symbols: &mut Option<Vec<String>>,
        items: &mut Option<NodeId>,
        values: &mut Option<NodeId>,
    ) -> Result<()> {
        let keyword = match found {
            TypeAttr::Keyword(keyword) => *keyword,
            TypeAttr::Schema(_) => "",
        };
        match (key, keyword) {
            ("fields", "record") => {
                *fields = Some(self.fields(record.map(|(id, _)| id))?);
            }
            ("symbols", "enum") => *symbols = Some(self.strings("an enum's symbols")?),
            ("items", "array") => *items = Some(self.schema(scope)?),
            ("values", "map") => *values = Some(self.schema(scope)?),
            _ => self.skip()?,
        }
        Ok(())
    }

    fn fields(&mut self, record: Option<NodeId>) -> Result<Vec<Field>> {
        if json(self.reader.peek_kind())? != ValueKind::Array {
            return fail("a record's fields must be an array");
        }
        json(self.reader.begin_array())?;
        let mut out = Vec::new();
        let mut first = true;
        while json(self.reader.next_element(first))? {
            first = false;
            out.push(self.field(record)?);
        }
        Ok(out)
    }

    fn field(&mut self, record: Option<NodeId>) -> Result<Field> {
        if json(self.reader.peek_kind())? != ValueKind::Object {
            return fail("a record field must be an object");
        }
        json(self.reader.begin_object())?;
        let mut name = None;
        let mut schema = None;
        let mut default = None;
        let mut aliases = Vec::new();
        let mut first = true;
        while let Some(key) = json(self.reader.next_key(first))?.map(|key| known_key(key.bytes)) {
            first = false;
            match key {
                "name" => name = Some(self.string("a field name")?),
                "type" => schema = Some(self.schema(record)?),
                "default" => {
                    let text = self.raw()?;
                    let value: serde_json::Value = serde_json::from_str(&text).map_err(|err| {
                        SchemaError(format!("a field default is not valid JSON: {err}"))
                    })?;
                    default = Some(value);
                }
                "aliases" => aliases = self.strings("a field's aliases")?,
                _ => self.skip()?,
            }
        }
        let Some(name) = name else {
            return fail("a record field needs a \"name\"");
        };
        if !valid_name(&name) {
            return fail(format!("field name {name:?} is not a valid Avro name"));
        }
        for alias in &aliases {
            if !valid_name(alias) {
                return fail(format!(
                    "alias {alias:?} of field {name:?} is not a valid Avro name"
                ));
            }
        }
        let Some(schema) = schema else {
            return fail(format!("field {name:?} needs a \"type\""));
        };
        Ok(Field {
            name,
            aliases,
            schema,
            default,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        &mut self,
        keyword: &'static str,
        attrs: Attributes,
        scope: Option<NodeId>,
        record: Option<(NodeId, u32)>,
        fields: Option<Vec<Field>>,
        symbols: Option<Vec<String>>,
        items: Option<NodeId>,
        values: Option<NodeId>,
    ) -> Result<NodeId> {
        let logical_name = attrs.logical.as_deref().unwrap_or("");
        match keyword {
            "record" => {
                let Some((id, order)) = record else {
                    return fail("internal: a record without its node");
                };
                let Some(fields) = fields else {
                    return fail("a record needs \"fields\"");
                };
                let mut seen = std::collections::HashSet::new();
                for field in &fields {
                    if !seen.insert(field.name.as_str()) {
                        return fail(format!("field name {:?} appears twice", field.name));
                    }
                }
                self.nodes[id as usize].kind = Kind::Record { fields };
                self.pending_name(id, attrs, scope, order)?;
                Ok(id)
            }
            "enum" => {
                let Some(symbols) = symbols else {
                    return fail("an enum needs \"symbols\"");
                };
                let mut seen = std::collections::HashSet::new();
                for symbol in &symbols {
                    if !valid_name(symbol) {
                        return fail(format!("enum symbol {symbol:?} is not a valid Avro name"));
                    }
                    if !seen.insert(symbol.as_str()) {
                        return fail(format!("enum symbol {symbol:?} appears twice"));
                    }
                }
                let default = match &attrs.default {
                    None => None,
                    Some(raw) => {
                        let value: serde_json::Value =
                            serde_json::from_str(raw).map_err(|err| {
                                SchemaError(format!("an enum default is not valid JSON: {err}"))
                            })?;
                        let position = value
                            .as_str()
                            .and_then(|text| symbols.iter().position(|s| s == text));
                        match position {
                            Some(position) => Some(position as u32),
                            None => {
                                return fail(format!(
                                    "the enum default {value} is not one of its symbols"
                                ))
                            }
                        }
                    }
                };
                let order = self.next_order();
                let id = self.add(Node::plain(Kind::Enum { symbols, default }))?;
                self.pending_name(id, attrs, scope, order)?;
                Ok(id)
            }
            "fixed" => {
                let size = match attrs.size {
                    Some(Number::Int(size)) if size >= 0 => size as u64,
                    _ => return fail("a fixed's size must be a non-negative integer"),
                };
                if size > MAX_FIXED_SIZE {
                    return fail(format!(
                        "a fixed has size {size}, more than {MAX_FIXED_SIZE}"
                    ));
                }
                let size = size as usize;
                let logical = match logical_name {
                    "decimal" => decimal(&attrs, Some(size)),
                    "uuid" if size == 16 => Logical::Uuid,
                    "duration" if size == 12 => Logical::Duration,
                    _ => Logical::None,
                };
                let order = self.next_order();
                let id = self.add(Node {
                    kind: Kind::Fixed { size },
                    logical,
                    named: None,
                })?;
                self.pending_name(id, attrs, scope, order)?;
                Ok(id)
            }
            "array" => {
                let Some(items) = items else {
                    return fail("an array needs \"items\"");
                };
                self.add(Node::plain(Kind::Array { items }))
            }
            "map" => {
                let Some(values) = values else {
                    return fail("a map needs \"values\"");
                };
                self.add(Node::plain(Kind::Map { values }))
            }
            primitive_name => {
                let logical = match (primitive_name, logical_name) {
                    ("bytes", "decimal") => decimal(&attrs, None),
                    ("string", "uuid") => Logical::Uuid,
                    ("int", "date") => Logical::Date,
                    ("int", "time-millis") => Logical::TimeMillis,
                    ("long", "time-micros") => Logical::TimeMicros,
                    ("long", "timestamp-millis") => Logical::TimestampMillis,
                    ("long", "timestamp-micros") => Logical::TimestampMicros,
                    ("long", "local-timestamp-millis") => Logical::LocalTimestampMillis,
                    ("long", "local-timestamp-micros") => Logical::LocalTimestampMicros,
                    _ => Logical::None,
                };
                if logical == Logical::None {
                    return Ok(self
                        .primitive_node(primitive_name.as_bytes())?
                        .unwrap_or_default());
                }
                let kind = primitive(primitive_name.as_bytes()).unwrap_or(Kind::Null);
                self.add(Node {
                    kind,
                    logical,
                    named: None,
                })
            }
        }
    }

    fn pending_name(
        &mut self,
        node: NodeId,
        attrs: Attributes,
        scope: Option<NodeId>,
        order: u32,
    ) -> Result<()> {
        let Some(name) = attrs.name else {
            return fail(format!(
                "a {} needs a \"name\"",
                self.nodes[node as usize].type_name()
            ));
        };
        self.names.push(PendingName {
            node,
            name,
            namespace: attrs.namespace,
            aliases: attrs.aliases,
            scope,
            order,
        });
        Ok(())
    }

    /// Gives every named type its full name, resolves the references to them and checks what
    /// needs the whole schema (unions' branches, field defaults).
    fn finish(mut self, root: NodeId) -> Result<Schema> {
        self.names.sort_by_key(|pending| pending.order);
        let mut defined: HashMap<String, (NodeId, u32)> = HashMap::new();
        for pending in std::mem::take(&mut self.names) {
            let inherited = match pending.scope {
                Some(scope) => self.nodes[scope as usize]
                    .fullname()
                    .map(namespace_of)
                    .unwrap_or("")
                    .to_string(),
                None => String::new(),
            };
            let namespace = pending.namespace.as_deref().unwrap_or(&inherited);
            let fullname = join(namespace, &pending.name);
            if !valid_fullname(&fullname) || fullname.ends_with('.') {
                return fail(format!(
                    "{:?} is not a valid Avro name (names are [A-Za-z_][A-Za-z0-9_]*, dotted \
                     in namespaces)",
                    fullname
                ));
            }
            let short = fullname.rsplit('.').next().unwrap_or("");
            if PRIMITIVES.contains(&short) {
                return fail(format!(
                    "the primitive type name {short:?} cannot name a {}",
                    self.nodes[pending.node as usize].type_name()
                ));
            }
            let own_namespace = namespace_of(&fullname).to_string();
            let mut aliases = Vec::with_capacity(pending.aliases.len());
            for alias in &pending.aliases {
                if !valid_fullname(alias) {
                    return fail(format!("alias {alias:?} is not a valid Avro name"));
                }
                aliases.push(join(&own_namespace, alias));
            }
            if defined.contains_key(&fullname) {
                return fail(format!("Avro name {fullname:?} is defined twice"));
            }
            defined.insert(fullname.clone(), (pending.node, pending.order));
            self.nodes[pending.node as usize].named = Some(Box::new(Named { fullname, aliases }));
        }
        let mut targets = Vec::with_capacity(self.references.len());
        for reference in &self.references {
            let namespace = match reference.scope {
                Some(scope) => self.nodes[scope as usize]
                    .fullname()
                    .map(namespace_of)
                    .unwrap_or(""),
                None => "",
            };
            let full = join(namespace, &reference.name);
            let found = defined
                .get(&full)
                .or_else(|| defined.get(&reference.name))
                .copied();
            match found {
                Some((node, order)) if order < reference.order => targets.push(node),
                Some(_) => {
                    return fail(format!(
                        "the type {:?} is used before it is defined",
                        reference.name
                    ))
                }
                None => return fail(format!("unknown Avro type name {:?}", reference.name)),
            }
        }
        let resolve = |id: NodeId, nodes: &[Node]| match nodes[id as usize].kind {
            Kind::Reference(index) => targets[index as usize],
            _ => id,
        };
        for index in 0..self.nodes.len() {
            let mut kind = std::mem::replace(&mut self.nodes[index].kind, Kind::Null);
            match &mut kind {
                Kind::Array { items } => *items = resolve(*items, &self.nodes),
                Kind::Map { values } => *values = resolve(*values, &self.nodes),
                Kind::Union { branches } => {
                    for branch in branches.iter_mut() {
                        *branch = resolve(*branch, &self.nodes);
                    }
                }
                Kind::Record { fields } => {
                    for field in fields.iter_mut() {
                        field.schema = resolve(field.schema, &self.nodes);
                    }
                }
                _ => {}
            }
            self.nodes[index].kind = kind;
        }
        let root = resolve(root, &self.nodes);
        let schema = Schema {
            nodes: self.nodes,
            root,
        };
        for node in &schema.nodes {
            match &node.kind {
                Kind::Union { branches } => check_union(&schema, branches)?,
                Kind::Record { fields } => {
                    for field in fields {
                        if let Some(default) = &field.default {
                            if !default_fits(&schema, field.schema, default, 0) {
                                return fail(format!(
                                    "the default {} of field {:?} of {} does not match its \
                                     type {}",
                                    crate::quote::cut(&default.to_string()),
                                    field.name,
                                    node.fullname().unwrap_or("a record"),
                                    schema.node(field.schema).describe()
                                ));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(schema)
    }
}

/// A decimal's logical type, or none when its attributes are invalid (the specification asks
/// for the underlying type then): precision a positive integer, scale from 0 to the precision,
/// and for a fixed, a precision its size can hold.
fn decimal(attrs: &Attributes, size: Option<usize>) -> Logical {
    let Some(Number::Int(precision)) = attrs.precision else {
        return Logical::None;
    };
    let scale = match attrs.scale {
        None => 0,
        Some(Number::Int(scale)) => scale,
        Some(_) => return Logical::None,
    };
    if precision < 1 || precision > i64::from(u32::MAX) || scale < 0 || scale > precision {
        return Logical::None;
    }
    if let Some(size) = size {
        if precision as f64 > max_decimal_digits(size) {
            return Logical::None;
        }
    }
    Logical::Decimal {
        precision: precision as u32,
        scale: scale as u32,
    }
}

/// The most decimal digits a two's-complement number of `size` bytes holds in full.
pub fn max_decimal_digits(size: usize) -> f64 {
    if size == 0 {
        return 0.0;
    }
    ((8 * size - 1) as f64 * std::f64::consts::LOG10_2).floor()
}

fn check_union(schema: &Schema, branches: &[NodeId]) -> Result<()> {
    let mut seen: Vec<String> = Vec::with_capacity(branches.len());
    for &branch in branches {
        let node = schema.node(branch);
        if matches!(node.kind, Kind::Union { .. }) {
            return fail("a union may not contain another union directly");
        }
        let key = match node.fullname() {
            Some(name) => name.to_string(),
            None => node.type_name().to_string(),
        };
        if seen.contains(&key) {
            return fail(format!("a union has two branches of type {key:?}"));
        }
        seen.push(key);
    }
    Ok(())
}

/// Whether a field default (JSON) is a value of schema node `id`: a union's default may be a
/// value of any of its branches, as fastavro and the apache-avro crate accept.
pub fn default_fits(schema: &Schema, id: NodeId, value: &serde_json::Value, depth: usize) -> bool {
    use serde_json::Value;
    if depth > MAX_JSON_DEPTH {
        return false;
    }
    let node = schema.node(id);
    match (&node.kind, value) {
        (Kind::Null, Value::Null) => true,
        (Kind::Boolean, Value::Bool(_)) => true,
        (Kind::Int, Value::Number(n)) => n.as_i64().is_some_and(|v| i32::try_from(v).is_ok()),
        (Kind::Long, Value::Number(n)) => n.as_i64().is_some(),
        (Kind::Float | Kind::Double, Value::Number(_)) => true,
        (Kind::String, Value::String(_)) => true,
        (Kind::Bytes, Value::String(text)) => text.chars().all(|c| (c as u32) < 256),
        (Kind::Fixed { size }, Value::String(text)) => {
            text.chars().all(|c| (c as u32) < 256) && text.chars().count() == *size
        }
        (Kind::Enum { symbols, .. }, Value::String(text)) => symbols.iter().any(|s| s == text),
        (Kind::Array { items }, Value::Array(values)) => values
            .iter()
            .all(|v| default_fits(schema, *items, v, depth + 1)),
        (Kind::Map { values: of }, Value::Object(map)) => map
            .values()
            .all(|v| default_fits(schema, *of, v, depth + 1)),
        (Kind::Union { branches }, value) => branches
            .iter()
            .any(|b| default_fits(schema, *b, value, depth + 1)),
        (Kind::Record { fields }, Value::Object(map)) => {
            fields.iter().all(|field| match map.get(&field.name) {
                Some(v) => default_fits(schema, field.schema, v, depth + 1),
                None => field.default.is_some(),
            })
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        Schema::parse(text.as_bytes()).unwrap().canonical_form()
    }

    fn error(text: &str) -> String {
        Schema::parse(text.as_bytes()).unwrap_err().0
    }

    #[test]
    fn fingerprints_of_the_specification() {
        assert_eq!(rabin(br#""null""#) as i64, 7195948357588979594);
        assert_eq!(rabin(br#""int""#) as i64, 8247732601305521295);
    }

    #[test]
    fn names_resolve_whatever_the_attribute_order() {
        let text = r#"{"fields":[{"name":"b","type":"B"},{"name":"c","type":"x.B"}],
            "type":"record","name":"A","namespace":"x"}"#;
        assert!(error(text).contains("unknown"));
        let text = r#"["B", {"type":"fixed","name":"B","size":1}]"#;
        assert!(error(text).contains("before it is defined"));
        let text = r#"{"fields":[{"name":"b","type":{"type":"fixed","name":"B","size":2}},
            {"name":"c","type":"B"},{"name":"d","type":"A"}],"type":"record","name":"A",
            "namespace":"x"}"#;
        assert_eq!(
            canonical(text),
            r#"{"name":"x.A","type":"record","fields":[{"name":"b","type":{"name":"x.B","type":"fixed","size":2}},{"name":"c","type":"x.B"},{"name":"d","type":"x.A"}]}"#
        );
    }

    #[test]
    fn refusals() {
        assert!(error(r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"a","type":"int"}]}"#).contains("twice"));
        assert!(error(r#"["int","int"]"#).contains("two branches"));
        assert!(error(r#"[["int"]]"#).contains("another union"));
        assert!(
            error(r#"{"type":"enum","name":"E","symbols":["A"],"default":"B"}"#)
                .contains("default")
        );
        assert!(error(r#"{"type":"fixed","name":"F","size":"16"}"#).contains("size"));
        assert!(error(r#""Nope""#).contains("unknown"));
        assert!(error(r#"{"type":"error","name":"E","fields":[]}"#).contains("error"));
        assert!(error(r#"{"type":"record","name":"int","fields":[]}"#).contains("primitive"));
    }

    #[test]
    fn deep_schemas_are_refused_without_recursing_past_the_limit() {
        let mut text = String::from("\"long\"");
        for _ in 0..MAX_DEPTH + 1 {
            text = format!("{{\"type\":\"array\",\"items\":{text}}}");
        }
        assert!(error(&text).contains("deeper"));
    }

    #[test]
    fn shared_names_stay_one_node() {
        let mut fields = Vec::new();
        for i in 0..50 {
            fields.push(format!(r#"{{"name":"f{i}","type":["null","R"]}}"#));
        }
        let text = format!(
            r#"{{"type":"record","name":"R","fields":[{}]}}"#,
            fields.join(",")
        );
        let schema = Schema::parse(text.as_bytes()).unwrap();
        let records = schema
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, Kind::Record { .. }))
            .count();
        assert_eq!(records, 1);
    }
}
