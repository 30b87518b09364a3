//! Avro schemas: parsed once from their JSON text into an arena of nodes, validated against the
//! specification, with the Parsing Canonical Form and the CRC-64-AVRO (Rabin) fingerprint.
//!
//! The parse is one pass over the text with the strict JSON pull reader, linear in the text's
//! size: a named type is one node, and every reference to it (by name, or back to an enclosing
//! record) is that node's index, so a union of hundreds of records that refer to each other
//! costs a node per definition and an index per use. Names are resolved when the text has been
//! read, since a JSON object may give a record's `namespace` after its `fields`. The arena is
//! compact (a node is 24 bytes, a field 20, and every name, symbol and alias lives in one
//! string), and with
//! [`Sharing::Unions`] equal unions (`["null", "R"]` in a thousand fields) are one node, so
//! that what walks the schema afterwards meets each once. The depth of
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

/// A child index that is not a node yet: a name used as a type, to be resolved (the low bits
/// are its index among the parser's pending references).
const REFERENCE: NodeId = 1 << 31;

/// No default, no aliases.
const NONE: u32 = u32::MAX;

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

/// Text kept in the schema's one string of names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    start: u32,
    len: u32,
}

/// The name of a named type (record, enum, fixed): its full name, and its aliases' full names.
#[derive(Debug)]
pub struct Named {
    pub name: Span,
    pub aliases: Box<[Span]>,
}

#[derive(Debug)]
pub struct Fixed {
    pub named: Named,
    pub size: usize,
    pub logical: Logical,
}

#[derive(Debug)]
pub struct Enum {
    pub named: Named,
    pub symbols: Box<[Span]>,
    /// The index of the default symbol.
    pub default: Option<u32>,
}

#[derive(Debug)]
pub struct Record {
    pub named: Named,
    pub fields: Box<[Field]>,
}

/// A record field. Its default and aliases, which few fields have, are kept apart
/// ([`Schema::default_of`], [`Schema::aliases_of`]).
#[derive(Debug)]
pub struct Field {
    pub name: Span,
    pub schema: NodeId,
    default: u32,
    aliases: u32,
}

/// A node of the arena.
#[derive(Debug)]
pub enum Node {
    Null,
    Boolean,
    Int(Logical),
    Long(Logical),
    Float,
    Double,
    Bytes(Logical),
    String(Logical),
    Fixed(Box<Fixed>),
    Enum(Box<Enum>),
    Array(NodeId),
    Map(NodeId),
    Union(Box<[NodeId]>),
    Record(Box<Record>),
}

impl Node {
    /// The type's name in the schema: `record`, `long`, ...
    pub fn type_name(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Boolean => "boolean",
            Node::Int(_) => "int",
            Node::Long(_) => "long",
            Node::Float => "float",
            Node::Double => "double",
            Node::Bytes(_) => "bytes",
            Node::String(_) => "string",
            Node::Fixed(_) => "fixed",
            Node::Enum(_) => "enum",
            Node::Array(_) => "array",
            Node::Map(_) => "map",
            Node::Union(_) => "union",
            Node::Record(_) => "record",
        }
    }

    pub fn logical(&self) -> Logical {
        match self {
            Node::Int(l) | Node::Long(l) | Node::Bytes(l) | Node::String(l) => *l,
            Node::Fixed(fixed) => fixed.logical,
            _ => Logical::None,
        }
    }

    pub fn named(&self) -> Option<&Named> {
        match self {
            Node::Fixed(fixed) => Some(&fixed.named),
            Node::Enum(inner) => Some(&inner.named),
            Node::Record(record) => Some(&record.named),
            _ => None,
        }
    }

    fn named_mut(&mut self) -> Option<&mut Named> {
        match self {
            Node::Fixed(fixed) => Some(&mut fixed.named),
            Node::Enum(inner) => Some(&mut inner.named),
            Node::Record(record) => Some(&mut record.named),
            _ => None,
        }
    }

    /// Whether two nodes are of the same type (`Int` and `Long` are not; logical types aside).
    pub fn same_type(&self, other: &Node) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

/// Whether equal unions share one node: for writer schemas, which are only read; not for a
/// codec's own schema, whose every union is bound to the classes at its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    None,
    Unions,
}

/// A parsed schema: an arena of nodes and the root's index. Every index in a node points into
/// the arena; named types are cycles of indices where they refer to themselves.
#[derive(Debug)]
pub struct Schema {
    pub nodes: Vec<Node>,
    pub root: NodeId,
    strings: String,
    defaults: Vec<serde_json::Value>,
    aliases: Vec<Box<[Span]>>,
}

impl Schema {
    #[inline]
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    #[inline]
    pub fn text(&self, span: Span) -> &str {
        &self.strings[span.start as usize..(span.start + span.len) as usize]
    }

    /// The full name of a named type.
    pub fn fullname(&self, id: NodeId) -> Option<&str> {
        self.node(id).named().map(|named| self.text(named.name))
    }

    pub fn default_of(&self, field: &Field) -> Option<&serde_json::Value> {
        self.defaults.get(field.default as usize)
    }

    pub fn aliases_of(&self, field: &Field) -> &[Span] {
        self.aliases
            .get(field.aliases as usize)
            .map_or(&[], |aliases| aliases)
    }

    /// `record com.x.R`, `long (timestamp-millis)`, `string`: for messages.
    pub fn describe(&self, id: NodeId) -> String {
        let node = self.node(id);
        match (self.fullname(id), node.logical()) {
            (Some(name), _) => format!("{} {name}", node.type_name()),
            (None, Logical::None) => node.type_name().to_string(),
            (None, logical) => format!("{} ({})", node.type_name(), logical.name()),
        }
    }

    /// Parses and validates a schema from its JSON text.
    pub fn parse(text: &[u8], sharing: Sharing) -> Result<Schema> {
        let mut parser = Parser::new(text, sharing);
        let root = parser.schema(None)?;
        json(parser.reader.finish())?;
        parser.finish(root)
    }

    /// The specification's Parsing Canonical Form.
    pub fn canonical_form(&self) -> String {
        let mut out = String::new();
        self.write_canonical(self.root, &mut vec![false; self.nodes.len()], &mut out);
        out
    }

    /// Names, symbols and field names are validated Avro names (ASCII letters, digits, `_`
    /// and dots), so none needs an escape.
    fn write_canonical(&self, id: NodeId, seen: &mut [bool], out: &mut String) {
        let node = self.node(id);
        if let Some(named) = node.named() {
            let name = self.text(named.name);
            if std::mem::replace(&mut seen[id as usize], true) {
                out.push('"');
                out.push_str(name);
                out.push('"');
                return;
            }
            out.push_str("{\"name\":\"");
            out.push_str(name);
            out.push_str("\",\"type\":");
        }
        match node {
            Node::Record(record) => {
                out.push_str("\"record\",\"fields\":[");
                for (i, field) in record.fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str("{\"name\":\"");
                    out.push_str(self.text(field.name));
                    out.push_str("\",\"type\":");
                    self.write_canonical(field.schema, seen, out);
                    out.push('}');
                }
                out.push_str("]}");
            }
            Node::Enum(inner) => {
                out.push_str("\"enum\",\"symbols\":[");
                for (i, symbol) in inner.symbols.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push('"');
                    out.push_str(self.text(*symbol));
                    out.push('"');
                }
                out.push_str("]}");
            }
            Node::Fixed(fixed) => {
                out.push_str("\"fixed\",\"size\":");
                out.push_str(&fixed.size.to_string());
                out.push('}');
            }
            Node::Array(items) => {
                out.push_str("{\"type\":\"array\",\"items\":");
                self.write_canonical(*items, seen, out);
                out.push('}');
            }
            Node::Map(values) => {
                out.push_str("{\"type\":\"map\",\"values\":");
                self.write_canonical(*values, seen, out);
                out.push('}');
            }
            Node::Union(branches) => {
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

fn primitive(name: &str, logical: Logical) -> Option<Node> {
    Some(match name {
        "null" => Node::Null,
        "boolean" => Node::Boolean,
        "int" => Node::Int(logical),
        "long" => Node::Long(logical),
        "float" => Node::Float,
        "double" => Node::Double,
        "bytes" => Node::Bytes(logical),
        "string" => Node::String(logical),
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
    name: Span,
    namespace: Option<Span>,
    aliases: Vec<Span>,
    scope: Option<NodeId>,
    /// When the definition began (a reference must come after it).
    order: u32,
}

/// A name used as a type, waiting to be resolved.
struct PendingReference {
    name: Span,
    scope: Option<NodeId>,
    order: u32,
}

/// The attributes of one schema object, as read (in any order).
#[derive(Default)]
struct Attributes {
    name: Option<Span>,
    namespace: Option<Span>,
    aliases: Vec<Span>,
    logical: Option<Span>,
    precision: Option<i64>,
    scale: Option<i64>,
    /// Read as a number but not an integer (an invalid scale or precision).
    non_integer: bool,
    size: Option<Number<'static>>,
    default: Option<serde_json::Value>,
    /// Offsets of `fields`, `symbols`, `items` and `values` met before `type`.
    deferred: Vec<(&'static str, usize)>,
}

/// What the body attributes of a schema object gave.
#[derive(Default)]
struct Body {
    record: Option<(NodeId, u32)>,
    fields: Option<Box<[Field]>>,
    symbols: Option<Vec<Span>>,
    items: Option<NodeId>,
    values: Option<NodeId>,
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

/// Appends `text` to the schema's string of names.
fn keep(strings: &mut String, text: &str) -> Result<Span> {
    let start = u32::try_from(strings.len())
        .map_err(|_| SchemaError("the schema's names are too long".into()))?;
    let len = u32::try_from(text.len())
        .map_err(|_| SchemaError("the schema's names are too long".into()))?;
    strings.push_str(text);
    Ok(Span { start, len })
}

struct Parser<'a> {
    reader: Reader<'a>,
    nodes: Vec<Node>,
    strings: String,
    defaults: Vec<serde_json::Value>,
    aliases: Vec<Box<[Span]>>,
    names: Vec<PendingName>,
    references: Vec<PendingReference>,
    sharing: Sharing,
    /// The branches of the unions being read, innermost last (one allocation per union).
    branch_stack: Vec<NodeId>,
    /// The fields of the records being read, innermost last.
    field_stack: Vec<Field>,
    order: u32,
    depth: usize,
    /// The node of each primitive type, shared by every plain use of it.
    primitives: [Option<NodeId>; 8],
}

impl<'a> Parser<'a> {
    fn new(text: &'a [u8], sharing: Sharing) -> Self {
        Parser {
            reader: Reader::new(text),
            // About one node per 50 bytes of a typical schema's text.
            nodes: Vec::with_capacity(text.len() / 50),
            strings: String::with_capacity(text.len() / 8),
            aliases: Vec::new(),
            names: Vec::new(),
            references: Vec::new(),
            sharing,
            branch_stack: Vec::new(),
            field_stack: Vec::new(),
            // The defaults most fields have are kept once.
            defaults: vec![
                serde_json::Value::Null,
                serde_json::Value::Bool(false),
                serde_json::Value::Bool(true),
            ],
            order: 0,
            depth: 0,
            primitives: [None; 8],
        }
    }

    fn add(&mut self, node: Node) -> Result<NodeId> {
        let id = NodeId::try_from(self.nodes.len())
            .ok()
            .filter(|id| id & REFERENCE == 0)
            .ok_or_else(|| SchemaError("the schema has too many types".into()))?;
        self.nodes.push(node);
        Ok(id)
    }

    fn next_order(&mut self) -> u32 {
        self.order = self.order.saturating_add(1);
        self.order
    }

    fn keep(&mut self, text: &str) -> Result<Span> {
        keep(&mut self.strings, text)
    }

    fn text(&self, span: Span) -> &str {
        &self.strings[span.start as usize..(span.start + span.len) as usize]
    }

    fn primitive_node(&mut self, name: &str) -> Result<Option<NodeId>> {
        let Some(index) = PRIMITIVES.iter().position(|p| *p == name) else {
            return Ok(None);
        };
        if let Some(id) = self.primitives[index] {
            return Ok(Some(id));
        }
        let node = primitive(name, Logical::None).unwrap_or(Node::Null);
        let id = self.add(node)?;
        self.primitives[index] = Some(id);
        Ok(Some(id))
    }

    fn expect(&mut self, kind: ValueKind, what: &str) -> Result<()> {
        if json(self.reader.peek_kind())? != kind {
            return fail(what.to_string());
        }
        Ok(())
    }

    fn string(&mut self, what: &str) -> Result<Span> {
        if json(self.reader.peek_kind())? != ValueKind::String {
            return fail(format!("{what} must be a string"));
        }
        let text = json(self.reader.read_str())?;
        keep(&mut self.strings, text.text())
    }

    fn strings_of(&mut self, what: &str) -> Result<Vec<Span>> {
        self.expect(
            ValueKind::Array,
            &format!("{what} must be an array of strings"),
        )?;
        json(self.reader.begin_array())?;
        let mut out = Vec::new();
        let mut first = true;
        while json(self.reader.next_element(first))? {
            first = false;
            out.push(self.string(what)?);
        }
        Ok(out)
    }

    fn skip(&mut self) -> Result<()> {
        let result = self.reader.skip_value(MAX_JSON_DEPTH);
        json(result)
    }

    /// A default value as JSON: scalars read in place, arrays and objects by serde_json.
    fn value(&mut self) -> Result<serde_json::Value> {
        use serde_json::Value;
        Ok(match json(self.reader.peek_kind())? {
            ValueKind::Null => {
                json(self.reader.read_null())?;
                Value::Null
            }
            ValueKind::True => {
                json(self.reader.read_true())?;
                Value::Bool(true)
            }
            ValueKind::False => {
                json(self.reader.read_false())?;
                Value::Bool(false)
            }
            ValueKind::String => Value::String(json(self.reader.read_str())?.text().to_string()),
            _ => {
                let start = self.reader.offset();
                self.skip()?;
                let raw = self.reader.taken_since(start);
                serde_json::from_slice(raw)
                    .map_err(|err| SchemaError(format!("a default is not valid JSON: {err}")))?
            }
        })
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
                let text = json(self.reader.read_str())?;
                let name = keep(&mut self.strings, text.text())?;
                self.named_reference(name, scope)
            }
            ValueKind::Array => {
                json(self.reader.begin_array())?;
                let start = self.branch_stack.len();
                let mut first = true;
                while json(self.reader.next_element(first))? {
                    first = false;
                    let branch = self.schema(scope)?;
                    if branch & REFERENCE == 0
                        && matches!(self.nodes[branch as usize], Node::Union(_))
                    {
                        return fail("a union may not contain another union directly");
                    }
                    self.branch_stack.push(branch);
                }
                let branches: Box<[NodeId]> = self.branch_stack.drain(start..).collect();
                self.add(Node::Union(branches))
            }
            ValueKind::Object => self.object(scope),
            _ => fail("a schema must be a type name, an object or an array (a union)"),
        }
    }

    /// A type given by name (`name`, just kept): a primitive, or a reference to a named type.
    fn named_reference(&mut self, name: Span, scope: Option<NodeId>) -> Result<NodeId> {
        let text = self.text(name);
        if let Some(primitive) = PRIMITIVES.iter().find(|p| **p == text) {
            // Primitives are not kept: they have a node of their own.
            self.strings.truncate(name.start as usize);
            return Ok(self.primitive_node(primitive)?.unwrap_or_default());
        }
        let name_text = text;
        if matches!(
            name_text,
            "record" | "error" | "enum" | "fixed" | "array" | "map"
        ) {
            return fail(format!(
                "\"{name_text}\" is a complex type: it needs an object with its attributes"
            ));
        }
        if !valid_fullname(name_text) {
            return fail(format!(
                "{} is not a valid Avro type name",
                crate::quote::quote(name_text)
            ));
        }
        let order = self.next_order();
        let index = NodeId::try_from(self.references.len())
            .ok()
            .filter(|index| index & REFERENCE == 0)
            .ok_or_else(|| SchemaError("the schema has too many references".into()))?;
        self.references
            .push(PendingReference { name, scope, order });
        Ok(REFERENCE | index)
    }

    fn object(&mut self, scope: Option<NodeId>) -> Result<NodeId> {
        json(self.reader.begin_object())?;
        let mut attrs = Attributes::default();
        let mut type_attr: Option<TypeAttr> = None;
        let mut body = Body::default();
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
                        // A record's node exists as soon as its type is known, so that its
                        // fields' named types take their namespace from it.
                        let order = self.next_order();
                        let node = Node::Record(Box::new(Record {
                            named: Named {
                                name: Span { start: 0, len: 0 },
                                aliases: Box::new([]),
                            },
                            fields: Box::new([]),
                        }));
                        body.record = Some((self.add(node)?, order));
                    }
                    type_attr = Some(found);
                }
                "fields" | "symbols" | "items" | "values" => match &type_attr {
                    None => {
                        attrs.deferred.push((key, self.reader.offset()));
                        self.skip()?;
                    }
                    Some(found) => self.body(key, found, scope, &mut body)?,
                },
                "name" => attrs.name = Some(self.string("a name")?),
                "namespace" => {
                    attrs.namespace = match json(self.reader.peek_kind())? {
                        ValueKind::Null => {
                            json(self.reader.read_null())?;
                            Some(self.keep("")?)
                        }
                        _ => Some(self.string("a namespace")?),
                    }
                }
                "aliases" => attrs.aliases = self.strings_of("aliases")?,
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
                    if json(self.reader.peek_kind())? != ValueKind::Number {
                        if key == "size" {
                            return fail("a fixed's size must be a non-negative integer");
                        }
                        attrs.non_integer = true;
                        self.skip()?;
                        continue;
                    }
                    let number = number_owned(json(self.reader.read_number())?);
                    match (key, number) {
                        ("size", number) => attrs.size = Some(number),
                        ("precision", Number::Int(n)) => attrs.precision = Some(n),
                        ("scale", Number::Int(n)) => attrs.scale = Some(n),
                        _ => attrs.non_integer = true,
                    }
                }
                "default" => attrs.default = Some(self.value()?),
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
                self.body(key, &found, scope, &mut body)?;
            }
            self.reader.rewind(end);
        }
        match found {
            TypeAttr::Schema(id) => Ok(id),
            TypeAttr::Keyword(keyword) => self.build(keyword, attrs, scope, body),
        }
    }

    fn type_attr(&mut self, scope: Option<NodeId>) -> Result<TypeAttr> {
        if json(self.reader.peek_kind())? != ValueKind::String {
            return Ok(TypeAttr::Schema(self.schema(scope)?));
        }
        let text = json(self.reader.read_str())?;
        let keyword = match text.text() {
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
                    let name = keep(&mut self.strings, other)?;
                    return Ok(TypeAttr::Schema(self.named_reference(name, scope)?));
                }
            },
        };
        Ok(TypeAttr::Keyword(keyword))
    }

    /// Reads the value of `fields`, `symbols`, `items` or `values` once the type is known; an
    /// attribute that does not belong to the type is skipped, as any unknown attribute is.
    fn body(
        &mut self,
        key: &'static str,
        found: &TypeAttr,
        scope: Option<NodeId>,
        body: &mut Body,
    ) -> Result<()> {
        let keyword = match found {
            TypeAttr::Keyword(keyword) => *keyword,
            TypeAttr::Schema(_) => "",
        };
        match (key, keyword) {
            ("fields", "record") => body.fields = Some(self.fields(body.record.map(|r| r.0))?),
            ("symbols", "enum") => body.symbols = Some(self.strings_of("an enum's symbols")?),
            ("items", "array") => body.items = Some(self.schema(scope)?),
            ("values", "map") => body.values = Some(self.schema(scope)?),
            _ => self.skip()?,
        }
        Ok(())
    }

    fn fields(&mut self, record: Option<NodeId>) -> Result<Box<[Field]>> {
        self.expect(ValueKind::Array, "a record's fields must be an array")?;
        json(self.reader.begin_array())?;
        let start = self.field_stack.len();
        let mut first = true;
        while json(self.reader.next_element(first))? {
            first = false;
            let field = self.field(record)?;
            self.field_stack.push(field);
        }
        Ok(self.field_stack.drain(start..).collect())
    }

    fn field(&mut self, record: Option<NodeId>) -> Result<Field> {
        self.expect(ValueKind::Object, "a record field must be an object")?;
        json(self.reader.begin_object())?;
        let mut name = None;
        let mut schema = None;
        let mut default = NONE;
        let mut aliases = NONE;
        let mut first = true;
        while let Some(key) = json(self.reader.next_key(first))?.map(|key| known_key(key.bytes)) {
            first = false;
            match key {
                "name" => name = Some(self.string("a field name")?),
                "type" => schema = Some(self.schema(record)?),
                "default" => {
                    let value = self.value()?;
                    default = match value {
                        serde_json::Value::Null => 0,
                        serde_json::Value::Bool(flag) => 1 + u32::from(flag),
                        value => {
                            self.defaults.push(value);
                            self.defaults.len() as u32 - 1
                        }
                    };
                }
                "aliases" => {
                    let found = self.strings_of("a field's aliases")?;
                    for alias in &found {
                        if !valid_name(self.text(*alias)) {
                            return fail(format!(
                                "field alias {} is not a valid Avro name",
                                crate::quote::quote(self.text(*alias))
                            ));
                        }
                    }
                    aliases = self.aliases.len() as u32;
                    self.aliases.push(found.into_boxed_slice());
                }
                _ => self.skip()?,
            }
        }
        let Some(name) = name else {
            return fail("a record field needs a \"name\"");
        };
        if !valid_name(self.text(name)) {
            return fail(format!(
                "field name {} is not a valid Avro name",
                crate::quote::quote(self.text(name))
            ));
        }
        let Some(schema) = schema else {
            return fail(format!(
                "field {} needs a \"type\"",
                crate::quote::quote(self.text(name))
            ));
        };
        Ok(Field {
            name,
            schema,
            default,
            aliases,
        })
    }

    fn build(
        &mut self,
        keyword: &'static str,
        attrs: Attributes,
        scope: Option<NodeId>,
        body: Body,
    ) -> Result<NodeId> {
        let logical_name = attrs.logical.map(|span| self.text(span)).unwrap_or("");
        match keyword {
            "record" => {
                let Some((id, order)) = body.record else {
                    return fail("internal: a record without its node");
                };
                let Some(fields) = body.fields else {
                    return fail("a record needs \"fields\"");
                };
                let mut names: Vec<&str> = fields.iter().map(|f| self.text(f.name)).collect();
                names.sort_unstable();
                if let Some(pair) = names.windows(2).find(|pair| pair[0] == pair[1]) {
                    return fail(format!(
                        "field name {} appears twice",
                        crate::quote::quote(pair[0])
                    ));
                }
                if let Node::Record(record) = &mut self.nodes[id as usize] {
                    record.fields = fields;
                }
                self.pending_name(id, attrs, scope, order)?;
                Ok(id)
            }
            "enum" => {
                let Some(symbols) = body.symbols else {
                    return fail("an enum needs \"symbols\"");
                };
                let mut names: Vec<&str> = Vec::with_capacity(symbols.len());
                for symbol in &symbols {
                    let text = self.text(*symbol);
                    if !valid_name(text) {
                        return fail(format!(
                            "enum symbol {} is not a valid Avro name",
                            crate::quote::quote(text)
                        ));
                    }
                    names.push(text);
                }
                names.sort_unstable();
                if let Some(pair) = names.windows(2).find(|pair| pair[0] == pair[1]) {
                    return fail(format!(
                        "enum symbol {} appears twice",
                        crate::quote::quote(pair[0])
                    ));
                }
                let default = match &attrs.default {
                    None => None,
                    Some(value) => {
                        let position = value
                            .as_str()
                            .and_then(|text| symbols.iter().position(|s| self.text(*s) == text));
                        match position {
                            Some(position) => Some(position as u32),
                            None => {
                                return fail(format!(
                                    "the enum default {} is not one of its symbols",
                                    crate::quote::cut(&value.to_string())
                                ))
                            }
                        }
                    }
                };
                let order = self.next_order();
                let id = self.add(Node::Enum(Box::new(Enum {
                    named: Named {
                        name: Span { start: 0, len: 0 },
                        aliases: Box::new([]),
                    },
                    symbols: symbols.into_boxed_slice(),
                    default,
                })))?;
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
                let id = self.add(Node::Fixed(Box::new(Fixed {
                    named: Named {
                        name: Span { start: 0, len: 0 },
                        aliases: Box::new([]),
                    },
                    size,
                    logical,
                })))?;
                self.pending_name(id, attrs, scope, order)?;
                Ok(id)
            }
            "array" => match body.items {
                Some(items) => self.add(Node::Array(items)),
                None => fail("an array needs \"items\""),
            },
            "map" => match body.values {
                Some(values) => self.add(Node::Map(values)),
                None => fail("a map needs \"values\""),
            },
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
                    if let Some(id) = self.primitive_node(primitive_name)? {
                        return Ok(id);
                    }
                }
                let node = primitive(primitive_name, logical).unwrap_or(Node::Null);
                self.add(node)
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

    /// `namespace.name`, kept (a name with a dot is already full).
    fn join(&mut self, namespace: &str, name: Span) -> Result<Span> {
        let text = self.text(name);
        if text.contains('.') || namespace.is_empty() {
            return Ok(name);
        }
        let full = format!("{namespace}.{text}");
        self.keep(&full)
    }

    /// The namespace a record gives the names inside it (`""` for none).
    fn scope_namespace(&self, scope: Option<NodeId>) -> String {
        scope
            .and_then(|scope| self.nodes[scope as usize].named())
            .map(|named| namespace_of(self.text(named.name)).to_string())
            .unwrap_or_default()
    }

    /// Gives every named type its full name, resolves the references to them and checks what
    /// needs the whole schema (unions' branches, field defaults).
    fn finish(mut self, root: NodeId) -> Result<Schema> {
        let sharing = self.sharing;
        self.names.sort_by_key(|pending| pending.order);
        let mut defined: HashMap<String, (NodeId, u32)> = HashMap::new();
        for pending in std::mem::take(&mut self.names) {
            let inherited = self.scope_namespace(pending.scope);
            let namespace = match pending.namespace {
                Some(span) => self.text(span).to_string(),
                None => inherited,
            };
            let name = self.join(&namespace, pending.name)?;
            let fullname = self.text(name).to_string();
            if !valid_fullname(&fullname) {
                return fail(format!(
                    "{} is not a valid Avro name (names are [A-Za-z_][A-Za-z0-9_]*, dotted in \
                     namespaces)",
                    crate::quote::quote(&fullname)
                ));
            }
            let short = fullname.rsplit('.').next().unwrap_or("");
            if PRIMITIVES.contains(&short) {
                return fail(format!(
                    "the primitive type name {} cannot name a {}",
                    crate::quote::quote(short),
                    self.nodes[pending.node as usize].type_name()
                ));
            }
            let own_namespace = namespace_of(&fullname).to_string();
            let mut aliases = Vec::with_capacity(pending.aliases.len());
            for alias in pending.aliases {
                if !valid_fullname(self.text(alias)) {
                    return fail(format!(
                        "alias {} is not a valid Avro name",
                        crate::quote::quote(self.text(alias))
                    ));
                }
                aliases.push(self.join(&own_namespace, alias)?);
            }
            if defined.contains_key(&fullname) {
                return fail(format!(
                    "Avro name {} is defined twice",
                    crate::quote::quote(&fullname)
                ));
            }
            defined.insert(fullname, (pending.node, pending.order));
            if let Some(named) = self.nodes[pending.node as usize].named_mut() {
                named.name = name;
                named.aliases = aliases.into_boxed_slice();
            }
        }
        let mut targets = Vec::with_capacity(self.references.len());
        let mut full = String::new();
        for reference in std::mem::take(&mut self.references) {
            let namespace = reference
                .scope
                .and_then(|scope| self.nodes[scope as usize].named())
                .map_or("", |named| namespace_of(self.text(named.name)));
            let name = self.text(reference.name);
            let found = if name.contains('.') || namespace.is_empty() {
                defined.get(name)
            } else {
                full.clear();
                full.push_str(namespace);
                full.push('.');
                full.push_str(name);
                defined.get(full.as_str()).or_else(|| defined.get(name))
            }
            .copied();
            match found {
                Some((node, order)) if order < reference.order => targets.push(node),
                Some(_) => {
                    return fail(format!(
                        "the type {} is used before it is defined",
                        crate::quote::quote(name)
                    ))
                }
                None => {
                    return fail(format!(
                        "unknown Avro type name {}",
                        crate::quote::quote(name)
                    ))
                }
            }
        }
        let resolve = |id: NodeId| {
            if id & REFERENCE != 0 {
                targets[(id & !REFERENCE) as usize]
            } else {
                id
            }
        };
        for node in &mut self.nodes {
            match node {
                Node::Array(child) | Node::Map(child) => *child = resolve(*child),
                Node::Union(branches) => branches.iter_mut().for_each(|b| *b = resolve(*b)),
                Node::Record(record) => {
                    for field in record.fields.iter_mut() {
                        field.schema = resolve(field.schema);
                    }
                }
                _ => {}
            }
        }
        let mut schema = Schema {
            nodes: self.nodes,
            root: resolve(root),
            strings: self.strings,
            defaults: self.defaults,
            aliases: self.aliases,
        };
        for id in 0..schema.nodes.len() {
            match schema.node(id as NodeId) {
                Node::Union(branches) => check_union(&schema, branches)?,
                Node::Record(record) => {
                    for field in record.fields.iter() {
                        if let Some(default) = schema.default_of(field) {
                            if !default_fits(&schema, field.schema, default, 0) {
                                return fail(format!(
                                    "the default {} of field {} of {} does not match its type \
                                     {}",
                                    crate::quote::cut(&default.to_string()),
                                    crate::quote::quote(schema.text(field.name)),
                                    schema.fullname(id as NodeId).unwrap_or("a record"),
                                    schema.describe(field.schema)
                                ));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if sharing == Sharing::Unions {
            share_unions(&mut schema);
        }
        Ok(schema)
    }
}

/// Makes every use of equal unions point at the first of them, and empties the others.
fn share_unions(schema: &mut Schema) {
    let mut remap: Vec<NodeId> = (0..schema.nodes.len() as NodeId).collect();
    let mut shared = false;
    {
        let mut first: HashMap<&[NodeId], NodeId> = HashMap::new();
        for (id, node) in schema.nodes.iter().enumerate() {
            if let Node::Union(branches) = node {
                let to = *first.entry(&branches[..]).or_insert(id as NodeId);
                remap[id] = to;
                shared |= to != id as NodeId;
            }
        }
    }
    if !shared {
        return;
    }
    for node in &mut schema.nodes {
        match node {
            Node::Array(child) | Node::Map(child) => *child = remap[*child as usize],
            Node::Record(record) => {
                for field in record.fields.iter_mut() {
                    field.schema = remap[field.schema as usize];
                }
            }
            _ => {}
        }
    }
    schema.root = remap[schema.root as usize];
    for (id, to) in remap.into_iter().enumerate() {
        if to != id as NodeId {
            schema.nodes[id] = Node::Null;
        }
    }
}

/// A decimal's logical type, or none when its attributes are invalid (the specification asks
/// for the underlying type then): precision a positive integer, scale from 0 to the precision,
/// and for a fixed, a precision its size can hold.
fn decimal(attrs: &Attributes, size: Option<usize>) -> Logical {
    if attrs.non_integer {
        return Logical::None;
    }
    let Some(precision) = attrs.precision else {
        return Logical::None;
    };
    let scale = attrs.scale.unwrap_or(0);
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
    // Each branch's type: its full name if it is a named type, else the type's name.
    let mut keys: Vec<(&str, bool)> = Vec::with_capacity(branches.len());
    for &branch in branches {
        let node = schema.node(branch);
        if matches!(node, Node::Union(_)) {
            return fail("a union may not contain another union directly");
        }
        keys.push(match schema.fullname(branch) {
            Some(name) => (name, true),
            None => (node.type_name(), false),
        });
    }
    keys.sort_unstable();
    if let Some(pair) = keys.windows(2).find(|pair| pair[0] == pair[1]) {
        return fail(format!(
            "a union has two branches of type {}",
            crate::quote::quote(pair[0].0)
        ));
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
    match (schema.node(id), value) {
        (Node::Null, Value::Null) => true,
        (Node::Boolean, Value::Bool(_)) => true,
        (Node::Int(_), Value::Number(n)) => n.as_i64().is_some_and(|v| i32::try_from(v).is_ok()),
        (Node::Long(_), Value::Number(n)) => n.as_i64().is_some(),
        (Node::Float | Node::Double, Value::Number(_)) => true,
        (Node::String(_), Value::String(_)) => true,
        (Node::Bytes(_), Value::String(text)) => text.chars().all(|c| (c as u32) < 256),
        (Node::Fixed(fixed), Value::String(text)) => {
            text.chars().all(|c| (c as u32) < 256) && text.chars().count() == fixed.size
        }
        (Node::Enum(inner), Value::String(text)) => {
            inner.symbols.iter().any(|s| schema.text(*s) == text)
        }
        (Node::Array(items), Value::Array(values)) => values
            .iter()
            .all(|v| default_fits(schema, *items, v, depth + 1)),
        (Node::Map(of), Value::Object(map)) => map
            .values()
            .all(|v| default_fits(schema, *of, v, depth + 1)),
        (Node::Union(branches), value) => branches
            .iter()
            .any(|b| default_fits(schema, *b, value, depth + 1)),
        (Node::Record(record), Value::Object(map)) => {
            record
                .fields
                .iter()
                .all(|field| match map.get(schema.text(field.name)) {
                    Some(v) => default_fits(schema, field.schema, v, depth + 1),
                    None => schema.default_of(field).is_some(),
                })
        }
        _ => false,
    }
}

/// Encodes a field default (JSON, in the form the specification gives defaults) as a datum of
/// node `id`, as a writer fills a field its data lacks: a union's default as the first branch
/// that holds it (the specification's first branch, when the default is valid).
pub fn encode_default(
    schema: &Schema,
    id: NodeId,
    value: &serde_json::Value,
    out: &mut Vec<u8>,
) -> std::result::Result<(), String> {
    encode_default_at(schema, id, value, out, 0)
}

fn encode_default_at(
    schema: &Schema,
    id: NodeId,
    value: &serde_json::Value,
    out: &mut Vec<u8>,
    depth: usize,
) -> std::result::Result<(), String> {
    use super::wire::{write_bytes, write_long};
    use serde_json::Value;
    let latin1 = |text: &str| -> Option<Vec<u8>> {
        text.chars().map(|c| u8::try_from(c as u32).ok()).collect()
    };
    let mismatch = || {
        format!(
            "the default {} is not a value of {}",
            crate::quote::cut(&value.to_string()),
            schema.describe(id)
        )
    };
    if depth > MAX_JSON_DEPTH {
        return Err(mismatch());
    }
    match (schema.node(id), value) {
        (Node::Null, Value::Null) => {}
        (Node::Boolean, Value::Bool(flag)) => out.push(u8::from(*flag)),
        (Node::Int(_), Value::Number(n)) => {
            match n.as_i64().filter(|v| i32::try_from(*v).is_ok()) {
                Some(v) => write_long(out, v),
                None => return Err(mismatch()),
            }
        }
        (Node::Long(_), Value::Number(n)) => write_long(out, n.as_i64().ok_or_else(mismatch)?),
        (Node::Float, Value::Number(n)) => {
            let v = n.as_f64().ok_or_else(mismatch)?;
            out.extend_from_slice(&(v as f32).to_le_bytes());
        }
        (Node::Double, Value::Number(n)) => {
            out.extend_from_slice(&n.as_f64().ok_or_else(mismatch)?.to_le_bytes())
        }
        (Node::String(_), Value::String(text)) => write_bytes(out, text.as_bytes()),
        (Node::Bytes(_), Value::String(text)) => {
            write_bytes(out, &latin1(text).ok_or_else(mismatch)?)
        }
        (Node::Fixed(fixed), Value::String(text)) => {
            let bytes = latin1(text).filter(|b| b.len() == fixed.size);
            out.extend_from_slice(&bytes.ok_or_else(mismatch)?);
        }
        (Node::Enum(inner), Value::String(text)) => {
            let index = inner.symbols.iter().position(|s| schema.text(*s) == text);
            write_long(out, index.ok_or_else(mismatch)? as i64);
        }
        (Node::Array(items), Value::Array(values)) => {
            if !values.is_empty() {
                write_long(out, values.len() as i64);
                for item in values {
                    encode_default_at(schema, *items, item, out, depth + 1)?;
                }
            }
            write_long(out, 0);
        }
        (Node::Map(of), Value::Object(map)) => {
            if !map.is_empty() {
                write_long(out, map.len() as i64);
                for (key, item) in map {
                    write_bytes(out, key.as_bytes());
                    encode_default_at(schema, *of, item, out, depth + 1)?;
                }
            }
            write_long(out, 0);
        }
        (Node::Union(branches), value) => {
            let branch = branches
                .iter()
                .position(|b| default_fits(schema, *b, value, depth + 1))
                .ok_or_else(mismatch)?;
            write_long(out, branch as i64);
            encode_default_at(schema, branches[branch], value, out, depth + 1)?;
        }
        (Node::Record(record), Value::Object(map)) => {
            for field in record.fields.iter() {
                let item = map
                    .get(schema.text(field.name))
                    .or_else(|| schema.default_of(field))
                    .ok_or_else(mismatch)?;
                encode_default_at(schema, field.schema, item, out, depth + 1)?;
            }
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Schema {
        Schema::parse(text.as_bytes(), Sharing::None).unwrap()
    }

    fn canonical(text: &str) -> String {
        parse(text).canonical_form()
    }

    fn error(text: &str) -> String {
        Schema::parse(text.as_bytes(), Sharing::None).unwrap_err().0
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
        let cases = [
            (
                r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"a","type":"int"}]}"#,
                "twice",
            ),
            (r#"["int","int"]"#, "two branches"),
            (
                r#"["int",{"type":"int","logicalType":"date"}]"#,
                "two branches",
            ),
            (r#"[["int"]]"#, "another union"),
            (
                r#"{"type":"enum","name":"E","symbols":["A"],"default":"B"}"#,
                "default",
            ),
            (r#"{"type":"fixed","name":"F","size":"16"}"#, "size"),
            (r#""Nope""#, "unknown"),
            (r#"{"type":"error","name":"E","fields":[]}"#, "error"),
            (r#"{"type":"record","name":"int","fields":[]}"#, "primitive"),
        ];
        for (text, words) in cases {
            assert!(error(text).contains(words), "{text}: {}", error(text));
        }
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
    fn a_named_type_is_one_node_and_equal_unions_share_one_when_asked() {
        let mut fields = Vec::new();
        for i in 0..50 {
            fields.push(format!(r#"{{"name":"f{i}","type":["null","R"]}}"#));
        }
        let text = format!(
            r#"{{"type":"record","name":"R","fields":[{}]}}"#,
            fields.join(",")
        );
        let count = |schema: &Schema, f: fn(&Node) -> bool| -> usize {
            let mut reached = vec![false; schema.nodes.len()];
            let mut pending = vec![schema.root];
            while let Some(id) = pending.pop() {
                if std::mem::replace(&mut reached[id as usize], true) {
                    continue;
                }
                match schema.node(id) {
                    Node::Record(record) => pending.extend(record.fields.iter().map(|f| f.schema)),
                    Node::Union(branches) => pending.extend(branches.iter()),
                    _ => {}
                }
            }
            (0..schema.nodes.len())
                .filter(|&i| reached[i] && f(&schema.nodes[i]))
                .count()
        };
        let separate = parse(&text);
        assert_eq!(count(&separate, |n| matches!(n, Node::Record(_))), 1);
        assert_eq!(count(&separate, |n| matches!(n, Node::Union(_))), 50);
        let shared = Schema::parse(text.as_bytes(), Sharing::Unions).unwrap();
        assert_eq!(count(&shared, |n| matches!(n, Node::Union(_))), 1);
        assert_eq!(shared.canonical_form(), separate.canonical_form());
    }
}
